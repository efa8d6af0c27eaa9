"""The grading fast paths give the answers of the plain computations they replace.

Each cheaper path (the default error pattern decided from the first key, normalized
arguments without a call per value, the placeholder test's first-character shortcut, the
outcome tally, lazily serialized citation sources, the per-trajectory step groups, call
failures and loop screens) is held against the straightforward code it stands for, on
inputs chosen to reach its edge cases.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, OrderedDict
from typing import Any

import pytest

from otel_oracles._native import ground_ids
from otel_oracles.grade.evidence import Evidence, group_steps, is_placeholder
from otel_oracles.grade.oracles.trace_common import (
    DEFAULT_ERROR_PATTERN,
    call_failure,
    effective_args,
    normalize_args,
)
from otel_oracles.model.result import OracleResult, Outcome, count_outcomes
from otel_oracles.model.step import DEFAULT_NETWORK_PATTERNS, SpanRef, Step, StepKind, Trajectory
from otel_oracles.model.tool_name import first_match
from tests.oracles.trace_builders import check, gen, tool, traj


class _Obj:
    def __str__(self) -> str:
        return '{"error": 1}'


RESULTS: list[Any] = [
    {"error": None, "detail": "x"},
    {"error": "", "detail": "x"},
    {"error": 0},
    {"error": False},
    {"error": []},
    {"detail": "x", "error": None},
    {"detail": {"error": True}},
    {},
    OrderedDict([("error", None)]),
    [{"error": "boom"}],
    ["error"],
    [],
    3,
    2.5,
    True,
    _Obj(),
    {"Error": None},
    {"error ": None},
    {"errors": None},
    {1: "x", "error": None},
    '{"error": "boom"}',
    '  {  "error" : 1}',
    '{"ok": true}',
    "error",
]


def _reference_failure(result: Any, pattern: str) -> str | None:
    """The old last steps of ``call_failure``: a captured result, searched as JSON text."""
    if is_placeholder(result):
        return None
    if isinstance(result, dict) and result.get("error"):
        return "result carries an error"
    text = (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    )
    return "result matches the error pattern" if re.search(pattern, text) else None


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: repr(r)[:30])
@pytest.mark.parametrize(
    "pattern", [DEFAULT_ERROR_PATTERN, r"(?i)error", r"^\[", r"^\s*\{\s*\"error\""]
)
def test_call_failure_matches_the_pattern_over_the_json_text(result: Any, pattern: str) -> None:
    step = Step(index=0, kind=StepKind.TOOL_CALL, tool="t", result=result)
    ev = Evidence(Trajectory(steps=[step]))
    assert call_failure(ev, step, pattern) == _reference_failure(result, pattern)
    assert call_failure(ev, ev.trajectory.steps[0], pattern) == _reference_failure(result, pattern)


def _reference_normalize(args: dict[str, Any] | None, raw: str | None = None) -> str:
    def norm(value: Any) -> Any:
        if isinstance(value, str):
            return " ".join(value.split()).casefold()
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    if args is None:
        return " ".join((raw or "").split())
    return json.dumps(norm(args), sort_keys=True, ensure_ascii=False, default=str)


class _Str(str):
    pass


ARGS: list[dict[str, Any] | None] = [
    None,
    {},
    {"q": "  Hello\tWORLD \n", "k": 3, "f": 1.5, "b": True, "n": None},
    {"z": {"b": " X  Y ", "a": [1, " A ", {"deep": "ŞTRASSE  ß"}]}, "a": ("T ", "u")},
    {"s": _Str("  Mixed  Case "), "o": OrderedDict(b="B", a="A"), "x": _Obj()},
    {"u": "\u00a0non\u2003breaking\u3000space\x1c", "e": "", "l": [[" a "], []]},
]


@pytest.mark.parametrize("args", ARGS, ids=lambda a: repr(a)[:30])
def test_normalize_args_is_the_plain_normalization(args: dict[str, Any] | None) -> None:
    assert normalize_args(args, "  raw   text ") == _reference_normalize(args, "  raw   text ")


_PLACEHOLDER_SPEC = re.compile(
    r"^\s*(?:__redacted__|\[redacted\]|<redacted>|redacted|\[filtered\]|\*{3,}|<omitted>)?\s*$",
    re.IGNORECASE,
)
"""What a placeholder is, as the regex ``is_placeholder`` once was (quadratic on long
whitespace, so only the specification now; the inputs below are short)."""


def test_placeholder_shortcut_agrees_with_the_regex_for_every_first_character() -> None:
    suffixes = ("", "edacted", "__redacted__"[1:], "[redacted]"[1:], "<omitted>"[1:], "**", " ")
    for cp in range(0x110000):
        c = chr(cp)
        for rest in suffixes if cp < 0x3000 else suffixes[:2]:
            s = c + rest
            assert is_placeholder(s) == bool(_PLACEHOLDER_SPEC.match(s)), repr(s)
    assert is_placeholder("") and is_placeholder("  REDACTED ") and is_placeholder("*****")
    assert not is_placeholder("redacted text") and not is_placeholder({})
    assert is_placeholder({"a": "[redacted]", "b": ["", None]})


def test_count_outcomes_counts_each_outcome_once() -> None:
    outcomes = [*Outcome, Outcome.ERROR, Outcome.TOLERATED, Outcome.TOLERATED]
    results = [
        OracleResult(oracle_type="x", name="x", outcome=o, passed=False, message="m")
        for o in outcomes
    ]
    counts = count_outcomes(results)
    assert counts.model_dump() == {
        "invariant_failures": 1,
        "tolerated_failures": 3,
        "budget_exhausted": 1,
        "missing_evidence": 1,
        "errors": 2,
    }
    assert counts.model_fields_set == set(counts.model_dump())
    assert count_outcomes([]).model_fields_set == set()


def test_citations_name_the_first_source_in_order_and_read_every_source_when_ungrounded() -> None:
    calls = (
        tool("search_docs", {"q": "a"}, {"docs": [{"id": "doc-1"}, {"id": "doc-12"}]}),
        tool("search_docs", {"q": "b"}, {"docs": [{"id": "doc-1"}, {"id": "doc-7"}]}),
        tool("search_docs", {"q": "c"}, None),
    )
    res = check({"type": "citations_grounded"}, traj(*calls, gen("See doc-1 and doc-7.")))
    assert res.outcome == Outcome.PASS
    assert res.details["grounded"] == {"doc-1": 0, "doc-7": 1}

    fabricated = traj(*calls, gen("See doc-1 and doc-9."))
    res = check({"type": "citations_grounded"}, fabricated)
    # Step 2's result was not captured: the id might have come from it.
    assert res.outcome == Outcome.MISSING_EVIDENCE
    assert "doc-9" in res.message and "step 2" in res.message


def test_citations_past_the_scan_budget_end_in_error_not_a_stall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search costs cited ids times result size, which a trace can make absurd: past
    ``CITATION_SCAN_BUDGET`` the check ends in ``error`` naming the budget, and within it the
    same trajectory is graded as usual. The budget is lowered here so that the test builds a
    small trajectory; the default allows ~2 billion characters."""
    from otel_oracles.grade.oracles import trace_answers

    results = [tool("search_docs", {"q": str(i)}, {"text": "x " * 500}) for i in range(40)]
    answer = gen(" ".join(f"[doc-{i}]" for i in range(200)))
    monkeypatch.setattr(trace_answers, "CITATION_SCAN_BUDGET", 2_000_000)
    res = check({"type": "citations_grounded"}, traj(*results, answer))
    assert res.outcome == Outcome.ERROR
    assert "200 cited ids" in res.message and "2,000,000 scanned characters" in res.message
    assert res.details["error.type"] == "WorkBudgetExceeded"
    monkeypatch.setattr(trace_answers, "CITATION_SCAN_BUDGET", 200 * 40 * 1_100)
    res = check({"type": "citations_grounded"}, traj(*results, answer))
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message  # doc-0 .. doc-199 ungrounded


def _plain_scan(t: Trajectory, patterns: tuple[str, ...]) -> list[tuple[int, str]]:
    """``find_network_violations`` as one substring search per pattern and step."""
    out = []
    for step in t.steps:
        if step.raw is None and not step.is_tool:
            continue
        text = step.raw_json().lower()
        out.extend((step.index, p) for p in patterns if p.lower() in text)
    return out


PATTERN_SETS: list[tuple[str, ...]] = [
    DEFAULT_NETWORK_PATTERNS,
    ("pip install", "PIP INSTALL", "pip install", "install", "stall", "ip"),
    ("curl", "url", "urllib", "", "a"),
    ("http://", "https://", "httpx", "HTTP"),
]


@pytest.mark.parametrize("patterns", PATTERN_SETS, ids=lambda p: p[0] or "empty")
def test_network_screens_find_what_one_search_per_pattern_finds(patterns: tuple[str, ...]) -> None:
    t = traj(
        tool("run_command", {"command": "pip install requests && curl https://x"}),
        tool("run_command", {"command": "PIP   install x; go get y"}, "ok"),
        tool("write_file", {"path": "a.py", "content": "import urllib\nhttpx.get()"}),
        gen("never run curl or pip install"),
        tool("search", {"q": "bun add left-pad"}, {"r": "npm ci", "u": "HTTP://X"}),
    )
    found = [(v.step_index, v.pattern) for v in t.find_network_violations(patterns)]
    assert found == _plain_scan(t, patterns)
    assert found or patterns == PATTERN_SETS[0]


def _plain_loops(calls: list[Step], threshold: int) -> list[list[int]]:
    """Loops as the plain grouping finds them: every call normalized."""
    groups: dict[tuple[str | None, str], list[int]] = {}
    for s in calls:
        groups.setdefault((s.tool, normalize_args(effective_args(s), s.arguments_raw)), [])
        groups[(s.tool, normalize_args(effective_args(s), s.arguments_raw))].append(s.index)
    return [g for g in groups.values() if len(g) >= threshold]


def test_loop_candidates_keep_every_loop_and_its_order() -> None:
    rng = random.Random(7)
    texts = ["Find  Refunds", "find refunds", "find\trefunds ", "other", "OTHER ", " x "]
    values: list[Any] = [1, 1.0, True, None, [1, " A"], [1, "a"], {"x": "Y "}, {"x": "y"}, "1"]
    for _ in range(300):
        steps = []
        for _ in range(rng.randint(0, 12)):
            name = rng.choice(["search", "fetch", "lookup"])
            roll = rng.random()
            if roll < 0.1:
                steps.append(tool(name, None, arguments_raw=rng.choice(['{"q": "other"}', "q=1"])))
                continue
            args: dict[str, Any] = {"q": rng.choice(texts)}
            if rng.random() < 0.5:
                args["v"] = rng.choice(values)
            if roll < 0.15:
                args["o"] = _Obj()
            steps.append(tool(name, args))
        # A closing answer: without a model call nothing shows the run ended on its own, and
        # the loop count would be a lower bound (missing evidence), whatever the grouping.
        t = traj(*steps, gen("done"))
        for threshold in (2, 3, 4):
            res = check({"type": "loop_detected", "threshold": threshold, "max": 99}, t)
            assert res.outcome in (Outcome.PASS, Outcome.TOLERATED), res.message
            expected = _plain_loops(t.tool_calls(), threshold)
            assert [len(g) for g in expected] == [d["calls"] for d in res.details["loops"]]
            assert [i for g in expected for i in g] == list(res.step_indexes)


def _whole_id(ident: str, text: str) -> tuple[bool, int]:
    """Whether the core's search (``ground_ids``) finds ``ident`` in ``text`` as a whole id,
    and what is left of ``CITATION_SCAN_BUDGET`` after."""
    from otel_oracles.grade.oracles.trace_answers import CITATION_SCAN_BUDGET, _continues_id

    found = ground_ids(
        [ident], lambda i, _: text if i == 0 else False, _continues_id, False, CITATION_SCAN_BUDGET
    )
    assert found is not None
    return found[0][0] is not None, found[1]


def test_whole_id_test_agrees_with_the_lookaround_regex() -> None:
    """``citations_grounded`` (the core's ``ground_ids``) tests a cited id by its
    occurrences' neighbours instead of compiling ``(?<![\\w-])<id>(?![\\w-])`` per id; both
    must agree on every text, including ids that are regex metacharacters, overlapping
    occurrences, Unicode word characters (``é``, Devanagari combining marks, digits of other
    scripts) and lone surrogates on either side."""
    import regex

    rng = random.Random(18)
    alphabet = ["a", "4", "-", "_", " ", ".", "[", "]", "é", "\u0901", "\u0663", "\n", "(", "*"]
    alphabet += ["\ud800", "文"]
    ids = ["doc-4", "a.a", "[1]", "*", "aa", "-", "é4", "x(y", "文-1", "\udc00"]
    agreed = 0
    for _ in range(4000):
        ident = rng.choice(ids)
        pieces = [rng.choice(alphabet) for _ in range(rng.randrange(0, 6))]
        for _ in range(rng.randrange(0, 3)):
            pieces.insert(rng.randrange(0, len(pieces) + 1), ident)
        text = "".join(pieces)
        plain = regex.search(rf"(?<![\w-]){regex.escape(ident)}(?![\w-])", text) is not None
        assert _whole_id(ident, text)[0] is plain, (ident, text)
        agreed += plain
    assert agreed > 500  # the sample reaches both answers often


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    """JSON-like data reaching what ``_SearchText`` must get right: escapes, breaks and id
    characters inside strings and keys, numbers next to ids, empty and nested containers,
    and values the core leaves to ``json`` (tuples, huge integers, NaN, non-string keys,
    objects written through ``str``)."""
    strings = ["doc-4", "doc-42", "a, b", "[doc-4]", "x\ndoc-4", 'q"doc-4"', "é doc-4é", ""]
    strings += ["doc-4\\", "{doc-4}", " doc-4 ", "\tdoc-4\x01", "doc-4:1", "\u2028doc-4"]
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        return {
            (rng.choice(strings) if rng.random() < 0.95 else rng.choice([1, None, 2.5])): (
                _random_value(rng, depth + 1)
            )
            for _ in range(rng.randrange(0, 4))
        }
    if depth < 3 and roll < 0.55:
        items = [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
        return tuple(items) if rng.random() < 0.1 else items
    scalars: list[Any] = [4, -4, 42, 4.0, 1e16, float("nan"), True, None, 10**30, _Obj()]
    return rng.choice(strings + scalars)


def test_search_texts_find_ids_as_the_made_texts_do() -> None:
    """``citations_grounded`` searches the core's indented JSON of a structured result
    instead of ``result_text``'s: for every id that holds no break character, the answer and
    the occurrences tested must be those of the made text (the charges differ by the two
    texts' lengths only, the indented one never shorter), on every value (the core declines
    some; they are made as before). ``_search_text`` is the body's as it was
    (``tests/support/check_reference.py``), which the plan's stand-in texts follow
    (``check_plans_cite.rs``)."""
    from otel_oracles.grade.oracles.trace_common import result_text
    from tests.support.check_reference import _search_text

    rng = random.Random(12)
    ids = ["doc-4", "doc-42", "oc-4", "4", "n", "u2028doc", "é", "1e", "NaN", "null", "b", "x"]
    found = indented = 0
    for _ in range(3000):
        value = _random_value(rng)
        made = result_text(value)
        text, is_made = _search_text(value)
        assert text == made if is_made else len(text) >= len(made), value
        indented += not is_made
        for ident in ids:
            assert not set(ident) & set(" \n,[]{}")  # no break character
            answer, plain = _whole_id(ident, made)
            fast_answer, fast = _whole_id(ident, text)
            assert fast_answer is answer, (ident, made)
            assert plain - fast == len(text) - len(made), (ident, made)
            found += answer
    assert indented > 1000 and found > 1000  # both paths, and both answers, often


def test_citations_charged_past_the_budget_by_stand_in_texts_are_recounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The indented texts a search goes through are longer than the results' own: a budget
    that only they exceed grades the trajectory on the results' texts, as before; one the
    results' texts exceed too ends in ``error``."""
    from otel_oracles.grade.oracles import trace_answers

    results = [tool("search_docs", {"q": str(i)}, {"text": "x " * 500}) for i in range(40)]
    answer = gen(" ".join(f"[doc-{i}]" for i in range(200)))
    # Each of the 200 ids is looked for in all 40 results (none holds one): 8,000 scans of a
    # result's text, two characters longer when indented.
    charged = 200 * 40 * len(trace_answers.result_text({"text": "x " * 500}))
    monkeypatch.setattr(trace_answers, "CITATION_SCAN_BUDGET", charged + 200 * 40)
    res = check({"type": "citations_grounded"}, traj(*results, answer))
    assert res.outcome == Outcome.INVARIANT_FAILURE, res.message  # doc-0 .. doc-199 ungrounded
    monkeypatch.setattr(trace_answers, "CITATION_SCAN_BUDGET", charged - 1)
    res = check({"type": "citations_grounded"}, traj(*results, answer))
    assert res.outcome == Outcome.ERROR and "WorkBudgetExceeded" in str(res.details)


def _leaves_pairwise(gens: list[Step]) -> list[Step]:
    """The definition ``leaf_generations`` computes in one sort: a call is a leaf unless it
    contains another call (starts no later, ends no earlier, different interval)."""

    def contains(g: Step, o: Step) -> bool:
        if None in (g.start_ns, g.end_ns, o.start_ns, o.end_ns):
            return False
        assert g.start_ns is not None and g.end_ns is not None
        assert o.start_ns is not None and o.end_ns is not None
        return (
            g.start_ns <= o.start_ns
            and o.end_ns <= g.end_ns
            and (g.start_ns, g.end_ns) != (o.start_ns, o.end_ns)
        )

    return [
        g
        for g in gens
        if not g.attributes.get("usage_aggregated")
        and not any(contains(g, o) for o in gens if o is not g)
    ]


def test_leaf_generations_are_the_pairwise_containment_leaves() -> None:
    """Random intervals on a small grid, so equal starts, equal ends, identical intervals,
    nesting and unknown times all occur, plus calls the mapping flagged as wrappers."""
    from otel_oracles.grade.oracles.trace_budget import leaf_generations

    rng = random.Random(1805)
    for _ in range(400):
        steps = []
        for i in range(rng.randrange(0, 12)):
            start = rng.choice([None, *range(6)])
            end = None if start is None or rng.random() < 0.1 else start + rng.randrange(0, 5)
            attrs = {"usage_aggregated": True} if rng.random() < 0.1 else {}
            steps.append(
                Step(
                    index=i, kind=StepKind.GENERATION, start_ns=start, end_ns=end, attributes=attrs
                )
            )
        assert leaf_generations(steps) == _leaves_pairwise(steps)


def _plain_retries(
    ev: Evidence, tools: tuple[str, ...], pattern: str | None
) -> list[tuple[int, int, str]]:
    """Retries as one scan of the calls of ``tools`` finds them, each pair's turns and
    failure decided on the spot (what ``find_retries`` did before it shared the repeats of
    a trajectory between its checks)."""
    calls = [
        s
        for s in ev.trajectory.tool_calls()
        if not tools or first_match(s.tool, tools, unknown_namespace_matches=True)
    ]
    turns = _spec_requesting_turns(ev)
    one_turn = _spec_one_turn_spans(ev)
    last: dict[tuple[str | None, str | None], Step] = {}
    out: list[tuple[int, int, str]] = []
    for s in sorted(calls, key=lambda c: c.index):
        prev = last.get((s.agent_name, s.tool))
        if prev is not None and not _spec_asked_together(prev, s, turns, one_turn):
            why = call_failure(ev, prev, pattern)
            if why is not None:
                out.append((s.index, prev.index, why))
        last[(s.agent_name, s.tool)] = s
    return out


def test_retries_of_some_tools_are_those_a_scan_of_their_calls_finds() -> None:
    """The repeats found once per trajectory, filtered by tool, are the retries a scan of
    only those tools' calls finds (a call's previous call of its tool is of the same tool),
    whatever the tools asked, the error pattern, the agents, call ids and timing."""
    from otel_oracles.grade.oracles.trace_tools import find_retries

    rng = random.Random(18)
    names = ["search", "fetch", "mcp.search", "lookup"]
    tool_sets: list[tuple[str, ...]] = [(), ("search",), ("fetch", "look*"), ("mcp.search",)]
    for _ in range(300):
        steps: list[dict[str, Any]] = []
        for i in range(rng.randint(0, 14)):
            if rng.random() < 0.2:
                ids = [f"c{rng.randrange(6)}" for _ in range(rng.randint(0, 2))]
                parts = [{"type": "tool_call", "id": c, "name": "x"} for c in ids]
                steps.append(gen(output_messages=[{"role": "assistant", "parts": parts}]))
                continue
            result = rng.choice([{"error": "boom"}, {"ok": 1}, '{"error": 1}', "fine", None])
            step = tool(
                rng.choice(names),
                {"q": "x"},
                result,
                status=rng.choice(["unset", "unset", "error", "ok"]),
                agent=rng.choice(["a", "b"]),
                call_id=rng.choice([None, f"c{rng.randrange(6)}"]),
            )
            if rng.random() < 0.3:  # overlapping calls: the next starts before this ends
                step["start_ns"], step["end_ns"] = i * 10 * 1_000_000, i * 10 * 1_000_000 + 25
            steps.append(step)
        ev = Evidence(traj(*steps, timed=rng.random() < 0.7))
        for tools in tool_sets:
            for pattern in (DEFAULT_ERROR_PATTERN, None, r"fine"):
                expected = _plain_retries(Evidence(ev.trajectory), tools, pattern)
                found = find_retries(ev, tools, pattern)
                assert [(s.index, f.index, why) for s, f, why in found] == expected


def test_calls_of_are_the_calls_a_filter_of_every_call_keeps() -> None:
    t = traj(
        tool("search", {"q": "a"}),
        gen("x"),
        tool("mcp.search", {"q": "b"}),
        tool("fetch", {"u": "c"}),
        tool("delete_records", {}),
        tool("", {}),
    )
    ev = Evidence(t)
    for names in [(), ("search",), ("mcp.search",), ("fe*", "delete_*"), ("nothing",), ("",)]:
        for lenient in (False, True):
            expected = [
                s for s in t.tool_calls() if not names or first_match(s.tool, names, lenient)
            ]
            assert list(ev.calls_of(names, lenient)) == expected
            assert ev.calls_of(names, lenient) is ev.calls_of(names, lenient)


def _placeholder_spec(value: Any) -> bool:
    """A container is a placeholder when it is not empty and holds only placeholders."""
    if isinstance(value, dict) and value:
        return all(_placeholder_spec(v) for v in value.values())
    if isinstance(value, list) and value:
        return all(_placeholder_spec(v) for v in value)
    return is_placeholder(value) if not isinstance(value, dict | list) else False


def test_placeholder_containers_are_decided_as_their_items_are() -> None:
    rng = random.Random(5)
    leaves: list[Any] = ["", " ", "[redacted]", "***", "x", " REDACTED", "_", "ok", None, 0, {}, []]

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 2 or roll < 0.5:
            return rng.choice(leaves)
        if roll < 0.75:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randint(0, 3))}

    for _ in range(3000):
        v = value(0)
        assert is_placeholder(v) == _placeholder_spec(v), v


def test_step_groups_are_the_selections_the_trajectory_defines() -> None:
    """``group_steps`` sorts the steps in one pass; each group is what the trajectory's own
    filter (or the plain definition) keeps, in order, whatever the kinds, names, sources
    and AgentBench steps."""
    rng = random.Random(11)
    kinds = list(StepKind)
    for _ in range(400):
        steps: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 12)):
            kind = rng.choice(kinds)
            step: dict[str, Any] = {
                "kind": kind,
                "tool": rng.choice([None, "", "search", " [REDACTED] ", "fetch"]),
                "synthesized": rng.random() < 0.3,
            }
            if rng.random() < 0.15:
                step["raw"] = {"tool": "x"}
            steps.append(step)
        t = traj(*steps)
        groups = group_steps(t.steps)
        assert list(groups.calls) == t.tool_calls()
        assert list(groups.generations) == t.generations()
        assert list(groups.agents) == t.agents()
        assert list(groups.handoffs) == t.handoffs()
        assert list(groups.nameless) == [
            s for s in t.tool_calls() if s.raw is None and is_placeholder(s.tool)
        ]
        assert groups.tool_spans == any(s.is_tool and not s.synthesized for s in t.steps)
        assert groups.all_raw == bool(t.steps and all(s.raw is not None for s in t.steps))
        ev = Evidence(t)
        assert ev.groups is ev.groups  # made once
        assert ev.calls_of(()) is ev.groups.calls
        assert ev.groups.calls == groups.calls


def test_call_failures_are_each_calls_own_failure() -> None:
    """``call_failures`` decides every call of the trajectory at once per pattern; each
    entry is ``call_failure`` of that call alone (asked of an evidence whose table does not
    hold it), and a step from elsewhere is judged on its own."""
    from otel_oracles.grade.oracles.trace_common import call_failures, failed_calls

    def alone(step: Step, pattern: str | None) -> str | None:
        return call_failure(Evidence(Trajectory(steps=[])), step, pattern)

    rng = random.Random(5)
    for _ in range(100):
        steps = [
            tool(
                rng.choice(["search", "fetch"]),
                {"q": "x"},
                rng.choice([*RESULTS, None, "fine"]),
                status=rng.choice(["unset", "error", "ok"]),
                error_type=rng.choice([None, "Timeout"]),
            )
            if rng.random() < 0.8
            else gen("x")
            for _ in range(rng.randint(0, 10))
        ]
        t = traj(*steps)
        ev = Evidence(t)
        for pattern in (DEFAULT_ERROR_PATTERN, None, r"fine|boom"):
            table = call_failures(ev, pattern)
            assert table == {id(s): alone(s, pattern) for s in t.tool_calls()}
            assert call_failures(ev, pattern) is table  # made once per pattern
            # the failed ones, which tool_retries and tool_errors read first
            assert failed_calls(ev, pattern) == {k: w for k, w in table.items() if w is not None}
            for s in t.steps:
                assert call_failure(ev, s, pattern) == alone(s, pattern)
        foreign = traj(tool("search", None, {"error": "x"}), timed=False).steps[0]
        assert call_failure(ev, foreign) == "result carries an error"


def test_loop_screens_shared_by_thresholds_and_tools_keep_every_loop() -> None:
    """One ``Evidence`` answers ``loop_detected`` for several thresholds and tool sets with
    the calls' screens made once; every answer is the plain grouping's."""
    from otel_oracles.grade.oracles.trace_common import repeated_args_candidates

    rng = random.Random(9)
    texts = ["Find  Refunds", "find refunds", "other", "OTHER "]
    for _ in range(200):
        steps = [
            tool(rng.choice(["search", "fetch", "lookup"]), {"q": rng.choice(texts)})
            if rng.random() < 0.9
            else tool("search", None, arguments_raw="q=1")
            for _ in range(rng.randint(0, 12))
        ]
        t = traj(*steps)
        ev = Evidence(t)
        for tools in [(), ("search",), ("fetch", "look*")]:
            calls = ev.calls_of(tools, unknown_namespace_matches=True)
            for threshold in (4, 2, 3):
                kept = repeated_args_candidates(ev, calls, threshold)
                found = _plain_loops(kept, threshold)
                assert found == _plain_loops(list(calls), threshold)


def test_loop_screens_hash_the_normalized_text() -> None:
    """A call's screen is a hash of its normalized strings, not of the strings as written:
    texts that normalize alike share a screen whichever way each was normalized (an ASCII
    text in the core, ``Straße`` by Python's case folding), long ones included (the hash
    reads eight bytes at a time, then the rest), and a text one character apart does not.
    The screen leaves the normalized text's spaces and control characters out (it reads
    eight bytes a step with no state between words), so texts whose words split differently
    share one too: they are kept for the full normalization, which tells them apart."""
    from otel_oracles.grade.oracles.trace_common import repeated_args_candidates

    body = "def add(a, b):\n    return a + b\n" * 9
    cases: list[tuple[list[str], list[int]]] = [
        (["Straße", "STRASSE", " strasse ", "strase"], [0, 1, 2]),
        ([body, body.upper(), body.replace("\n", " \t"), body + "x"], [0, 1, 2]),
        (["a\ud800b", "A\ud800B", "a\ud800c"], [0, 1]),
        (["Find Refunds", "findre funds", "find refund"], [0, 1]),
    ]
    for texts, looping in cases:
        t = traj(*(tool("write_file", {"path": "calc.py", "content": text}) for text in texts))
        ev = Evidence(t)
        found = repeated_args_candidates(ev, ev.calls_of(()), len(looping))
        assert [s.index for s in found] == looping


# ---- the repeats and loop screens in the core: the Python they replaced, as the specification


def _spec_requesting_turns(ev: Evidence) -> dict[str, int | None]:
    turns: dict[str, int | None] = {}
    for g in ev.generations():
        for message in g.output_messages or ():
            for part in message.get("parts") or ():
                if isinstance(part, dict) and part.get("type") == "tool_call":
                    call_id = part.get("id")
                    if isinstance(call_id, str) and call_id:
                        known = turns.get(call_id, g.index)
                        turns[call_id] = g.index if known == g.index else None
    return turns


def _spec_one_turn_spans(ev: Evidence) -> frozenset[str]:
    return frozenset(
        g.source.span_id
        for g in ev.groups.generations
        if g.source is not None and not g.attributes.get("merged_model_calls")
    )


def _spec_asked_together(
    earlier: Step, later: Step, turns: dict[str, int | None], one_turn: frozenset[str]
) -> bool:
    started, ended = later.start_ns, earlier.end_ns
    if started is not None and ended is not None and started < ended:
        return True
    if (
        earlier.synthesized
        and later.synthesized
        and earlier.source is not None
        and later.source is not None
        and earlier.source.span_id == later.source.span_id
        and earlier.source.span_id in one_turn
    ):
        return True
    if earlier.call_id and later.call_id and earlier.call_id != later.call_id:
        turn = turns.get(earlier.call_id)
        return turn is not None and turn == turns.get(later.call_id)
    asked_in = earlier.attributes.get("requested_in")
    return (
        asked_in is not None
        and asked_in == later.attributes.get("requested_in")
        and asked_in in one_turn
    )


def _spec_repeats(ev: Evidence) -> list[tuple[Step, Step]]:
    turns = _spec_requesting_turns(ev)
    one_turn = _spec_one_turn_spans(ev)
    last: dict[tuple[str | None, str | None], Step] = {}
    out: list[tuple[Step, Step]] = []
    for s in sorted(ev.calls_of(()), key=lambda c: c.index):
        key = (s.agent_name, s.tool)
        prev = last.get(key)
        if prev is not None and not _spec_asked_together(prev, s, turns, one_turn):
            out.append((s, prev))
        last[key] = s
    return out


_SPEC_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None), dict, list})


def _spec_leaf_screen(step: Step) -> frozenset[tuple[str, str]] | None:
    args = effective_args(step)
    if args is None or type(args) is not dict:
        return None
    leaves: list[tuple[str, str]] = []
    for k, v in args.items():
        kind = type(v)
        if type(k) is not str or kind not in _SPEC_PLAIN:
            return None
        if kind is str:
            # The normalized text without its characters below "!" (spaces, control
            # characters): texts that split differently ("findrefunds", "find refunds")
            # share a screen, never texts that differ otherwise.
            normalized = " ".join(v.split()).casefold()
            leaves.append((k, "".join(c for c in normalized if c > " ")))
    return frozenset(leaves)


def _spec_candidates(calls: list[Step], threshold: int) -> list[Step]:
    by_tool: dict[str | None, list[Step]] = {}
    for s in calls:
        by_tool.setdefault(s.tool, []).append(s)
    keep: set[int] = set()
    for tool_calls in by_tool.values():
        if len(tool_calls) < threshold:
            continue
        screens = [_spec_leaf_screen(s) for s in tool_calls]
        if any(sc is None for sc in screens):
            keep.update(id(s) for s in tool_calls)
            continue
        sizes = Counter(screens)
        keep.update(
            id(s) for s, sc in zip(tool_calls, screens, strict=True) if sizes[sc] >= threshold
        )
    return [s for s in calls if id(s) in keep]


class _Text(str):
    """A ``str`` subclass: never a plain value to the screens."""


class _Parts(dict[str, Any]):
    """A message whose ``get`` answers its own way: read through it, never its storage."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.upper(), default)


_ODD_TEXTS: list[Any] = [
    "Find  Refunds", "find refunds", "find\trefunds ", "find\x1crefunds", "find\x85refunds",
    "FIND\u3000REFUNDS", "Straße", "STRASSE", "strasse", "ﬁle", "FILE", "İstanbul",
    "istanbul", "a\ud800b", "A\ud800B", "", "   ", "x\x0b\x0cy", "X Y", "FindRefunds",
    "xy", "x\x00y", "Stra ße", "stra\x01sse", _Text("find refunds"),
]  # fmt: skip
_ODD_VALUES: list[Any] = [*_ODD_TEXTS, 1, 1.0, True, None, [1, " A"], {"x": "Y "}, b"x", (1,)]


def _odd_traj(steps: list[dict[str, Any]], timed: bool) -> Trajectory:
    """``traj`` of ``steps`` built without validation, so odd values (a dict subclass, a
    ``str`` subclass) stay what they are, and each step's own ``source`` kept."""
    built = []
    for i, data in enumerate(steps):
        values = {"index": i, **data}
        if timed:
            values.setdefault("start_ns", i * 10 * 1_000_000)
            values.setdefault("end_ns", i * 10 * 1_000_000 + 5 * 1_000_000)
        built.append(Step.from_normalized(values))
    return Trajectory(steps=built, trace_id="t1")


def test_loop_screens_of_odd_call_lists_are_the_python_ones() -> None:
    """The core keeps each call's screen in the trajectory's step view, by the call's place
    among its calls, and groups the calls by the tool the view read: calls asked out of
    step order, twice, or from another trajectory (screened each time, never kept), and
    tools that are no plain ``str`` (a ``str`` subclass equal to a ``str``, which groups with
    it as a ``dict`` key does, a number, ``None``) split the calls as the Python did."""
    from otel_oracles.grade.oracles.trace_common import repeated_args_candidates

    rng = random.Random(4406)
    names: list[Any] = ["search", "fetch", _Text("search"), 7, None]
    for _ in range(300):

        def made() -> list[dict[str, Any]]:
            return [
                tool(rng.choice(names), {"q": rng.choice(["a b", "A  B", "c", _Text("a b")])})
                for _ in range(rng.randint(0, 8))
            ]

        t, other = _odd_traj(made(), timed=True), _odd_traj(made(), timed=True)
        ev = Evidence(t)
        for threshold in (2, 3):
            calls = list(t.steps) + rng.sample(list(other.steps), min(2, len(other.steps)))
            rng.shuffle(calls)
            calls += calls[: rng.randint(0, 3)]
            found = repeated_args_candidates(ev, calls, threshold)
            assert [id(s) for s in found] == [id(s) for s in _spec_candidates(calls, threshold)]


def test_repeats_in_the_core_are_the_python_ones() -> None:
    """``tool_repeats`` finds the pairs the Python it replaced found, on random runs of
    calls with and without ids, agents, times, one-turn and merged model-call spans,
    ``requested_in`` links and messages read through their own ``get``."""
    from tests.support.check_reference import _repeats

    rng = random.Random(1812)
    for _ in range(600):
        steps: list[dict[str, Any]] = []
        spans = ["s1", "s2", "s3"]
        for i in range(rng.randint(0, 16)):
            if rng.random() < 0.25:
                ids = [rng.choice([f"c{rng.randrange(5)}", "", 7, None]) for _ in range(3)]
                parts: list[Any] = [
                    {"type": rng.choice(["tool_call", "text", _Text("tool_call")]), "id": c}
                    for c in ids
                ]
                message: dict[str, Any] = {"role": "assistant", "parts": parts}
                if rng.random() < 0.2:
                    message = _Parts(PARTS=parts)
                step = gen(output_messages=rng.choice([[message], [], None]))
                step["source"] = SpanRef(trace_id="t", span_id=rng.choice(spans))
                if rng.random() < 0.3:
                    step["attributes"] = {"merged_model_calls": rng.choice([True, 0])}
                steps.append(step)
                continue
            step = tool(
                rng.choice(["search", "fetch"]),
                {"q": "x"},
                agent=rng.choice(["a", "b", None]),
                call_id=rng.choice([None, "", f"c{rng.randrange(5)}"]),
            )
            step["synthesized"] = rng.random() < 0.4
            if rng.random() < 0.7:
                step["source"] = SpanRef(trace_id="t", span_id=rng.choice(spans))
            if rng.random() < 0.3:
                step["attributes"] = {"requested_in": rng.choice([*spans, None, 3])}
            if rng.random() < 0.3:
                step["start_ns"], step["end_ns"] = i * 10 * 1_000_000, i * 10 * 1_000_000 + 25
            steps.append(step)
        t = _odd_traj(steps, timed=rng.random() < 0.7)
        expected = [(s.index, p.index) for s, p in _spec_repeats(Evidence(t))]
        assert [(s.index, p.index) for s, p in _repeats(Evidence(t))] == expected
        # only the pairs after the given calls (tool_retries: the failed ones)
        after = {id(s) for s in t.steps if rng.random() < 0.3}
        kept = [(s.index, p.index) for s, p in _repeats(Evidence(t), after)]
        assert kept == [(i, j) for i, j in expected if id(t.steps[j]) in after]


def test_loop_screens_in_the_core_are_the_python_ones() -> None:
    """The core's screens split the calls as the Python screens did: whitespace as
    ``str.split`` reads it (``\\x1c``, U+0085, U+3000), case folding beyond lower-casing
    (``ß``, ``ﬁ``, ``İ``), lone surrogates, ``str`` subclasses and other values no plain
    JSON, AgentBench steps' own fields, for every threshold, with screens shared by the
    checks of one trajectory."""
    from otel_oracles.grade.oracles.trace_common import repeated_args_candidates

    rng = random.Random(2026)
    for _ in range(400):
        steps: list[Any] = []
        for _ in range(rng.randint(0, 12)):
            args: dict[Any, Any] = {
                rng.choice(["q", "Q", _Text("q")] if rng.random() < 0.1 else ["q", "p"]): (
                    rng.choice(_ODD_VALUES)
                )
                for _ in range(rng.randint(0, 2))
            }
            if rng.random() < 0.05:
                args[1] = "x"
            roll = rng.random()
            if roll < 0.1:
                steps.append(tool("search", None, arguments_raw="q=1"))
            elif roll < 0.2:
                step = tool("search", None)
                step["raw"] = {
                    "tool": "search",
                    "type": "x",
                    **{str(k): v for k, v in args.items()},
                }
                steps.append(step)
            else:
                steps.append(tool(rng.choice(["search", "fetch"]), args))
        t = _odd_traj(steps, timed=True)
        ev = Evidence(t)
        for tools in [(), ("search",)]:
            calls = list(ev.calls_of(tools, unknown_namespace_matches=True))
            for threshold in (2, 3, 5):
                found = repeated_args_candidates(ev, calls, threshold)
                assert [s.index for s in found] == [
                    s.index for s in _spec_candidates(calls, threshold)
                ]
