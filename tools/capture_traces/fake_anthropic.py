"""A scripted Anthropic Messages server on 127.0.0.1 (ephemeral port): ``POST /v1/messages``.

The scenario's next turn is chosen by how many assistant messages the request already holds,
as in ``fake_openai.py``; a tool-requesting turn answers with ``tool_use`` content blocks and
``stop_reason: tool_use``, a final turn with one ``text`` block and ``stop_reason: end_turn``.
The real ``anthropic`` client and its real instrumentations run unchanged against it while the
ground truth stays the script. A request with ``stream: true`` (Claude Code always streams)
gets the same message as server-sent events (``stream_events``).
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


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def stream_events(msg: dict[str, Any]) -> bytes:
    """One Messages API response as the event stream the streaming API sends: the message
    without content, then each content block whole in one delta, then the stop reason."""
    head = {**msg, "content": [], "stop_reason": None}
    out = [_sse("message_start", {"type": "message_start", "message": head})]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(
            _sse("content_block_start", {"type": "content_block_start", "index": i,
                                         "content_block": start})
        )  # fmt: skip
        out.append(
            _sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                         "delta": delta})
        )  # fmt: skip
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        _sse("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                               "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
    )  # fmt: skip
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


class FakeAnthropic(ScriptedServer):
    """``with FakeAnthropic(scenario) as base_url:`` serves until the block ends."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.split("?")[0].endswith("/v1/messages"):
            return "only /v1/messages is scripted"
        msg = message(self.scenario, body)
        headers = {"request-id": f"req_{self.scenario.name}"}
        if body.get("stream"):
            return Reply(stream_events(msg), headers=headers, content_type="text/event-stream")
        return Reply(msg, headers=headers)
