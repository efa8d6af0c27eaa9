"""Provider message shapes: OpenAI chat and Responses, Anthropic, Gemini and Bedrock Converse
content blocks, and whole request / response bodies. Shared by several mapping files
(``otel-genai.yaml`` for v1.26-era attributes and event bodies, ``openinference.yaml``,
``logfire.yaml``, ``dspy.yaml``, ``strands.yaml``) and by the other message parsers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import (
    Message,
    normalize_arguments,
    text_part,
    tool_call_part,
    tool_response_part,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
    parse_json_or_text,
    parse_string,
)

_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
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
        blocks = block_list(content)
        if blocks is None:
            return [text_part(content)]
        content = blocks
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [text_part(content)]
    parts = []
    for item in content:
        part = block_part(item)
        if part is not None:
            parts.append(part)
    return parts


def block_list(text: str) -> list[Any] | None:
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
        return text_part(item)
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        return item
    if kind in _TEXT_BLOCKS:
        return text_part(item["text"] if "text" in item else item.get("content"))
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
        return tool_call_part(item.get("id"), item.get("name"), item.get("input"), "input" in item)
    if kind == "function_call":
        return tool_call_part(
            item.get("call_id") or item.get("id"),
            item.get("name"),
            item.get("arguments"),
            "arguments" in item,
        )
    if kind == "tool_result":
        return tool_response_part(
            item.get("tool_use_id"), _tool_result_content(item.get("content")), "content" in item
        )
    if kind == "function_call_output":
        return tool_response_part(
            item.get("call_id"), parse_json_or_text(item.get("output")), "output" in item
        )
    if kind == "toolUse":  # Strands for TypeScript's legacy span events: Converse, flattened
        return _converse_call(item)
    if kind == "toolResult":
        return _converse_result(item)
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
        return _converse_call(call)
    result = item.get("toolResult")
    if isinstance(result, dict):
        return _converse_result(result)
    if "json" in item:
        return text_part(orjson.dumps(item["json"]).decode())
    reasoning = item.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        content = text.get("text") if isinstance(text, dict) else None
        return {"type": "reasoning", "content": content} if content else {"type": "reasoning"}
    return None


def _converse_call(call: dict[str, Any]) -> dict[str, Any]:
    """A Converse ``toolUse`` object (nested under its key, or flattened with ``type``)."""
    return tool_call_part(
        call.get("toolUseId"), call.get("name"), call.get("input"), "input" in call
    )


def _converse_result(result: dict[str, Any]) -> dict[str, Any]:
    """A Converse ``toolResult`` object (nested under its key, or flattened with ``type``)."""
    return tool_response_part(
        result.get("toolUseId"), parse_block_value(result.get("content")), "content" in result
    )


def parse_block_value(value: Any) -> Any:
    """A tool result given as a content-block list, as a JSON string or decoded (Bedrock
    Converse / Strands ``[{"text": "{...}"}]`` or ``[{"json": {...}}]``, Anthropic
    ``[{"type": "text", "text": ...}]``, Cohere v2 ``[{"type": "document", "document":
    {"data": ...}}]``): one ``json`` block is its value; text blocks are joined and read as
    JSON when they hold an object or array; document blocks (with text blocks beside them)
    are each block's data read the same way, the one value or the list of them. A value that
    is not a list of text/json/document blocks is only decoded from JSON text
    (``json_or_text``)."""
    blocks = parse_json_or_text(value)
    if not isinstance(blocks, list) or not blocks:
        return blocks
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].keys() == {"json"}:
        return blocks[0]["json"]
    if any(isinstance(b, dict) and b.get("type") == "document" for b in blocks):
        return _document_values(blocks)
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


def _document_values(blocks: list[Any]) -> Any:
    """Cohere v2 tool content: each ``document`` block's ``data`` (a string, read as JSON
    when it holds an object or array, or an object) and each ``text`` block's text; one
    block gives its value, several the list. A block of any other shape leaves the list as
    it is: nothing is guessed."""
    values: list[Any] = []
    for block in blocks:
        if not isinstance(block, dict):
            return blocks
        document = block.get("document")
        if block.get("type") == "document" and isinstance(document, dict) and "data" in document:
            values.append(parse_json_or_text(document["data"]))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            values.append(parse_json_or_text(block["text"]))
        else:
            return blocks
    return values[0] if len(values) == 1 else values


def parse_envelope_content(value: Any) -> Any:
    """The value of a tool result the framework wrapped in an envelope object whose
    ``content`` holds the tool's output as content blocks next to the framework's own keys
    (AgentScope's ``ToolResponse``: ``{"content": [{"type": "text", "text": ...}], "state":
    ...}``; MCP's ``CallToolResult`` has the same shape): the blocks' value, as
    ``block_value`` reads it, so the result is what the tool returned, not the wrapper. A
    value with no such ``content`` list gives no value: the envelope a rule expects is not
    there, so nothing is read as the tool's result."""
    envelope = parse_json_or_text(value)
    if not isinstance(envelope, dict):
        return None
    content = envelope.get("content")
    if not isinstance(content, list) or not content:
        return None
    return parse_block_value(content)


def _gemini_part(item: dict[str, Any]) -> dict[str, Any] | None:
    """An untyped Gemini part (camelCase on the wire, snake_case from the Python SDK)."""
    call = item.get("functionCall", item.get("function_call"))
    if isinstance(call, dict):
        return tool_call_part(call.get("id"), call.get("name"), call.get("args"), "args" in call)
    response = item.get("functionResponse", item.get("function_response"))
    if isinstance(response, dict):
        part = tool_response_part(
            response.get("id"), response.get("response"), "response" in response
        )
        if response.get("name") is not None:
            part["name"] = response["name"]
        return part
    if "text" in item:
        if item.get("thought"):
            return {"type": "reasoning", "content": item["text"]}
        return text_part(item["text"])
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


ROLES = {"model": "assistant", "human": "user", "ai": "assistant", "function": "tool"}
"""Provider role names -> GenAI roles (Gemini ``model``, LangChain ``human``/``ai``)."""


def openai_message(msg: Mapping[str, Any], output: bool = False) -> Message:
    """One chat message in a provider's shape: OpenAI (``{role, content, tool_calls,
    tool_call_id}``; LangChain's message dicts, whose tool calls carry ``args``), Anthropic
    (``content`` blocks) or Gemini (``{role: model, parts}``)."""
    role = msg.get("role") or ("assistant" if output else None)
    role = ROLES.get(role, role) if isinstance(role, str) else role
    parts: list[dict[str, Any]] = []
    if role == "tool" and "parts" not in msg:
        parts.extend(
            _response_blocks(msg.get("content"))
            or [
                tool_response_part(
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
        # LangChain's own tool calls ({"name", "args", "id"}) name the arguments "args".
        key = "arguments" if "arguments" in fn else "args"
        parts.append(tool_call_part(call.get("id"), fn.get("name"), fn.get(key), key in fn))
    return {"role": role, "parts": parts}


def _response_blocks(content: Any) -> list[dict[str, Any]]:
    """A tool message whose content is a list of result blocks (Bedrock Converse
    ``toolResult``, Anthropic ``tool_result``; Strands' ``gen_ai.tool.message`` events) as those
    responses, each with its own call id; empty when the content is the result itself."""
    blocks = block_list(content) if isinstance(content, str) else content
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
        out.append({"role": "user", "parts": [text_part(messages)]})
    elif isinstance(messages, list):
        out.extend(_item_messages(messages, output=False))
    return out or None


def parse_model_response(value: Any) -> list[Message] | None:
    """A provider response body as output messages: OpenAI chat (``choices``), OpenAI
    Responses (``output`` items), Anthropic (``{role, content: [blocks], stop_reason}``),
    Gemini (``candidates``), Bedrock Converse (``{output: {message}, stopReason}``), ADK's
    ``LlmResponse`` (``{content: {role, parts}, finish_reason}``) and a body holding the reply
    under ``message`` (Ollama's chat response, Logfire's version-1 ``response_data``, whose
    message is OpenAI's, or Anthropic's rewritten as one). The finish reason travels
    on the message (``finish_reason``). A list of such bodies (the OpenAI Agents SDK's
    generation output when the model call streamed: ``[response.model_dump()]``, the response
    it assembled from the chunks, where an unstreamed call has ``[message.model_dump()]``) is
    the messages of each body."""
    value = parse_json(value)
    if isinstance(value, list):
        bodies = parse_response_bodies(value)
        return bodies if bodies is not None else _item_messages(value, output=True) or None
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
    output = value.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict):
        return [_response_message(output["message"], value)]  # Bedrock Converse
    if isinstance(value.get("content"), dict):
        return [_response_message(value["content"], value)]
    if "content" in value or "parts" in value:
        return [_response_message(value, value)]
    message = value.get("message")
    if isinstance(message, dict) and ("content" in message or "tool_calls" in message):
        # The reply under "message" beside the body's own keys: Ollama's /api/chat response,
        # Logfire's version-1 `response_data` ({"message": ..., "usage": ...}).
        holder = message if any(k in message for k in _FINISH_KEYS) else value
        return [_response_message(message, holder)]
    return None


_FINISH_KEYS = ("finish_reason", "finishReason", "stop_reason", "stopReason")
_RESPONSE_OBJECTS = frozenset({"response", "chat.completion"})


def parse_response_bodies(value: Any) -> list[Message] | None:
    """A list of whole OpenAI response bodies (``object`` ``response`` or ``chat.completion``)
    as the messages of each, else ``None``: the OpenAI Agents SDK records a streamed model
    call's output as ``[response.model_dump()]``, the response it assembled from the chunks
    (an unstreamed call's is ``[message.model_dump()]``, which a message parser reads). Tried
    before such a parser, which would read a body as an empty message."""
    value = parse_json(value)
    if not isinstance(value, list) or not value or not all(map(_is_response_body, value)):
        return None
    bodies = [parse_model_response(v) or [] for v in value]
    return [m for messages in bodies for m in messages] or None


def _is_response_body(value: Any) -> bool:
    """Whether ``value`` is a whole OpenAI response body (``object`` ``response`` or
    ``chat.completion``), not a message or an output item, which name no such object."""
    return isinstance(value, dict) and value.get("object") in _RESPONSE_OBJECTS


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


def parse_wrapped_input_arguments(value: Any) -> Any:
    """Messages whose tool calls carry the arguments wrapped as ``{"input": <arguments>}``,
    with the arguments themselves: Logfire's version-1 ``response_data`` rewrites an Anthropic
    ``tool_use`` block as an OpenAI tool call whose arguments are the block dumped with only
    its ``input`` key (``block.model_dump_json(include={'input'})``), so every call is wrapped
    once, whatever the tool's parameters (a tool whose one parameter is ``input`` too). A call
    whose arguments are not such an object is left as it is (nothing is guessed). Anything
    that is not a list of messages is returned unchanged."""
    if not isinstance(value, list):
        return value
    out = []
    for message in value:
        if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
            out.append(message)
            continue
        parts = [
            {**part, "arguments": part["arguments"]["input"]}
            if part.get("type") == "tool_call"
            and isinstance(part.get("arguments"), dict)
            and part["arguments"].keys() == {"input"}
            else part
            for part in message["parts"]
        ]
        out.append({**message, "parts": parts})
    return out


def parse_provider_roles(value: Any) -> Any:
    """Messages already in the GenAI shape whose roles are a provider's own names (Gemini's
    ``model`` for the model's turns, which OpenInference's google-genai instrumentor writes
    as it finds them) with the GenAI roles instead (``ROLES``): the model's turns are the
    assistant's, which is how a turn's tool results are told apart when calls carry no ids.
    Anything that is not such a list is returned unchanged."""
    if not isinstance(value, list):
        return value
    return [
        {**m, "role": ROLES[m["role"]]}
        if isinstance(m, dict) and isinstance(m.get("role"), str) and m["role"] in ROLES
        else m
        for m in value
    ]


PARSERS: Mapping[str, Parser] = {
    "provider_roles": parse_provider_roles,
    "openai_messages": parse_openai_messages,
    "openai_choices": parse_openai_choices,
    "openai_request_messages": parse_openai_request_messages,
    "model_request": parse_model_request,
    "model_response": parse_model_response,
    "response_bodies": parse_response_bodies,
    "block_value": parse_block_value,
    "envelope_content": parse_envelope_content,
    "wrapped_input_arguments": parse_wrapped_input_arguments,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
