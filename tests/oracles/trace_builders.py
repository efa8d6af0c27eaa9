"""Hand-built trajectories for unit tests of the trace oracles: steps spaced 10 ms apart,
each with a fake span id, so tests can assert which spans a result points at."""

from __future__ import annotations

from typing import Any

from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.result import OracleResult, Verdict
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory

MS = 1_000_000


def tool(
    name: str,
    args: dict[str, Any] | None = None,
    result: Any = None,
    *,
    status: str = "unset",
    agent: str | None = "support",
    kind: StepKind = StepKind.TOOL_CALL,
    synthesized: bool = False,
    **kw: Any,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "tool": name,
        "arguments": args,
        "result": result,
        "status": status,
        "agent_name": agent,
        "synthesized": synthesized,
        **kw,
    }


def gen(
    text: str | None = None,
    *,
    finish: list[str] | None = None,
    tokens: tuple[int | None, int | None] = (10, 5),
    tool_calls: list[str] = (),  # type: ignore[assignment]
    **kw: Any,
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"type": "text", "content": text})
    parts.extend({"type": "tool_call", "name": n} for n in tool_calls)
    out = [{"role": "assistant", "parts": parts}] if parts else None
    return {
        "kind": StepKind.GENERATION,
        "output_messages": kw.pop("output_messages", out),
        "finish_reasons": finish
        if finish is not None
        else (["tool_calls"] if tool_calls else ["stop"]),
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "model": "m",
        **kw,
    }


def traj(*steps: dict[str, Any], timed: bool = True, **kw: Any) -> Trajectory:
    built = []
    for i, s in enumerate(steps):
        data = dict(s)
        if timed:
            data.setdefault("start_ns", i * 10 * MS)
            data.setdefault("end_ns", i * 10 * MS + 5 * MS)
        built.append(Step(index=i, source=SpanRef(trace_id="t1", span_id=f"s{i}"), **data))
    return Trajectory(steps=built, trace_id="t1", **kw)


def contract(**layers: Any) -> Any:
    return parse_contract({"id": "c", **layers}, "<test>")


def check(spec: dict[str, Any], trajectory: Trajectory, layer: str = "invariants") -> OracleResult:
    verdict = grade(contract(**{layer: [spec]}), trajectory)
    assert len(verdict.results) == 1
    return verdict.results[0]


def by_type(verdict: Verdict) -> dict[str, OracleResult]:
    return {r.name: r for r in verdict.results}
