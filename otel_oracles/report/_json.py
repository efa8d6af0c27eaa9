"""Machine output: the report's own models dumped as JSON, so the schema follows the code."""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.model.result import RunReport


def report_data(report: RunReport, exit_code: int | None = None) -> dict[str, Any]:
    """``model_dump(mode="json")`` of the report, plus the derived values a consumer should
    not have to recompute: ``passed``, ``exit_code`` and each verdict's ``verdict``.

    ``exit_code`` overrides ``report.exit_code()`` when the command decides it otherwise
    (``gate`` with manifest expectations)."""
    data = report.model_dump(mode="json")
    data["passed"] = report.passed
    data["exit_code"] = report.exit_code() if exit_code is None else exit_code
    for dumped, verdict in zip(data["verdicts"], report.verdicts, strict=True):
        dumped["verdict"] = verdict.verdict
    return data


def render_json(report: RunReport, exit_code: int | None = None) -> str:
    return json.dumps(report_data(report, exit_code), indent=2, ensure_ascii=False) + "\n"
