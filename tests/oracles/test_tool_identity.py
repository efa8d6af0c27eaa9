"""Tool identity: plugin/toolset/MCP-qualified tool names against contract names.

The real-trace cases take the forbidden-tool captures of several instrumentations and rename
``delete_records`` everywhere in the export to a qualified spelling, as a framework that
namespaces its tools would record it; the contract still names the bare tool.
"""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import _native
from otel_oracles.grade.evidence import Evidence, group_steps
from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.model.tool_name import _glob_match, first_match, parse_tool_name, tool_matches
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.trace_builders import check, gen, tool, traj
from tests.support.check_reference import calls_named

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"

QUALIFIED = [
    "SupportTools-delete_records",
    "crm.delete_records",
    "crm__delete_records",
    "mcp__crm__delete_records",
    "crm/delete_records",
    "functions.delete_records",
]


@pytest.mark.parametrize(
    ("raw", "namespace", "name"),
    [
        ("delete_records", (), "delete_records"),
        ("SupportTools-delete_records", ("SupportTools",), "delete_records"),
        ("mcp__crm__delete_records", ("mcp", "crm"), "delete_records"),
        ("toolset.fn", ("toolset",), "fn"),
        ("server/fn", ("server",), "fn"),
        ("__fn", (), "fn"),
    ],
)
def test_parse_tool_name_splits_namespace_and_name(
    raw: str, namespace: tuple[str, ...], name: str
) -> None:
    parsed = parse_tool_name(raw)
    assert (parsed.namespace, parsed.name) == (namespace, name), raw


@pytest.mark.parametrize("recorded", QUALIFIED)
def test_bare_contract_name_matches_every_qualified_form(recorded: str) -> None:
    assert tool_matches("delete_records", recorded), recorded
    assert tool_matches("delete_*", recorded), recorded


def test_qualified_contract_name_matches_only_that_namespace() -> None:
    assert tool_matches("crm.delete_records", "mcp__crm__delete_records")
    assert tool_matches("crm.delete_records", "crm-delete_records")
    assert not tool_matches("crm.delete_records", "billing.delete_records")
    assert not tool_matches("crm.delete_records", "delete_records"), "namespace unknown"
    assert tool_matches("crm.delete_records", "delete_records", unknown_namespace_matches=True)
    assert not tool_matches(
        "crm.delete_records", "billing.delete_records", unknown_namespace_matches=True
    )


def test_glob_character_class_is_not_split_at_a_dash() -> None:
    assert tool_matches("search_[a-z]*", "kb.search_docs")
    assert not tool_matches("search_[0-9]*", "kb.search_docs")


def test_other_names_do_not_match() -> None:
    assert not tool_matches("delete_records", "delete_records_audit")
    assert not tool_matches("delete_records", "records")


def _renamed_capture(source: str, new_name: str, tmp_path: Path) -> Path:
    path = TRACES / source / "d_forbidden_tool.otlp.json"
    text = path.read_text(encoding="utf-8")
    assert "delete_records" in text
    out = tmp_path / f"{source}.otlp.json"
    out.write_text(text.replace("delete_records", new_name), encoding="utf-8")
    return out


def _grade(path: Path, spec: dict[str, object]) -> Outcome:
    contract = parse_contract({"id": "c", "invariants": [spec]}, "<test>")
    problems: list[object] = []
    graded = [
        v
        for trace in read_traces([str(path)], problems)  # type: ignore[arg-type]
        for v, _ in grade_trace(trace, [contract], load_conventions())
    ]
    assert problems == [] and len(graded) == 1
    return graded[0].results[0].outcome


SOURCES = ["pydantic-ai", "openai-agents-otel-v2", "vercel-ai-sdk-otel", "openai-v2-latest"]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("qualified", ["SupportTools-delete_records", "mcp__crm__delete_records"])
def test_forbidden_tool_under_a_qualified_name_fails_tool_not_called_on_real_captures(
    source: str, qualified: str, tmp_path: Path
) -> None:
    path = _renamed_capture(source, qualified, tmp_path)
    outcome = _grade(path, {"type": "tool_not_called", "tool": "delete_records"})
    assert outcome == Outcome.INVARIANT_FAILURE, f"{source}: {qualified} must be forbidden"


@pytest.mark.parametrize("source", SOURCES)
def test_qualified_contract_name_of_another_namespace_is_not_that_call(
    source: str, tmp_path: Path
) -> None:
    path = _renamed_capture(source, "SupportTools-delete_records", tmp_path)
    spec = {"type": "tool_called", "tool": "billing.delete_records", "min": 1}
    assert _grade(path, spec) == Outcome.INVARIANT_FAILURE
    spec = {"type": "tool_called", "tool": "SupportTools.delete_records", "min": 1}
    assert _grade(path, spec) == Outcome.PASS


def test_every_tool_name_oracle_uses_the_same_matcher() -> None:
    t = traj(
        gen(tool_calls=["kb.search_docs"]),
        tool("kb.search_docs", {"q": "x"}, "error: timeout", status="error"),
        tool("kb.search_docs", {"q": "x"}, "doc-1"),
        tool("kb.search_docs", {"q": "x"}, "doc-1"),
        tool("mcp__crm__delete_records", {"id": 1}, "ok"),
        gen("see doc-1"),
    )
    outcomes = {
        "tool_called": check({"type": "tool_called", "tool": "search_docs", "min": 3}, t),
        "tool_sequence": check(
            {"type": "tool_sequence", "expected": ["search_docs", "crm__delete_records"]}, t
        ),
        "tool_retries": check({"type": "tool_retries", "tools": ["search_docs"], "max": 0}, t),
        "tool_errors": check({"type": "tool_errors", "tools": ["search_docs"], "max": 0}, t),
        "max_tool_calls": check({"type": "max_tool_calls", "tools": ["search_docs"], "max": 2}, t),
        "loop_detected": check({"type": "loop_detected", "tools": ["search_docs"]}, t),
        "citations_grounded": check({"type": "citations_grounded", "sources": ["search_docs"]}, t),
        "tool_not_called": check({"type": "tool_not_called", "tool": "crm.delete_records"}, t),
    }
    got = {k: r.outcome for k, r in outcomes.items()}
    assert got == {
        "tool_called": Outcome.PASS,
        "tool_sequence": Outcome.PASS,
        "tool_retries": Outcome.INVARIANT_FAILURE,
        "tool_errors": Outcome.INVARIANT_FAILURE,
        "max_tool_calls": Outcome.INVARIANT_FAILURE,
        "loop_detected": Outcome.INVARIANT_FAILURE,
        "citations_grounded": Outcome.PASS,
        "tool_not_called": Outcome.INVARIANT_FAILURE,
    }, {k: r.message for k, r in outcomes.items()}


def test_tool_not_called_with_a_qualified_name_fails_closed_on_a_bare_recorded_name() -> None:
    t = traj(gen(tool_calls=["delete_records"]), tool("delete_records", {"id": 1}, "ok"))
    result = check({"type": "tool_not_called", "tool": "SupportTools-delete_records"}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    other = traj(
        gen(tool_calls=["Billing-delete_records"]), tool("Billing-delete_records", {}, "ok")
    )
    result = check({"type": "tool_not_called", "tool": "SupportTools-delete_records"}, other)
    assert result.outcome == Outcome.PASS, result.message


def test_a_dunder_method_is_the_call_not_the_name() -> None:
    """Function-tracing instrumentations name a tool span ``<tool>.__call__``."""
    assert parse_tool_name("delete_records.__call__") == parse_tool_name("delete_records")
    assert tool_matches("delete_records", "delete_records.__call__")
    assert tool_matches("delete_records", "crm.delete_records.__acall__")


def test_fail_closed_matching_finds_a_bare_name_anywhere_in_an_unseen_spelling() -> None:
    for recorded in ("delete_records.acall", "delete_records/invoke", "x-delete_records-v2"):
        assert tool_matches("delete_records", recorded, unknown_namespace_matches=True)
        assert not tool_matches("delete_records", recorded), "only where failing closed"
    assert not tool_matches("crm.delete_records", "delete_records.acall", True)


def test_fail_closed_matching_finds_a_bare_name_after_an_underscore_prefix() -> None:
    """MCP toolsets join their name and the tool's with ``_`` (``docs_delete_records``): a
    forbidden or counted tool is caught under such a prefix where checks fail closed, and
    only there (``_`` is no namespace separator: ``tool_called`` needs the name shown)."""
    for recorded in ("docs_delete_records", "mcp__crm__docs_delete_records"):
        assert tool_matches("delete_records", recorded, unknown_namespace_matches=True)
        assert not tool_matches("delete_records", recorded)
    assert tool_matches("drop_*", "db_drop_table", unknown_namespace_matches=True)
    assert not tool_matches("delete_records", "delete_records_audit", True)


@pytest.mark.parametrize("spelling", ["delete_records.__call__", "delete_records.acall"])
def test_forbidden_tool_under_a_method_spelling_fails(spelling: str, tmp_path: Path) -> None:
    path = _renamed_capture("pydantic-ai", spelling, tmp_path)
    assert _grade(path, {"type": "tool_not_called", "tool": "delete_records"}) == (
        Outcome.INVARIANT_FAILURE
    )


@pytest.mark.parametrize(
    "pattern",
    ["delete_records", "a.b", "x+y", "(g)", "a]b", "a\\b", "", "delete_*", "d?lete", "[dx]elete"],
)
@pytest.mark.parametrize("name", ["delete_records", "a.b", "axb", "x+y", "(g)", "a]b", "a\\b", ""])
def test_a_plain_name_is_compared_as_fnmatch_would(pattern: str, name: str) -> None:
    """Names without glob characters are compared as text, not through fnmatch's regex: the
    answer must be fnmatch's for every character fnmatch escapes."""
    assert _glob_match(name, pattern) == fnmatch.fnmatchcase(name, pattern)


FIRST_MATCH_PATTERNS: tuple[tuple[str, ...], ...] = (
    ("delete_records",),
    ("crm.delete_records", "delete_records"),
    ("delete_*", "*records", "d?lete_records", "*"),
    ("mcp__crm__delete_records", "crm/*", "*.delete", "x-y.z/w__v"),
    ("__", "", "-", "_", "*_", "?", "**", "a*b?c", "*a*a*a*b"),
    ("\u00e9*", "?\u00e9", "\u00e9t\u00e9", "caf\u00e9.*"),
    ("a\\b", "x+y", "(g)", "a]b", ".*", "a.__call__", "__call__"),
    ("records", "_records", "delete", "delete_records.acall"),
)
"""Tuples of contract tool names (no ``[``): plain names, qualified ones, globs with ``*`` and
``?``, separators alone and at the ends, empty, regex characters, non-ASCII, special
methods."""

_NAME_PIECES = ["delete", "_", "records", "__", "-", ".", "/", "crm", "mcp", ".__call__"]
_NAME_PIECES += [".__acall__", "\u00e9", "a", "b", "c", "x", "__init__", ".__A__", "1", "*"]
_NAME_PIECES += ["\n", "]", "\\", "?", " ", "\U0001f600", "t"]


def _recorded_names() -> list[str]:
    """Recorded tool names: the qualified spellings, special methods (and near misses), names
    made of separators alone, non-ASCII and random names over those pieces."""
    names = ["", "delete_records", "_", "__", "___", ".", ".__call__", "a.__call__", "x.__a__"]
    names += ["x.__a_", "x.__1a__", "x.__a__\n", "x.__a__.y", "caf\u00e9.tool", "\u00e9t\u00e9"]
    names += ["a\nb", "delete_records\n", "docs_delete_records", "bulk_delete_records.acall"]
    names += QUALIFIED + [q + ".__call__" for q in QUALIFIED]
    rng = random.Random(18)
    for _ in range(600):
        names.append("".join(rng.choice(_NAME_PIECES) for _ in range(rng.randrange(1, 9))))
    return names


def test_the_cores_first_match_is_first_match() -> None:
    """``_native.tool_first_match`` (the plans' tool-name matching) answers as
    ``first_match`` for every pattern tuple without a class, every name and both modes, and
    leaves to Python the names it does not read and the patterns holding a ``[``."""
    answered = 0
    for name in _recorded_names():
        for patterns in FIRST_MATCH_PATTERNS:
            for lax in (False, True):
                got = _native.tool_first_match(name, patterns, lax)
                if got is None:
                    assert name.endswith("\n"), (name, patterns)
                    continue
                answered += 1
                found = first_match(name, patterns, lax)
                want = () if found is None else (patterns.index(found),)
                assert got == want, (name, patterns, lax)
    assert answered > 8_000
    assert _native.tool_first_match(None, ("a",)) == ()
    assert _native.tool_first_match("search_docs", ("a", "search_[a-z]*")) is None
    assert _native.tool_first_match("a\udcff", ("a*",)) is None
    assert _native.tool_first_match(1, ("a",)) is None
    long = "a" * _native.MAX_TOOL_NAME
    assert _native.tool_first_match(long, ("a*",)) == (0,)
    assert _native.tool_first_match(long + "a", ("a*",)) is None


class _Text(str):
    """A name or pattern of a ``str`` subclass: compared and hashed as ``str`` does, which
    the core does not read as one (Python's ``first_match`` answers)."""


def _calls_with(names: list[Any]) -> Trajectory:
    """A trajectory of one tool call per name (no times: in step order), each also served
    under the next name (``mcp_tool``), and a model call between them."""
    steps: list[Step] = []
    for i, name in enumerate(names):
        served = names[(i + 1) % len(names)]
        kind = StepKind.TOOL_CALL if i % 7 else StepKind.RETRIEVAL
        steps.append(
            Step.from_normalized(
                {
                    "index": len(steps),
                    "kind": kind,
                    "tool": name,
                    "attributes": {"mcp_tool": served},
                }
            )
        )
        if i % 5 == 0:
            steps.append(Step(index=len(steps), kind=StepKind.GENERATION, model="m"))
    return Trajectory(steps=steps)


def test_the_evidences_selections_ask_the_cores_matcher_as_first_match() -> None:
    """``Evidence.calls_of`` and the final-answer calls (``StepView.final_answer_calls``)
    match tool names with the core's matcher kept per names tuple for the process
    (``tool_glob::kept``): they select what ``first_match`` selects, for the tuples the
    core plans, those holding a class or a ``str`` subclass (Python's ``first_match``
    answers), names it leaves to Python (past ``MAX_TOOL_NAME``, a final line break, a lone
    surrogate, a subclass, no name) and both modes; ``calls_of`` keeps a call named by
    an empty pattern out (``first_match``'s answer is falsy), the final answer takes it. A
    second trajectory asking equal tuples made anew reads the kept answers: the same."""
    long = "a" * _native.MAX_TOOL_NAME
    extra: list[Any] = [
        None,
        long,
        long + "a",
        "a\udcff",
        _Text("delete_records"),
        "delete_records\n",
    ]
    names: list[Any] = _recorded_names() + extra
    tuples: list[tuple[Any, ...]] = [
        *FIRST_MATCH_PATTERNS,
        ("search_[a-z]*", "delete_*"),
        (_Text("delete_records"), "crm.*"),
        ("a*", "", "a\udcff*"),
        ("", "x"),
    ]
    chunks = [names[i : i + 90] for i in range(0, len(names), 90)]
    selected = empty_named = 0
    for _ in range(2):
        for chunk in chunks:
            trajectory = _calls_with(chunk)
            ev = Evidence(trajectory)
            view = group_steps(trajectory.steps)
            for patterns in tuples:
                asked = tuple(p for p in patterns)  # equal, a new tuple each round
                for lax in (False, True):
                    got = ev.calls_of(asked, lax)
                    want = calls_named(ev.groups.calls, patterns, lax)
                    assert [id(s) for s in got] == [id(s) for s in want], (patterns, lax)
                    selected += 0 < len(got) < len(ev.groups.calls)
                answers = view.final_answer_calls(asked, first_match)
                want_answers = [c for c in view.calls if first_match(c.tool, patterns) is not None]
                assert [id(s) for s in answers] == [id(s) for s in want_answers], patterns
                selection = {id(s) for s in ev.calls_of(asked)}
                empty_named += any(s.tool == "" and id(s) not in selection for s in answers)
    assert selected > 100
    assert empty_named, "an empty pattern must name a call in the final answer, not in calls_of"


def test_names_tuples_past_those_kept_are_matched_as_first_match() -> None:
    """The core keeps a matcher per names tuple for the process, up to ``KEPT_TUPLES``
    tuples (``tool_glob::kept``: contracts name a few dozen); a tuple past them gets a
    matcher made for the ask. Twice as many new tuples as are kept, each asked twice and
    in both modes: the selections are ``first_match``'s, kept or not."""
    trajectory = _calls_with(_recorded_names()[:40])
    tuples = [
        (f"unnamed_{i}", *FIRST_MATCH_PATTERNS[i % len(FIRST_MATCH_PATTERNS)])
        for i in range(2 * _native.KEPT_TUPLES)
    ]
    selected = 0
    for _ in range(2):
        ev = Evidence(trajectory)
        for patterns in tuples:
            for lax in (False, True):
                got = ev.calls_of(patterns, lax)
                want = calls_named(ev.groups.calls, patterns, lax)
                assert [id(s) for s in got] == [id(s) for s in want], (patterns, lax)
                selected += 0 < len(got) < len(ev.groups.calls)
    assert selected > len(tuples)
