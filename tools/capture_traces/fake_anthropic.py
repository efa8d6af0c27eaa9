"""A scripted Anthropic Messages server on 127.0.0.1 (ephemeral port): ``POST /v1/messages``.

The scenario's next turn is chosen by how many assistant messages the request already holds,
as in ``fake_openai.py``; a tool-requesting turn answers with ``tool_use`` content blocks and
``stop_reason: tool_use``, a final turn with one ``text`` block and ``stop_reason: end_turn``.
The real ``anthropic`` client and its real instrumentations run unchanged against it while the
ground truth stays the script. Non-streaming only.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import Scenario
from scripted_server import Reply, ScriptedServer

MODEL = "claude-sonnet-4-5-20250929"


def message(scenario: Scenario, request: dict[str, Any]) -> dict[str, Any]:
    """The scripted Messages API response to one request."""
    messages = request.get("messages", [])
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    content: list[dict[str, Any]]
    if isinstance(step, str):
        content = [{"type": "text", "text": step}]
        stop_reason = "end_turn"
    else:
        content = [
            {"type": "tool_use", "id": f"toolu_{turn:02d}{j:02d}", "name": name, "input": args}
            for j, (name, args) in enumerate(step)
        ]
        stop_reason = "tool_use"
    input_tokens = max(1, len(json.dumps([request.get("system"), messages])) // 4)
    output_tokens = max(1, len(json.dumps(content)) // 4)
    return {
        "id": f"msg_{scenario.name}_{turn}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


class FakeAnthropic(ScriptedServer):
    """``with FakeAnthropic(scenario) as base_url:`` serves until the block ends."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.split("?")[0].endswith("/v1/messages") or body.get("stream"):
            return "only non-streaming /v1/messages is scripted"
        return Reply(
            message(self.scenario, body), headers={"request-id": f"req_{self.scenario.name}"}
        )
