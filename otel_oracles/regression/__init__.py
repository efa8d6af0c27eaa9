"""Regression checking against a previous run: ``grade``/``gate --baseline`` and ``diff``.

A baseline is a previous run's ``--json`` report (``read_report``); both runs are reduced to
one record per (contract, subject) (``RunRecord``) and compared (``compare``) into what
regressed, what changed and which checks flipped, rendered by ``render_text``,
``render_json`` and ``render_markdown``. See docs/regression.md.
"""

from otel_oracles.regression._baseline import read_report
from otel_oracles.regression._compare import (
    CheckFlip,
    Comparison,
    ContractChange,
    Margins,
    PairRecord,
    RunRecord,
    compare,
    subject_key,
)
from otel_oracles.regression._render import (
    REGRESSION_PREFIX,
    render_json,
    render_markdown,
    render_text,
)

__all__ = [
    "REGRESSION_PREFIX",
    "CheckFlip",
    "Comparison",
    "ContractChange",
    "Margins",
    "PairRecord",
    "RunRecord",
    "compare",
    "read_report",
    "render_json",
    "render_markdown",
    "render_text",
    "subject_key",
]
