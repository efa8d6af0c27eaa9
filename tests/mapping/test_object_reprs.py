"""Framework objects recorded with ``str()``, and DSPy's adapter text, read as data.

The inputs are taken from real captures (tests/testdata/traces/haystack-openinference,
haystack-native and dspy-openinference); nothing in them is ever evaluated.
"""

from __future__ import annotations

import json

from otel_oracles.mapping.parsers.dspy import parse_dspy_adapter_output
from otel_oracles.mapping.parsers.haystack import (
    parse_haystack_messages,
    parse_haystack_reply_meta,
)
from otel_oracles.mapping.parsers.python_literals import MAX_LITERAL_CHARS, parse_python_repr

ASSISTANT = (
    "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[ToolCall("
    "tool_name='search_docs', arguments={'query': 'enterprise refund window'}, id='call_0_0', "
    "extra=None)], _name=None, _meta={'model': 'gpt-4o-mini', 'index': 0, "
    "'finish_reason': 'tool_calls'})"
)
TOOL_OK = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='{\"documents\""
    ": [{\"id\": \"doc-42\"}]}', origin=ToolCall(tool_name='search_docs', arguments={'query': "
    "'q'}, id='call_0_0', extra=None), error=False)], _name=None, _meta={})"
)
TOOL_FAILED = TOOL_OK.replace("error=False", "error=True").replace(
    'result=\'{"documents": [{"id": "doc-42"}]}\'', "result='SearchBackendError: timed out'"
)
TOOLS_ARG = (
    "Tool(name='search_docs', parameters={'type': 'object'}, "
    "function=<function haystack_tools.<locals>.search_docs at 0x7fc4fc6c0860>)"
)


def test_python_repr_reads_dataclasses_enums_and_opaque_objects_as_data() -> None:
    assert parse_python_repr(ASSISTANT) == {
        "__type__": "ChatMessage",
        "_role": "assistant",
        "_content": [
            {
                "__type__": "ToolCall",
                "tool_name": "search_docs",
                "arguments": {"query": "enterprise refund window"},
                "id": "call_0_0",
                "extra": None,
            }
        ],
        "_name": None,
        "_meta": {"model": "gpt-4o-mini", "index": 0, "finish_reason": "tool_calls"},
    }
    # A function repr (with a nested <locals>) is an opaque object: None, never code.
    assert parse_python_repr(TOOLS_ARG)["function"] is None
    # A '<' inside a string literal is text, not a repr.
    assert parse_python_repr("Msg(text='a <b> c')") == {"__type__": "Msg", "text": "a <b> c"}


def test_python_repr_leaves_other_text_alone_and_never_evaluates() -> None:
    for text in ("plain words", "Msg(text=", "__import__('os').system('id')" + ")" * 3):
        assert parse_python_repr(text) == text
    call = parse_python_repr("__import__('os').system('id')")
    assert call == {"__type__": "system", "__args__": ["id"]}, "a call is data, not run"
    huge = "Msg(text='" + "x" * MAX_LITERAL_CHARS + "')"
    assert parse_python_repr(huge) == huge
    deep = "A(x=" * 40 + "1" + ")" * 40
    assert parse_python_repr(deep) == deep


def test_haystack_messages_link_results_to_calls_and_keep_finish_reasons() -> None:
    value = {"messages": [ASSISTANT, TOOL_OK, TOOL_FAILED]}
    assert parse_haystack_messages(value) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_0_0",
                    "name": "search_docs",
                    "arguments": {"query": "enterprise refund window"},
                }
            ],
            "finish_reason": "tool_calls",
        },
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "call_0_0",
                    "response": json.dumps({"documents": [{"id": "doc-42"}]}),
                }
            ],
        },
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "call_0_0",
                    "response": {"error": "SearchBackendError: timed out"},
                }
            ],
        },
    ]
    assert parse_haystack_messages({"replies": [ASSISTANT]}) is not None
    assert parse_haystack_messages({"messages": ["not a message"]}) is None
    assert parse_haystack_messages("__REDACTED__") is None


TO_DICT_REPLIES = {
    "replies": [
        {
            "role": "assistant",
            "meta": {
                "model": "gpt-4o-mini-2024-07-18",
                "finish_reason": "tool_calls",
                "usage": {"completion_tokens": 47, "prompt_tokens": 67, "total_tokens": 114},
            },
            "name": None,
            "content": [
                {"tool_call": {"tool_name": "search_docs", "arguments": {"query": "q"}, "id": "c1"}}
            ],
        }
    ]
}
"""Haystack's own tracer: a generator's output, its ``ChatMessage.to_dict()`` replies."""


def test_haystack_messages_read_to_dict_messages_as_their_reprs() -> None:
    """Haystack's own tracer writes ``to_dict()`` messages: the same parts as the ``repr``,
    a failed result included; unknown content (an image) gives no part, never a guess."""
    assert parse_haystack_messages(TO_DICT_REPLIES) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "search_docs",
                    "arguments": {"query": "q"},
                }
            ],
            "finish_reason": "tool_calls",
        }
    ]
    failed = {
        "role": "tool",
        "meta": {},
        "content": [
            {"tool_call_result": {"result": "boom", "origin": {"id": "c1"}, "error": True}},
            {"image": {"base64_image": "..."}},
        ],
    }
    assert parse_haystack_messages({"messages": [failed]}) == [
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": {"error": "boom"}}],
        }
    ]


def test_haystack_reply_meta_gives_the_model_and_usage_or_nothing() -> None:
    assert parse_haystack_reply_meta(TO_DICT_REPLIES) == {
        "model": "gpt-4o-mini-2024-07-18",
        "input_tokens": 67,
        "output_tokens": 47,
    }
    assert parse_haystack_reply_meta({"replies": [ASSISTANT]}) == {"model": "gpt-4o-mini"}
    no_usage = {"replies": [{"role": "assistant", "meta": {"usage": {"prompt_tokens": True}}}]}
    assert parse_haystack_reply_meta(no_usage) is None, "a flag is no token count"
    for value in ({"replies": []}, {"messages": [ASSISTANT]}, "__REDACTED__", None):
        assert parse_haystack_reply_meta(value) is None


REPLY = (
    "[[ ## reasoning ## ]]\nThe observations are enough.\n\n[[ ## answer ## ]]\n"
    "Refunds within 30 days [doc-42].\n\n[[ ## completed ## ]]"
)
STEP = (
    "[[ ## next_thought ## ]]\nSearch.\n\n[[ ## next_tool_name ## ]]\nsearch_docs\n\n"
    '[[ ## next_tool_args ## ]]\n{"query": "q"}\n\n[[ ## completed ## ]]'
)


def test_dspy_adapter_output_is_the_last_output_field() -> None:
    assert parse_dspy_adapter_output([REPLY]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "The observations are enough."},
                {"type": "text", "content": "Refunds within 30 days [doc-42]."},
            ],
        }
    ]
    # A ReAct step names a tool (its own span): the plain reply text is read instead.
    assert parse_dspy_adapter_output([STEP]) is None
    assert parse_dspy_adapter_output(["no fields here"]) is None
    assert parse_dspy_adapter_output("__REDACTED__") is None
