"""LangChain callback payloads as tracers record them (``conventions/langgraph.yaml``), and
LangChain calls' arguments and results as Langtrace's method patches dump them
(``conventions/langtrace.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import Message
from otel_oracles.mapping.parsers.providers import openai_message
from otel_oracles.mapping.parsers.python_literals import (
    parse_python_literal,
    pydantic_str_fields,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
    parse_json_or_text,
)


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
    "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}``, ``message_to_dict`` form
    ``{"type": "tool", "data": {...}}``, or the message's own fields (pydantic ``model_dump``,
    as Langfuse's callback handler records a tool's ``ToolMessage``: ``{"content", "type",
    "additional_kwargs", ...}``); ``None`` for anything else."""
    if not isinstance(node, dict):
        return None
    if node.get("lc") == 1 and node.get("type") == "constructor":
        kwargs = node.get("kwargs")
        return kwargs if isinstance(kwargs, dict) and "content" in kwargs else None
    data = node.get("data")
    if isinstance(node.get("type"), str) and isinstance(data, dict) and "content" in data:
        return data
    if isinstance(node.get("type"), str) and "content" in node and "additional_kwargs" in node:
        return node
    return None


def parse_langchain_message_content(value: Any) -> Any:
    """The content of a serialized LangChain message (a tool's ``ToolMessage``), also when a
    callback payload wraps it as ``{"output": <message>, "kwargs": ...}`` (OpenLLMetry). A
    tool that returns an object reaches the model as that object's JSON text, so object and
    array text is decoded (``json_or_text``). A message with ``status`` ``error`` (a tool
    error LangChain handled: ``handle_tool_error``, an MCP ``isError`` result the
    langchain-mcp-adapters hand on) is ``{"error": <content>}``, as
    ``langchain_message_str`` reads it. Values that are no LangChain message are returned
    unchanged."""
    body = _langchain_message_body(value)
    if body is None and isinstance(value, dict):
        body = _langchain_message_body(value.get("output"))
    if body is None:
        return value
    content = parse_json_or_text(body["content"])
    if body.get("status") == "error":
        return {"error": content}
    return content


def parse_langchain_message_name(value: Any) -> str | None:
    """The ``name`` of a serialized LangChain message (a ``ToolMessage`` names the tool that
    answered), in any form ``langchain_message_content`` reads, a ``{"output": <message>}``
    wrapper included: OpenLLMetry JS's LangChain tool spans are named after the tool's class
    (``DynamicStructuredTool``) and keep the tool's name only there. ``None`` otherwise."""
    body = _langchain_message_body(value)
    if body is None and isinstance(value, dict):
        body = _langchain_message_body(value.get("output"))
    name = body.get("name") if body is not None else None
    return name if isinstance(name, str) and name else None


def parse_langgraph_command_goto(value: Any) -> str | None:
    """The node a serialized LangGraph.js ``Command`` sends the run to (``{"lg_name":
    "Command", "goto": "research_agent" | ["research_agent"], "graph": "__parent__", ...}``),
    as a handoff tool returns it: its single target, else ``None`` (a Command going nowhere,
    or to several nodes, names no one target)."""
    if not isinstance(value, dict) or value.get("lg_name") != "Command":
        return None
    goto = value.get("goto")
    if isinstance(goto, list):
        goto = goto[0] if len(goto) == 1 else None
    return goto if isinstance(goto, str) and goto else None


def parse_traceloop_js_tool_args(value: Any) -> dict[str, Any] | None:
    """A LangChain.js tool's arguments as OpenLLMetry JS records the call's input:
    ``{"args": ["<the arguments' JSON>"]}`` (the tool function's argument list, the first
    the model's arguments as JSON text). An object, else ``None``."""
    args = value.get("args") if isinstance(value, dict) else None
    if not isinstance(args, list) or not args:
        return None
    first = parse_json(args[0]) if isinstance(args[0], str) else args[0]
    return first if isinstance(first, dict) else None


def parse_langchain_message_str(value: Any) -> Any:
    """A LangChain message as ``str()`` writes it (pydantic's ``__str__``: ``content='{...}'
    name='search_docs' tool_call_id='call_0_0'``), as OpenLIT's LangChain instrumentor
    records a tool's ``ToolMessage`` in ``gen_ai.tool.call.result``: the content, object and
    array text decoded as ``langchain_message_content`` does; a message with ``status='error'``
    (a tool error LangChain handled) is ``{"error": <content>}``. Read as a repr, never
    evaluated (``pydantic_str``). Anything else, a content that is neither text nor a list of
    blocks included, is returned unchanged."""
    if not isinstance(value, str) or not value.startswith("content="):
        return value
    fields = pydantic_str_fields(value)
    if fields is None or not isinstance(fields.get("content"), str | list):
        return value
    content = parse_json_or_text(fields["content"])
    if fields.get("status") == "error":
        return {"error": content}
    return content


def parse_object_only(value: Any) -> dict[str, Any] | None:
    """An object (JSON object already decoded) or nothing. For tool inputs that some tracers
    record as the bare value when a tool takes one argument (OpenInference's LangChain
    tracer: ``enterprise refund window`` for ``{"query": ...}``): such text is not the
    arguments, and without it the mapper takes them from the model's matching tool call."""
    return value if isinstance(value, dict) else None


def _langchain_chat_message(node: Any, output: bool) -> Message | None:
    """One serialized LangChain chat message (any form ``_langchain_message_body`` knows) in
    the GenAI parts format. Its role is the message's ``type`` (``system``, ``human``,
    ``ai``, ``tool``), else the class name a ``dumpd`` form carries (``HumanMessage``)."""
    body = _langchain_message_body(node)
    if body is None:
        return None
    role = body.get("type") if isinstance(body.get("type"), str) else None
    if role is None and isinstance(node, dict) and isinstance(node.get("id"), list) and node["id"]:
        role = str(node["id"][-1]).removesuffix("MessageChunk").removesuffix("Message").lower()
    return openai_message({**body, "role": role}, output=output)


def parse_langchain_messages(value: Any) -> list[Message] | None:
    """A chat model run's callback payload as LangChain tracers record it (the LangSmith SDK's
    ``gen_ai.prompt`` / ``gen_ai.completion``): the input ``{"messages": [[message, ...]]}``
    (one list per prompt of the batch; a run of the agents seen holds one) or the output
    ``LLMResult`` ``{"generations": [[{"message": ..., "generation_info": {"finish_reason"}},
    ...]]}``, messages serialized by LangChain (``dumpd``: ``{"lc": 1, "type":
    "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``). A batch of several prompts
    is not one conversation, so it is no value. Anything else (a hidden payload ``{}``) is
    no value either."""
    if not isinstance(value, dict):
        return None
    batches = value.get("messages", value.get("generations"))
    if not isinstance(batches, list) or len(batches) != 1 or not isinstance(batches[0], list):
        return None
    output = "generations" in value
    out: list[Message] = []
    for item in batches[0]:
        node = item.get("message") if output and isinstance(item, dict) else item
        message = _langchain_chat_message(node, output)
        if message is None:
            return None  # a shape not known here: no partial conversation
        if output and isinstance(item, dict):
            info = item.get("generation_info")
            if isinstance(info, dict) and isinstance(info.get("finish_reason"), str):
                message["finish_reason"] = info["finish_reason"]
        out.append(message)
    return out or None


def parse_langgraph_state_reply(value: Any) -> list[Message] | None:
    """The reply a LangGraph agent's run ended with, from the graph's output state as
    tracers record it (``{"messages": [message, ...]}``, each message serialized by LangChain
    in a form ``_langchain_message_body`` knows): the last message when it is the model's
    (``ai``), as one assistant message; no messages (``[]``) when the run ended on another
    message (a tool's, after a handoff), since the state's other messages (the question, the
    tools' results) are no answer. Anything that is not such a state is no value (the rule's
    next source reads it)."""
    if not isinstance(value, dict):
        return None
    messages = value.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    last = _langchain_chat_message(messages[-1], output=True)
    if last is None:
        return None  # a shape not known here: no claim about the run's reply
    return [last] if last.get("role") == "assistant" else []


def parse_langgraph_structured_response(value: Any) -> dict[str, Any] | None:
    """The structured answer a LangChain agent's run returned, from the graph's output state
    as tracers record it: ``{"messages": [...], "structured_response": {...}}`` (MLflow's
    ``mlflow.spanOutputs``, the LangSmith SDK's ``gen_ai.completion``), or that state under
    the callback's ``outputs`` (OpenLLMetry's ``traceloop.entity.output``). LangChain's
    ``create_agent(response_format=...)`` puts the parsed answer there; with its tool
    strategy no span records the output tool that carried it, so this state is the one place
    the trace shows the answer. Only an object is an answer: ``null`` (a run without a
    response format), a repr string or anything else is no value."""
    if not isinstance(value, dict):
        return None
    outputs = value.get("outputs")
    state = outputs if isinstance(outputs, dict) and "messages" in outputs else value
    answer = state.get("structured_response")
    return answer if isinstance(answer, dict) and answer else None


_REPR_TYPE = lazy_pattern(r"([A-Za-z_][\w.]{0,200})\(")


def parse_exception_repr_type(value: Any) -> str | None:
    """The exception type at the start of a LangChain run's error text (``repr(exc)``
    followed by the traceback: ``ParentCommand(Command(...))Traceback ...``), which the
    LangSmith SDK exports as an ``exception`` event of type ``Exception`` with that text as
    its message. ``None`` when the text does not start with ``Name(``."""
    if not isinstance(value, str):
        return None
    m = _REPR_TYPE().match(value)
    return m.group(1) if m else None


_JS_STACK_HEAD = lazy_pattern(r"([A-Za-z_$][\w$]{0,200})(?::\s|$)")


def parse_js_error_type(value: Any) -> str | None:
    """The error's name in a JavaScript exception text as LangChain.js tracers record it
    (OpenInference's ``exception.message``: ``<message>\\n\\n<stack>``, no
    ``exception.type``), read from the stack's first line (``SearchBackendError: ...``, or
    ``ParentCommand`` alone for an error without a message): the first line after a blank
    line that is a name, alone or followed by ``: ``, with the stack's ``at`` frames below it.
    The message's own first line is never taken for the name. ``None`` when no such line
    starts the stack."""
    if not isinstance(value, str):
        return None
    lines = value.split("\n")
    for i in range(1, len(lines) - 1):
        if lines[i - 1].strip() or not lines[i + 1].lstrip().startswith("at "):
            continue
        m = _JS_STACK_HEAD().match(lines[i])
        if m:
            return m.group(1)
    return None


_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
"""LangChain message types (``BaseMessage.type``) as chat roles."""


def _langchain_fields_message(node: Any, output: bool) -> Message | None:
    """One LangChain message as its own fields (``{"type", "content", "tool_calls",
    "tool_call_id", "status", ...}``, empty fields possibly left out, as Langtrace dumps a
    message) in the GenAI parts format; ``None`` for anything else. A ``ToolMessage`` whose
    ``status`` is ``error`` (LangGraph's ToolNode, a tool with ``handle_tool_error``) is the
    failed call's response ``{"error": <its text>}``: the text alone does not say it failed."""
    if not isinstance(node, dict) or node.get("type") not in _LANGCHAIN_ROLES:
        return None
    role = _LANGCHAIN_ROLES[node["type"]]
    if role == "tool":
        content = node.get("content")
        response = (
            {"error": content} if node.get("status") == "error" else parse_json_or_text(content)
        )
        part = {"type": "tool_call_response", "id": node.get("tool_call_id")}
        if "content" in node:
            part["response"] = response
        return {"role": "tool", "parts": [part]}
    body = {k: node[k] for k in ("content", "tool_calls") if k in node}
    return openai_message({**body, "role": role}, output=output)


def parse_langtrace_chat_input(value: Any) -> list[Message] | None:
    """A LangChain chat model call's input as Langtrace records it (``langchain.inputs``:
    the call's positional arguments, ``[input, config]``): the messages of ``input`` (a list
    of messages, ``{"messages": [...]}``, or a plain string prompt, a user message). ``None``
    when the input is none of these or holds anything but messages (no partial
    conversation)."""
    if not isinstance(value, list) or not value:
        return None
    prompt = value[0]
    if isinstance(prompt, str):
        return [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
    if isinstance(prompt, dict) and isinstance(prompt.get("messages"), list):
        prompt = prompt["messages"]
    if not isinstance(prompt, list) or not prompt:
        return None
    out: list[Message] = []
    for node in prompt:
        message = _langchain_fields_message(node, output=False)
        if message is None:
            return None
        out.append(message)
    return out


def parse_langtrace_chat_output(value: Any) -> list[Message] | None:
    """A LangChain chat model call's result as Langtrace records it (``langchain.outputs``: the
    returned ``AIMessage``'s fields, its finish reason in ``response_metadata``) as one
    assistant message; ``None`` for anything else."""
    message = _langchain_fields_message(value, output=True)
    if message is None or message["role"] != "assistant":
        return None
    meta = value.get("response_metadata")
    if isinstance(meta, dict) and isinstance(meta.get("finish_reason"), str):
        message["finish_reason"] = meta["finish_reason"]
    return [message]


PARSERS: Mapping[str, Parser] = {
    "langchain_tool_input": parse_langchain_tool_input,
    "langchain_messages": parse_langchain_messages,
    "exception_repr_type": parse_exception_repr_type,
    "js_error_type": parse_js_error_type,
    "langchain_message_name": parse_langchain_message_name,
    "langgraph_command_goto": parse_langgraph_command_goto,
    "traceloop_js_tool_args": parse_traceloop_js_tool_args,
    "langchain_message_content": parse_langchain_message_content,
    "langchain_message_str": parse_langchain_message_str,
    "object_only": parse_object_only,
    "langtrace_chat_input": parse_langtrace_chat_input,
    "langtrace_chat_output": parse_langtrace_chat_output,
    "langgraph_state_reply": parse_langgraph_state_reply,
    "langgraph_structured_response": parse_langgraph_structured_response,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
