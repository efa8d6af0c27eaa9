"""A scripted Cohere v2 chat server on 127.0.0.1 (ephemeral port): ``POST /v2/chat``.

The scenario's next turn is chosen by how many assistant messages the request already holds,
as in ``fake_openai.py`` (whose ``completion`` builds the turn, so the structured-output and
turn-limit rules are the same); the answer is reshaped into Cohere's own chat response: one
``message`` whose ``content`` is a list of ``{"type": "text", "text": ...}`` items and whose
``tool_calls`` carry an id and a ``function`` with ``name`` and ``arguments`` (a JSON string).
A turn that calls tools also carries a ``tool_plan``, the short plan Cohere's Command models
write before calling tools ("I will use search_docs to ..."): it is no answer, and an
instrumentation that records it beside the text (OpenLLMetry appends it to the content) must
not have it read as one. ``finish_reason`` is ``TOOL_CALL``, ``COMPLETE`` or ``MAX_TOKENS``
(a cut answer); ``usage`` holds ``billed_units`` and ``tokens``. A model outage
(``Scenario.model_fails_from``) is Cohere's ``{"message": ...}`` error with HTTP 500, a
transient one (``Scenario.model_transient_failures``) the same with HTTP 503 before any turn.
Only non-streamed chat is scripted (``ClientV2.chat``); scenarios with reasoning are not.
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

MODEL = "command-a-03-2025"


def tool_plan(names: list[str]) -> str:
    """The plan a Command model writes before calling ``names`` (no citation, no failure
    wording: a plan read as the answer would be caught by what it lacks, not by chance)."""
    return f"I will use {', '.join(names)} to help answer the user's question."


def chat_response(scenario: Scenario, request: dict[str, Any], turn: int) -> dict[str, Any]:
    """The scripted ``/v2/chat`` answer to one request, at turn ``turn``."""
    answer = completion(scenario, request, turn)
    choice = answer["choices"][0]
    if choice["finish_reason"] == "content_filter":
        raise ValueError("Cohere's v2 chat has no content filter: not served")
    source = choice["message"]
    if source.get("reasoning_content"):
        raise ValueError("reasoning is not scripted for Cohere")
    message: dict[str, Any] = {"role": "assistant"}
    if source.get("tool_calls"):
        calls = source["tool_calls"]
        message["tool_plan"] = tool_plan([call["function"]["name"] for call in calls])
        message["tool_calls"] = [
            {"id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"],
                          "arguments": call["function"]["arguments"]}}
            for call in calls
        ]  # fmt: skip
        finish = "TOOL_CALL"
    else:
        message["content"] = [{"type": "text", "text": source["content"] or ""}]
        finish = "MAX_TOKENS" if choice["finish_reason"] == "length" else "COMPLETE"
    usage = answer["usage"]
    tokens = {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}
    return {
        "id": f"{scenario.name}-{turn}",
        "finish_reason": finish,
        "message": message,
        "usage": {"billed_units": dict(tokens), "tokens": dict(tokens)},
    }


class FakeCohere(ScriptedServer):
    """``with FakeCohere(scenario) as base_url:`` serves until the block ends (``base_url`` is
    the server's root, what ``cohere.ClientV2(base_url=...)`` takes)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.fail_first = FailFirst(scenario.model_transient_failures)
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if path.partition("?")[0] != "/v2/chat":
            return "only /v2/chat is scripted"
        if body.get("stream"):
            return "only non-streamed chat is scripted"
        if self.fail_first.take():  # Cohere's own error object, HTTP 503
            return transient_outage({"message": TRANSIENT_MESSAGE})
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if self.scenario.model_fails(turn):
            return outage({"message": OUTAGE_MESSAGE})
        return Reply(json.loads(json.dumps(chat_response(self.scenario, body, turn))))
