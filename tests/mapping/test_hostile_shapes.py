"""A trace decides the shape of its span tree: how deep, how wide, whether its parent ids
loop. The mapping passes in the compiled core (``native/python/src/passes.rs``,
``stacked.rs``) walk that tree, and a walk repeated per span costs the square of a shape
a sender picks: a ring of 10,000 parent ids held ``grade`` past five minutes (2,000 took
14 s), 10,000 agent runs beside 10,000 tool spans of one parent 67 s. Each shape here is
graded by the real CLI in a subprocess under a time and an address-space bound and must end
with a verdict, never a crash or a stall."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CLI = str(Path(sys.executable).with_name("otel-oracles"))
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CONTRACT = """\
id: hostile-shapes
version: 1
invariants:
  - {type: tool_not_called, tool: delete_records}
  - {type: max_tool_calls, max: 1000000}
"""
SECONDS = 60
"""Each shape grades in a few seconds here; the old walks took minutes to hours."""
ADDRESS_SPACE = 3 * 1024**3

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1}  # fmt: skip
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "root"}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"}


def _id(i: int) -> str:
    return f"{i + 1:016x}"


def _span(i: int, parent: int | None, name: str, attributes: dict[str, Any],
          start: int, end: int) -> dict[str, Any]:  # fmt: skip
    values = [
        {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
        for k, v in attributes.items()
    ]
    span: dict[str, Any] = {
        "traceId": TRACE_ID,
        "spanId": _id(i),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start * 1000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + end * 1000),
        "attributes": values,
    }
    if parent is not None:
        span["parentSpanId"] = _id(parent)
    return span


def _document(spans: list[dict[str, Any]], scope: str = "agent") -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]},
        "scopeSpans": [{"scope": {"name": scope}, "spans": spans}],
    }]}  # fmt: skip


def parent_ring(n: int) -> dict[str, Any]:
    """An agent span, and ``n - 1`` model calls whose parent ids form one cycle."""
    spans = [_span(0, None, "invoke_agent root", AGENT, 0, 10**9)]
    spans += [_span(i, i % (n - 1) + 1, "chat m", CHAT, i, 10**9 - i) for i in range(1, n)]
    return _document(spans)


def agents_beside_tools(n: int) -> dict[str, Any]:
    """any-agent's shape for an agent called as a tool (the agent's run beside the tool's
    span, under the caller's), ``n`` of each under one parent, no tool holding one run."""
    spans = [_span(0, None, "invoke_agent [root]", AGENT, 0, 10**9)]
    tool = {**TOOL, "gen_ai.tool.args": "{}"}
    spans += [_span(i, 0, "execute_tool search_docs", tool, 1, 10**8) for i in range(1, n + 1)]
    sub = {**AGENT, "gen_ai.agent.name": "sub"}
    spans += [_span(i, 0, "invoke_agent [sub]", sub, 2, 10**7) for i in range(n + 1, 2 * n + 1)]
    return _document(spans, scope="any_agent")


def failed_attempts(n: int) -> dict[str, Any]:
    """One model call holding ``n`` failed calls of the same model, each still open when
    every other one started (so none is a retry of another)."""
    spans = [_span(0, None, "chat m", CHAT, 0, 10**9)]
    for i in range(1, n + 1):
        failed = _span(i, 0, "chat m", CHAT, i, 10**8)
        failed["status"] = {"code": 2, "message": "overloaded"}
        spans.append(failed)
    return _document(spans)


def nested_agents(n: int) -> dict[str, Any]:
    """smolagents' managed agents (an agent nested in an agent is a handoff), ``n`` deep."""
    spans = [
        _span(
            i,
            i - 1 if i else None,
            "Agent.run",
            {"openinference.span.kind": "AGENT", "smolagents.agent.name": f"a{i}"},
            i,
            10**9 - i,
        )
        for i in range(n)
    ]
    return _document(spans, scope="openinference.instrumentation.smolagents")


def sibling_tools(n: int) -> dict[str, Any]:
    """``n`` calls of the same tool under one agent, with call ids of 100 KB."""
    spans = [_span(0, None, "invoke_agent root", AGENT, 0, 10**9)]
    spans += [
        _span(
            i,
            0,
            "execute_tool search_docs",
            {**TOOL, "gen_ai.tool.call.id": f"{i}" + "i" * (100_000 if i <= 20 else 8)},
            i,
            i + 1,
        )
        for i in range(1, n + 1)
    ]
    return _document(spans)


def model_calls_down_a_chain(n: int) -> dict[str, Any]:
    """``n`` spans no rule recognises, each the parent of the next, and a model call under
    each of the lower half: finding each call's nearest step walked the chain to its top
    (168 s for 20,000 in ``merge_stacked_generations``)."""
    app = {"app.step": "x"}
    spans = [_span(i, i - 1 if i else None, "app step", app, i, 10**9 - i) for i in range(n)]
    spans += [_span(n + i, i, "chat m", CHAT, n + i, n + i + 1) for i in range(n // 2, n)]
    return _document(spans)


def one_session_in_many_traces(n: int) -> list[dict[str, Any]]:
    """``n`` traces of one model call each, all of one ``session.id``: the join window
    re-owned every key of the growing run per trace (209 s for 20,000)."""
    documents = []
    for i in range(n):
        span = _span(i, None, "chat m", {**CHAT, "session.id": "s"}, i, i + 1)
        span["traceId"] = TRACE_ID if i == 0 else f"{i + 1:032x}"
        documents.append(_document([span]))
    return documents


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        (parent_ring, 10_000),
        (agents_beside_tools, 15_000),
        (failed_attempts, 20_000),
        (nested_agents, 20_000),
        (sibling_tools, 100_000),
        (model_calls_down_a_chain, 20_000),
        (one_session_in_many_traces, 20_000),
    ],
)
def test_a_hostile_shape_is_graded_in_bounded_time_and_memory(
    shape: Callable[[int], dict[str, Any] | list[dict[str, Any]]], size: int, tmp_path: Path
) -> None:
    made = shape(size)
    trace = tmp_path / f"{shape.__name__}.otlp.jsonl"
    documents = made if isinstance(made, list) else [made]
    trace.write_text("".join(json.dumps(d) + "\n" for d in documents))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    started = time.monotonic()
    try:
        result = subprocess.run(
            [CLI, "grade", str(trace), "-c", str(contract), "--quiet", "--json"],
            capture_output=True,
            text=True,
            timeout=SECONDS,
            check=False,
            preexec_fn=_limits,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{shape.__name__}({size}): no verdict within {SECONDS} s")
    took = time.monotonic() - started
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-3000:])
    (verdict,) = json.loads(result.stdout)["verdicts"]
    assert verdict["trace_id"] == TRACE_ID and verdict["results"], verdict
    assert took < SECONDS
