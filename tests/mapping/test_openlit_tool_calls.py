"""OpenLIT's joined tool-call fields on its chat spans (``openlit_tool_calls``): read only when
the fields agree on how many calls the turn requested, never split where a ``", "`` inside a
name, id or argument text could be a boundary (DESIGN section 8: fail closed)."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles.mapping.parsers.openlit import parse_openlit_tool_calls, split_json_values

NAME, ID, ARGS, LC_ARGS = (
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.args",
    "gen_ai.tool.call.arguments",
)


def calls(values: dict[str, Any]) -> list[tuple[Any, Any, Any]] | None:
    """(id, name, arguments or "-" when not read) per tool-call part, or None."""
    messages = parse_openlit_tool_calls(values)
    if messages is None:
        return None
    assert [m["role"] for m in messages] == ["assistant"]
    return [(p["id"], p["name"], p.get("arguments", "-")) for p in messages[0]["parts"]]


def test_two_calls_of_one_turn_are_split_by_their_json_arguments() -> None:
    got = calls(
        {
            NAME: "search_docs, delete_records",
            ID: "call_0_0, call_0_1",
            ARGS: '{"query": "a, b"}, {"table": "t", "where": "x = 1, y = 2"}',
        }
    )
    assert got == [
        ("call_0_0", "search_docs", {"query": "a, b"}),
        ("call_0_1", "delete_records", {"table": "t", "where": "x = 1, y = 2"}),
    ]


def test_the_langchain_instrumentors_argument_key_is_read() -> None:
    got = calls({NAME: "search_docs", ID: "call_1", LC_ARGS: '{"query": "q"}'})
    assert got == [("call_1", "search_docs", {"query": "q"})]


def test_one_call_without_arguments_or_ids_keeps_its_name_only() -> None:
    assert calls({NAME: "search_docs"}) == [(None, "search_docs", "-")]


def test_one_call_whose_arguments_were_cut_keeps_its_name_and_id() -> None:
    """An SDK's value length limit cut the argument text inside its JSON: one named call
    (the names count one), arguments unknown, never a turn of unknown tools."""
    cut = '{"path": "calc.py", "content": "def add(a, b):\n    return a'
    assert calls({NAME: "write_file", ID: "call_0_0", LC_ARGS: cut}) == [
        ("call_0_0", "write_file", "-")
    ]
    # Two names cannot be counted by a cut text.
    assert calls({NAME: "search_docs, delete_records", ARGS: '{"q": 1}, {"t'}) is None


@pytest.mark.parametrize(
    "values",
    [
        # A name holding the separator: two names, one argument text.
        {NAME: "lookup, then delete", ID: "call_1", ARGS: '{"q": 1}'},
        # An id holding the separator.
        {NAME: "search_docs", ID: "call, 1", ARGS: '{"q": 1}'},
        # OpenLIT drops empty entries: one name left for two calls' arguments.
        {NAME: "search_docs", ID: "call_1, call_2", ARGS: '{"q": 1}, {"q": 2}'},
        # Two names and nothing that counts the calls.
        {NAME: "search_docs, delete_records"},
        {NAME: "search_docs, delete_records", ID: "call_1, call_2"},
        # Argument texts that are not JSON cannot count the calls.
        {NAME: "search_docs", ARGS: "query=a, b"},
        {NAME: "search_docs, delete_records", ARGS: "{'q': 1}, {'t': 2}"},
        # Blank or padded entries.
        {NAME: "search_docs, ", ARGS: '{"q": 1}, {"q": 2}'},
        {NAME: "search_docs,  delete_records", ARGS: '{"q": 1}, {"q": 2}'},
        {NAME: ""},
        {NAME: 3},
        {},
    ],
)
def test_fields_that_disagree_are_no_value(values: dict[str, Any]) -> None:
    assert calls(values) is None


def test_json_values_are_split_at_the_separator_only_between_values() -> None:
    assert split_json_values('{"a": "x, y"}, [1, 2], "z"') == [{"a": "x, y"}, [1, 2], "z"]
    assert split_json_values('{"a": 1},{"b": 2}') is None
    assert split_json_values('{"a": 1}, ') is None
    assert split_json_values('{"a": 1} trailing') is None
