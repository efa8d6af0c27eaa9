"""``langchain_message_str``: a LangChain message as ``str()`` writes it, read as data.

OpenLIT's LangChain instrumentor records a tool's result as the ``ToolMessage``'s ``str()``
(pydantic's ``__str__``: ``field=repr`` pairs separated by spaces), so the documents a search
returned are only reachable through this reader (``tests/testdata/traces/openlit-langgraph``).
"""

from __future__ import annotations

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.langgraph import parse_langchain_message_str

DOCS = '{"documents": [{"id": "doc-42", "text": "a b=c d"}], "status": "ok x=1"}'


def test_tool_message_content_is_decoded() -> None:
    text = f"content='{DOCS}' name='search_docs' tool_call_id='call_0_0'"
    assert parse_langchain_message_str(text) == {
        "documents": [{"id": "doc-42", "text": "a b=c d"}],
        "status": "ok x=1",
    }


def test_plain_text_content_stays_text() -> None:
    text = "content='Wrote 12 bytes to out.txt' name='write_file' tool_call_id='call_1'"
    assert parse_langchain_message_str(text) == "Wrote 12 bytes to out.txt"


def test_error_status_is_an_error_result() -> None:
    """A tool error LangChain handled (``ToolMessage(status='error')``) fails the call."""
    text = "content='Error: boom' name='x' tool_call_id='c' status='error'"
    assert parse_langchain_message_str(text) == {"error": "Error: boom"}


def test_content_blocks_and_nested_fields() -> None:
    text = (
        "content=[{'type': 'text', 'text': 'hi there'}] name='x' tool_call_id='c' "
        "artifact={'k': [1, 2]}"
    )
    assert parse_langchain_message_str(text) == [{"type": "text", "text": "hi there"}]


def test_other_values_are_returned_unchanged() -> None:
    """Text that is no such message, unbalanced text, and a field holding an expression
    (never evaluated) all stay as they were; so do non-text values."""
    for value in (
        "plain text",
        "content='unterminated name='x'",
        "content=__import__('os').getcwd() name='x'",
        42,
        None,
        {"content": "x"},
    ):
        assert parse_langchain_message_str(value) == value


def test_registered_for_conventions_files() -> None:
    assert builtin_parsers()["langchain_message_str"] is parse_langchain_message_str
