"""The scripted Ollama server (``fake_ollama.py``) answers the scenario in Ollama's own shape.

The ``ollama-*`` captures' ground truth rests on it: each request gets the script's turn chosen
by the assistant messages it holds, a tool turn as ``message.tool_calls`` with each call's name
and its arguments as an object and no id (Ollama gives none), the final turn as text, both
with ``done_reason`` ``stop``; a model outage is Ollama's ``{"error": ...}`` with HTTP 500, a
transient failure (``u_model_retry``) the same with HTTP 503 before the first turn.
Exercised over real HTTP on 127.0.0.1, as the Ollama client talks to it. Also here: the
OpenAI fake serves a chat-completions path with a query string (Azure's ``api-version``).
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fake_ollama import MODEL, FakeOllama
from fake_openai import FakeOpenAI
from scenarios import ANSWER, SCENARIOS, SEARCH, TOOL_SCHEMAS
from scripted_server import OUTAGE_MESSAGE, TRANSIENT_MESSAGE

PROMPT = [{"role": "user", "content": "What is the refund window?"}]
ASKED = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "x"}}]}


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:  # an error answer is a response too: closed, its socket with it
            return error.code, json.loads(error.read() or b"{}")


def chat(host: str, messages: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    body = {"model": MODEL, "messages": messages, "tools": TOOL_SCHEMAS, "stream": False}
    return post(f"{host}/api/chat", body)


def test_a_tool_turn_then_the_answer_in_ollamas_shape() -> None:
    with FakeOllama(SCENARIOS["a_happy"]) as host:
        status, first = chat(host, PROMPT)
        assert status == 200 and first["done"] is True and first["done_reason"] == "stop"
        name, arguments = SEARCH
        assert first["message"]["tool_calls"] == [
            {"function": {"index": 0, "name": name, "arguments": arguments}}
        ]
        assert first["prompt_eval_count"] > 0 and first["eval_count"] > 0
        tool = {"role": "tool", "content": "{}", "tool_name": name}
        status, second = chat(host, [*PROMPT, ASKED, tool])
        assert status == 200 and second["message"] == {"role": "assistant", "content": ANSWER}


def test_an_outage_is_ollamas_error_with_http_500() -> None:
    scenario = SCENARIOS["o_run_error"]
    with FakeOllama(scenario) as host:
        assert chat(host, PROMPT)[0] == 200
        tool = {"role": "tool", "content": "{}", "tool_name": "search_docs"}
        assert chat(host, [*PROMPT, ASKED, tool]) == (500, {"error": OUTAGE_MESSAGE})


def test_a_transient_failure_is_ollamas_error_with_http_503_then_the_turn() -> None:
    """``u_model_retry``: the first request is answered HTTP 503 and consumes no turn; the
    next one (the same request again) gets the script's first turn."""
    with FakeOllama(SCENARIOS["u_model_retry"]) as host:
        assert chat(host, PROMPT) == (503, {"error": TRANSIENT_MESSAGE})
        status, first = chat(host, PROMPT)
        assert (
            status == 200 and first["message"]["tool_calls"][0]["function"]["name"] == "search_docs"
        )


@pytest.mark.parametrize("path", ["/api/generate", "/api/chat?stream=1"])
def test_only_non_streamed_chat_is_scripted(path: str) -> None:
    with FakeOllama(SCENARIOS["a_happy"]) as host:
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(
                urllib.request.Request(f"{host}{path}", b'{"stream": true}'), timeout=10
            )
        with raised.value as error:
            assert error.code == 404


def test_the_openai_fake_ignores_a_query_string_on_its_route() -> None:
    """Azure's SDK posts to ``<endpoint>/chat/completions?api-version=...``."""
    with FakeOpenAI(SCENARIOS["a_happy"]) as base_url:
        url = f"{base_url}/chat/completions?api-version=2024-05-01-preview"
        status, answer = post(url, {"model": "m", "messages": PROMPT, "tools": TOOL_SCHEMAS})
        assert status == 200
        assert answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "search_docs"
