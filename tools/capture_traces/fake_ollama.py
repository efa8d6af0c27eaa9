"""A scripted Ollama server on 127.0.0.1 (ephemeral port): ``POST /api/chat``.

The scenario's next turn is chosen by how many assistant messages the request already holds,
as in ``fake_openai.py`` (whose ``completion`` builds the turn, so the structured-output and
turn-limit rules are the same); the answer is reshaped into Ollama's native chat response: one
``message`` whose ``tool_calls`` carry each call's function ``name`` and its ``arguments`` as
a JSON object (Ollama's API gives tool calls no id, so a tool result is tied to its call by
``tool_name`` and order only), ``done: true`` with ``done_reason`` ``stop``, and the token
counts as ``prompt_eval_count`` / ``eval_count`` with Ollama's nanosecond durations. A model
outage (``Scenario.model_fails_from``) is Ollama's ``{"error": ...}`` with HTTP 500, a
transient one (``Scenario.model_transient_failures``, ``u_model_retry``) the same object with
HTTP 503 before any turn is served. Only non-streamed
chat is scripted (``"stream": false``, the Python client's default). A turn the
scenario gives reasoning (``Scenario.reasoning``) carries it as the message's ``thinking``, as
thinking models answer (``think`` on).
"""

from __future__ import annotations

import json
from typing import Any

from fake_openai import completion
from scenarios import Scenario
from scripted_server import (
    OUTAGE_MESSAGE,
    TRANSIENT_MESSAGE,
    FailFirst,
    Reply,
    ScriptedServer,
    outage,
    transient_outage,
)

MODEL = "llama3.1:8b"


def chat_response(scenario: Scenario, request: dict[str, Any], turn: int) -> dict[str, Any]:
    """The scripted ``/api/chat`` answer to one request, at turn ``turn``."""
    answer = completion(scenario, request, turn)
    choice = answer["choices"][0]
    if choice["finish_reason"] == "content_filter":
        raise ValueError("Ollama has no content filter: x_answer_filtered is not served")
    source = choice["message"]
    message: dict[str, Any] = {"role": "assistant", "content": source["content"] or ""}
    if source.get("reasoning_content"):  # a thinking model's ``thinking``, beside the content
        message["thinking"] = source["reasoning_content"]
    if source.get("tool_calls"):
        message["tool_calls"] = [
            {"function": {"index": j, "name": call["function"]["name"],
                          "arguments": json.loads(call["function"]["arguments"])}}
            for j, call in enumerate(source["tool_calls"])
        ]  # fmt: skip
    usage = answer["usage"]
    return {
        "model": MODEL,
        "created_at": f"2027-01-15T08:00:{turn:02d}.000000Z",
        "message": message,
        "done": True,
        "done_reason": choice["finish_reason"] if choice["finish_reason"] == "length" else "stop",
        "total_duration": 250_000_000 + turn,
        "load_duration": 10_000_000,
        "prompt_eval_count": usage["prompt_tokens"],
        "prompt_eval_duration": 40_000_000,
        "eval_count": usage["completion_tokens"],
        "eval_duration": 180_000_000,
    }


class FakeOllama(ScriptedServer):
    """``with FakeOllama(scenario) as host:`` serves until the block ends (``host`` is the
    server's root, what ``ollama.Client(host=...)`` takes)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.fail_first = FailFirst(scenario.model_transient_failures)
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if path.partition("?")[0] != "/api/chat":
            return "only /api/chat is scripted"
        if body.get("stream"):
            return "only non-streamed chat is scripted"
        if self.fail_first.take():  # Ollama's own error object, HTTP 503
            return transient_outage({"error": TRANSIENT_MESSAGE})
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if self.scenario.model_fails(turn):
            return outage({"error": OUTAGE_MESSAGE})
        return Reply(chat_response(self.scenario, body, turn))
