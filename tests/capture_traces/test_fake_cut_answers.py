"""Each scripted model API cuts the ``x_answer_*`` answer off in its own wire format.

The ``x_answer_truncated`` / ``x_answer_filtered`` captures' ground truth rests on it: the
search turn ends as usual (a tool request), the answering turn carries the scripted fragment
and says why the model stopped (the token limit, the content filter) the way that API does,
streamed or not, so real clients and instrumentations record what they would in production.
Exercised over real HTTP on 127.0.0.1, as the clients talk to the fakes.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fake_anthropic import FakeAnthropic
from fake_bedrock import FakeBedrock
from fake_gemini import FakeGemini
from fake_ollama import FakeOllama
from fake_openai import FakeOpenAI
from fake_openai_responses import FakeOpenAIResponses
from scenarios import FILTERED_ANSWER, SCENARIOS, TOOL_SCHEMAS, TRUNCATED_ANSWER

TEXT = {"length": TRUNCATED_ANSWER, "content_filter": FILTERED_ANSWER}
NAME = {"length": "x_answer_truncated", "content_filter": "x_answer_filtered"}
CUTS = ["length", "content_filter"]


def post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return bytes(response.read())


def events(raw: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream (``[DONE]`` left out)."""
    lines = raw.decode().splitlines()
    return [json.loads(x[6:]) for x in lines if x.startswith("data: ") and x != "data: [DONE]"]


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_completions_finish_reason(cut: str, stream: bool) -> None:
    asked = {"role": "assistant", "content": None, "tool_calls": []}
    body = {"model": "m", "tools": TOOL_SCHEMAS, "stream": stream}
    with FakeOpenAI(SCENARIOS[NAME[cut]]) as base:
        first = json.loads(post(f"{base}/chat/completions", {**body, "stream": False}))
        assert first["choices"][0]["finish_reason"] == "tool_calls"  # the search ends as usual
        raw = post(f"{base}/chat/completions", {**body, "messages": [asked]})
    if not stream:
        choice = json.loads(raw)["choices"][0]
        assert choice["finish_reason"] == cut and choice["message"]["content"] == TEXT[cut]
        return
    chunks = [c for c in events(raw) if c["choices"]]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == TEXT[cut]
    assert chunks[-1]["choices"][0]["finish_reason"] == cut


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_incomplete(cut: str, stream: bool) -> None:
    with FakeOpenAIResponses(SCENARIOS[NAME[cut]]) as base:
        first = json.loads(post(f"{base}/responses", {"input": []}))
        assert first["status"] == "completed" and first["incomplete_details"] is None
        raw = post(f"{base}/responses", {"input": [], "stream": stream})
    if stream:
        last = events(raw)[-1]
        assert last["type"] == "response.incomplete"
        answer = last["response"]
    else:
        answer = json.loads(raw)
    reason = {"length": "max_output_tokens", "content_filter": "content_filter"}[cut]
    assert answer["status"] == "incomplete" and answer["incomplete_details"] == {"reason": reason}
    assert answer["output"][-1]["content"][0]["text"] == TEXT[cut]


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_stop_reason(cut: str, stream: bool) -> None:
    asked = {"role": "assistant", "content": [{"type": "tool_use"}]}
    with FakeAnthropic(SCENARIOS[NAME[cut]]) as base:
        raw = post(f"{base}/v1/messages", {"messages": [asked], "stream": stream})
    want = {"length": "max_tokens", "content_filter": "refusal"}[cut]
    if stream:
        deltas = [e["delta"] for e in events(raw) if e["type"] == "message_delta"]
        assert deltas[-1]["stop_reason"] == want
        return
    message = json.loads(raw)
    assert message["stop_reason"] == want and message["content"][0]["text"] == TEXT[cut]


@pytest.mark.parametrize("cut", CUTS)
def test_gemini_finish_reason(cut: str) -> None:
    asked = {"role": "model", "parts": [{"functionCall": {"name": "search_docs"}}]}
    with FakeGemini(SCENARIOS[NAME[cut]]) as base:
        url = f"{base}/v1beta/models/gemini-2.5-flash:generateContent"
        first = json.loads(post(url, {"contents": []}))["candidates"][0]
        candidate = json.loads(post(url, {"contents": [asked]}))["candidates"][0]
    assert first["finishReason"] == "STOP"
    assert candidate["finishReason"] == {"length": "MAX_TOKENS", "content_filter": "SAFETY"}[cut]
    assert candidate["content"]["parts"] == [{"text": TEXT[cut]}]


@pytest.mark.parametrize("cut", CUTS)
def test_bedrock_stop_reason(cut: str) -> None:
    asked = {"role": "assistant", "content": [{"toolUse": {}}]}
    with FakeBedrock(SCENARIOS[NAME[cut]]) as base:
        answer = json.loads(post(f"{base}/model/m/converse", {"messages": [asked]}))
    assert (
        answer["stopReason"] == {"length": "max_tokens", "content_filter": "content_filtered"}[cut]
    )
    assert answer["output"]["message"]["content"] == [{"text": TEXT[cut]}]


def test_ollama_done_reason_length() -> None:
    """Ollama has no content filter: only the token limit's cut is served."""
    asked = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "x"}}]}
    with FakeOllama(SCENARIOS["x_answer_truncated"]) as host:
        body = {"model": "m", "messages": [asked], "stream": False}
        answer = json.loads(post(f"{host}/api/chat", body))
    assert answer["done_reason"] == "length" and answer["message"]["content"] == TRUNCATED_ANSWER
