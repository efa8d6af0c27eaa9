"""What a verdict looks like in a pytest failure: every check with its outcome and message,
and under each failing check the steps it points at (index, kind, tool, span id).

Test output lands in CI logs, so it goes through the same privacy boundary as the reports
(``shown_message``): by default messages are the outcome templates and tool names are shown
only when identifier-shaped; ``explain="full"`` (``--oo-explain full``) shows the checks' own
messages, which may quote trace content.
"""

from __future__ import annotations

from otel_oracles.emit import REDACTED, ExplainMode, safe_identifier, shown_message
from otel_oracles.model.result import OracleResult, Outcome, Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.report import terminal_safe

MAX_STEPS_SHOWN = 10
"""Steps listed under one failing check; a loop of hundreds of calls would drown the rest."""

_OUTCOME_WIDTH = max(len(o.value) for o in Outcome)


def describe_verdict(verdict: Verdict, trajectory: Trajectory | None, explain: ExplainMode) -> str:
    """The verdict as lines of text: a headline with the four numbers, then one line per
    check (``ok``/``x``, outcome, name, message) and the offending steps of failing ones."""
    c = verdict.counts
    lines = [
        f"{verdict.contract_id}@{verdict.contract_version} on {verdict.subject}: "
        f"{verdict.verdict.upper()} (invariant failures {c.invariant_failures}, tolerated "
        f"failures {c.tolerated_failures}, budget exhausted {c.budget_exhausted}, missing "
        f"evidence {c.missing_evidence})"
    ]
    for result in verdict.results:
        mark = "ok" if result.passed else "x "
        message = " ".join(shown_message(result, explain).split())
        lines.append(f"  {mark} {result.outcome.value:<{_OUTCOME_WIDTH}}  {result.name}: {message}")
        if not result.passed:
            lines.extend(f"       {line}" for line in offending_steps(result, trajectory, explain))
    # Shown on a terminal and in CI logs: a trace's control characters as escapes.
    return "\n".join(terminal_safe(line) for line in lines)


def offending_steps(
    result: OracleResult, trajectory: Trajectory | None, explain: ExplainMode
) -> list[str]:
    """One line per step the result names (``step 4: tool_call delete_records, span
    1f2e...``), then the spans it names that are no step of the trajectory."""
    steps = trajectory.steps if trajectory is not None else []
    lines: list[str] = []
    shown_spans: set[str] = set()
    for index in result.step_indexes[:MAX_STEPS_SHOWN]:
        if not 0 <= index < len(steps):
            lines.append(f"step {index}")
            continue
        step = steps[index]
        parts = [step.kind.value]
        if step.tool is not None:
            parts.append(step.tool if explain == "full" else safe_identifier(step.tool) or REDACTED)
        where = ""
        if step.source is not None:
            shown_spans.add(step.source.span_id)
            where = f", span {step.source.span_id}"
        lines.append(f"step {index}: {' '.join(parts)}{where}")
    if len(result.step_indexes) > MAX_STEPS_SHOWN:
        lines.append(f"... and {len(result.step_indexes) - MAX_STEPS_SHOWN} more step(s)")
    spans = [s for s in result.span_ids if s not in shown_spans]
    if spans:
        more = len(spans) - MAX_STEPS_SHOWN
        listed = ", ".join(spans[:MAX_STEPS_SHOWN]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"span(s) {listed}")
    return lines
