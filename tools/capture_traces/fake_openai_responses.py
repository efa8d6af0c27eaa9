"""A scripted OpenAI Responses API server (``POST /v1/responses``) on 127.0.0.1.

The OpenAI Agents SDK's default model (``OpenAIResponsesModel``) talks the Responses API, not
chat completions: the request's ``input`` is a list of items (messages, ``function_call``,
``function_call_output``) and the answer's ``output`` is a list of ``message`` /
``function_call`` items. Each call answers the scenario's next turn in arrival order (the SDK
calls the model sequentially, and a handoff hands the whole history on), so the real client and
its real instrumentation run unchanged while the ground truth stays known. A request with
``stream: true`` (``Runner.run_streamed``) gets the same response as Responses streaming events
(``stream_events``). A turn the scenario gives reasoning (``Scenario.reasoning``) starts with
a ``reasoning`` output item whose ``summary`` holds it (``summary_text``), streamed as
``response.reasoning_summary_text.delta`` events, as reasoning models answer with a summary
requested. An answer the scenario cuts off (``Scenario.cut``) is an ``incomplete`` response
whose ``incomplete_details.reason`` is ``max_output_tokens`` or ``content_filter``, streamed
with ``response.incomplete`` as its last event.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from scenarios import Scenario
from scripted_server import FailFirst, Reply, ScriptedServer, outage, pieces, sse, transient_outage

INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}
"""``incomplete_details.reason`` of a response the scenario cuts off (``Scenario.cut``)."""


def response(scenario: Scenario, request: dict[str, Any], turn: int) -> dict[str, Any]:
    """The scripted Responses API answer for model call number ``turn``."""
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    output: list[dict[str, Any]]
    if isinstance(step, str):
        output = [
            {
                "type": "message",
                "id": f"msg_{turn}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step, "annotations": []}],
            }
        ]
    else:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{turn}_{j}",
                "call_id": f"call_{turn}_{j}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            for j, (name, args) in enumerate(step)
        ]
    reasoning = scenario.reasoning_of(turn)
    if reasoning is not None:  # a reasoning item (its summary) precedes the turn's items
        output.insert(0, {"type": "reasoning", "id": f"rs_{turn}",
                          "summary": [{"type": "summary_text", "text": reasoning}]})  # fmt: skip
    input_tokens = max(1, len(json.dumps(request.get("input", []))) // 4)
    output_tokens = max(1, len(json.dumps(output)) // 4)
    reasoning_tokens = max(1, len(reasoning) // 4) if reasoning is not None else 0
    cut = scenario.cut_of(step)
    if cut is not None:  # the API's way: an incomplete response, and why
        output[-1]["status"] = "incomplete"
    return {
        "id": f"resp_{scenario.name}_{turn}",
        "object": "response",
        "created_at": 1_800_000_000 + turn,
        "status": "completed" if cut is None else "incomplete",
        "incomplete_details": None if cut is None else {"reason": INCOMPLETE_REASONS[cut]},
        "model": "gpt-4o-mini-2024-07-18",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "temperature": request.get("temperature"),
        "top_p": None,
        "instructions": request.get("instructions"),
        "metadata": {},
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def stream_events(answer: dict[str, Any]) -> bytes:
    """A response as the Responses API streams it: ``response.created`` (no output yet), each
    output item opened, its text (``output_text.delta``) or its call's arguments
    (``function_call_arguments.delta``) in pieces and closed whole, then
    ``response.completed`` with the full response and its usage."""
    events: list[str] = []

    def emit(kind: str, **body: Any) -> None:
        events.append(sse({"type": kind, "sequence_number": len(events), **body}, kind))

    pending = {**answer, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for i, item in enumerate(answer["output"]):
        at = {"output_index": i, "item_id": item["id"]}
        if item["type"] == "message":
            part = item["content"][0]
            opened = {**item, "status": "in_progress", "content": []}
            emit("response.output_item.added", output_index=i, item=opened)
            emit("response.content_part.added", **at, content_index=0,
                 part={**part, "text": ""})  # fmt: skip
            for delta in pieces(part["text"]):
                emit("response.output_text.delta", **at, content_index=0, delta=delta,
                     logprobs=[])  # fmt: skip
            emit("response.output_text.done", **at, content_index=0, text=part["text"],
                 logprobs=[])  # fmt: skip
            emit("response.content_part.done", **at, content_index=0, part=part)
        elif item["type"] == "reasoning":  # the summary's text in deltas, part by part
            emit("response.output_item.added", output_index=i, item={**item, "summary": []})
            for j, part in enumerate(item["summary"]):
                at_part = {**at, "summary_index": j}
                emit("response.reasoning_summary_part.added", **at_part,
                     part={**part, "text": ""})  # fmt: skip
                for delta in pieces(part["text"]):
                    emit("response.reasoning_summary_text.delta", **at_part, delta=delta)
                emit("response.reasoning_summary_text.done", **at_part, text=part["text"])
                emit("response.reasoning_summary_part.done", **at_part, part=part)
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
            emit("response.output_item.added", output_index=i, item=opened)
            for delta in pieces(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=delta)
            emit("response.function_call_arguments.done", **at, name=item["name"],
                 arguments=item["arguments"])  # fmt: skip
        emit("response.output_item.done", output_index=i, item=item)
    if answer["status"] == "incomplete":  # a cut-off answer ends the stream so
        emit("response.incomplete", response=answer)
    else:
        emit("response.completed", response=answer)
    return "".join(events).encode()


class FakeOpenAIResponses(ScriptedServer):
    """``with FakeOpenAIResponses(scenario) as base_url:`` serves until the block ends."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._lock = threading.Lock()
        self._calls = 0
        self.fail_first = FailFirst(scenario.model_transient_failures)
        super().__init__(self._answer, url_path="/v1")

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.endswith("/responses"):
            return "only /v1/responses is scripted"
        if self.fail_first.take():
            return transient_outage()
        with self._lock:
            turn = self._calls
            self._calls += 1
        if self.scenario.model_fails(turn):
            return outage()
        answer = response(self.scenario, body, turn)
        if body.get("stream"):
            return Reply(stream_events(answer), content_type="text/event-stream")
        return Reply(answer)
