"""LlamaIndex payloads as the tracers record them: OpenInference (``conventions/llama-index.yaml``)
and MLflow's LlamaIndex autolog, which writes LlamaIndex's own objects dumped as JSON
(``conventions/mlflow.yaml``, rules ``llamaindex_*``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message
from otel_oracles.mapping.parsers.providers import openai_message, parse_model_response
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import (
    parse_json_or_text,
)


def parse_llamaindex_tool_output(value: Any) -> Any:
    """LlamaIndex's ``ToolOutput`` as the tracers record it (``{"blocks": [{"text": ...}],
    "tool_name", "raw_input", "raw_output", "is_error"}``; OpenLLMetry records the agent
    workflow's ``ToolCallResult`` event around it, ``{"tool_name", "tool_kwargs", "tool_id",
    "tool_output": ...}``): the tool's own return value (``raw_output``) when it is there,
    else the text the model was given, which LlamaIndex makes with ``str()`` (a Python repr
    is read as one). A failed call (``is_error``: the agent workflow caught the tool's
    exception and hands the model its text) is ``{"error": <that text>}``, since the text
    alone does not say it is an error. Values that are no ToolOutput are returned unchanged."""
    if isinstance(value, dict) and "tool_kwargs" in value and "tool_output" in value:
        value = value["tool_output"]
    if not isinstance(value, dict) or "tool_name" not in value:
        return value
    if value.get("is_error") is True:
        return {"error": _tool_output_text(value) or str(value.get("raw_output"))}
    if value.get("raw_output") is not None:
        return value["raw_output"]
    text = _tool_output_text(value)
    return value if text is None else parse_python_literal(parse_json_or_text(text))


def _tool_output_text(value: dict[str, Any]) -> str | None:
    """The text a ``ToolOutput`` gave the model, ``None`` when it records none."""
    blocks = value.get("blocks")
    if isinstance(value.get("content"), str):
        return str(value["content"])
    if isinstance(blocks, list):
        return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return None


def parse_llamaindex_chat(value: Any) -> list[Message] | None:
    """LlamaIndex chat payloads as messages: an LLM call's input (``{"messages": [ChatMessage,
    ...], "kwargs": ...}``, or the bare list), its ``ChatResponse`` (``{"message": ChatMessage,
    "raw": <the provider's response body>}``) or one ``ChatMessage``. A ChatMessage keeps its
    text in ``blocks`` (``{"block_type": "text", "text"}``) and, for OpenAI-style models, the
    provider's tool calls and a tool message's ``tool_call_id`` in ``additional_kwargs``. A
    response is read from the provider's body when that names the model's turn (finish
    reason, tool calls as sent), else from the ChatMessage. ``None`` for anything else."""
    if isinstance(value, dict) and isinstance(value.get("message"), dict) and "raw" in value:
        raw = parse_model_response(value["raw"]) if isinstance(value["raw"], dict) else None
        return raw or _chat_messages([value["message"]], output=True)
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return _chat_messages(value["messages"], output=False)
    if isinstance(value, list):
        return _chat_messages(value, output=False)
    if isinstance(value, dict):
        return _chat_messages([value], output=True)
    return None


def _chat_messages(items: list[Any], output: bool) -> list[Message] | None:
    """ChatMessages (``{"role", "blocks", "additional_kwargs"}``) in the OpenAI shape the
    shared reader takes; ``None`` when any item is no ChatMessage."""
    out: list[Message] = []
    for item in items:
        if not isinstance(item, dict) or "role" not in item or "blocks" not in item:
            return None
        extra = item.get("additional_kwargs")
        extra = extra if isinstance(extra, dict) else {}
        body: dict[str, Any] = {"role": item["role"]}
        text = _tool_output_text(item)
        if text:
            body["content"] = text
        calls = extra.get("tool_calls") or _block_tool_calls(item["blocks"])
        if calls:
            body["tool_calls"] = calls
        if extra.get("tool_call_id") is not None:
            body["tool_call_id"] = extra["tool_call_id"]
        out.append(openai_message(body, output=output))
    return out or None


def _block_tool_calls(blocks: Any) -> list[dict[str, Any]]:
    """A ChatMessage's ``tool_call`` blocks (``tool_call_id``, ``tool_name``, ``tool_kwargs``)
    as OpenAI tool calls, for models whose calls are not in ``additional_kwargs``."""
    if not isinstance(blocks, list):
        return []
    return [
        {"id": b.get("tool_call_id"),
         "function": {"name": b.get("tool_name"), "arguments": b.get("tool_kwargs")}}
        for b in blocks
        if isinstance(b, dict) and b.get("block_type") == "tool_call"
    ]  # fmt: skip


def parse_llamaindex_agent_result(value: Any) -> dict[str, Any] | None:
    """The result of a LlamaIndex agent workflow's run (``{"result": AgentOutput}``, or the
    ``AgentOutput`` itself: ``{"response": ChatMessage, "current_agent_name", "tool_calls",
    ...}``) as ``{"agent": <the agent that answered>, "answer": <its text>}``, each key only
    when recorded; ``None`` for anything else."""
    if isinstance(value, dict) and isinstance(value.get("result"), dict):
        value = value["result"]
    if not isinstance(value, dict) or "current_agent_name" not in value:
        return None
    out: dict[str, Any] = {}
    if isinstance(value.get("current_agent_name"), str) and value["current_agent_name"]:
        out["agent"] = value["current_agent_name"]
    response = value.get("response")
    text = _tool_output_text(response) if isinstance(response, dict) else None
    if text:
        out["answer"] = text
    return out


PARSERS: Mapping[str, Parser] = {
    "llamaindex_tool_output": parse_llamaindex_tool_output,
    "llamaindex_chat": parse_llamaindex_chat,
    "llamaindex_agent_result": parse_llamaindex_agent_result,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
