"""Each verdict of the JSON report is written by the core from its models (``VerdictJson``),
the report's only writer of verdicts: its text must be ``json.dumps`` of the verdict's
``model_dump(mode="json")`` (with the privacy boundary's shown fields, of the scrubbed copy)
plus ``verdict``, shifted two levels and ``json_safe``d, for every verdict real traces give
and for strings holding every character ``json_safe`` escapes; for the verdicts a Python
writer once wrote in its place, the very bytes that writer wrote (``verdict_cases``), and its
refusals."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from otel_oracles._native import ShownFilter, fill_model
from otel_oracles.emit import SHOWN_FILTER, ExplainMode, explain
from otel_oracles.emit._explain import (
    _TEMPLATES,
    IDENTIFIER_DETAIL_KEYS,
    REDACTED,
    looks_secret,
    scrub_details,
)
from otel_oracles.model.result import (
    VERDICTS,
    OracleResult,
    Outcome,
    Verdict,
    count_outcomes,
)
from otel_oracles.report import JsonWriter, json_safe
from otel_oracles.report._json import _VERDICT_JSON
from tests.native.verdict_cases import (
    CASES,
    REFUSED,
    SURROGATES,
    captured_verdicts,
    result,
    verdict_of,
)
from tests.support.shown import shown_copy

EXPECTED: dict[str, str] = json.loads(
    (Path(__file__).parent / "verdict_json_expected.json").read_text(encoding="utf-8")
)


def dumped_text(verdict: Verdict) -> bytes:
    """The verdict's text by its definition: ``json.dumps`` of its ``model_dump`` and
    ``verdict``, as it sits two levels deep in the report, ``json_safe``; a surrogate (no
    UTF-8 text) as its escape, as ``backslashreplace`` writes it."""
    data = {**verdict.model_dump(mode="json"), "verdict": verdict.verdict}
    text = json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\n    ")
    return json_safe(text).encode("utf-8", "backslashreplace")


MODES: tuple[ExplainMode | None, ...] = (None, "template", "full")
"""As the report is written: without the filter, through it, and as the opt-in."""


def written(verdict: Verdict, mode: ExplainMode | None) -> bytes:
    """``VerdictJson``'s text of ``verdict``, through the privacy filter when ``mode`` is
    ``template`` (the report writes ``full`` as it is)."""
    return _VERDICT_JSON.write(verdict, SHOWN_FILTER if mode == "template" else None)


def expected(verdict: Verdict, mode: ExplainMode | None) -> bytes:
    """``dumped_text`` of what the report shows of ``verdict`` (``shown_copy``), a
    template's message spelled out as its explanation without ``name: `` in front."""
    if mode is None:
        return dumped_text(verdict)
    shown = shown_copy(verdict) if mode == "template" else verdict
    if mode == "template":
        results = [
            r.model_copy(
                update={
                    "message": explain(r).removeprefix(f"{r.name}: "),
                    "details": scrub_details(r.details),
                }
            )
            for r in verdict.results
        ]
        assert results == shown.results
    return dumped_text(shown)


@pytest.fixture(scope="module")
def graded() -> list[Verdict]:
    return captured_verdicts()


def test_every_verdict_of_the_captured_traces_is_written_as_its_model_dump(
    graded: list[Verdict],
) -> None:
    for verdict in graded:
        for mode in MODES:
            assert written(verdict, mode) == expected(verdict, mode)


UNSAFE = "\x00\x1b\x7f\x80\x85\x9f\xa0\u2028\u202a\u202e\u202f\u2065\u2066\u2069\u206a"
"""C0 (which JSON escapes), DEL, C1 and the bidirectional controls (which ``json_safe``
escapes), and their neighbours (which nothing escapes)."""


def random_text(rng: random.Random) -> str:
    alphabet = UNSAFE + 'ab "\\\n\t/é日😀…\u2000\u2060\xc2'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(20)))


def test_strings_are_json_safe_as_the_report_makes_them() -> None:
    """Every string the verdict holds (fields, messages, detail keys and values, params, the
    verdict's own fields) with the characters ``json_safe`` escapes, and without."""
    rng = random.Random(22)
    for _ in range(300):
        results = [
            result(
                name=random_text(rng),
                message=random_text(rng),
                details={
                    random_text(rng): random_text(rng),
                    "tool": random_text(rng),
                    "tools": [random_text(rng), "ok_name"],
                    "n": rng.randint(-5, 5),
                    "ratio": rng.random(),
                },
                params={random_text(rng): [random_text(rng), None, True, 1.5]},
                span_ids=[random_text(rng)],
                why=random_text(rng),
            )
            for _ in range(rng.randrange(3))
        ]
        verdict = verdict_of(
            results, subject=random_text(rng), contract_name=random_text(rng), root_name="r"
        )
        for mode in MODES:
            assert written(verdict, mode) == expected(verdict, mode)


def test_a_string_in_the_place_of_one_written_before_is_written_as_itself() -> None:
    """The core keeps the shown text of the strings it wrote, by address, from verdict to
    verdict: a string freed after its verdict leaves its address to the next one built
    (without the core holding them, these 200 texts take a handful of addresses), and each
    must be written as its own text, as a value, as a detail key and through the privacy
    filter."""
    for i in range(200):
        text = "".join(["name-", str(i)])
        verdict = verdict_of(
            [result(name=text, details={text: 1, "tool": text}, why=text)], subject=text
        )
        for mode in MODES[:2]:
            assert written(verdict, mode) == expected(verdict, mode)
        del verdict, text


def test_lines_written_before_are_written_again_as_what_they_hold() -> None:
    """The core keeps the lines it wrote (a result field's, an object member's) by the
    objects they hold, from verdict to verdict: the same objects met again under another
    field or key, at another depth, or beside other values, must each be written as
    themselves; values it does not keep (large integers, floats, lists, subclasses in the
    details) as well."""
    shared: dict[str, Any] = {"max": 3, "tool": "t", "on": True, "off": None, "low": -5}
    for i in range(60):
        outcome = (Outcome.PASS, Outcome.TOLERATED, Outcome.INVARIANT_FAILURE)[i % 3]
        results = [
            result(
                name="t" if i % 2 else "max",
                oracle_type="t",
                outcome=outcome,
                passed=outcome != Outcome.INVARIANT_FAILURE,
                message="t",
                params={**shared, "nested": {"max": 3, "t": "max"}, "big": 257 + i},
                details={"t": 3, "max": [3, "t"], "kind": outcome, "ratio": 0.5},
                used=3,
                budget=3 if i % 4 else None,
                why="t" if i % 5 else None,
                step_indexes=[3] if i % 2 else [],
                contract_version=3,
            )
            for _ in range(1 + i % 3)
        ]
        verdict = verdict_of(results, subject="t", contract_name="max")
        for mode in MODES:
            assert written(verdict, mode) == expected(verdict, mode)


def test_a_list_met_again_is_written_as_the_items_it_holds_now() -> None:
    """The core keeps the lines of a short list of strings (a check's params' tool lists,
    the same list objects in each of its results) with the items it held: the same list met
    again after an item was added, replaced or removed, or emptied, must be written as
    what it holds then."""
    tools: list[Any] = ["delete_records"]
    other = "drop_table"
    changes = [
        lambda: None,
        lambda: tools.append(other),
        lambda: tools.__setitem__(0, other),
        lambda: tools.__setitem__(0, "x" * 40),
        lambda: tools.pop(),
        lambda: tools.clear(),
        lambda: tools.extend(["a", "b", "c", "d", "e"]),
        lambda: tools.__delitem__(slice(1, None)),
        lambda: tools.append(None),
        lambda: tools.__setitem__(1, 7),
        lambda: tools.__setitem__(1, [other]),
    ]
    for change in changes:
        change()
        results = [result(params={"coverage": None, "tool": ["t"], "max": 0}) for _ in range(2)]
        for kept in results:
            kept.__dict__["params"]["tool"] = tools
        verdict = verdict_of(results)
        for mode in MODES:
            for _ in range(2):
                assert written(verdict, mode) == expected(verdict, mode), (tools, mode)


def test_trusted_models_are_written_as_validated_ones() -> None:
    """The evaluator builds its results and verdicts without validating them: their field
    values are read all the same."""
    kept = result(details={"calls": 2}, step_indexes=[1])
    # As the core's check loop builds each result.
    trusted = fill_model(OracleResult, dict(kept.__dict__), frozenset(OracleResult.model_fields))
    built = VERDICTS.trusted(
        "c", 1, "h", "n", "s", "t", None, None, "a", False, [trusted], count_outcomes([trusted]), 5
    )
    validated = verdict_of(
        [kept], contract_hash="h", contract_name="n", trace_id="t", agent_name="a", duration_ns=5
    )
    assert _VERDICT_JSON.write(built) == _VERDICT_JSON.write(validated) == dumped_text(validated)


def test_every_case_has_its_expected_text() -> None:
    assert sorted(EXPECTED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdicts_once_left_to_python_are_written_as_it_wrote_them(name: str) -> None:
    """Details and params that are not plain JSON data (dumped by pydantic first), models
    held otherwise (read through ``model_dump``), values ``json.dumps`` writes by its own
    rules (big integers, NaN, enum members, subclasses, non-string keys): the bytes the
    Python writer gave, also as the report's writer places them."""
    verdict, shown = CASES[name]()
    text = EXPECTED[name].encode("utf-8")
    assert _VERDICT_JSON.write(verdict, shown) == text
    writer = JsonWriter()
    writer.add(verdict, shown)
    document = b"".join(writer.byte_chunks([], []))
    assert document.startswith(b'{\n  "verdicts": [\n    ' + text + b"\n  ],")
    json.loads(document)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_python_refused_is_refused_with_its_error(name: str) -> None:
    """A value of no JSON type, a key ``json.dumps`` will not spell, a cycle, a lone
    surrogate (no UTF-8 text), shown fields that are no pair, a verdict missing its counts:
    the error the Python writer raised; the report's writer adds nothing then."""
    make, error = REFUSED[name]
    verdict, shown = make()
    with pytest.raises(error):
        _VERDICT_JSON.write(verdict, shown)
    writer = JsonWriter()
    with pytest.raises(error):
        writer.add(verdict, shown)
    assert writer.tally.verdicts == 0
    assert json.loads(b"".join(writer.byte_chunks([], [])))["verdicts"] == []


@pytest.mark.parametrize("name", sorted(SURROGATES))
def test_a_surrogate_is_written_as_its_escape(name: str) -> None:
    """What the Python writer refused: each surrogate written as its JSON escape (in a shown
    message, the filter's text, as its escape's text), parsed back to the same value."""
    verdict, shown = SURROGATES[name]()
    text = _VERDICT_JSON.write(verdict, shown)
    # (`expected`'s check of the message takes the raw name off the front; the filter's text
    # names the check by its escape, which it takes off.)
    assert text == dumped_text(verdict if shown is None else shown_copy(verdict))
    writer = JsonWriter()
    writer.add(verdict, shown)
    assert writer.tally.verdicts == 1
    (dumped,) = json.loads(b"".join(writer.byte_chunks([], [])))["verdicts"]
    if shown is None:
        assert dumped == {**verdict.model_dump(mode="json"), "verdict": verdict.verdict}


def test_details_holding_a_cycle_are_refused() -> None:
    """(The Python writer's plain-data test recursed until ``RecursionError``; pydantic's
    dump, which the core asks of data it cannot call plain, names the cycle.)"""
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match=r"[Cc]ircular reference"):
        _VERDICT_JSON.write(verdict_of([result(details={"k": cycle})]))


def test_a_verdict_is_its_own_text_after_a_long_one_and_a_refused_one() -> None:
    """The writer keeps its buffer from verdict to verdict: what one verdict left in it (a
    text past the size kept, a text cut short by a refusal) is no part of the next one."""
    small = verdict_of([result()])
    long = verdict_of([result(details={"k": "x" * (2 << 20)})])
    cycle: list[Any] = []
    cycle.append(cycle)
    refused = verdict_of([result(details={"k": cycle})])
    for verdict in (long, small, long, small):
        assert written(verdict, None) == expected(verdict, None)
    with pytest.raises(ValueError, match=r"[Cc]ircular reference"):
        _VERDICT_JSON.write(refused)
    assert written(small, None) == expected(small, None)


def test_nesting_past_the_writers_depth_is_refused_as_json_refuses_it() -> None:
    """``json.dumps`` refuses past the interpreter's recursion limit (a generator per level,
    about a thousand), the core past 512 levels: nothing real nests so deep."""
    deep: Any = []
    for _ in range(1200):
        deep = [deep]
    bare = result().model_copy(update={"span_ids": deep})
    with pytest.raises(RecursionError):
        _VERDICT_JSON.write(verdict_of([bare]))
    with pytest.raises(RecursionError):
        json.dumps(deep, indent=2)


def test_an_error_asking_the_filter_is_raised() -> None:
    def broken(value: Any) -> str | None:
        raise LookupError("no text")

    shown = ShownFilter(
        IDENTIFIER_DETAIL_KEYS,
        broken,
        looks_secret,
        REDACTED,
        5,
        10,
        list(_TEMPLATES.items()),
        Outcome.PASS,
        Outcome.ERROR,
        frozenset(),
        256,
        64,
    )
    with pytest.raises(LookupError, match="no text"):
        _VERDICT_JSON.write(verdict_of([result()]), shown)


_FIELD_COMPARED_BY_ITS_OWN_EQ = """
from typing import Any

from otel_oracles.report._json import _VERDICT_JSON
from tests.native.verdict_cases import result, verdict_of


class Replacing(str):
    \"\"\"A field name whose first comparison replaces the value it keys in ``target``.\"\"\"

    __hash__ = str.__hash__
    target: dict[Any, Any]

    def __eq__(self, other: object) -> bool:
        if not hasattr(self, "done"):
            self.done = True
            self.target[self] = "replaced"
        return str.__eq__(self, other)


def text_read() -> str:
    return "".join(["read ", "once"])  # made here: the only reference is the model's


expected = _VERDICT_JSON.write(verdict_of([result(message=text_read())]))
kept = result(message=text_read())
verdict = verdict_of([kept])
held: dict[Any, Any] = {}
for name, value in kept.__dict__.items():
    if name == "message":
        name = Replacing(name)
        name.target = held
    held[name] = value
del name, value
object.__setattr__(kept, "__dict__", held)
assert _VERDICT_JSON.write(verdict) == expected
"""


def test_a_field_name_compared_by_its_own_eq_leaves_the_value_read() -> None:
    """A model's ``__dict__`` keyed by a ``str`` subclass has its keys compared by the
    subclass's ``__eq__`` as the core reads the fields: a comparison that replaces the value
    under its key (freeing the one read) leaves the writer the value it read, held by a
    reference of its own. Run with the debug allocator, which fills freed memory, so a value
    read after it was freed crashes rather than passing unseen."""
    repo = Path(__file__).resolve().parent.parent.parent
    env = {**os.environ, "PYTHONMALLOC": "debug", "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run(
        [sys.executable, "-c", _FIELD_COMPARED_BY_ITS_OWN_EQ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
