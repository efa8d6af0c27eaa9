"""What the compiled core does for a draft that Python's ``_finish`` and parser chains did
before: the ``string_list`` and ``streamed_partials`` parsers, ``parse:`` chains run by the
field reader, and a model call's run limit (``run_limit_prompts``, ``run_limit_call``).

The Python functions they replaced are kept here as the specification: the core's answer
must be the one they gave, value and type, on ordinary values and on the odd ones (``str``
subclasses, lone surrogates, tuples, ``None`` items, dict subclasses with their own
``get``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from otel_oracles._native import (
    Drafter,
    FieldReader,
    TraceDrafter,
    parse_json,
    parse_python_literal,
    parse_streamed_partials,
    parse_string_list,
)
from otel_oracles.assemble import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping._compile import _parser, output_messages, run_limit
from otel_oracles.mapping._mapper import Draft
from otel_oracles.mapping.parsers._registry import ParserChain, builtin_parsers
from otel_oracles.mapping.parsers.scalars import parse_int, parse_string
from otel_oracles.model.span import SpanRecord, StatusCode
from tests.support.field_reader import plan_reader


def spec_string_list(value: Any) -> list[str] | None:
    """The Python ``parse_string_list`` the core's replaced."""
    value = parse_json(value) if isinstance(value, str) and value.startswith("[") else value
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return None


def spec_streamed_partials(value: Any) -> Any:
    """The Python ``parse_streamed_partials`` the core's replaced."""
    if not isinstance(value, list) or len(value) < 2:
        return value
    *partials, last = value
    if not isinstance(last, dict) or not last.get("finish_reason"):
        return value
    if all(isinstance(m, dict) and m.get("finish_reason") == "" for m in partials):
        return [last]
    return value


def spec_run_limit_prompt(messages: Any, prompts: tuple[str, ...]) -> str | None:
    """The Python ``_run_limit_prompt`` the core's replaced."""
    if not isinstance(messages, list):
        return None
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user"):
            continue
        parts = message.get("parts")
        for part in parts if isinstance(parts, list) else ():
            text = part.get("content") if isinstance(part, dict) else None
            if isinstance(text, str):
                for prompt in prompts:
                    if prompt in text:
                        return prompt
    return None


class Text(str):
    pass


class Reason(dict[str, Any]):
    """A dict whose ``get`` answers differently from its items."""

    def get(self, key: Any, default: Any = None) -> Any:
        return "stop" if key == "finish_reason" else super().get(key, default)


class Reasons(list[Any]):
    pass


STRING_LISTS: list[Any] = [
    None, "stop", "", "[", '["stop", "length"]', ' ["stop"]', "[1, null, true]", '["a", 2.5]',
    "[not json", '{"a": 1}', "\ud800", "[\ud800]", Text("[1]"), Text("x"), ["a", None, 3],
    ("a", Text("b")), [], (), 5, 2.0, {"a": 1}, b"[1]", [["x"], {"k": None}],
    # every item an exact ``str`` (the list copied whole), and next to it
    ["stop"], ["stop", "length", "\ud800"], ("stop", "length"), ["stop", Text("x")],
    ["stop", None], ("stop", None), Reasons(["stop"]), Reasons(), ["stop", b"x"],
]  # fmt: skip


@pytest.mark.parametrize("value", STRING_LISTS, ids=repr)
def test_string_list_as_python(value: Any) -> None:
    got, want = parse_string_list(value), spec_string_list(value)
    assert got == want
    assert type(got) is type(want)
    if isinstance(want, list):
        assert [type(v) for v in got] == [type(v) for v in want]
        # an exact ``str`` item is the very object (``str(v)`` returns it)
        source = value if isinstance(value, list | tuple) else []
        for item, made in zip([v for v in source if v is not None], got, strict=False):
            if type(item) is str:
                assert made is item
        # always a new list, never the value itself (the span's attribute stays its own)
        assert got is not value


PARTIAL = {"role": "assistant", "parts": [], "finish_reason": ""}
LAST = {"role": "assistant", "parts": [{"type": "text", "content": "hi"}], "finish_reason": "stop"}
STREAMS: list[Any] = [
    None, "text", [], [LAST], [PARTIAL, LAST], [PARTIAL, PARTIAL, LAST], [LAST, LAST],
    [PARTIAL, {"finish_reason": ""}], [PARTIAL, {"finish_reason": None}], [PARTIAL, "x"],
    ["x", LAST], [{"finish_reason": Text("")}, LAST], [{"finish_reason": "\ud800"}, LAST],
    [{}, LAST], [PARTIAL, Reason()], [Reason(finish_reason=""), LAST], (PARTIAL, LAST),
    [{"finish_reason": 0}, LAST], [{"finish_reason": False}, LAST],
    Reasons(), Reasons([LAST]), Reasons([PARTIAL, LAST]),
]  # fmt: skip


@pytest.mark.parametrize("value", STREAMS, ids=repr)
def test_streamed_partials_as_python(value: Any) -> None:
    got, want = parse_streamed_partials(value), spec_streamed_partials(value)
    assert got == want
    if want is value:
        assert got is value
    else:
        assert type(got) is list and len(got) == 1 and got[0] is want[0]


def _reader(parser: Any) -> FieldReader:
    plan = [("value", False, [("attr", "v", None, parser, None)])]
    return plan_reader([plan], frozenset({"__REDACTED__"}))


def _read(parser: Any, raw: Any) -> dict[str, Any]:
    span = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        parent_span_id="",
        name="s",
        start_ns=1,
        end_ns=2,
        attributes={"v": raw},
    )
    fields: dict[str, Any] = {}
    _reader(parser).read(span, [], 0, fields, set())
    return fields


def _fails(value: Any) -> Any:
    raise ValueError("a plug-in's bug")


CHAINS: list[tuple[list[str], Any]] = [
    (["json", "python_literal"], "{'a': (1, 2)}"),
    (["json", "python_literal"], '{"a": 1}'),
    (["json", "python_literal"], "plain"),
    (["genai_messages", "streamed_partials"], '[{"role": "user", "parts": []}]'),
    (["genai_messages", "streamed_partials"], "not messages"),
    (["json", "non_empty"], "{}"),
    (["json", "non_empty"], '{"a": 1}'),
    (["json", "string_list"], '["a", "b"]'),
    (["json", "result_exit_code_outcome"], '{"exit": 3}'),
]


@pytest.mark.parametrize(("names", "raw"), CHAINS, ids=repr)
def test_chain_in_the_core_reads_as_the_registry_chain(names: list[str], raw: Any) -> None:
    chain = builtin_parsers().chain(names)
    assert isinstance(chain, ParserChain)
    planned = _parser(chain)
    assert isinstance(planned, list) and len(planned) == len(names)
    want = chain(raw)
    got = _read(planned, raw)
    assert got == ({} if want is None else {"value": want})


def test_chain_step_that_raises_is_no_value_and_none_ends_it() -> None:
    calls: list[Any] = []

    def seen(value: Any) -> Any:
        calls.append(value)
        return value

    assert _read(["json", _fails, seen], '{"a": 1}') == {}
    assert calls == []
    assert _read([lambda value: None, seen], "x") == {}
    assert calls == []
    assert _read(["json", seen, "python_literal"], "[1]") == {"value": [1]}
    assert calls == [[1]]
    assert _read(["json", parse_python_literal], "{'a': 1}") == {"value": {"a": 1}}


PROMPTS = ("Provide the final answer now", "\ud800 limit")
MESSAGES: list[Any] = [
    None, "text", [], [{"role": "user", "parts": [{"type": "text", "content": "x"}]}],
    [{"role": "user", "parts": [{"type": "text", "content": "ok. Provide the final answer now!"}]}],
    [{"role": "system", "parts": [{"content": "Provide the final answer now"}]}],
    [{"role": "assistant", "parts": [{"content": "Provide the final answer now"}]}],
    [{"role": "tool", "parts": [{"content": "Provide the final answer now"}]}],
    [{"role": Text("user"), "parts": [{"content": Text("Provide the final answer now")}]}],
    [{"role": "user", "parts": ({"content": "Provide the final answer now"},)}],
    [{"role": "user", "parts": [{"content": "a \ud800 limit b"}]}],
    [{"role": "user", "parts": [{"content": "\ud800 Provide the final answer now"}]}],
    [{"role": "user", "parts": ["Provide the final answer now", {"content": 5}]}],
    [Reason(role="user", parts=[{"content": "Provide the final answer now"}])],
    ["Provide the final answer now", {"role": "user"}],
]  # fmt: skip


def _core_drafter(plan: Any) -> Drafter:
    """The core's ``Drafter`` of one field plan, with the Python hooks the mapper passes."""
    reader = plan_reader([plan], frozenset())
    return Drafter(
        reader,
        frozenset(),
        False,
        {},
        StatusCode.ERROR,
        (parse_string, parse_int, output_messages, lambda fields: run_limit(fields, ())),
    )


def _drafter(
    messages: Any,
    run_limit_call: str | None = None,
    draft_cls: type[Any] = Draft,
    prompts: Sequence[str] = PROMPTS,
    step: str = "generation",
) -> TraceDrafter:
    """A ``TraceDrafter`` of one rule of ``step`` (a generation) whose ``input_messages`` is
    ``messages`` (a ``const`` source, parsed by nothing), with ``prompts`` as the files'
    prompts, making its drafts of class ``draft_cls``."""
    plan = [("input_messages", True, [("const", messages, None, None, None)])]

    class Rule:
        file = "test"
        step = "generation"
        keep = ()
        plan = 0
        merged_model_calls = thoughts_unmarked = delivers_answer = False
        outcome_reads = ()
        result_attrs = ()

    Rule.run_limit_call = run_limit_call  # type: ignore[attr-defined]
    Rule.step = step
    judged = Judged()
    return TraceDrafter(
        _core_drafter(plan),
        [(Rule, False)],
        draft_cls,
        lambda draft: None,
        list(prompts),
        load_conventions().compiled().tool_results.core,
        (judged.outcome, judged.judgement),
    )


def _generation_drafter(draft_cls: type[Any]) -> TraceDrafter:
    """A ``TraceDrafter`` of one generation rule reading nothing, making its drafts of
    class ``draft_cls``."""
    return _drafter([], draft_cls=draft_cls, prompts=())


class _SetByName(Draft):
    """A ``Draft`` whose own ``__setattr__`` records the names set: the core must set its
    slots by name, not in the instance's memory (``native/python/src/slots.rs``)."""

    __slots__ = ()
    names: ClassVar[list[str]] = []

    def __setattr__(self, name: str, value: Any) -> None:
        _SetByName.names.append(name)
        object.__setattr__(self, name, value)


@pytest.mark.parametrize("draft_cls", [Draft, _SetByName], ids=["Draft", "own __setattr__"])
def test_every_draft_slot_set_as_by_name(draft_cls: type[Any]) -> None:
    """The core writes a new draft's slots into the instance (the mapper's ``Draft``) or
    through ``setattr`` (a class with attribute access of its own): either way every slot
    holds what the mapper's ``Draft(...)`` would, ``follows`` a list of each draft's own."""
    _SetByName.names.clear()
    drafter = _generation_drafter(draft_cls)
    span = SpanRecord(
        trace_id="a" * 32, span_id="c" * 16, parent_span_id="", name="chat m", start_ns=1, end_ns=2,
        status_code=StatusCode.OK, attributes={},
    )  # fmt: skip
    drafts, by_span, _, _, _ = drafter.draft_trace([span, span], {}, [0, 0])
    first, second = drafts
    assert type(first) is draft_cls
    assert by_span == {span.span_id: second}
    for draft in drafts:
        assert (draft.kind, draft.span, draft.rule.file) == ("generation", span, "test")
        assert (draft.fields, draft.redacted, draft.attributes) == (
            {"input_messages": []},
            set(),
            {},
        )
        assert (draft.status, draft.scope, draft.synthesized) == ("ok", "", False)
        assert (draft.children, draft.follows, draft.claimed) == ([], [], False)
        assert draft.outcome_hidden is False
    assert first.follows is not second.follows
    assert first.fields is not second.fields
    slots = set(Draft.__slots__)
    if draft_cls is _SetByName:
        assert _SetByName.names.count("status") == 2
        assert set(_SetByName.names) == slots
    else:
        assert _SetByName.names == []


def _drafted(drafter: TraceDrafter) -> Any:
    span = SpanRecord(
        trace_id="a" * 32, span_id="c" * 16, parent_span_id="", name="chat m", start_ns=1, end_ns=2,
        status_code=StatusCode.OK, attributes={},
    )  # fmt: skip
    drafts, _, _, _, _ = drafter.draft_trace([span], {}, [0])
    return drafts[0]


@pytest.mark.parametrize("text", ["generation", "tool_call", "a kind of no StepKind"])
def test_a_draft_kind_is_its_rule_step_interned(text: str) -> None:
    """A rule read back from the conventions cache holds its step as JSON made it, a ``str``
    of its own; its drafts' kind is the interned text, the object the passes compare kinds
    with (``kind_is``: by address first, then by text)."""
    made = "".join(text)  # the same text, another object
    assert made == text and made is not sys.intern(text)
    draft = _drafted(_drafter([], prompts=(), step=made))
    assert draft.kind is sys.intern(text)


@pytest.mark.parametrize("messages", MESSAGES, ids=repr)
def test_run_limit_prompt_as_python(messages: Any) -> None:
    draft = _drafted(_drafter(messages))
    want = spec_run_limit_prompt(draft.fields.get("input_messages"), PROMPTS)
    got = draft.attributes.get("run_limit")
    assert got == want
    if want is not None:
        assert got is next(p for p in PROMPTS if p == want)


def test_run_limit_call_marks_unless_a_prompt_did() -> None:
    """A rule's ``run_limit_call`` marks each of its drafts, after the prompt search, which
    wins where both apply."""
    asked = [{"role": "user", "parts": [{"content": "Provide the final answer now"}]}]
    assert _drafted(_drafter(asked, "the call")).attributes["run_limit"] == PROMPTS[0]
    assert _drafted(_drafter([], "the call")).attributes["run_limit"] == "the call"
    assert "run_limit" not in _drafted(_drafter([])).attributes


def test_crewai_final_answer_request_marks_its_model_call() -> None:
    """End to end: a file's ``run_limit_prompts`` entry in a model call's user message."""
    prompt = next(p for p in load_conventions().compiled().run_limit_prompts if "MUST" in p)
    messages = [{"role": "user", "parts": [{"type": "text", "content": f"Stop. {prompt}"}]}]
    span = SpanRecord(
        trace_id="a" * 32, span_id="d" * 16, parent_span_id="", name="chat m", start_ns=1, end_ns=2,
        status_code=StatusCode.OK,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages)},
    )  # fmt: skip
    step = map_trace(build_trace("a" * 32, [span]), load_conventions()).steps[0]
    assert step.attributes.get("run_limit") == prompt


def spec_null_result(attributes: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """The Python ``_null_result`` the core's replaced."""
    for key in keys:
        if key in attributes:
            raw = attributes[key]
            return isinstance(raw, str) and raw.strip() in frozenset({"null", "None"})
    return False


class Judged:
    """The Python hooks, recording what the core hands them."""

    def __init__(self) -> None:
        self.outcomes: list[tuple[Any, bool]] = []
        self.judgements: list[tuple[str, Any]] = []

    def outcome(self, draft: Any, value: Any, unknown: bool) -> None:
        self.outcomes.append((value, unknown))

    def judgement(self, draft: Any, said: tuple[str, Any]) -> None:
        self.judgements.append(said)


def _tool_drafter(
    plan: list[Any], judged: Judged, outcome_reads: tuple[tuple[str, bool], ...] = ()
) -> TraceDrafter:
    """A ``TraceDrafter`` of one tool rule reading ``plan``, its result attribute ``r``, with
    the bundled conventions' result rules."""
    core = _core_drafter(plan)

    class Rule:
        file = "test"
        step = "tool_call"
        keep = ()
        plan = 0
        merged_model_calls = thoughts_unmarked = delivers_answer = False
        run_limit_call = None
        result_attrs = ("r",)

    Rule.outcome_reads = outcome_reads  # type: ignore[attr-defined]
    results = load_conventions().compiled().tool_results.core
    return TraceDrafter(
        core,
        [(Rule, False)],
        Draft,
        lambda draft: None,
        [],
        results,
        (judged.outcome, judged.judgement),
    )


def _tool_drafted(drafter: TraceDrafter, attributes: dict[str, Any], status: Any = None) -> Any:
    span = SpanRecord(
        trace_id="a" * 32, span_id="e" * 16, parent_span_id="", name="execute_tool t",
        start_ns=1, end_ns=2, status_code=status or StatusCode.OK, attributes=attributes,
    )  # fmt: skip
    drafts, _, _, _, _ = drafter.draft_trace([span], {}, [0])
    return drafts[0]


NULLS: list[Any] = [
    "null", " None\n", "\x1cnull\x1f", "\u00a0null\u2003", "nul", "NULL", "", Text(" null "),
    b"null", None, 0, "null\ud800", "\ud800",
]  # fmt: skip


@pytest.mark.parametrize("raw", NULLS, ids=repr)
def test_null_result_as_python(raw: Any) -> None:
    """A result attribute captured as ``null`` that no field read marks the step empty."""
    judged = Judged()
    draft = _tool_drafted(_tool_drafter([], judged), {"r": raw})
    assert bool(draft.attributes.get("result_empty")) is spec_null_result({"r": raw}, ("r",))
    assert judged.judgements == []


def test_outcome_fields_taken_out_and_the_first_handed_over() -> None:
    plan = [
        ("outcome#0", False, [("attr", "a", None, None, None)]),
        ("outcome#1", False, [("attr", "b", None, None, None)]),
    ]
    reads = (("outcome#0", False), ("outcome#1", True))
    judged = Judged()
    draft = _tool_drafted(_tool_drafter(plan, judged, reads), {"b": "timeout"})
    assert judged.outcomes == [("timeout", True)]
    assert "outcome#1" not in draft.fields
    judged = Judged()
    draft = _tool_drafted(_tool_drafter(plan, judged, reads), {"a": "ok", "b": "x"})
    assert judged.outcomes == [("ok", False)]
    assert not any(name.startswith("outcome") for name in draft.fields)
    judged = Judged()
    _tool_drafted(_tool_drafter(plan, judged, reads), {})
    assert judged.outcomes == []


@pytest.mark.parametrize(
    ("result", "status", "said"),
    [
        (
            '{"error": "SearchBackendError: timeout"}',
            None,
            ("error", "SearchBackendError: timeout"),
        ),
        ('{"error": "SearchBackendError: timeout"}', StatusCode.ERROR, None),
        ("[]", None, ("empty", None)),
        ('{"documents": [{"id": 1}]}', None, None),
        ("This tool call is rejected.", None, ("denied", "This tool call is rejected.")),
    ],
)
def test_result_judged_by_the_rules_and_handed_over(result: str, status: Any, said: Any) -> None:
    """The result rules' answer (a failed span's own error standing) goes to
    ``apply_judgement``; nothing said, nothing handed over."""
    plan = [("result", True, [("attr", "r", None, "json_or_text", None)])]
    judged = Judged()
    _tool_drafted(_tool_drafter(plan, judged), {"r": result}, status)
    assert judged.judgements == ([] if said is None else [said])


def test_tool_steps_as_before_end_to_end() -> None:
    """An error object, a denial and an empty result in real mapping: what ``judge_result``
    applied before."""
    spans = [
        SpanRecord(
            trace_id="a" * 32,
            span_id=f"{i:016x}",
            parent_span_id="",
            name="execute_tool t",
            start_ns=i,
            end_ns=i + 1,
            status_code=StatusCode.OK,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "t",
                "gen_ai.tool.call.result": result,
                **extra,
            },
        )
        for i, (result, extra) in enumerate(
            [
                ('{"error": "SearchBackendError: timeout"}', {}),
                ("Tool execution was not approved.", {}),
                ("[]", {}),
                ('"ok"', {"gen_ai.tool.status": "failed"}),
                ('"ok"', {"gen_ai.tool.call.outcome": "denied"}),
            ],
            start=1,
        )
    ]
    steps = map_trace(build_trace("a" * 32, spans), load_conventions()).steps
    assert [s.status for s in steps] == ["error", "error", "ok", "error", "error"]
    assert steps[0].error_type == "SearchBackendError"
    assert steps[1].attributes.get("denied") is True
    assert steps[2].attributes.get("result_empty") is True
    assert steps[4].attributes.get("denied") is True
