"""A scripted Anthropic Messages server on 127.0.0.1 (ephemeral port): ``POST /v1/messages``.

The scenario's next turn is chosen by how many assistant messages the request already holds,
as in ``fake_openai.py``; a tool-requesting turn answers with ``tool_use`` content blocks and
``stop_reason: tool_use``, a final turn with one ``text`` block and ``stop_reason: end_turn``.
The real ``anthropic`` client and its real instrumentations run unchanged against it while the
ground truth stays the script. A request with ``stream: true`` gets the same message as
server-sent events (``stream_events``): text and ``tool_use`` input arrive in several deltas
(``input_json_delta`` pieces of the arguments' JSON), the stop reason in ``message_delta``.
A turn the scenario gives reasoning (``Scenario.reasoning``) starts with an extended-thinking
``thinking`` block and its ``signature`` (streamed as ``thinking_delta`` pieces and one
``signature_delta``), as the API answers with thinking enabled.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from scenarios import Scenario
from scripted_server import STREAM_CHUNK, Reply, ScriptedServer, pieces, sse

MODEL = "claude-sonnet-4-5-20250929"
STOP_REASONS = {"length": "max_tokens", "content_filter": "refusal"}
"""``stop_reason`` of an answer the scenario cuts off (``Scenario.cut``): the token limit, or
the API's streaming classifiers stopping the reply (``refusal``)."""


def message(scenario: Scenario, request: dict[str, Any]) -> dict[str, Any]:
    """The scripted Messages API response to one request."""
    messages = request.get("messages", [])
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    content: list[dict[str, Any]]
    if isinstance(step, str):
        content = [{"type": "text", "text": step}]
        stop_reason = STOP_REASONS.get(scenario.cut_of(step) or "", "end_turn")
    else:
        content = [
            {"type": "tool_use", "id": f"toolu_{turn:02d}{j:02d}", "name": name, "input": args}
            for j, (name, args) in enumerate(step)
        ]
        stop_reason = "tool_use"
    reasoning = scenario.reasoning_of(turn)
    if reasoning is not None:  # extended thinking: a signed ``thinking`` block comes first
        content.insert(0, {"type": "thinking", "thinking": reasoning,
                           "signature": signature(scenario, turn)})  # fmt: skip
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


def signature(scenario: Scenario, turn: int) -> str:
    """A stand-in for the opaque signature the API puts on a ``thinking`` block (base64 text
    the client hands back unread): clients and instrumentations only carry it along."""
    return base64.b64encode(f"sig:{scenario.name}:{turn}".encode()).decode()


def stream_events(msg: dict[str, Any], chunk: int | None = None) -> bytes:
    """One Messages API response as the event stream the streaming API sends: the message
    without content, then each content block (its text, or a ``tool_use`` block's input as
    ``input_json_delta`` pieces) in deltas of ``chunk`` characters (``None``: whole, as Claude
    Code's captures were made), then the stop reason and output usage."""
    # As the real API: message_start's usage counts the first output token only; the total
    # comes with the stop reason in message_delta.
    head = {**msg, "content": [], "stop_reason": None,
            "usage": {**msg["usage"], "output_tokens": 1}}  # fmt: skip
    out = [sse({"type": "message_start", "message": head}, "message_start")]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in pieces(block["text"], chunk)]
        elif block["type"] == "thinking":  # the thinking text in deltas, then its signature
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": t} for t in pieces(block["thinking"], chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in pieces(json.dumps(block["input"]), chunk)
            ]
        out.append(
            sse({"type": "content_block_start", "index": i, "content_block": start},
                "content_block_start")
        )  # fmt: skip
        out += [
            sse({"type": "content_block_delta", "index": i, "delta": d}, "content_block_delta")
            for d in deltas
        ]
        out.append(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    out.append(
        sse({"type": "message_delta",
             "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
             "usage": {"output_tokens": msg["usage"]["output_tokens"]}}, "message_delta")
    )  # fmt: skip
    out.append(sse({"type": "message_stop"}, "message_stop"))
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
            events = stream_events(msg, STREAM_CHUNK)
            return Reply(events, headers=headers, content_type="text/event-stream")
        return Reply(msg, headers=headers)
