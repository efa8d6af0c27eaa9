"""Tool requests a model wrote as text in its reply, read as the requests they are.

Some frameworks do not use the chat API's tool calls: they describe the tools in the system
message and parse the model's reply text for requests in a format of their own, then run
them (Qwen-Agent's default ``nous`` prompt and the many open models served without a tool
parser: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks, the Hermes
format; Langroid's default tool mode: one JSON object ``{"request": "<tool>", ...}`` per
request). The instrumentation records such a reply as text, so without this pass the model
call reads as one that asked for nothing, and the linker can only give it a hidden-call
placeholder (``hides_tool_calls``) or match nothing to the tool spans after it.

``requests_in_text`` rewrites the output of a model call whose recorded reply is made of
such requests into the ``tool_call`` parts a chat API would have given, marked ``in_text``;
the linker then matches them to the tool steps of the scope by name, or synthesizes a call
no span ran (``_synthesize`` keeps its outcome unknown: a request written is not a call
made). It fails closed: a reply is read only when every block or object parses as one
request naming a tool the call's input told the model of (its offered tools, or a name its
input messages mention); anything else leaves the text as it is, and today's linking.
With content capture off there is no text, and nothing changes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from otel_oracles._native import written_request_candidates

if TYPE_CHECKING:
    from otel_oracles.mapping._mapper import Draft

MAX_TEXT = 65_536
"""A reply longer than this is not read (a request is a few hundred characters; the parse
is linear, but a hostile trace should not make every model call cost its reply's size)."""

MAX_REQUESTS = 32
"""More requests than this in one reply are not read: real replies ask for a few tools at a
time, and each request named is looked for in the call's whole input (``_told``), so a
hostile reply of thousands of short requests would multiply that search."""

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_DECODER = json.JSONDecoder()


def requests_in_text(drafts: list[Draft]) -> None:
    """Every model call whose output shows no requested call, and whose reply text is a
    sequence of written tool requests (``parse_requests``) naming tools its input told the
    model of, gets those requests as ``tool_call`` parts (``in_text``) in place of the text
    that held them; any text written before a ``<tool_call>`` block stays a text part."""
    # The core picks the model calls worth reading (``written_request_candidates``: a reply
    # holding no ``{`` and no ``<tool_call>`` is no request), so most drafts cost no Python.
    for draft in written_request_candidates(drafts):
        out = draft.fields.get("output_messages")
        if not isinstance(out, list) or len(out) != 1 or not isinstance(out[0], dict):
            continue
        parts = out[0].get("parts")
        if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
            continue
        part = parts[0]
        text = part.get("content")
        if part.get("type") != "text" or not isinstance(text, str):
            continue
        parsed = parse_requests(text)
        if parsed is None:
            continue
        lead, requests = parsed
        if not all(_told(draft, name) for name, _ in requests):
            continue  # a tool the model was not told of: not certainly a request
        new_parts: list[dict[str, Any]] = [{"type": "text", "content": lead}] if lead else []
        new_parts += [
            {"type": "tool_call", "name": name, "arguments": arguments, "in_text": True}
            for name, arguments in requests
        ]
        draft.fields["output_messages"] = [{**out[0], "parts": new_parts}]


def parse_requests(text: str) -> tuple[str, list[tuple[str, dict[str, Any]]]] | None:
    """The text before the requests and the requests (tool name, arguments) a reply is made
    of, or ``None`` unless the whole reply is read with certainty: one or more
    ``<tool_call>`` blocks (after optional text, with only white space between and after
    them), each one JSON object with a ``name`` and an ``arguments`` object and nothing else;
    or one or more JSON objects, each with a ``request`` naming the tool and its arguments as
    the other keys, with only white space around them."""
    if len(text) > MAX_TEXT:
        return None
    parsed = _tool_call_blocks(text) if _OPEN in text else _request_objects(text)
    if parsed is None or len(parsed[1]) > MAX_REQUESTS:
        return None
    return parsed


def _tool_call_blocks(text: str) -> tuple[str, list[tuple[str, dict[str, Any]]]] | None:
    start = text.find(_OPEN)
    lead = text[:start].strip()
    requests: list[tuple[str, dict[str, Any]]] = []
    pos = start
    while pos < len(text):
        if not text.startswith(_OPEN, pos):
            return None  # text after a block, or a block not opened: not a plain request
        end = text.find(_CLOSE, pos)
        if end < 0:
            return None
        body = _json_object(text[pos + len(_OPEN) : end])
        if body is None or set(body) != {"name", "arguments"}:
            return None
        name, arguments = body["name"], body["arguments"]
        if isinstance(arguments, str):  # some models write the arguments as a JSON string
            arguments = _json_object(arguments)
        if not isinstance(name, str) or not name.strip() or not isinstance(arguments, dict):
            return None
        requests.append((name.strip(), arguments))
        pos = _skip_space(text, end + len(_CLOSE))
    return lead, requests


def _request_objects(text: str) -> tuple[str, list[tuple[str, dict[str, Any]]]] | None:
    pos = _skip_space(text, 0)
    if not text.startswith("{", pos):
        return None
    requests: list[tuple[str, dict[str, Any]]] = []
    while pos < len(text):
        try:
            obj, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        name = obj.pop("request", None)
        if not isinstance(name, str) or not name.strip():
            return None
        requests.append((name.strip(), obj))
        pos = _skip_space(text, pos)
    return "", requests


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _told(gen: Draft, name: str) -> bool:
    """Whether the model call's input told the model of a tool ``name``: among the tools it
    offered, or written in one of its input messages' texts (the tool descriptions such
    frameworks put in the system message)."""
    offered = gen.fields.get("tools_offered")
    if isinstance(offered, (list, tuple)) and name in offered:
        return True
    for msg in gen.fields.get("input_messages") or ():
        parts = msg.get("parts") if isinstance(msg, dict) else None
        for part in parts if isinstance(parts, list) else ():
            text = part.get("content") if isinstance(part, dict) else None
            if isinstance(text, str) and name in text:
                return True
    return False
