"""``VerdictReports`` writes every report a run asks for of one verdict in one call, reading
its fields once and rendering each result's shown message once for them all: each text must
be the bytes its report's writer gives alone (``VerdictJson.write``, ``VerdictMarkup.junit``
and ``html``), for whichever reports are asked for, for the verdicts captured traces give
and for the odd verdicts the JSON writer is held to (models held otherwise than validation
leaves them are read as each writer reads them alone), and it refuses what they refuse."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from otel_oracles._native import ShownFilter, VerdictJson, VerdictMarkup, VerdictReports
from otel_oracles.emit import SHOWN_FILTER
from otel_oracles.model.result import Counts, OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.report import verdict_reports
from otel_oracles.report._json import _VERDICT_JSON
from otel_oracles.report._markup import MARK, MARKUP
from tests.native.verdict_cases import (
    CASES,
    REFUSED,
    SURROGATES,
    captured_verdicts,
    result,
    verdict_of,
)

ASKED = list(itertools.product((False, True), repeat=3))
"""Every choice of reports: JSON, JUnit, HTML."""


def alone(verdict: Verdict, index: int, shown: ShownFilter | None) -> list[Any]:
    """Each report's text of ``verdict`` by its own writer, or the error it raised."""
    texts: list[Any] = []
    for write in (
        lambda: _VERDICT_JSON.write(verdict, shown),
        lambda: MARKUP.junit(verdict, shown),
        lambda: MARKUP.html(verdict, index, shown),
    ):
        try:
            texts.append(write())
        except Exception as exc:  # noqa: BLE001 - the refusal itself is compared
            texts.append(exc)
    return texts


def assert_one_call_writes_each_alone(verdict: Verdict, shown: ShownFilter | None) -> None:
    expected = alone(verdict, 7, shown)
    for asked in ASKED:
        reports = verdict_reports(json=asked[0], junit=asked[1], html=asked[2])
        wanted = [text if on else None for text, on in zip(expected, asked, strict=True)]
        refused = [text for text in wanted if isinstance(text, Exception)]
        if refused:
            with pytest.raises(type(refused[0])):
                reports.write(verdict, 7, shown)
        else:
            *texts, derived = reports.write(verdict, 7, shown)
            assert texts == wanted, asked
            # The JSON text's derived ``verdict``, handed back for the run's tally.
            assert derived == (verdict.verdict if asked[0] else None), asked


@pytest.fixture(scope="module")
def graded() -> list[Verdict]:
    return captured_verdicts()


@pytest.mark.parametrize("shown", [None, SHOWN_FILTER], ids=["full", "template"])
def test_each_report_of_the_captured_traces_is_its_writers_alone(
    graded: list[Verdict], shown: ShownFilter | None
) -> None:
    failing = [v for v in graded if not v.passed]
    assert failing and len(failing) < len(graded)  # both kinds, and failures with details
    for verdict in graded:
        assert_one_call_writes_each_alone(verdict, shown)


@pytest.mark.parametrize("name", sorted(CASES) + sorted(SURROGATES) + sorted(REFUSED))
def test_each_report_of_an_odd_verdict_is_its_writers_alone(name: str) -> None:
    """Details or params of no plain JSON type, models held otherwise (read as each writer
    reads them alone), values refused: the same texts, or the same refusal."""
    case = {**CASES, **SURROGATES, **{k: v[0] for k, v in REFUSED.items()}}[name]
    verdict, shown = case()
    assert shown in (None, SHOWN_FILTER)
    for filter_ in (None, SHOWN_FILTER):
        assert_one_call_writes_each_alone(verdict, filter_)


def test_a_message_rendered_once_is_each_reports_message() -> None:
    """Each result's shown message is rendered once for the three reports: a template
    message (not the check's own) must reach each of them, and the check's own with no
    filter."""
    results = [
        result(outcome=Outcome.INVARIANT_FAILURE, passed=False, message="own <words> \x1b"),
        result(outcome=Outcome.PASS, passed=True, message="fine"),
    ]
    verdict = verdict_of(results)
    assert verdict.counts == count_outcomes(results)
    reports = verdict_reports(json=True, junit=True, html=True)
    for shown in (SHOWN_FILTER, None):
        text, testcase, page, derived = reports.write(verdict, 0, shown)
        assert derived == verdict.verdict == "fail"
        assert text is not None and testcase is not None and page is not None
        own = b"own" in text
        assert own is (shown is None)
        assert (b"own" in testcase[1]) is own and (b"own" in page[1]) is own
    assert_one_call_writes_each_alone(verdict, SHOWN_FILTER)


def test_the_writers_must_be_built_for_the_same_models() -> None:
    other = VerdictJson(
        (*Verdict.model_fields, "extra"),
        tuple(OracleResult.model_fields),
        tuple(Counts.model_fields),
        2,
        lambda v: v,
    )
    with pytest.raises(ValueError, match="different models"):
        VerdictReports(other, MARKUP, True, False)
    with pytest.raises(ValueError, match="VerdictMarkup"):
        VerdictReports(_VERDICT_JSON, None, False, True)
    assert VerdictReports(None, None, False, False).write(verdict_of([]), 0) == (
        None,
        None,
        None,
        None,
    )


FILTERED = (
    "name",
    "oracle_type",
    "outcome",
    "used",
    "budget",
    "step_indexes",
    "details",
    "message",
)
"""The result fields the privacy filter reads (``scrub.rs``' ``JUDGED_NAMES``)."""


@pytest.mark.parametrize("missing", FILTERED)
def test_each_writer_is_refused_a_result_model_lacking_a_field_the_filter_reads(
    missing: str,
) -> None:
    """Both writers find the filter's fields by name when they are built (one list of them
    for both): a result model without one is refused then, not read at a wrong place."""
    fields = tuple(name for name in OracleResult.model_fields if name != missing)
    assert len(fields) == len(OracleResult.model_fields) - 1
    verdict, counts = tuple(Verdict.model_fields), tuple(Counts.model_fields)
    with pytest.raises(ValueError, match=f'no field "{missing}"'):
        VerdictJson(verdict, fields, counts, 2, lambda v: v)
    with pytest.raises(ValueError, match=f'no field "{missing}"'):
        VerdictMarkup(verdict, fields, counts, list(MARK.items()), lambda v: v, 10, 10)
