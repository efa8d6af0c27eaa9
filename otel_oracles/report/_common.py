"""Small helpers the renderers share."""

from __future__ import annotations

from otel_oracles.model.result import OracleResult, Verdict


def contract_label(verdict: Verdict) -> str:
    """``id@version``: results carry the version so a change of promise is visible."""
    return f"{verdict.contract_id}@{verdict.contract_version}"


def agent_label(verdict: Verdict) -> str:
    """The root span / agent name when the subject has one (trace-derived), else ``""``."""
    parts = [p for p in (verdict.agent_name, verdict.root_name) if p]
    return parts[0] if parts else ""


def failing(verdict: Verdict) -> list[OracleResult]:
    """Results that made the verdict fail (or would have, for warn-level missing evidence)."""
    return [r for r in verdict.results if not r.passed]


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace runs and cut, for table cells and message lines."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
