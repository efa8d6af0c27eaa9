"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (ephemeral port).

The model's answer at each call is the scenario's next turn, chosen by how many assistant
messages the request already holds, so a real client library and its real instrumentation
run unchanged while the ground truth stays known. A request with ``stream: true`` gets the
same answer as ``chat.completion.chunk`` server-sent events (``stream_chunks``). A turn the
scenario gives reasoning (``Scenario.reasoning``) carries it as the message's
``reasoning_content`` (the field DeepSeek, vLLM and LiteLLM use; the openai client keeps it as
an extra field), streamed as ``reasoning_content`` deltas before the content. An answer the
scenario cuts off (``Scenario.cut``) ends with ``finish_reason`` ``length`` or
``content_filter``, its text the part generated before the cut.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from scenarios import SCRIPTED_TOOLS, Scenario
from scripted_server import FailFirst, Reply, ScriptedServer, outage, pieces, sse, transient_outage


def completion(
    scenario: Scenario, request: dict[str, Any], turn: int | None = None
) -> dict[str, Any]:
    """The scripted answer to one request; ``turn`` overrides counting assistant messages."""
    messages = request.get("messages", [])
    if turn is None:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    if scenario.turn_limit is not None and (
        not request.get("tools") or request.get("tool_choice") == "none"
    ):  # a framework past its turn limit asks for a final answer: no tools, or none allowed
        step = scenario.turns[-1]
    if asks_for_the_type(scenario, request):
        step = scenario.turns[-1]  # a request for the structured answer alone
    message: dict[str, Any] = {"role": "assistant", "content": None}
    reasoning = scenario.reasoning_of(turn)
    if reasoning is not None:  # DeepSeek / vLLM / LiteLLM style: a field beside the content
        message["reasoning_content"] = reasoning
    output = output_tool(scenario, request.get("tools"))
    if isinstance(step, str) and output is not None:  # the answer through the output tool
        step = [(output, json.loads(step))]
    if isinstance(step, str):
        message["content"] = step
        finish = scenario.cut_of(step) or "stop"  # "length" / "content_filter": cut off
    else:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{j}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for j, (name, args) in enumerate(step)
        ]
        finish = "tool_calls"
    prompt_tokens = max(1, len(json.dumps(messages)) // 4)
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {
        "id": f"chatcmpl-{scenario.name}-{turn}",
        "object": "chat.completion",
        "created": 1_800_000_000 + turn,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_capture",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def asks_for_the_type(scenario: Scenario, request: dict[str, Any]) -> bool:
    """Whether a ``structured`` scenario's request asks for the output type alone: a
    ``json_schema`` response format and no tools, as a framework sends after the agent's
    answer to turn it into the type (LlamaIndex's ``output_cls`` call, from a fresh history
    the assistant messages cannot place in the script). Such a request gets the last turn."""
    response_format = request.get("response_format")
    return (
        scenario.structured
        and not request.get("tools")
        and isinstance(response_format, dict)
        and response_format.get("type") == "json_schema"
    )


def output_tool(scenario: Scenario, tools: Any) -> str | None:
    """The tool a ``structured`` scenario's answer is delivered through, when the request
    offers one: a function tool that is none of the scripted tools and takes every field of
    the answer (pydantic-ai's ``final_result``, ADK's ``set_model_response``, LangChain's
    tool strategy named after the output type). ``None``: the answer is the JSON text (a
    response-format request, or a framework that parses the model's text)."""
    want = scenario.structured_answer
    if want is None or not isinstance(tools, list):
        return None
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or fn.get("name") in SCRIPTED_TOOLS:
            continue
        properties = (fn.get("parameters") or {}).get("properties") or {}
        if isinstance(fn.get("name"), str) and set(want) <= set(properties):
            return str(fn["name"])
    return None


def stream_chunks(answer: dict[str, Any], include_usage: bool) -> bytes:
    """A completion as the SSE stream the API sends for ``stream: true``: the role, then the
    text or each tool call's id and name followed by its arguments in pieces, then the finish
    reason with an empty delta, then (``stream_options.include_usage``) a chunk with no
    choices and the usage, then ``[DONE]``."""
    choice = answer["choices"][0]
    message = choice["message"]
    head = {k: answer[k] for k in ("id", "created", "model", "system_fingerprint")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        return sse(body)

    out = [chunk({"role": "assistant", "content": "" if message["content"] else None})]
    if message.get("reasoning_content"):  # the reasoning streams first, as its own deltas
        out += [chunk({"reasoning_content": part}) for part in pieces(message["reasoning_content"])]
    if message["content"]:
        out += [chunk({"content": part}) for part in pieces(message["content"])]
    for j, call in enumerate(message.get("tool_calls", [])):
        fn = call["function"]
        opening = {"id": call["id"], "type": "function", "function": {"name": fn["name"],
                   "arguments": ""}}  # fmt: skip
        out.append(chunk({"tool_calls": [{"index": j, **opening}]}))
        out += [
            chunk({"tool_calls": [{"index": j, "function": {"arguments": part}}]})
            for part in pieces(fn["arguments"])
        ]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append(sse({**head, "object": "chat.completion.chunk", "choices": [],
                        "usage": answer["usage"]}))  # fmt: skip
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def call_order() -> Callable[[dict[str, Any]], int]:
    """A ``turn_of`` that answers requests in arrival order (0, 1, 2, ...).

    For frameworks whose sub-agents start from a fresh history (smolagents managed agents,
    CrewAI delegation), so counting assistant messages would replay the first turn; their
    calls are sequential, so arrival order is the script's order."""
    lock = threading.Lock()
    count = [0]

    def turn_of(_request: dict[str, Any]) -> int:
        with lock:
            count[0] += 1
            return count[0] - 1

    return turn_of


class FakeOpenAI(ScriptedServer):
    """``with FakeOpenAI(scenario) as base_url:`` serves until the block ends.

    ``turn_of(request)`` picks the scripted turn (default: assistant messages in the request)."""

    def __init__(
        self, scenario: Scenario, turn_of: Callable[[dict[str, Any]], int] | None = None
    ) -> None:
        self.scenario = scenario
        self.turn_of = turn_of
        self.fail_first = FailFirst(scenario.model_transient_failures)
        super().__init__(self._answer, url_path="/v1")

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        # The query is no part of the route: Azure's SDKs add ``?api-version=...``.
        if not path.partition("?")[0].endswith("/chat/completions"):
            return "only /v1/chat/completions is scripted"
        if self.fail_first.take():
            return transient_outage()
        if self.turn_of:
            turn = self.turn_of(body)
        else:
            turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if self.scenario.model_fails(turn):
            return outage()
        answer = completion(self.scenario, body, turn)
        # A run killed in this request (z_killed_*): half of a streamed answer, none of a
        # whole one, reaches the client before its process dies.
        killed = self.scenario.killed(turn)
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            data = stream_chunks(answer, usage)
            kill = len(data) // 2 if killed else None
            return Reply(data, content_type="text/event-stream", kill_after=kill)
        return Reply(answer, kill_after=0 if killed else None)
