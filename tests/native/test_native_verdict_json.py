"""Each verdict of the JSON report is written by the core from its models (``VerdictJson``):
the text must be the very bytes the Python path writes (``verdict_data``, then ``_dumps``,
which ``json_safe``s it), for every verdict real traces give, with and without the privacy
boundary's shown fields, for strings holding every character ``json_safe`` escapes, and a
verdict it cannot write the same must be left to that path."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from otel_oracles._native import fill_model
from otel_oracles.emit import Explainer
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import (
    OracleResult,
    Outcome,
    Verdict,
    count_outcomes,
    trusted_verdict,
)
from otel_oracles.pipeline import grade_paths
from otel_oracles.report import JsonWriter
from otel_oracles.report._json import _VERDICT_JSON, ShownFields, _dumps, verdict_data
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"


def python_text(verdict: Verdict, shown: ShownFields | None = None) -> bytes:
    return _dumps(verdict_data(verdict, shown), level=2).encode("utf-8")


@pytest.fixture(scope="module")
def graded() -> list[Verdict]:
    contracts = [load_contract(p) for p in sorted((REPO / "examples" / "contracts").glob("*.y*ml"))]
    session = GradingSession(contracts, load_conventions([]))
    files = sorted(str(p) for p in TRACES.glob("*/*.otlp.json"))[::9]
    verdicts = grade_paths(files, session).verdicts
    assert len(verdicts) > 100
    return verdicts


def test_every_verdict_of_the_captured_traces_is_written_as_python_writes_it(
    graded: list[Verdict],
) -> None:
    explainer = Explainer("template")
    full = Explainer("full")
    for verdict in graded:
        for shown in (None, explainer.shown_fields, full.shown_fields):
            assert _VERDICT_JSON.write(verdict, shown) == python_text(verdict, shown)


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


UNSAFE = "\x00\x1b\x7f\x80\x85\x9f\xa0\u2028\u202a\u202e\u202f\u2065\u2066\u2069\u206a"
"""C0 (which JSON escapes), DEL, C1 and the bidirectional controls (which ``json_safe``
escapes), and their neighbours (which nothing escapes)."""


def random_text(rng: random.Random) -> str:
    alphabet = UNSAFE + 'ab "\\\n\t/é日😀…\u2000\u2060\xc2'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(20)))


def test_strings_are_json_safe_as_the_python_path_makes_them() -> None:
    """Every string the verdict holds (fields, messages, detail keys and values, params, the
    verdict's own fields) with the characters ``json_safe`` escapes, and without."""
    rng = random.Random(22)
    explainer = Explainer("template")
    full = Explainer("full")
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
        for shown in (None, explainer.shown_fields, full.shown_fields):
            text = _VERDICT_JSON.write(verdict, shown)
            assert text == python_text(verdict, shown)


def test_trusted_models_are_written_as_validated_ones() -> None:
    """The evaluator builds its results and verdicts without validating them: their field
    values are read all the same."""
    kept = result(details={"calls": 2}, step_indexes=[1])
    # As the core's check loop builds each result.
    trusted = fill_model(OracleResult, dict(kept.__dict__), frozenset(OracleResult.model_fields))
    built = trusted_verdict(
        "c", 1, "h", "n", "s", "t", None, None, "a", False, [trusted], count_outcomes([trusted]), 5
    )
    validated = verdict_of(
        [kept], contract_hash="h", contract_name="n", trace_id="t", agent_name="a", duration_ns=5
    )
    assert _VERDICT_JSON.write(built) == _VERDICT_JSON.write(validated) == python_text(validated)


@pytest.mark.parametrize(
    "odd",
    [
        float("nan"),
        [1.5, float("-inf")],
        (1, "a"),
        {3},
        Outcome.TOLERATED,
        date(2026, 12, 2),
        {1: "one"},
        {"deep": [{"x": (2,)}]},
        2**70,
    ],
)
def test_details_and_params_that_are_not_plain_json_are_left_to_python(odd: Any) -> None:
    """What pydantic dumps before the text is written (``_plain`` says no) is not written
    here: the writer falls back to the Python path, which gives the document its text."""
    for fields in ({"details": {"k": odd}}, {"params": {"k": odd}}):
        verdict = verdict_of([result(), result(**fields)])
        assert _VERDICT_JSON.write(verdict) is None
        writer, expected = JsonWriter(), python_text(verdict)
        writer.add(verdict)
        assert (
            b"".join(writer.byte_chunks([], [])).split(b"\n", 2)[2].startswith(b"    " + expected)
        )


def test_shown_details_that_are_not_plain_json_are_left_to_python() -> None:
    verdict = verdict_of([result()])
    # (A lone surrogate has no UTF-8 text: the Python path raises for it, as it did.)
    assert _VERDICT_JSON.write(verdict, lambda r: ("lone \ud800", {})) is None
    assert _VERDICT_JSON.write(verdict, lambda r: ("m", {"x": float("inf")})) is None
    assert _VERDICT_JSON.write(verdict, lambda r: ("m", {"x": 1})) == python_text(
        verdict, lambda r: ("m", {"x": 1})
    )


def test_models_held_otherwise_are_left_to_python() -> None:
    """A result whose values are held in another order, or a verdict missing a value (built
    by ``model_construct`` without it): pydantic dumps them."""
    kept = result()
    shuffled = kept.model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(kept.__dict__.items())))
    assert _VERDICT_JSON.write(verdict_of([kept, shuffled])) is None
    partial = Verdict.model_construct(contract_id="c", subject="s", passed=True, results=[])
    assert _VERDICT_JSON.write(partial) is None


def test_an_error_asking_for_the_shown_fields_is_raised() -> None:
    def broken(r: OracleResult) -> tuple[str, dict[str, Any]]:
        raise LookupError("no text")

    with pytest.raises(LookupError, match="no text"):
        _VERDICT_JSON.write(verdict_of([result()]), broken)
