"""The capture matrix's scripted model servers stream exactly the answer they give whole.

The ``*-stream`` captures (tests/testdata/traces/*-stream) rest on this: a streamed answer,
put back together from its server-sent events the way a client does, must be the scripted
turn, so those captures keep the same ground truth as their non-streamed sources. Each fake
runs as a real HTTP server on 127.0.0.1; the events are read off the wire and assembled here,
independently of the fakes' own code. ``capture.py``'s check that a run exported a model-call
span is tested here too.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

import capture
from fake_anthropic import FakeAnthropic, message
from fake_openai import FakeOpenAI, completion
from fake_openai_responses import FakeOpenAIResponses, response
from scenarios import SCENARIOS

SCENARIO = SCENARIOS["h_coding_agent"]  # long tool arguments (a file's content) and a text turn
TURNS = range(len(SCENARIO.turns))


def post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["Content-Type"], reply.read().decode()


def events(body: str) -> list[tuple[str | None, Any]]:
    """The (event name, decoded data) pairs of a server-sent event stream."""
    out: list[tuple[str | None, Any]] = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = fields["data"]
        out.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return out


def history(turn: int) -> list[dict[str, Any]]:
    """A chat history that makes the fakes answer ``turn`` (they count assistant messages)."""
    return [{"role": "user", "content": SCENARIO.prompt}] + [
        {"role": "assistant", "content": "..."} for _ in range(turn)
    ]


@pytest.mark.parametrize("turn", TURNS)
def test_chat_completion_chunks_add_up_to_the_scripted_completion(turn: int) -> None:
    request = {"model": "gpt-4o-mini", "messages": history(turn), "stream": True,
               "stream_options": {"include_usage": True}}  # fmt: skip
    with FakeOpenAI(SCENARIO) as base_url:
        content_type, body = post(f"{base_url}/chat/completions", request)
    assert content_type == "text/event-stream"
    stream = [data for _, data in events(body)]
    assert stream[-1] == "[DONE]"
    chunks = stream[:-1]
    text, calls, finish, usage = "", {}, None, None
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        usage = chunk.get("usage") or usage
        for choice in chunk["choices"]:
            text += choice["delta"].get("content") or ""
            finish = choice["finish_reason"] or finish
            for part in choice["delta"].get("tool_calls", []):
                call = calls.setdefault(part["index"], {"id": None, "name": "", "arguments": ""})
                call["id"] = part.get("id") or call["id"]
                call["name"] += part.get("function", {}).get("name", "")
                call["arguments"] += part.get("function", {}).get("arguments", "")
    assert chunks[-1]["choices"] == [] and usage is not None, "usage closes the stream"

    whole = completion(SCENARIO, request, turn)
    want = whole["choices"][0]
    assert (text or None) == want["message"]["content"]
    assert [calls[i] for i in sorted(calls)] == [
        {"id": c["id"], **c["function"]} for c in want["message"].get("tool_calls", [])
    ]
    assert finish == want["finish_reason"] and usage == whole["usage"]
    assert len(chunks) > 4, "the answer arrives in several deltas"


@pytest.mark.parametrize("turn", TURNS)
def test_anthropic_events_add_up_to_the_scripted_message(turn: int) -> None:
    request = {"model": "claude", "messages": history(turn), "stream": True}
    with FakeAnthropic(SCENARIO) as base_url:
        content_type, body = post(f"{base_url}/v1/messages", request)
    assert content_type == "text/event-stream"
    stream = events(body)
    assert [name for name, _ in stream] == [data["type"] for _, data in stream]
    head = stream[0][1]["message"]
    blocks: list[dict[str, Any]] = []
    pieces: list[list[str]] = []
    stop_reason, output_tokens = None, None
    for name, data in stream[1:]:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
            pieces.append([])
        elif name == "content_block_delta":
            delta = data["delta"]
            pieces[data["index"]].append(delta.get("text", delta.get("partial_json", "")))
        elif name == "message_delta":
            stop_reason = data["delta"]["stop_reason"]
            output_tokens = data["usage"]["output_tokens"]
    for block, parts in zip(blocks, pieces, strict=True):
        if block["type"] == "text":
            block["text"] = "".join(parts)
        else:
            block["input"] = json.loads("".join(parts))
    assert stream[-1][0] == "message_stop"

    whole = message(SCENARIO, request)
    assert blocks == whole["content"] and stop_reason == whole["stop_reason"]
    assert output_tokens == whole["usage"]["output_tokens"]
    assert head["stop_reason"] is None and head["content"] == []
    assert max(len(p) for p in pieces) > 1, "text or tool input arrives in several deltas"


def test_responses_events_add_up_to_the_scripted_response() -> None:
    request = {"model": "gpt-4o-mini", "input": [], "stream": True}
    with FakeOpenAIResponses(SCENARIO) as base_url:
        streams = [events(post(f"{base_url}/responses", request)[1]) for _ in TURNS]
    for turn, stream in enumerate(streams):
        kinds = [data["type"] for _, data in stream]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert [data["sequence_number"] for _, data in stream] == list(range(len(stream)))
        items: dict[int, dict[str, Any]] = {}
        for _, data in stream:
            kind = data["type"]
            if kind == "response.output_item.added":
                items[data["output_index"]] = {**data["item"], "streamed": ""}
            elif kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
                items[data["output_index"]]["streamed"] += data["delta"]
        whole = response(SCENARIO, request, turn)
        for i, item in enumerate(whole["output"]):
            done = item["content"][0]["text"] if item["type"] == "message" else item["arguments"]
            assert items[i]["streamed"] == done and items[i]["id"] == item["id"]
        assert stream[-1][1]["response"] == whole
        assert stream[0][1]["response"]["output"] == []


def test_capture_fails_a_run_without_model_call_spans() -> None:
    """A run whose instrumentation recorded nothing, or nothing of the model calls, must stop
    the capture with a line naming the source and the scenario variant."""
    with pytest.raises(SystemExit) as nothing:
        capture.require_model_spans("genai-anthropic-stream", "d_forbidden_tool", [])
    assert str(nothing.value) == (
        "genai-anthropic-stream d_forbidden_tool: the instrumentation exported no spans"
    )
    app_only = [SimpleNamespace(name="agent_run", attributes={})]
    with pytest.raises(SystemExit) as no_model:
        capture.require_model_spans("openinference-openai-stream", "a_happy.nocontent", app_only)
    assert str(no_model.value).startswith(
        "openinference-openai-stream a_happy.nocontent: no model-call span among the 1 "
        "exported (agent_run)"
    )
    for attributes in (
        {"gen_ai.operation.name": "chat"},
        {"openinference.span.kind": "LLM"},
        {"llm.model_name": "gpt-4o-mini"},
    ):
        spans = [*app_only, SimpleNamespace(name="call", attributes=attributes)]
        capture.require_model_spans("any", "a_happy", spans)  # no exit: a model call is there
