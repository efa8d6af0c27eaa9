"""Reading a previous run's ``--json`` report back into the report model.

The file is what ``render_json`` wrote: ``RunReport.model_dump`` plus three derived values
(``passed``, ``exit_code`` and each verdict's ``verdict``). Those are dropped and the rest is
validated by ``RunReport`` itself, so a baseline is read with the same schema that wrote it
and a wrong file is told apart from a report in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.errors import InputError
from otel_oracles.model.result import RunReport

DERIVED_REPORT_KEYS = ("passed", "exit_code")
"""Top-level values ``report_data`` adds to the model dump; recomputed, never trusted."""

DERIVED_VERDICT_KEYS = ("verdict",)

WHAT_IS_EXPECTED = "expected the --json report of 'otel-oracles grade', 'gate' or 'run'"


def read_report(path: Path) -> RunReport:
    """The ``RunReport`` in ``path``; ``InputError`` naming the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read report: {exc.strerror}", str(path)) from None
    except UnicodeDecodeError:
        raise InputError(f"not UTF-8 text: {WHAT_IS_EXPECTED}", str(path)) from None
    try:
        data: Any = load_json_document(text)
    except JsonDocumentError as exc:
        raise InputError(
            f"not JSON ({exc.problem}{exc.where}): {WHAT_IS_EXPECTED}", str(path)
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        raise InputError(f"no 'verdicts' list: {WHAT_IS_EXPECTED}", str(path))
    return _validate(_without_derived(data), path)


def _without_derived(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k not in DERIVED_REPORT_KEYS}
    out["verdicts"] = [
        {k: v for k, v in item.items() if k not in DERIVED_VERDICT_KEYS}
        if isinstance(item, dict)
        else item
        for item in data["verdicts"]
    ]
    return out


def _validate(data: dict[str, Any], path: Path) -> RunReport:
    try:
        return RunReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputError(f"{where}: {first['msg']}{more}: {WHAT_IS_EXPECTED}", str(path)) from None
