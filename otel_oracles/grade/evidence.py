"""Evidence: what an oracle needs captured before it may judge.

Each name maps to a probe that returns ``None`` when the trajectory has the evidence, or a
message naming what is missing and where. Absence is reasoned about, not assumed: a field
that is ``None`` or was redacted is missing, and a field nobody could have captured (no
step of that kind) is missing too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from otel_oracles.model.step import StepKind, Trajectory

Probe = Callable[[Trajectory], str | None]


def _tool_field(field: str, label: str) -> Probe:
    def probe(t: Trajectory) -> str | None:
        gaps = [s for s in t.tool_calls() if getattr(s, field) is None or field in s.redacted]
        if gaps:
            where = ", ".join(_where(s) for s in gaps[:5])
            return f"{label} not captured for {len(gaps)} tool call(s): {where}"
        return None

    return probe


def _generation_field(field: str, label: str) -> Probe:
    def probe(t: Trajectory) -> str | None:
        gens = t.generations()
        if not gens:
            return f"{label}: the trace has no model-call spans"
        gaps = [s for s in gens if getattr(s, field) is None or field in s.redacted]
        if gaps:
            where = ", ".join(_where(s) for s in gaps[:5])
            return f"{label} not captured for {len(gaps)} model call(s): {where}"
        return None

    return probe


def _where(step: object) -> str:
    source = getattr(step, "source", None)
    index = getattr(step, "index", "?")
    name = getattr(step, "tool", None) or getattr(step, "model", None) or getattr(step, "kind", "")
    return f"step {index} ({name}, span {source.span_id})" if source else f"step {index} ({name})"


def _steps_present(t: Trajectory) -> str | None:
    return None if t.steps else "the trajectory has no steps"


PROBES: dict[str, Probe] = {
    "steps": _steps_present,
    "tool_arguments": _tool_field("arguments", "tool arguments"),
    "tool_results": _tool_field("result", "tool results"),
    "input_messages": _generation_field("input_messages", "input messages"),
    "output_messages": _generation_field("output_messages", "output messages"),
}

KNOWN_KINDS = frozenset(StepKind)


def find_gaps(required: Iterable[str], trajectory: Trajectory) -> list[str]:
    """Messages for every required evidence name the trajectory lacks (unknown names are a
    programming error in the oracle, so they raise)."""
    gaps = []
    for name in sorted(set(required)):
        message = PROBES[name](trajectory)
        if message:
            gaps.append(message)
    return gaps
