"""Verdicts the core's ``VerdictJson`` once left to a Python writer (``verdict_data``, then
``_dumps``, until 4 December 2026): details and params that are not plain JSON data, models
held otherwise than validation leaves them, values ``json.dumps`` writes by its own rules or
refuses. ``verdict_json_expected.json`` holds the text that Python writer gave each case in
``CASES`` (``REFUSED``: the error it raised), made by running these builders against it; the
core is held to those bytes (tests/native/test_native_verdict_json.py). The ``shown_`` cases
(and ``shuffled_result_shown``), written through the privacy filter since the core applies it
as it writes (5 December 2026), hold the text of the scrubbed copy's ``model_dump``
(``tests.support.shown.shown_copy``), as the report wrote it before."""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from otel_oracles.emit import SHOWN_FILTER
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Counts, OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"


class Color(enum.IntEnum):
    RED = 7


class Listing(list[Any]):
    pass


class Table(dict[str, Any]):
    pass


class Tool(str):
    pass


def result(**fields: Any) -> OracleResult:
    values: dict[str, Any] = {
        "oracle_type": "tool_retries",
        "name": "retries",
        "outcome": Outcome.INVARIANT_FAILURE,
        "passed": False,
        "message": "m",
        **fields,
    }
    return OracleResult(**values)


def verdict_of(results: list[OracleResult], **fields: Any) -> Verdict:
    values: dict[str, Any] = {"contract_id": "c", "subject": "s", **fields}
    return Verdict(passed=False, results=results, counts=count_outcomes(results), **values)


NOT_PLAIN: dict[str, Any] = {
    "nan": float("nan"),
    "infinities": [1.5, float("-inf")],
    "tuple": (1, "a"),
    "set": {3},
    "str_enum": Outcome.TOLERATED,
    "int_enum": Color.RED,
    "date": date(2026, 12, 2),
    "int_key": {1: "one"},
    "none_key": {None: "none"},
    "nested": {"deep": [{"x": (2,)}, "plain", -0.0, 10**30]},
    "big": 2**70,
    "list_subclass": Listing([1, "a"]),
    "dict_subclass": Table(a=1),
    "float_subclass_key": {"k": [1e16, 5e-324]},
}


def _shuffled() -> Verdict:
    kept = result(details={"calls": 2})
    shuffled = kept.model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(kept.__dict__.items())))
    return verdict_of([kept, shuffled])


def _reordered() -> Verdict:
    """A verdict (and its counts) holding its values in another order."""
    kept = verdict_of([result()], trace_id="t")
    counts = kept.counts.model_copy()
    object.__setattr__(counts, "__dict__", dict(reversed(counts.__dict__.items())))
    verdict = kept.model_copy(update={"counts": counts})
    object.__setattr__(verdict, "__dict__", dict(reversed(verdict.__dict__.items())))
    return verdict


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for n in range(levels):
        value = {f"l{n}": value} if n % 2 else [value]
    return value


def _unvalidated(**update: Any) -> Verdict:
    """A verdict holding values no validation left (``model_copy`` does not validate)."""
    return verdict_of([result().model_copy(update=update)])


CASES: dict[str, Callable[[], tuple[Verdict, Any]]] = {
    **{
        f"details_{name}": (
            lambda value=value: (verdict_of([result(), result(details={"k": value})]), None)
        )
        for name, value in NOT_PLAIN.items()
    },
    **{
        f"params_{name}": (lambda value=value: (verdict_of([result(params={"k": value})]), None))
        for name, value in NOT_PLAIN.items()
    },
    "shown_infinity": lambda: (
        verdict_of([result(details={"x": float("inf"), "n": 1})]),
        SHOWN_FILTER,
    ),
    "shown_tuple_details": lambda: (
        verdict_of([result(details={"t": (1, 2), "tools": ("a", "b c")})]),
        SHOWN_FILTER,
    ),
    "shown_str_subclass": lambda: (
        verdict_of([result(details={"tool": Tool("search_docs"), "n": 1})]),
        SHOWN_FILTER,
    ),
    "shuffled_result": lambda: (_shuffled(), None),
    "shuffled_result_shown": lambda: (_shuffled(), SHOWN_FILTER),
    "constructed_verdict": lambda: (
        Verdict.model_construct(
            subject="s", contract_id="c", passed=True, results=[result()], counts=Counts()
        ),
        None,
    ),
    "reordered_verdict": lambda: (_reordered(), None),
    "deep_plain_details": lambda: (verdict_of([result(details={"d": _deep(100)})]), None),
    "big_int_field": lambda: (_unvalidated(used=2**70, budget=-(2**80)), None),
    "nan_field": lambda: (_unvalidated(why=float("nan"), used=float("-inf")), None),
    "int_enum_field": lambda: (_unvalidated(used=Color.RED), None),
    "tuple_field": lambda: (_unvalidated(span_ids=("a", ("b", 1))), None),
    "odd_keys_field": lambda: (
        _unvalidated(span_ids={1: "a", None: 2, 1.5: 3, False: 4, float("nan"): 5, Color.RED: 6}),
        None,
    ),
    "subclass_field": lambda: (_unvalidated(span_ids=Listing([Table(b=[1])])), None),
    "unsafe_text_in_odd_details": lambda: (
        verdict_of([result(details={"k": ("\x1b[31m", "\u202e", "\x7f", "\x85")})]),
        None,
    ),
}
"""Each case's verdict and the ``shown`` the report writes it with."""


def _cycle() -> Any:
    cycle: list[Any] = []
    cycle.append(cycle)
    return cycle


REFUSED: dict[str, tuple[Callable[[], tuple[Verdict, Any]], type[BaseException]]] = {
    "verdict_without_counts": (
        lambda: (
            Verdict.model_construct(contract_id="c", subject="s", passed=True, results=[]),
            None,
        ),
        AttributeError,
    ),
    "object_field": (lambda: (_unvalidated(why=object()), None), TypeError),
    "tuple_key_field": (lambda: (_unvalidated(span_ids={("a",): 1}), None), TypeError),
    "cycle_field": (lambda: (_unvalidated(span_ids=_cycle()), None), ValueError),
}
"""Verdicts the report refuses to write, and the error it raises."""


SURROGATES: dict[str, Callable[[], tuple[Verdict, Any]]] = {
    "surrogate_message": lambda: (verdict_of([result(message="lone \ud800")]), None),
    "surrogate_shown": lambda: (verdict_of([result(name="lone \ud800")]), SHOWN_FILTER),
    "surrogate_details": lambda: (verdict_of([result(details={"k": "\udfff"})]), None),
}
"""Verdicts holding a surrogate (no UTF-8 text), which the Python writer refused with
``UnicodeEncodeError`` (the whole report lost with them): written since 5 December 2026 with
each surrogate as its JSON escape, the text ``json.dumps`` writes by default."""


def captured_verdicts() -> list[Verdict]:
    """Verdicts of every ninth captured trace file graded against the example contracts:
    real results of every oracle the examples use, for the writers' byte-for-byte tests."""
    contracts = [load_contract(p) for p in sorted((REPO / "examples" / "contracts").glob("*.y*ml"))]
    session = GradingSession(contracts, load_conventions([]))
    files = sorted(str(p) for p in TRACES.glob("*/*.otlp.json"))[::9]
    verdicts = grade_paths(files, session).verdicts
    assert len(verdicts) > 100
    return verdicts
