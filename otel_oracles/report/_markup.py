"""The core's writer of a verdict's JUnit testcase and HTML row and section (``MARKUP``),
one for both reports: a run writing both has each verdict read once for them
(``VerdictReports``), so they share one writer, built with the page's markers and limits
(which a testcase does not use)."""

from __future__ import annotations

import json

from otel_oracles._native import VerdictMarkup
from otel_oracles.model.result import Counts, OracleResult, Verdict

DETAILS_LIMIT = 4000
"""Characters of each result's details JSON shown (stderr of a test run can be long)."""

MARK = {
    "pass": "✓",
    "tolerated": "◐",
    "invariant_failure": "✗",
    "budget_exhausted": "✗",
    "missing_evidence": "?",
    "error": "!",
}
"""A marker per outcome besides its colour (readable in print and for colour-blind eyes)."""

DETAIL_VALUE_LIMIT = 600
"""Characters of one details value shown inline; the rest is cut with an ellipsis."""

_DETAIL_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""``json.dumps(value, ensure_ascii=False, default=str)`` without building an encoder per
value (``dumps`` builds one whenever it is given options)."""

MARKUP = VerdictMarkup(
    tuple(Verdict.model_fields),
    tuple(OracleResult.model_fields),
    tuple(Counts.model_fields),
    list(MARK.items()),
    _DETAIL_JSON,
    DETAIL_VALUE_LIMIT,
    DETAILS_LIMIT,
)
"""Writes each verdict's testcase and page row and section in the core
(``native/python/src/report_markup.rs``), straight from its models' field values. The
testcase: ElementTree's escaping and ``ET.indent``'s layout, each text as
``terminal_safe`` shows it and XML's non-characters escaped too. The page: every text
escaped as ``_html.escape`` escapes it, each details value as ``_DETAIL_JSON`` writes it
(plain data by the core itself), cut at ``DETAIL_VALUE_LIMIT`` characters and the list at
``DETAILS_LIMIT``; failing verdicts, and passing ones that used a budget or lack evidence,
start expanded (the verdicts a reader has to look at)."""
