"""``pydantic_str`` and ``execution_record``: a model written by pydantic's ``str()`` read as
data, and an execution record's outcome.

OpenLLMetry's Agno instrumentation records each tool's ``FunctionExecutionResult`` with
``str()`` and ends the tool span OK when the function failed, so the failure is only in that
text (``tests/testdata/traces/openllmetry-agno``).
"""

from __future__ import annotations

from otel_oracles.mapping.parsers import builtin_parsers
from otel_oracles.mapping.parsers.python_literals import (
    parse_execution_record,
    parse_pydantic_str,
)

FAILED = (
    "status='failure' result=None error='upstream search service timed out (attempt 1)' "
    "updated_session_state=None images=None"
)
SUCCEEDED = "status='success' result={'documents': [{'id': 'doc-42', 'text': 'a b=c'}]} error=None"


def test_fields_are_read_as_data() -> None:
    assert parse_pydantic_str(SUCCEEDED) == {
        "status": "success",
        "result": {"documents": [{"id": "doc-42", "text": "a b=c"}]},
        "error": None,
    }


def test_an_object_repr_in_a_field_is_no_value() -> None:
    """``<generator object ...>`` (Agno's delegation tool result) is never evaluated."""
    text = "status='success' result=<generator object f.<locals>.g at 0x7f00> error=None"
    assert parse_pydantic_str(text) == {"status": "success", "result": None, "error": None}


def test_other_text_is_returned_unchanged() -> None:
    for value in ("plain text", "status='unterminated error=None", "Model(status='ok')", 42, None):
        assert parse_pydantic_str(value) == value


def test_an_expression_in_a_field_is_never_evaluated() -> None:
    fields = parse_pydantic_str("status=__import__('os').getcwd() error=None")
    assert fields == {"status": {"__type__": "getcwd"}, "error": None}
    assert parse_execution_record(fields) == fields  # no status text: not a record


def test_failure_status_is_an_error_result() -> None:
    record = parse_pydantic_str(FAILED)
    assert parse_execution_record(record) == {
        "error": "upstream search service timed out (attempt 1)"
    }


def test_success_is_its_result() -> None:
    record = parse_pydantic_str(SUCCEEDED)
    assert parse_execution_record(record) == {"documents": [{"id": "doc-42", "text": "a b=c"}]}


def test_values_that_are_no_record_are_returned_unchanged() -> None:
    for value in ({"status": "ok"}, {"result": 1}, {"status": 3, "result": 1}, "text", None):
        assert parse_execution_record(value) == value


def test_registered_for_conventions_files() -> None:
    parsers = builtin_parsers()
    assert parsers["pydantic_str"] is parse_pydantic_str
    assert parsers["execution_record"] is parse_execution_record


def test_blank_runs_are_read_once() -> None:
    """Fields separated by any run of whitespace are read, a run followed by no field stays
    text, and a run of blanks is matched once, not once per blank: a long run cost a match
    per blank over the rest of the run (quadratic; 80,000 blanks took 44 s)."""
    from otel_oracles.mapping.parsers import python_literals

    assert parse_pydantic_str("status='ok' \t\n result='a  b'   error=None") == {
        "status": "ok",
        "result": "a  b",
        "error": None,
    }
    assert parse_pydantic_str("status='ok'   x") == "status='ok'   x"

    lazy = python_literals._FIELD_START
    real = lazy()
    calls = 0

    class Counting:
        def match(self, text: str, pos: int) -> object:
            nonlocal calls
            calls += 1
            return real.match(text, pos)

    counting = Counting()
    python_literals._FIELD_START = lambda: counting  # type: ignore[assignment,return-value]
    try:
        text = "status='ok'" + " " * 10_000 + "x"
        assert parse_pydantic_str(text) == text
    finally:
        python_literals._FIELD_START = lazy
    assert calls == 1
