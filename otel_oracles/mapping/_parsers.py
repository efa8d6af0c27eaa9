"""Named parsers that mapping files reference with ``parse:``.

Declarative YAML cannot say "rebuild a chat message list from flattened indexed keys" or "read
a Python ``repr`` of a tool call", so each such transformation is a small named function here,
referenced by name from the YAML. Adding one is adding a function to ``PARSERS``: the loader
rejects unknown names, so a YAML typo fails at load time.

Every message parser returns the one internal message shape, the OTel GenAI parts format
(semconv v1.37+ ``gen_ai.input.messages``), whatever the convention it reads::

    {"role": "assistant", "parts": [
        {"type": "text", "content": "..."},
        {"type": "tool_call", "id": "call_1", "name": "search", "arguments": {...}},
        {"type": "tool_call_response", "id": "call_1", "response": ...}],
     "finish_reason": "tool_call"}

A part whose content was not captured keeps its structure and lacks the content key (or has
``None``), so later stages can tell "dropped" from "empty". Parsers never raise on malformed
input (instrumentations emit wrong things): they return ``None`` or what they could read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from otel_oracles.mapping._literal import parse_python_literal, parse_python_repr
from otel_oracles.model.span import EventRecord

log = logging.getLogger(__name__)

Message = dict[str, Any]
Parser = Callable[[Any], Any]

# ---- scalars ------------------------------------------------------------------------------


def parse_json(value: Any) -> Any:
    """A JSON string becomes its value; anything else (already structured, or not JSON) is
    returned unchanged, because producers send both forms (semconv allows either on spans)."""
    if isinstance(value, str | bytes):
        text = value.strip() if isinstance(value, str) else value.strip().decode("utf-8", "replace")
        if text[:1] in ("{", "[", '"') or text in ("true", "false", "null") or _numeric(text):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return value
    return value


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_json_or_text(value: Any) -> Any:
    """JSON objects/arrays are parsed; any other string stays text (a tool's plain-text
    result such as ``"SearchBackendError: ..."`` is not JSON and must not be mangled)."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def parse_non_empty(value: Any) -> Any:
    """``None`` for an empty object, array or string, else the value. For producers that
    write ``{}`` where content capture is off (Google ADK schema 1's
    ``gcp.vertex.agent.tool_call_args`` / ``tool_response``): an empty payload is no evidence
    of what a tool was given or returned. Chain it after ``json``."""
    if isinstance(value, dict | list | str) and not value:
        return None
    return value


def parse_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def parse_string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        except RecursionError:
            # JSON text in an attribute may nest up to orjson's 1024 levels, past what the
            # encoder recurses through: no usable string (as an unparseable int is no int).
            return None
    return str(value)


def parse_string_list(value: Any) -> list[str] | None:
    """``["stop"]``, ``"stop"`` or a JSON array string all become a list of strings."""
    value = parse_json(value) if isinstance(value, str) and value.startswith("[") else value
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return None


# ---- helpers ------------------------------------------------------------------------------


def unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"0.message.role": "user"}`` -> ``{"0": {"message": {"role": "user"}}}``. Indexed
    levels stay dicts keyed by the index string; ``indexed`` turns them into ordered lists."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        segments = key.split(".")
        cursor: Any = root
        for seg in segments[:-1]:
            nxt = cursor.get(seg)
            if not isinstance(nxt, dict):
                nxt = {}
                cursor[seg] = nxt
            cursor = nxt
        if isinstance(cursor, dict) and not isinstance(cursor.get(segments[-1]), dict):
            cursor[segments[-1]] = value
    return root


def indexed(node: Any) -> list[Any]:
    """The values of an index-keyed dict in numeric order (non-numeric keys ignored)."""
    if isinstance(node, list):
        return node
    if not isinstance(node, dict):
        return []
    items = [(int(k), v) for k, v in node.items() if isinstance(k, str) and k.isdigit()]
    return [v for _, v in sorted(items, key=lambda kv: kv[0])]


def normalize_arguments(value: Any) -> Any:
    """Tool-call arguments: a JSON object string becomes a dict; other strings stay as they
    are (``Step.arguments_raw`` keeps them); ``None`` means not captured."""
    if isinstance(value, str):
        parsed = parse_json_or_text(value)
        return parsed if isinstance(parsed, dict) else value
    return value


def _text_part(content: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text"}
    if content is not None:
        part["content"] = content if isinstance(content, str) else parse_string(content)
    return part


def _tool_call_part(call_id: Any, name: Any, arguments: Any, has_arguments: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "id": parse_string(call_id), "name": name}
    if has_arguments:
        part["arguments"] = normalize_arguments(arguments)
    return part


def _tool_response_part(call_id: Any, response: Any, has_response: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call_response", "id": parse_string(call_id)}
    if has_response:
        part["response"] = response
    return part


# ---- OTel GenAI parts format (semconv v1.37+) -----------------------------------------------


def parse_genai_messages(value: Any) -> list[Message] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages``: a JSON string or a structured
    AnyValue array of ``{role, parts[], finish_reason?}``. Tool-call arguments given as JSON
    strings (pydantic-ai does this) are parsed to objects."""
    fresh = isinstance(value, str | bytes)  # decoded here: its dicts are ours to keep
    value = parse_json(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for msg in value:
        if not isinstance(msg, dict):
            continue
        raw_parts = msg.get("parts")
        if not isinstance(raw_parts, list) and ("content" in msg or "tool_calls" in msg):
            out.append(openai_message(msg))  # a provider message where a GenAI one belongs
            continue
        parts = []
        changed = False
        for part in raw_parts if isinstance(raw_parts, list) else []:
            if not isinstance(part, dict):
                changed = True
                continue
            kind = part.get("type")
            if kind == "tool_call" and isinstance(part.get("arguments"), str):
                part = {**part, "arguments": normalize_arguments(part["arguments"])}
                changed = True
            elif kind == "tool_call_response" and "response" not in part and "result" in part:
                # pydantic-ai (and semconv examples before #323) write ``result``.
                part = {k: v for k, v in part.items() if k != "result"} | {
                    "response": part["result"]
                }
                changed = True
            elif (
                kind is None
                or (isinstance(kind, str) and kind in _FOREIGN_BLOCKS)
                or (kind == "text" and "text" in part)
            ):
                # Provider blocks where GenAI parts belong (frameworks that dump the SDK's
                # own message objects into gen_ai.*.messages).
                converted = block_part(part)
                changed = True
                if converted is None:
                    continue
                part = converted
            parts.append(part)
        role = msg.get("role")
        if isinstance(role, str) and role in _ROLES:
            changed = True
        if fresh and not changed and _canonical(msg, raw_parts):
            # Freshly decoded JSON already in the normalized shape: keep it as it is.
            out.append(msg)
            continue
        norm: Message = {"role": _ROLES.get(role, role) if isinstance(role, str) else role}
        norm["parts"] = parts
        for key in ("finish_reason", "name"):
            if msg.get(key) is not None:
                norm[key] = msg[key]
        out.append(norm)
    return out


_CANONICAL_KEYS: tuple[tuple[str, ...], ...] = (
    ("role", "parts"),
    ("role", "parts", "finish_reason"),
)


def _canonical(msg: dict[str, Any], parts: Any) -> bool:
    """``msg`` equals what ``parse_genai_messages`` would build from it (same keys in the
    same order, a real ``parts`` list, no ``None`` finish reason), and owns its values: only
    for messages that ``orjson`` just decoded from a string, never for caller-owned ones."""
    return (
        type(parts) is list
        and tuple(msg) in _CANONICAL_KEYS
        and msg.get("finish_reason", "") is not None
    )


def parse_genai_parts_as_system(value: Any) -> list[Message] | None:
    """``gen_ai.system_instructions`` (an array of parts) as one system message."""
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    return [{"role": "system", "parts": [p for p in value if isinstance(p, dict)]}]


# ---- OpenAI chat format (v1.26-era attributes, v1.28 event bodies, raw payloads) -----------


_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
_FOREIGN_BLOCKS = frozenset(
    {"tool_use", "server_tool_use", "tool_result", "function_call", "function_call_output",
     "input_text", "output_text", "thinking", "redacted_thinking"}
)  # fmt: skip
"""Block types of provider SDKs that are not GenAI part types."""
_REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
_BLOCK_KEYS = frozenset(
    {"type", "text", "functionCall", "function_call", "functionResponse", "function_response",
     "toolUse", "toolResult", "json", "reasoningContent"}
)  # fmt: skip
"""Keys that make a dict a content block (typed, or Gemini's and Bedrock Converse's untyped
blocks)."""


def content_parts(content: Any) -> list[dict[str, Any]]:
    """Message content in any provider's shape as parts: a string, a JSON string of a block
    list (OpenLLMetry's Anthropic instrumentation), or a list of blocks or parts (Anthropic
    ``text``/``tool_use``/``tool_result``/``thinking``, Gemini ``text``/``functionCall``/
    ``functionResponse``, OpenAI ``input_text``/``output_text``/``function_call``/
    ``function_call_output``, GenAI parts). Blocks of other types are kept as they are."""
    if content is None:
        return []
    if isinstance(content, str):
        blocks = _block_list(content)
        if blocks is None:
            return [_text_part(content)]
        content = blocks
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [_text_part(content)]
    parts = []
    for item in content:
        part = block_part(item)
        if part is not None:
            parts.append(part)
    return parts


def _block_list(text: str) -> list[Any] | None:
    """A string that is the JSON of a content-block list, decoded; else ``None`` (a text
    answer that merely looks like JSON stays text)."""
    if text.lstrip()[:2] not in ("[{", "[ ", "[\n"):
        return None
    value = parse_json(text)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and _BLOCK_KEYS & v.keys() for v in value)
    ):
        return value
    return None


def block_part(item: Any) -> dict[str, Any] | None:
    """One content block as one part (see ``content_parts``); ``None`` for non-blocks."""
    if isinstance(item, str):
        return _text_part(item)
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        return item
    if kind in _TEXT_BLOCKS:
        return _text_part(item["text"] if "text" in item else item.get("content"))
    if kind == "tool_call":
        arguments = item.get("arguments")
        return (
            {**item, "arguments": normalize_arguments(arguments)}
            if isinstance(arguments, str)
            else item
        )
    if kind == "tool_call_response":
        if "response" not in item and "result" in item:
            return {k: v for k, v in item.items() if k != "result"} | {"response": item["result"]}
        return item
    if kind in ("tool_use", "server_tool_use"):
        return _tool_call_part(item.get("id"), item.get("name"), item.get("input"), "input" in item)
    if kind == "function_call":
        return _tool_call_part(
            item.get("call_id") or item.get("id"),
            item.get("name"),
            item.get("arguments"),
            "arguments" in item,
        )
    if kind == "tool_result":
        return _tool_response_part(
            item.get("tool_use_id"), _tool_result_content(item.get("content")), "content" in item
        )
    if kind == "function_call_output":
        return _tool_response_part(
            item.get("call_id"), parse_json_or_text(item.get("output")), "output" in item
        )
    if kind in _REASONING_BLOCKS:
        text = item.get("thinking", item.get("text", item.get("content")))
        return {"type": "reasoning", "content": text} if text is not None else {"type": "reasoning"}
    if kind is not None:
        return item
    return _converse_part(item) or _gemini_part(item)


def _converse_part(item: dict[str, Any]) -> dict[str, Any] | None:
    """An untyped Bedrock Converse block (``toolUse`` / ``toolResult`` / ``json`` /
    ``reasoningContent``), the message shape of the Bedrock Converse API and of Strands
    Agents, which records every provider's messages in it; ``None`` for other blocks."""
    call = item.get("toolUse")
    if isinstance(call, dict):
        return _tool_call_part(
            call.get("toolUseId"), call.get("name"), call.get("input"), "input" in call
        )
    result = item.get("toolResult")
    if isinstance(result, dict):
        return _tool_response_part(
            result.get("toolUseId"), parse_block_value(result.get("content")), "content" in result
        )
    if "json" in item:
        return _text_part(orjson.dumps(item["json"]).decode())
    reasoning = item.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        content = text.get("text") if isinstance(text, dict) else None
        return {"type": "reasoning", "content": content} if content else {"type": "reasoning"}
    return None


def parse_block_value(value: Any) -> Any:
    """A tool result given as a content-block list, as a JSON string or decoded (Bedrock
    Converse / Strands ``[{"text": "{...}"}]`` or ``[{"json": {...}}]``, Anthropic
    ``[{"type": "text", "text": ...}]``): one ``json`` block is its value; text blocks are
    joined and read as JSON when they hold an object or array. A value that is not a list of
    text/json blocks is only decoded from JSON text (``json_or_text``)."""
    blocks = parse_json_or_text(value)
    if not isinstance(blocks, list) or not blocks:
        return blocks
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].keys() == {"json"}:
        return blocks[0]["json"]
    texts: list[str] = [
        b["text"]
        for b in blocks
        if isinstance(b, dict)
        and b.get("type", "text") == "text"
        and isinstance(b.get("text"), str)
    ]
    if len(texts) != len(blocks):
        return blocks
    return parse_json_or_text("".join(texts))


def _gemini_part(item: dict[str, Any]) -> dict[str, Any] | None:
    """An untyped Gemini part (camelCase on the wire, snake_case from the Python SDK)."""
    call = item.get("functionCall", item.get("function_call"))
    if isinstance(call, dict):
        return _tool_call_part(call.get("id"), call.get("name"), call.get("args"), "args" in call)
    response = item.get("functionResponse", item.get("function_response"))
    if isinstance(response, dict):
        part = _tool_response_part(
            response.get("id"), response.get("response"), "response" in response
        )
        if response.get("name") is not None:
            part["name"] = response["name"]
        return part
    if "text" in item:
        if item.get("thought"):
            return {"type": "reasoning", "content": item["text"]}
        return _text_part(item["text"])
    return None


def _tool_result_content(content: Any) -> Any:
    """An Anthropic ``tool_result`` content: a string, or a list of blocks whose text is the
    result when every block is text."""
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if texts and len(texts) == len(content):
            return parse_json_or_text("".join(t for t in texts if isinstance(t, str)))
        return content
    return parse_json_or_text(content)


_ROLES = {"model": "assistant", "human": "user", "ai": "assistant", "function": "tool"}
"""Provider role names -> GenAI roles (Gemini ``model``, LangChain ``human``/``ai``)."""


def openai_message(msg: Mapping[str, Any], output: bool = False) -> Message:
    """One chat message in a provider's shape: OpenAI (``{role, content, tool_calls,
    tool_call_id}``), Anthropic (``content`` blocks) or Gemini (``{role: model, parts}``)."""
    role = msg.get("role") or ("assistant" if output else None)
    role = _ROLES.get(role, role) if isinstance(role, str) else role
    parts: list[dict[str, Any]] = []
    if role == "tool" and "parts" not in msg:
        parts.extend(
            _response_blocks(msg.get("content"))
            or [
                _tool_response_part(
                    msg.get("tool_call_id") or msg.get("id"),
                    parse_json_or_text(msg.get("content")),
                    "content" in msg,
                )
            ]
        )
    else:
        parts.extend(content_parts(msg.get("content")))
        if "content" not in msg:
            parts.extend(content_parts(msg.get("parts")))
    for call in msg.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
        parts.append(
            _tool_call_part(call.get("id"), fn.get("name"), fn.get("arguments"), "arguments" in fn)
        )
    return {"role": role, "parts": parts}


def _response_blocks(content: Any) -> list[dict[str, Any]]:
    """A tool message whose content is a list of result blocks (Bedrock Converse
    ``toolResult``, Anthropic ``tool_result``; Strands' ``gen_ai.tool.message`` events) as those
    responses, each with its own call id; empty when the content is the result itself."""
    blocks = _block_list(content) if isinstance(content, str) else content
    if not isinstance(blocks, list) or not blocks:
        return []
    parts = content_parts(blocks)
    if parts and all(p.get("type") == "tool_call_response" for p in parts):
        return parts
    return []


def parse_openai_messages(value: Any) -> list[Message] | None:
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    return [openai_message(m) for m in value if isinstance(m, dict)]


def parse_openai_choices(value: Any) -> list[Message] | None:
    """Chat-completion ``choices`` (or v1.26 ``gen_ai.completion`` lists) as output messages."""
    value = parse_json(value)
    if isinstance(value, dict):
        value = value.get("choices")
    if not isinstance(value, list):
        return None
    out = []
    for choice in value:
        if not isinstance(choice, dict):
            continue
        msg: dict[str, Any] = (
            choice["message"] if isinstance(choice.get("message"), dict) else choice
        )
        norm = openai_message(msg, output=True)
        if choice.get("finish_reason") is not None:
            norm["finish_reason"] = choice["finish_reason"]
        out.append(norm)
    return out


def parse_openai_request_messages(value: Any) -> list[Message] | None:
    """A raw chat-completions request body (OpenInference ``input.value``)."""
    value = parse_json(value)
    if isinstance(value, dict):
        return parse_openai_messages(value.get("messages"))
    return None


# ---- v1.28-era per-message events (span events or log records) ---------------------------

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _event_payload(event: EventRecord) -> Any:
    """Log-based events carry content in the body; span-event producers put it in
    attributes (sometimes as one JSON string under ``content``/``body``)."""
    if event.body is not None:
        return parse_json(event.body)
    attrs = {k: v for k, v in event.attributes.items() if k not in ("gen_ai.system", "event.name")}
    if set(attrs) <= {"body"} and "body" in attrs:
        return parse_json(attrs["body"])
    return {k: parse_json(v) if k in ("tool_calls", "message") else v for k, v in attrs.items()}


def parse_legacy_input_events(events: Any) -> list[Message] | None:
    """``gen_ai.{system,user,assistant,tool}.message`` events, in order, as input messages.
    With content capture off the bodies are empty or keep only ids and tool names."""
    if not isinstance(events, list):
        return None
    out: list[Message] = []
    for event in events:
        role = _EVENT_ROLES.get(event.name)
        if role is None:
            continue
        payload = _event_payload(event)
        body = dict(payload) if isinstance(payload, dict) else {}
        body.setdefault("role", role)
        if role == "tool" and "content" not in body and "id" in body:
            out.append({"role": "tool", "parts": [_tool_response_part(body["id"], None, False)]})
            continue
        msg = openai_message(body)
        if not msg["parts"] and role != "tool":
            msg["parts"] = [_text_part(None)]
        out.append(msg)
    return out or None


def parse_legacy_choice_events(events: Any) -> list[Message] | None:
    """``gen_ai.choice`` events as output messages (``{index, finish_reason, message}``)."""
    if not isinstance(events, list):
        return None
    out: list[Message] = []
    for event in events:
        if event.name != "gen_ai.choice":
            continue
        payload = _event_payload(event)
        body = payload if isinstance(payload, dict) else {}
        message = body.get("message")
        if isinstance(message, dict):
            msg_body = dict(message)
        elif isinstance(message, list | str):
            # Anthropic-style producers put the content-block list (or text) itself here.
            msg_body = {"content": message}
        else:
            msg_body = {}
        if "tool_calls" in body and "tool_calls" not in msg_body:
            # OpenLLMetry (use_attributes=False) puts tool_calls beside message, not in it.
            msg_body["tool_calls"] = body["tool_calls"]
        msg = openai_message(msg_body, output=True)
        if not msg["parts"]:
            msg["parts"] = [_text_part(None)]
        reason = body.get("finish_reason", body.get("stop_reason"))
        if reason is not None:
            msg["finish_reason"] = reason
        out.append(msg)
    return out or None


def parse_legacy_finish_reasons(events: Any) -> list[str] | None:
    if not isinstance(events, list):
        return None
    reasons = []
    for event in events:
        payload = _event_payload(event)
        if isinstance(payload, dict) and payload.get("finish_reason") is not None:
            reasons.append(str(payload["finish_reason"]))
    return reasons or None


# ---- OpenInference flattened messages -----------------------------------------------------


def parse_openinference_messages(flat: Any) -> list[Message] | None:
    """``llm.{input,output}_messages.N.message.*`` (prefix already stripped)."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    out: list[Message] = []
    for node in indexed(unflatten(flat)):
        msg = node.get("message") if isinstance(node, dict) else None
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append(
                _tool_response_part(
                    msg.get("tool_call_id"),
                    parse_json_or_text(msg.get("content")),
                    "content" in msg,
                )
            )
        elif "content" in msg:
            parts.append(_text_part(msg.get("content")))
        else:
            for item in indexed(msg.get("contents")):
                mc = item.get("message_content") if isinstance(item, dict) else None
                if isinstance(mc, dict) and mc.get("type") == "text":
                    parts.append(_text_part(mc.get("text")))
        for call in indexed(msg.get("tool_calls")):
            tc = call.get("tool_call") if isinstance(call, dict) else None
            if not isinstance(tc, dict):
                continue
            fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else {}
            # OpenInference omits empty values: a visible call without arguments had none
            # (hiding content removes the whole message list instead).
            parts.append(
                _tool_call_part(tc.get("id"), fn.get("name"), fn.get("arguments", "{}"), True)
            )
        out.append({"role": role, "parts": parts})
    return out or None


def parse_openinference_documents(flat: Any) -> list[dict[str, Any]] | None:
    """``retrieval.documents.N.document.{id,score,content,metadata}``."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    docs = []
    for node in indexed(unflatten(flat)):
        doc = node.get("document") if isinstance(node, dict) else None
        if isinstance(doc, dict):
            docs.append({k: parse_json(v) if k == "metadata" else v for k, v in doc.items()})
    return docs or None


# ---- OpenLLMetry / Traceloop flattened content ---------------------------------------------


def parse_traceloop_messages(flat: Any) -> list[Message] | None:
    """``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (prefix stripped): role, content,
    tool_call_id, finish_reason, ``tool_calls.M.{id,name,arguments}``."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    out: list[Message] = []
    for node in indexed(unflatten(flat)):
        if not isinstance(node, dict):
            continue
        role = node.get("role")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append(
                _tool_response_part(
                    node.get("tool_call_id"),
                    parse_json_or_text(node.get("content")),
                    "content" in node,
                )
            )
        elif "content" in node:
            content = parse_json(node["content"])
            if isinstance(content, list):
                parts.extend(content_parts(content))
            else:
                parts.append(_text_part(node["content"]))
        for call in indexed(node.get("tool_calls")):
            if isinstance(call, dict):
                parts.append(
                    _tool_call_part(
                        call.get("id"), call.get("name"), call.get("arguments"), "arguments" in call
                    )
                )
        msg: Message = {"role": role, "parts": parts}
        if node.get("finish_reason") is not None:
            msg["finish_reason"] = node["finish_reason"]
        out.append(msg)
    return out or None


# ---- Vercel AI SDK legacy ai.* telemetry -----------------------------------------------------


def parse_vercel_messages(value: Any) -> list[Message] | None:
    """``ai.prompt.messages``: AI SDK messages whose content is a string or a list of parts
    (``text``, ``tool-call`` with ``toolCallId``/``toolName``/``args``|``input``,
    ``tool-result`` with ``result``|``output``)."""
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for msg in value:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append(_text_part(content))
        for item in content if isinstance(content, list) else []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "text":
                parts.append(_text_part(item.get("text")))
            elif kind == "tool-call":
                key = "args" if "args" in item else "input"
                parts.append(
                    _tool_call_part(
                        item.get("toolCallId"), item.get("toolName"), item.get(key), key in item
                    )
                )
            elif kind == "tool-result":
                key = "result" if "result" in item else "output"
                parts.append(
                    _tool_response_part(item.get("toolCallId"), item.get(key), key in item)
                )
        out.append({"role": msg.get("role"), "parts": parts})
    return out or None


def parse_vercel_response(values: Any) -> list[Message] | None:
    """``ai.response.text`` + ``ai.response.toolCalls`` (+ ``ai.response.finishReason``) as
    one assistant output message."""
    if not isinstance(values, Mapping) or not values:
        return None
    parts: list[dict[str, Any]] = []
    if values.get("ai.response.text") is not None:
        parts.append(_text_part(values["ai.response.text"]))
    calls = parse_json(values.get("ai.response.toolCalls"))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            key = "args" if "args" in call else "input"
            parts.append(
                _tool_call_part(
                    call.get("toolCallId"), call.get("toolName"), call.get(key), key in call
                )
            )
    if not parts:
        return None
    msg: Message = {"role": "assistant", "parts": parts}
    if values.get("ai.response.finishReason") is not None:
        msg["finish_reason"] = values["ai.response.finishReason"]
    return [msg]


# ---- OpenAI Agents SDK (python-contrib openai-agents-v2 0.1.0) -----------------------------

_REPR_PREFIXES = ("ResponseFunctionToolCall(",)


def parse_openai_agents_repr_tool_calls(messages: Any) -> Any:
    """The openai-agents-v2 instrumentation writes requested tool calls as text parts holding
    ``ResponseFunctionToolCall(arguments='...', call_id='...', name='...')`` repr strings;
    turn those parts into ``tool_call`` parts and leave every other part as it is."""
    if not isinstance(messages, list):
        return messages
    out = []
    for msg in messages:
        if not isinstance(msg, dict):
            out.append(msg)
            continue
        parts = []
        for part in msg.get("parts") or []:
            content = part.get("content") if isinstance(part, dict) else None
            if (
                isinstance(content, str)
                and part.get("type") == "text"
                and content.startswith(_REPR_PREFIXES)
            ):
                call = parse_python_repr(content)
                if isinstance(call, dict) and call.get("name"):
                    parts.append(
                        _tool_call_part(
                            call.get("call_id"),
                            call.get("name"),
                            call.get("arguments"),
                            "arguments" in call,
                        )
                    )
                    continue
            parts.append(part)
        out.append({**msg, "parts": parts})
    return out


# ---- OpenLLMetry decorated tools ------------------------------------------------------------


def parse_traceloop_entity_input(value: Any) -> Any:
    """``traceloop.entity.input`` = ``{"args": [...], "kwargs": {...}}``: the keyword
    arguments are the tool's arguments; positional ones are kept under ``args``."""
    if not isinstance(value, dict) or not ({"args", "kwargs"} & value.keys()):
        return value
    kwargs: dict[str, Any] = value["kwargs"] if isinstance(value.get("kwargs"), dict) else {}
    args = value.get("args") or []
    return {**kwargs, "args": args} if args else dict(kwargs)


def parse_bound_call_arguments(values: Any) -> dict[str, Any] | None:
    """``attrs: [<call>, <parameters>]``: a bound call ``{"args": [...], "kwargs": {...}}``
    (JSON) whose positional arguments are named after the tool's declared parameters, in
    order (a ``{name: spec}`` mapping or a JSON schema's ``properties``), so a tool called
    positionally (smolagents' ``final_answer("...")`` in generated code) has the same
    arguments as one called by keyword. Positional arguments beyond the declared ones stay
    under ``args``; no value unless the first attribute is such a call."""
    if not isinstance(values, dict) or not values:
        return None
    call, *rest = (parse_json(v) for v in values.values())
    if not isinstance(call, dict) or not ({"args", "kwargs"} & call.keys()):
        return None
    kwargs = call["kwargs"] if isinstance(call.get("kwargs"), dict) else {}
    args = call["args"] if isinstance(call.get("args"), list) else []
    declared = rest[0] if rest and isinstance(rest[0], dict) else {}
    if isinstance(declared.get("properties"), dict):
        declared = declared["properties"]
    names = [n for n in declared if n not in kwargs]
    bound = dict(zip(names, args, strict=False))
    extra = args[len(bound) :]
    return {**bound, **kwargs, **({"args": extra} if extra else {})}


# ---- LangChain callback payloads ----------------------------------------------------------


def parse_langchain_tool_input(value: Any) -> Any:
    """A LangChain tool-start callback payload as a tracer recorded it (OpenLLMetry's
    ``gen_ai.tool.call.arguments``: ``{"input_str": "{'query': ...}", "inputs": {...},
    "tags", "metadata", "kwargs": {"tool_call_id", ...}}``): the tool's arguments are
    ``inputs`` when it is an object, else ``input_str``, which LangChain fills with
    ``str(dict)`` (a Python repr, read without evaluating it). The callback's own
    ``kwargs``/``metadata`` are never the arguments. Other values are returned unchanged."""
    if not isinstance(value, dict) or "input_str" not in value:
        return value
    inputs = value.get("inputs")
    if isinstance(inputs, dict):
        return inputs
    return parse_python_literal(parse_json(value.get("input_str")))


def _langchain_message_body(node: Any) -> dict[str, Any] | None:
    """The fields of a serialized LangChain message: ``dumpd`` form ``{"lc": 1, "type":
    "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}`` or ``message_to_dict`` form
    ``{"type": "tool", "data": {...}}``; ``None`` for anything else."""
    if not isinstance(node, dict):
        return None
    if node.get("lc") == 1 and node.get("type") == "constructor":
        kwargs = node.get("kwargs")
        return kwargs if isinstance(kwargs, dict) and "content" in kwargs else None
    data = node.get("data")
    if isinstance(node.get("type"), str) and isinstance(data, dict) and "content" in data:
        return data
    return None


def parse_langchain_message_content(value: Any) -> Any:
    """The content of a serialized LangChain message (a tool's ``ToolMessage``), also when a
    callback payload wraps it as ``{"output": <message>, "kwargs": ...}`` (OpenLLMetry). A
    tool that returns an object reaches the model as that object's JSON text, so object and
    array text is decoded (``json_or_text``). Values that are no LangChain message are
    returned unchanged."""
    body = _langchain_message_body(value)
    if body is None and isinstance(value, dict):
        body = _langchain_message_body(value.get("output"))
    if body is None:
        return value
    return parse_json_or_text(body["content"])


def parse_object_only(value: Any) -> dict[str, Any] | None:
    """An object (JSON object already decoded) or nothing. For tool inputs that some tracers
    record as the bare value when a tool takes one argument (OpenInference's LangChain
    tracer: ``enterprise refund window`` for ``{"query": ...}``): such text is not the
    arguments, and without it the mapper takes them from the model's matching tool call."""
    return value if isinstance(value, dict) else None


def parse_llamaindex_tool_output(value: Any) -> Any:
    """LlamaIndex's ``ToolOutput`` as OpenInference records a tool span's output
    (``{"blocks": [{"text": ...}], "tool_name", "raw_input", "raw_output", "is_error"}``):
    the tool's own return value (``raw_output``) when it is there, else the text the model
    was given, which LlamaIndex makes with ``str()`` (a Python repr is read as one). Values
    that are no ToolOutput are returned unchanged."""
    if not isinstance(value, dict) or "tool_name" not in value:
        return value
    if value.get("raw_output") is not None:
        return value["raw_output"]
    blocks = value.get("blocks")
    if isinstance(value.get("content"), str):
        text = value["content"]
    elif isinstance(blocks, list):
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    else:
        return value
    return parse_python_literal(parse_json_or_text(text))


HANDOFF_TARGET_KEYS = ("to_agent", "agent_name", "target_agent", "agent")
"""Argument names handoff tools give the agent they transfer to: LlamaIndex AgentWorkflow's
``handoff`` (``to_agent``), Google ADK's ``transfer_to_agent`` (``agent_name``), others."""


def parse_handoff_target(value: Any) -> str | None:
    """The agent a handoff tool's arguments (an object) name as its target, for tools whose
    name does not say it (``handoff``, ``transfer_to_agent``); ``None`` when none is named."""
    if not isinstance(value, dict):
        return None
    for key in HANDOFF_TARGET_KEYS:
        if isinstance(value.get(key), str) and value[key]:
            return str(value[key])
    return None


# ---- vendor request / response payloads ------------------------------------------------------


def parse_model_request(value: Any) -> list[Message] | None:
    """A provider request body as input messages, whichever API it was for: OpenAI chat
    (``messages``), Anthropic (``system`` + ``messages``), Gemini / ADK ``LlmRequest``
    (``contents`` + ``system_instruction``), OpenAI Responses (``instructions`` + ``input``).
    Vendor attributes such as ``gcp.vertex.agent.llm_request`` hold these."""
    value = parse_json(value)
    if isinstance(value, list):
        return [openai_message(m) for m in value if isinstance(m, dict)] or None
    if not isinstance(value, dict):
        return None
    out: list[Message] = []
    config: dict[str, Any] = value["config"] if isinstance(value.get("config"), dict) else {}
    for system in (
        value.get("system"),
        value.get("instructions"),
        value.get("system_instruction", value.get("systemInstruction")),
        config.get("system_instruction", config.get("systemInstruction")),
    ):
        if system is not None:
            parts = content_parts(system.get("parts") if isinstance(system, dict) else system)
            if parts:
                out.append({"role": "system", "parts": parts})
    messages = value.get("messages", value.get("contents", value.get("input")))
    if isinstance(messages, str):
        out.append({"role": "user", "parts": [_text_part(messages)]})
    elif isinstance(messages, list):
        out.extend(_item_messages(messages, output=False))
    return out or None


def parse_model_response(value: Any) -> list[Message] | None:
    """A provider response body as output messages: OpenAI chat (``choices``), OpenAI
    Responses (``output`` items), Anthropic (``{role, content: [blocks], stop_reason}``),
    Gemini (``candidates``) and ADK's ``LlmResponse`` (``{content: {role, parts},
    finish_reason}``). The finish reason travels on the message (``finish_reason``)."""
    value = parse_json(value)
    if isinstance(value, list):
        return _item_messages(value, output=True) or None
    if not isinstance(value, dict):
        return None
    if "choices" in value:
        return parse_openai_choices(value)
    if isinstance(value.get("candidates"), list):
        out = []
        for cand in value["candidates"]:
            if isinstance(cand, dict):
                out.append(_response_message(cand.get("content"), cand))
        return out or None
    if isinstance(value.get("output"), list):
        return _item_messages(value["output"], output=True) or None
    if isinstance(value.get("content"), dict):
        return [_response_message(value["content"], value)]
    if "content" in value or "parts" in value:
        return [_response_message(value, value)]
    return None


_FINISH_KEYS = ("finish_reason", "finishReason", "stop_reason")


def _response_message(content: Any, holder: dict[str, Any]) -> Message:
    body = content if isinstance(content, dict) else {"content": content}
    msg = openai_message(body, output=True)
    if msg["role"] is None:
        msg["role"] = "assistant"
    reason = next((holder[k] for k in _FINISH_KEYS if holder.get(k) is not None), None)
    if reason is not None:
        msg["finish_reason"] = parse_string(reason)
    return msg


def _item_messages(items: list[Any], output: bool) -> list[Message]:
    """Messages, plus OpenAI Responses items (``function_call`` / ``function_call_output``
    items beside ``message`` items) folded into the message before them."""
    out: list[Message] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if "role" in item or "parts" in item or item.get("type") == "message":
            out.append(openai_message(item, output=output))
            continue
        part = block_part(item)
        if part is None:
            continue
        role = "tool" if part.get("type") == "tool_call_response" else "assistant"
        if out and out[-1].get("role") == role:
            out[-1]["parts"].append(part)
        else:
            out.append({"role": role, "parts": [part]})
    return out


# ---- Haystack ChatMessage reprs -------------------------------------------------------------


def _haystack_part(item: Any) -> dict[str, Any] | None:
    """One ``ChatMessage`` content item (as ``parse_python_repr`` reads it) as a GenAI part."""
    if not isinstance(item, dict):
        return None
    kind = item.get("__type__")
    if kind == "TextContent":
        return {"type": "text", "content": parse_string(item.get("text"))}
    if kind == "ToolCall":
        return {
            "type": "tool_call",
            "id": parse_string(item.get("id")),
            "name": parse_string(item.get("tool_name")),
            "arguments": item.get("arguments"),
        }
    if kind == "ToolCallResult":
        origin = item.get("origin")
        origin = origin if isinstance(origin, dict) else {}
        part: dict[str, Any] = {
            "type": "tool_call_response",
            "id": parse_string(origin.get("id")),
            "response": item.get("result"),
        }
        if item.get("error") is True:
            # Haystack hands a failed tool's error text back as the result, flagged ``error``.
            part["response"] = {"error": item.get("result")}
        return part
    if kind == "ReasoningContent":
        return {"type": "reasoning", "content": parse_string(item.get("reasoning_text"))}
    return None


def parse_haystack_messages(value: Any) -> list[dict[str, Any]] | None:
    """Haystack ``ChatMessage`` objects recorded with ``str()`` (OpenInference's Haystack
    instrumentor: a component's ``input.value`` ``{"messages": [...]}`` and a generator's
    ``output.value`` ``{"replies": [...]}``, each message a ``repr``), read with
    ``parse_python_repr`` into GenAI messages: text, tool calls with their ids, tool results
    linked to their call by the result's ``origin`` (an error result as ``{"error": ...}``),
    and the reply's finish reason from its ``_meta``. The flattened ``llm.*_messages``
    attributes of that instrumentor drop tool calls from the input and every tool result, so
    these reprs are the only complete record. Anything else is no value."""
    if isinstance(value, dict):
        value = value.get("messages", value.get("replies"))
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        message = parse_python_repr(item)
        if not isinstance(message, dict) or message.get("__type__") != "ChatMessage":
            return None
        content = message.get("_content")
        items = content if isinstance(content, list) else []
        parts = [p for p in map(_haystack_part, items) if p is not None]
        role = parse_string(message.get("_role")) or "user"
        parsed: dict[str, Any] = {"role": role, "parts": parts}
        meta = message.get("_meta")
        if isinstance(meta, dict) and meta.get("finish_reason"):
            parsed["finish_reason"] = parse_string(meta["finish_reason"])
        out.append(parsed)
    return out or None


# ---- DSPy adapter text ---------------------------------------------------------------------

_FIELD_OPEN = "[[ ## "
_FIELD_CLOSE = " ## ]]"
_FIELD_MARKERS = frozenset({"completed"})
"""The end marker DSPy's ChatAdapter asks the model to write after the last field."""


def adapter_fields(text: str) -> dict[str, str]:
    """The ``[[ ## name ## ]]`` sections of a DSPy ChatAdapter reply, in order (a linear
    scan; text before the first header is ignored, as the adapter ignores it)."""
    fields: dict[str, str] = {}
    pos = text.find(_FIELD_OPEN)
    while pos != -1:
        end = text.find(_FIELD_CLOSE, pos + len(_FIELD_OPEN))
        if end == -1:
            break
        name = text[pos + len(_FIELD_OPEN) : end].strip()
        body_start = end + len(_FIELD_CLOSE)
        nxt = text.find(_FIELD_OPEN, body_start)
        fields[name] = text[body_start : nxt if nxt != -1 else len(text)].strip()
        pos = nxt
    return fields


def parse_dspy_adapter_output(value: Any) -> list[dict[str, Any]] | None:
    """A DSPy LM span's completions (``output.value``: a list of reply texts) when the reply
    is a prediction in ChatAdapter's field format: the assistant message whose text is the
    last output field (a signature's answer comes after its ``reasoning``), with the
    reasoning as a reasoning part. The model's text is a serialisation of the program's
    output fields, so the answer a contract must read is that field, not the headers around
    it. A ReAct step (``next_tool_name``: the tool runs as its own span) and text that is not
    in that format are no value, so the plain reply text is read instead."""
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str):
        return None
    fields = adapter_fields(value)
    if not fields or "next_tool_name" in fields:
        return None
    outputs = [(name, text) for name, text in fields.items() if name not in _FIELD_MARKERS]
    if not outputs:
        return None
    parts: list[dict[str, Any]] = []
    if "reasoning" in fields:
        parts.append({"type": "reasoning", "content": fields["reasoning"]})
    answer = [text for name, text in outputs if name != "reasoning"]
    if answer:
        parts.append({"type": "text", "content": answer[-1]})
    return [{"role": "assistant", "parts": parts}] if parts else None


# ---- documents -----------------------------------------------------------------------------


def parse_genai_documents(value: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.retrieval.documents``: an array of ``{id?, score?, ...}``."""
    value = parse_json(value)
    if isinstance(value, list):
        return [d for d in value if isinstance(d, dict)] or None
    return None


PARSERS: dict[str, Parser] = {
    "json": parse_json,
    "json_or_text": parse_json_or_text,
    "python_literal": parse_python_literal,
    "model_request": parse_model_request,
    "model_response": parse_model_response,
    "int": parse_int,
    "string": parse_string,
    "string_list": parse_string_list,
    "genai_messages": parse_genai_messages,
    "genai_parts_as_system": parse_genai_parts_as_system,
    "openai_messages": parse_openai_messages,
    "openai_choices": parse_openai_choices,
    "openai_request_messages": parse_openai_request_messages,
    "legacy_input_events": parse_legacy_input_events,
    "legacy_choice_events": parse_legacy_choice_events,
    "legacy_finish_reasons": parse_legacy_finish_reasons,
    "openinference_messages": parse_openinference_messages,
    "openinference_documents": parse_openinference_documents,
    "traceloop_messages": parse_traceloop_messages,
    "vercel_messages": parse_vercel_messages,
    "vercel_response": parse_vercel_response,
    "openai_agents_repr_tool_calls": parse_openai_agents_repr_tool_calls,
    "genai_documents": parse_genai_documents,
    "block_value": parse_block_value,
    "non_empty": parse_non_empty,
    "traceloop_entity_input": parse_traceloop_entity_input,
    "bound_call_arguments": parse_bound_call_arguments,
    "langchain_tool_input": parse_langchain_tool_input,
    "langchain_message_content": parse_langchain_message_content,
    "object_only": parse_object_only,
    "llamaindex_tool_output": parse_llamaindex_tool_output,
    "handoff_target": parse_handoff_target,
    "dspy_adapter_output": parse_dspy_adapter_output,
    "haystack_messages": parse_haystack_messages,
    "python_repr": parse_python_repr,
}
"""Parser name (as written in YAML ``parse:``) -> function."""


def apply_parsers(names: Iterable[str], value: Any) -> Any:
    """Run the named parsers in order; a parser that raises is a bug in it, logged and
    treated as "no value" so one odd span never stops a trace from being mapped."""
    for name in names:
        if value is None:
            return None
        try:
            value = PARSERS[name](value)
        except Exception:  # malformed telemetry must not crash mapping (logged below)
            log.debug("parser %s failed", name, exc_info=True)
            return None
    return value
