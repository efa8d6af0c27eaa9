"""A scripted Gemini API server on 127.0.0.1 (ephemeral port): ``POST .../M:generateContent``.

The scenario's next turn is chosen by how many ``model`` turns the request's ``contents``
already hold, as in ``fake_openai.py`` (or by ``turn_of``, e.g. ``fake_openai.call_order()``
for agents that each see the session in their own way); a tool-requesting turn answers with
``functionCall`` parts, a final turn with one ``text`` part. Like the real Gemini API for 2.x
models, function calls carry no call id and ``finishReason`` is ``STOP`` in both cases;
``usageMetadata`` counts tokens. The real ``google-genai`` client and its real
instrumentation run unchanged against it while the ground truth stays the script.
A turn the scenario gives reasoning (``Scenario.reasoning``) starts with a thought summary,
a ``text`` part marked ``thought: true`` (as with ``include_thoughts``), and its next part
carries a ``thoughtSignature``; ``usageMetadata`` counts ``thoughtsTokenCount``.
Non-streaming only. A run the scenario kills in a turn (``Scenario.killed_at``,
``z_killed_*``) is SIGKILLed before that turn's answer is sent (``Reply.kill_after``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from scenarios import Scenario
from scripted_server import TRANSIENT_MESSAGE, FailFirst, Reply, ScriptedServer, transient_outage

MODEL = "gemini-2.5-flash"
FINISH_REASONS = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}
"""``finishReason`` of an answer the scenario cuts off (``Scenario.cut``); its text is the part
generated before the cut."""


def generate_content(
    scenario: Scenario, request: dict[str, Any], turn: int | None = None
) -> dict[str, Any]:
    """The scripted ``GenerateContentResponse`` to one request (``turn``: which scripted turn,
    by default the ``model`` turns the request already holds)."""
    contents = request.get("contents", [])
    if turn is None:
        turn = sum(1 for c in contents if c.get("role") == "model")
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    parts: list[dict[str, Any]]
    if isinstance(step, str):
        parts = [{"text": step}]
    else:
        parts = [{"functionCall": {"name": name, "args": args}} for name, args in step]
    reasoning = scenario.reasoning_of(turn)
    thoughts: dict[str, int] = {}
    if reasoning is not None:  # a thought summary part (``thought: true``) comes first
        parts.insert(0, {"text": reasoning, "thought": True})
        parts[1]["thoughtSignature"] = base64.b64encode(f"sig:{turn}".encode()).decode()
        thoughts = {"thoughtsTokenCount": max(1, len(reasoning) // 4)}
    prompt_tokens = max(1, len(json.dumps([request.get("systemInstruction"), contents])) // 4)
    output_tokens = max(1, len(json.dumps(parts)) // 4)
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": FINISH_REASONS.get(scenario.cut_of(step) or "", "STOP"),
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
            **thoughts,
        },
        "modelVersion": MODEL,
        "responseId": f"resp_{scenario.name}_{turn}",
    }


class FakeGemini(ScriptedServer):
    """``with FakeGemini(scenario) as base_url:`` serves until the block ends."""

    def __init__(
        self, scenario: Scenario, turn_of: Callable[[dict[str, Any]], int] | None = None
    ) -> None:
        self.scenario = scenario
        self.turn_of = turn_of
        self.fail_first = FailFirst(scenario.model_transient_failures)
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.split("?")[0].endswith(":generateContent"):
            return "only non-streaming :generateContent is scripted"
        if self.fail_first.take():  # the Gemini API's own error object
            return transient_outage({"error": {"code": 503, "message": TRANSIENT_MESSAGE,
                                               "status": "UNAVAILABLE"}})  # fmt: skip
        if self.turn_of:
            turn = self.turn_of(body)
        else:
            turn = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
        # A run killed in this request (z_killed_*): its process dies before any of the answer
        # reaches the client (non-streaming only, as ``fake_openai.py``'s whole answers).
        return Reply(
            generate_content(self.scenario, body, turn),
            content_type="application/json; charset=UTF-8",
            kill_after=0 if self.scenario.killed(turn) else None,
        )
