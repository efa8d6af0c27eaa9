"""The compiled core's drafter and step builder (``native/python/src/draft.rs``,
``step.rs``) on the values the mapping sees rarely: each case states what the mapper's
rules say (``mapping/_mapper.py``), read from a real ``Drafter`` over a real ``FieldReader``
plan (one field per attribute of the same name), so no convention file changes the answer.
The captured traces (``test_map_real_traces``, ``test_step_constructor``) hold the common
values."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from otel_oracles._native import Drafter
from otel_oracles.mapping import _mapper, load_conventions
from otel_oracles.mapping._compile import output_messages, run_limit
from otel_oracles.mapping._loader import ToolKinds
from otel_oracles.mapping.parsers.scalars import parse_int, parse_string
from otel_oracles.model.span import EventRecord, SpanRecord, StatusCode
from otel_oracles.model.step import SpanRef, Step, StepKind
from tests.support.field_reader import plan_reader

FIELDS = (
    "tool", "agent_name", "error_type", "error_message", "input_tokens", "output_tokens",
    "finish_reasons", "input_messages", "output_messages", "documents", "result",
    "structured_output", "output",
)  # fmt: skip
CONTENT = {"input_messages", "output_messages", "result", "documents", "output"}
PLACEHOLDER = "__REDACTED__"


def _drafter(
    control_flow: frozenset[str] = frozenset(),
    limits: tuple[str, ...] = (),
    vocabulary: dict[str, str] | None = None,
) -> Drafter:
    plan = [(name, name in CONTENT, [("attr", name, None, None, None)]) for name in FIELDS]
    reader = plan_reader([plan], frozenset({PLACEHOLDER}))
    hooks = (
        parse_string,
        parse_int,
        output_messages,
        functools.partial(run_limit, names=limits),
    )
    return Drafter(reader, control_flow, bool(limits), vocabulary or {}, StatusCode.ERROR, hooks)


def _span(
    attrs: dict[str, Any],
    *,
    status: int = StatusCode.UNSET,
    message: str = "",
    events: list[EventRecord] | None = None,
    end: int = 10,
) -> SpanRecord:
    return SpanRecord(
        trace_id="t" * 32,
        span_id="s" * 16,
        parent_span_id="",
        name="span",
        start_ns=1,
        end_ns=end,
        status_code=status,
        status_message=message,
        attributes=attrs,
        events=events or [],
    )


def _draft(
    drafter: Drafter, span: SpanRecord
) -> tuple[str, dict[str, Any], set[str], dict[str, Any]]:
    fields: dict[str, Any] = {}
    redacted: set[str] = set()
    attributes: dict[str, Any] = {}
    status = drafter.draft(span, [], 0, fields, redacted, attributes)
    return status, fields, redacted, attributes


def _exception(etype: Any, message: Any = None) -> EventRecord:
    attrs = {"exception.type": etype}
    if message is not None:
        attrs["exception.message"] = message
    return EventRecord(name="exception", time_ns=5, attributes=attrs)


# ---- status and error signals ------------------------------------------------------------


def test_status_follows_the_error_signals_and_the_end() -> None:
    drafter = _drafter()
    assert _draft(drafter, _span({}))[0] == "ok"
    assert _draft(drafter, _span({}, end=0))[0] == "unset"
    assert _draft(drafter, _span({}, status=StatusCode.OK))[0] == "ok"
    status, fields, _, _ = _draft(drafter, _span({}, status=StatusCode.ERROR, message="boom"))
    assert (status, fields) == ("error", {"error_message": "boom"})
    # An error.type attribute is a signal whatever its value, None included.
    status, fields, _, _ = _draft(drafter, _span({"error.type": None}))
    assert (status, fields) == ("error", {})
    status, fields, _, _ = _draft(drafter, _span({"error.type": "TimeoutError"}))
    assert (status, fields) == ("error", {"error_type": "TimeoutError"})


def test_an_exception_event_gives_type_and_message_unless_the_rule_read_them() -> None:
    drafter = _drafter()
    events = [_exception("ValueError", "bad input"), _exception("KeyError", "later")]
    status, fields, _, _ = _draft(drafter, _span({}, events=events))
    assert status == "error"
    assert fields == {"error_type": "ValueError", "error_message": "bad input"}
    # The status message comes before the event's; the attribute's type before the event's.
    span = _span({"error.type": "HTTPError"}, message="503", events=events)
    assert _draft(drafter, span)[1] == {"error_type": "HTTPError", "error_message": "503"}
    own = _span({"error_type": "Mine", "error_message": "own words"}, events=events)
    assert _draft(drafter, own)[1] == {"error_type": "Mine", "error_message": "own words"}


def test_control_flow_exceptions_are_no_failure() -> None:
    drafter = _drafter(control_flow=frozenset({"StopRun", "Handoff"}))
    events = [_exception("agents.StopRun")]
    span = _span({"error.type": "pkg.Handoff", "error_type": "Handoff"}, events=events)
    status, fields, _, _ = _draft(drafter, span)
    assert (status, fields) == ("ok", {})  # the rule's own error_type is dropped too
    # Any other exception beside them, or an ERROR status alone, is a failure.
    mixed = _span({}, events=[*events, _exception("ValueError")])
    assert _draft(drafter, mixed)[0] == "error"
    assert _draft(drafter, _span({}, status=StatusCode.ERROR))[0] == "error"
    assert _draft(drafter, _span({"error.type": 3}))[0] == "error"
    # The rule's own error_type stands for the first event's (generic) type.
    generic = _span({"error_type": "x.StopRun"}, events=[_exception("Exception")])
    assert _draft(drafter, generic)[0] == "ok"
    later = _span({"error_type": "StopRun"}, events=[*events, _exception("Exception")])
    assert _draft(drafter, later)[0] == "error"
    # A type holding a lone surrogate is compared as Python compares it.
    assert _draft(drafter, _span({"error.type": "\udc80.StopRun"}))[0] == "ok"
    assert _draft(drafter, _span({"error.type": "StopRun\udc80"}))[0] == "error"
    assert _draft(_drafter(), _span({"error.type": "StopRun"}))[0] == "error"


def test_run_limit_errors_are_asked_of_failed_spans_only() -> None:
    drafter = _drafter(limits=("MaxTurnsExceeded", "recursion limit"))
    span = _span({"error.type": "agents.MaxTurnsExceeded"})
    assert _draft(drafter, span)[3] == {"run_limit": "MaxTurnsExceeded"}
    hit = _span({}, status=StatusCode.ERROR, message="hit the recursion limit of 25")
    assert _draft(drafter, hit)[3] == {"run_limit": "recursion limit"}
    assert _draft(drafter, _span({"error_message": "recursion limit"}))[3] == {}


# ---- normalized fields -------------------------------------------------------------------


def test_strings_and_token_counts_are_converted_only_when_not_exact() -> None:
    attrs = {
        "tool": 7,
        "agent_name": {"b": 1, "a": "é"},
        "input_tokens": " 12 ",
        "output_tokens": True,
    }
    fields = _draft(_drafter(), _span(attrs))[1]
    assert fields == {
        "tool": "7",
        "agent_name": '{"a": "é", "b": 1}',
        "input_tokens": 12,
        "output_tokens": None,
    }
    assert type(_draft(_drafter(), _span({"input_tokens": 3.0}))[1]["input_tokens"]) is int


def test_finish_reasons_become_a_fresh_list_in_the_shared_vocabulary() -> None:
    vocabulary = {"end_turn": "stop", "stop": "stop", "énd": "stop", "tool_use": "tool_call"}
    drafter = _drafter(vocabulary=vocabulary)
    reasons = ["END_TURN", "Tool_Use", "other", "ÉND", "\udc80X"]
    fields = _draft(drafter, _span({"finish_reasons": reasons}))[1]
    assert fields["finish_reasons"] == ["stop", "tool_call", "other", "stop", "\udc80X"]
    assert fields["finish_reasons"] is not reasons
    assert _draft(drafter, _span({"finish_reasons": "END_TURN"}))[1] == {"finish_reasons": ["stop"]}
    mixed = _draft(_drafter(), _span({"finish_reasons": ["stop", 5, None]}))[1]
    assert mixed == {"finish_reasons": ["stop", "5"]}
    kept = ["stop"]
    assert _draft(_drafter(), _span({"finish_reasons": kept}))[1]["finish_reasons"] is not kept


class _Reason(str):
    def lower(self) -> str:
        return "tool_use"


@pytest.mark.parametrize(
    ("reasons", "expected"),
    [
        (["stop", "tool_use", "tool_call"], ["stop", "tool_call", "tool_call"]),
        (["stop"], ["stop"]),
        (["Stop", "stop", "STOP"], ["stop", "stop", "stop"]),
        (["stop", _Reason("x")], ["stop", "x"]),
        (["stop", None, 5], ["stop", "5"]),
        ([], []),
    ],
)
def test_finish_reasons_in_the_vocabulary_are_a_new_list_of_each_looked_up(
    reasons: list[Any], expected: list[str]
) -> None:
    """Reasons already lower-case are looked up as they are, the others lowered (a ``str``
    subclass as its ``str()``, not by its own ``lower``); whatever the items, the draft's list
    is never the one read."""
    drafter = _drafter(vocabulary={"stop": "stop", "tool_use": "tool_call"})
    got = _draft(drafter, _span({"finish_reasons": reasons}))[1]["finish_reasons"]
    assert got == expected
    assert [type(r) for r in got] == [str] * len(expected)
    assert got is not reasons


def test_message_lists_must_be_lists_of_dicts_and_dropped_content_is_redacted() -> None:
    drafter = _drafter()
    odd = {"input_messages": [{"role": "user"}, "text"], "documents": {"id": 1}}
    assert _draft(drafter, _span(odd))[1:3] == ({}, set())
    dropped = [
        [{"role": "user"}],
        [{"role": "user", "parts": []}],
        [{"role": "user", "parts": "text"}],
        [{"role": "user", "parts": [{"type": "text"}]}],
        [{"role": "user", "parts": [{"type": "text", "content": None}]}],
        [{"role": "assistant", "parts": [{"type": "tool_call", "name": "f"}]}],
        [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "1"}]}],
    ]
    for messages in dropped:
        _, fields, redacted, _ = _draft(drafter, _span({"output_messages": messages}))
        assert fields == {"output_messages": messages}
        assert redacted == {"output_messages"}, messages
    whole = [
        {"role": "user", "parts": ["odd", {"type": "text", "content": ""}, {"no": "type"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "arguments": None}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "response": None}]},
    ]
    assert _draft(drafter, _span({"input_messages": whole}))[2] == set()


def test_results_are_decoded_and_a_text_block_unwrapped() -> None:
    drafter = _drafter()
    cases: list[tuple[Any, Any]] = [
        ('{"documents": []}', {"documents": []}),
        ("plain text", "plain text"),
        ({"type": "text", "text": '{"a": 1}'}, {"a": 1}),
        ({"type": "text", "text": "done", "id": "lc_1"}, "done"),
        ({"type": "text", "text": "x", "extra": 1}, {"type": "text", "text": "x", "extra": 1}),
        ({"type": "image", "text": "x"}, {"type": "image", "text": "x"}),
        ({"type": "text", "text": 5}, {"type": "text", "text": 5}),
    ]
    for raw, expected in cases:
        assert _draft(drafter, _span({"result": raw}))[1] == {"result": expected}, raw


def test_outputs_become_messages_and_structured_answers_attributes() -> None:
    drafter = _drafter()
    _, fields, _, attributes = _draft(drafter, _span({"structured_output": {"answer": 1}}))
    assert (fields, attributes) == ({}, {"structured_output": {"answer": 1}})
    assert _draft(drafter, _span({"structured_output": ["a"]}))[1:4:2] == ({}, {})
    fields = _draft(drafter, _span({"output": 42}))[1]
    assert fields == {
        "output_messages": [{"role": "assistant", "parts": [{"type": "text", "content": "42"}]}]
    }
    written = '[{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}]'
    fields = _draft(drafter, _span({"output": written}))[1]
    assert fields["output_messages"][0]["parts"] == [{"type": "text", "content": "hi"}]
    own = [{"role": "assistant", "parts": [{"type": "text", "content": "own"}]}]
    assert _draft(drafter, _span({"output": "x", "output_messages": own}))[1] == {
        "output_messages": own
    }
    _, fields, redacted, _ = _draft(drafter, _span({"output": PLACEHOLDER}))
    assert (fields, redacted) == ({}, {"output_messages"})


def test_finish_reasons_read_from_the_output_messages_when_none_was_read() -> None:
    messages = [
        {"role": "assistant", "parts": [{"type": "text", "content": "a"}], "finish_reason": 1},
        {"role": "assistant", "parts": [{"type": "text", "content": "b"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "c"}], "finish_reason": ""},
        {"role": "assistant", "parts": [{"type": "text", "content": "d"}], "finish_reason": "x"},
    ]
    fields = _draft(_drafter(), _span({"output_messages": messages}))[1]
    assert fields["finish_reasons"] == ["1", "x"]
    read = _draft(_drafter(), _span({"output_messages": messages, "finish_reasons": []}))[1]
    assert read["finish_reasons"] == []


class _Name(str):
    """A field name of another class than ``str``: it may equal any name (its own
    ``__eq__``)."""


def test_fields_are_normalized_whatever_object_holds_their_name() -> None:
    """``normalize`` finds the names it reads among the keys by address first (the field
    reader's and its own names are the same interned ``str``s), so a key that is another
    object of the same text, or of a ``str`` subclass, must be read all the same."""
    drafter = _drafter()
    for name in ("".join, lambda parts: _Name("".join(parts))):
        fields: dict[str, Any] = {
            name(["res", "ult"]): '{"a": 1}',
            name(["out", "put"]): 42,
            name(["input_", "tokens"]): "7",
            name(["finish_", "reasons"]): ("stop",),
        }
        drafter.draft(_span({}), [], 0, fields, set(), {})
        assert fields == {
            "result": {"a": 1},
            "input_tokens": 7,
            "finish_reasons": ["stop"],
            "output_messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": "42"}]}
            ],
        }


# ---- steps -------------------------------------------------------------------------------


def _step(fields: dict[str, Any], span: SpanRecord | None, **draft: Any) -> Step | dict[str, Any]:
    return _mapper._STEPS.build(
        draft.get("index", 3),
        draft.get("kind", StepKind.TOOL_CALL),
        fields,
        draft.get("status", "ok"),
        span,
        draft.get("synthesized", False),
        draft.get("redacted", set()),
        draft.get("attributes", {}),
        "otel-genai",
        "trace-of-the-trajectory",
        None,
        None,
        None,
    )


def test_a_well_typed_step_is_the_record_validation_makes() -> None:
    arguments = {"q": "x"}
    attributes = {"result_empty": True}
    fields = {"tool": "search", "arguments": arguments, "result": [1], "input_tokens": None}
    span = _span({})
    step = _step(
        fields, span, redacted={"result", "arguments"}, attributes=attributes, status="error"
    )
    assert isinstance(step, Step)
    assert list(vars(step)) == list(Step.model_fields)
    validated = Step(
        index=3,
        kind=StepKind.TOOL_CALL,
        tool="search",
        arguments={"q": "x"},
        result=[1],
        status="error",
        start_ns=1,
        end_ns=10,
        source=SpanRef(trace_id="t" * 32, span_id="s" * 16),
        convention="otel-genai",
        redacted=("arguments", "result"),
        attributes={"result_empty": True},
    )
    assert step == validated
    assert step.arguments is not arguments and step.attributes is not attributes
    assert type(step.source) is SpanRef


def test_arguments_that_are_no_object_are_kept_raw() -> None:
    text = _step({"arguments": "f(x=1)"}, None)
    assert isinstance(text, Step)
    assert (text.arguments, text.arguments_raw) == (None, "f(x=1)")
    listed = _step({"arguments": [1, {"b": 2, "a": 1}]}, None)
    assert isinstance(listed, Step)
    assert listed.arguments_raw == '[1, {"a": 1, "b": 2}]'
    assert (listed.source, listed.start_ns) == (None, None)


def test_a_synthesized_step_keeps_no_times_and_the_trajectorys_trace_id() -> None:
    span = _span({})
    span.trace_id = ""
    step = _step({}, span, synthesized=True)
    assert isinstance(step, Step)
    assert (step.start_ns, step.end_ns, step.synthesized) == (None, None, True)
    assert step.source == SpanRef(trace_id="trace-of-the-trajectory", span_id="s" * 16)


class _Text(str):
    """A ``str`` subclass: no exact type, so validation decides."""


@pytest.mark.parametrize(
    "fields, span_times",
    [
        ({"tool": _Text("search")}, (1, 10)),
        ({"input_tokens": True}, (1, 10)),
        ({"not_a_field": 1}, (1, 10)),
        ({"arguments": _Text("raw")}, (1, 10)),
        ({}, (1.0, 10)),
        ({}, (1, True)),
    ],
)
def test_unexpected_types_are_left_to_validation(
    fields: dict[str, Any], span_times: tuple[Any, Any]
) -> None:
    span = _span({})
    span.start_ns, span.end_ns = span_times
    values = _step(fields, span)
    assert isinstance(values, dict)
    assert list(values)[: len(fields)] == list(fields)
    assert values["index"] == 3 and values["source"] == SpanRef(trace_id="t" * 32, span_id="s" * 16)
    # So is a synthesized step's span with odd times, although it keeps none.
    assert isinstance(_step(fields, span, synthesized=True), dict)


def test_a_span_id_of_another_type_is_validated() -> None:
    span = _span({})
    span.span_id = _Text("s" * 16)
    step = _step({}, span)
    assert isinstance(step, Step) and step.source is not None
    assert type(step.source.span_id) is str


# ---- a trace's steps in one call ----------------------------------------------------------


class _Args(dict[str, Any]):
    """Arguments whose ``in`` and ``[]`` answer differently from the dict's own items."""

    def __contains__(self, key: object) -> bool:
        return key == "cmd"

    def __getitem__(self, key: str) -> Any:
        return "ls -la" if key == "cmd" else super().__getitem__(key)


def test_build_steps_numbers_drafts_and_their_follows_and_reads_tool_kinds() -> None:
    rule = next(iter(load_conventions().compiled().rules))
    gen = _mapper.Draft(kind="generation", span=_span({}), rule=rule, status="ok")
    edit = _mapper.Draft(kind="tool_call", span=None, rule=rule, synthesized=True)
    edit.fields.update(
        tool="Tools-write_file", arguments={"path": "./a//b.py", "file_path": "x", "content": 7}
    )
    shell = _mapper.Draft(kind="tool_call", span=None, rule=rule)
    shell.fields.update(tool="bash", arguments=_Args(command="rm -rf /"))
    served = _mapper.Draft(kind="tool_call", span=None, rule=rule)
    served.fields.update(tool="fs_tool", arguments={"command": None, "cmd": "pwd"})
    served.attributes["mcp_tool"] = "run_command"
    plain = _mapper.Draft(kind="tool_call", span=None, rule=rule)
    plain.fields.update(tool=None, arguments={"path": "p"})
    gen.follows.append(edit)
    steps = _mapper._STEPS.build_steps([gen, shell, served, plain], "t" * 32, {})
    assert [s.index for s in steps] == [0, 1, 2, 3, 4]
    assert [s.kind for s in steps] == [
        StepKind.GENERATION,
        StepKind.FILE_EDIT,
        StepKind.COMMAND,
        StepKind.COMMAND,
        StepKind.TOOL_CALL,
    ]
    assert (steps[1].path, steps[1].content, steps[1].synthesized) == ("a/b.py", "7", True)
    assert steps[2].command == "ls -la"  # the arguments' own ``in`` and ``[]``
    assert steps[3].command == "pwd"  # the first key whose value is not ``None``
    assert (steps[4].path, steps[4].arguments) == (None, {"path": "p"})
    with pytest.raises(ValueError):
        _mapper._STEPS.build_steps(
            [_mapper.Draft(kind="no_such_kind", span=None, rule=rule)], "t" * 32, {}
        )


def test_steps_of_one_shape_and_one_tool_name_stay_apart() -> None:
    """Steps of one kind, status and convention are each made from the shape's template
    copied, and a tool name's kind is remembered per name, served name, rule and the rules'
    own tools, so no step takes another's values or kind."""
    rules = iter(load_conventions().compiled().rules)
    rule, other_rule = next(rules), next(rules)
    name = "".join(["fs", "_tool"])  # one object for every draft below

    def call(served: str | None = None, on: Any = rule) -> Any:
        draft = _mapper.Draft(kind="tool_call", span=_span({}), rule=on, status="ok")
        draft.fields.update(tool=name, arguments={"cmd": "pwd", "path": "a.py"})
        if served is not None:
            draft.attributes["mcp_tool"] = served
        return draft

    first, second, served, own = _mapper._STEPS.build_steps(
        [call(), call(), call("run_command"), call(on=other_rule)], "t" * 32, {}
    )
    assert vars(first) is not vars(second) and vars(first) == {**vars(second), "index": 0}
    assert first.attributes is not second.attributes
    assert [s.kind for s in (first, second, served, own)] == [
        StepKind.TOOL_CALL,
        StepKind.TOOL_CALL,
        StepKind.COMMAND,
        StepKind.TOOL_CALL,
    ]
    edits = ToolKinds(file_edit=frozenset({name}), command=frozenset())
    tool_kinds = {(other_rule.file, other_rule.rule_id): edits}
    plain, edit = _mapper._STEPS.build_steps([call(), call(on=other_rule)], "t" * 32, tool_kinds)
    assert (plain.kind, edit.kind, edit.path) == (StepKind.TOOL_CALL, StepKind.FILE_EDIT, "a.py")


def test_build_steps_copies_only_what_something_besides_the_draft_holds() -> None:
    """A step takes its draft's ``attributes`` and ``arguments`` dicts as they are when
    nothing else holds them (the draft goes when the trace is mapped), and a copy when
    something does: a linked call's arguments, which the model call's output message part
    also holds, stay independent of that part, as do attributes another object holds."""
    compiled = load_conventions().compiled()
    _mapper._trace_drafter(compiled)  # as in mapping: drafts then read in their memory
    rule = next(iter(compiled.rules))

    def call() -> Any:
        draft = _mapper.Draft(kind="tool_call", span=_span({}), rule=rule, status="ok")
        draft.fields.update(tool="search", arguments={"q": "otel"})
        draft.attributes["mcp_tool"] = "search"
        return draft

    alone, shared = call(), call()
    part = shared.fields["arguments"]  # as a message part holds a linked call's arguments
    attributes = shared.attributes
    # By address: a reference held here would be one besides the draft's.
    own = (id(alone.fields["arguments"]), id(alone.attributes))
    taken, copied = _mapper._STEPS.build_steps([alone, shared], "t" * 32, {})
    assert (id(taken.arguments), id(taken.attributes)) == own
    assert copied.arguments == part and copied.arguments is not part
    assert copied.attributes == attributes and copied.attributes is not attributes
    part["q"] = "changed"
    attributes["mcp_tool"] = "changed"
    assert copied.arguments == {"q": "otel"} and copied.attributes == {"mcp_tool": "search"}


def test_steps_of_one_shape_take_a_held_value_only_where_their_own_is_equal() -> None:
    """A shape's template holds the short immutable objects its steps repeat (an agent, a
    model, a token count: ``step.rs``, ``Shape``), and a step whose value is the object held
    is not given it again. A step lacking such a value, or with another (an equal one
    included), still has exactly its own, whichever way its fields are read; lists are
    never shared between steps."""
    rule = next(iter(load_conventions().compiled().rules))

    def generation(**fields: Any) -> Any:
        draft = _mapper.Draft(kind="generation", span=_span({}), rule=rule, status="ok")
        draft.fields.update(fields)
        return draft

    def repeated(**changed: Any) -> dict[str, Any]:
        fields = {"agent_name": "planner", "model": "m-1", "input_tokens": 12}
        return {**fields, "finish_reasons": ["stop"], **changed}

    drafts = [generation(**repeated()) for _ in range(4)]
    drafts += [
        generation(model="m-1"),
        # An equal name that is another object (its own is kept), an int of many digits.
        generation(**repeated(agent_name="".join(["plan", "ner"]), input_tokens=10**30)),
        generation(**repeated(agent_name="writer", input_tokens=13)),
        # A field name that is not the reader's own object: the fields read by value.
        generation(**{"".join(["agent", "_name"]): "planner"}),
        generation(**repeated()),
    ]
    steps = _mapper._STEPS.build_steps(drafts, "t" * 32, {})
    read = [(s.agent_name, s.model, s.input_tokens, s.finish_reasons) for s in steps]
    assert read == [("planner", "m-1", 12, ["stop"])] * 4 + [
        (None, "m-1", None, None),
        ("planner", "m-1", 10**30, ["stop"]),
        ("writer", "m-1", 13, ["stop"]),
        ("planner", None, None, None),
        ("planner", "m-1", 12, ["stop"]),
    ]
    for step, draft in zip(steps, drafts, strict=True):
        assert all(getattr(step, name) is value for name, value in draft.fields.items())
        assert step == Step(**{**vars(step), "source": step.source})
    lists = [s.finish_reasons for s in steps if s.finish_reasons is not None]
    assert len({id(reasons) for reasons in lists}) == len(lists) == 7
    steps[0].finish_reasons.append("length")
    assert steps[1].finish_reasons == ["stop"]
