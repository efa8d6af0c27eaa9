"""Real captures of multi-agent runs cut into two traces, the way a framework without context
propagation exports them, and sent to ``serve`` through the OTel SDK's own OTLP exporter.

Two cuts of the two ``g_handoff`` captures (tests/testdata/traces; see their EXPECTED.md):
pydantic-ai's research sub-agent moved to a trace whose root links to the delegating tool
call (joined by the span link), and agno's (OpenInference) research sub-agent moved to a
trace of its own with no link (joined by the ``session.id`` both agent spans carry).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"
NEW_TRACE = "5" * 32
HANDOFF = "g_handoff.otlp.json"

CUTS: dict[str, tuple[Path, str, str | None]] = {
    # capture, the sub-agent span moved to a trace of its own, the span its root links to
    "link": (TRACES / "pydantic-ai" / HANDOFF, "68de3ca6badaa895", "df0cc05a33451614"),
    "session": (TRACES / "agno-openinference" / HANDOFF, "598707064719e2ad", None),
}

SEARCH_FORBIDDEN = """\
id: no-search
version: 1
name: The triage agent answers without searching
description: fails on the sub-agent's search_docs call, so a run graded in halves differs
invariants:
  - {type: tool_not_called, tool: search_docs}
"""


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [sp for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def split_capture(cut: str, directory: Path) -> tuple[Path, str, str]:
    """The capture of ``cut`` with its sub-agent's subtree in a new trace, written to
    ``directory``; (file, the original trace id, the new one)."""
    source, sub_agent, link_to = CUTS[cut]
    doc = json.loads(source.read_text())
    spans = _spans(doc)
    moved = {sub_agent}
    while more := {s["spanId"] for s in spans if s.get("parentSpanId") in moved} - moved:
        moved |= more
    original = spans[0]["traceId"]
    for span in spans:
        if span["spanId"] in moved:
            span["traceId"] = NEW_TRACE
        if span["spanId"] == sub_agent:
            del span["parentSpanId"]
            if link_to is not None:
                span["links"] = [{"traceId": original, "spanId": link_to}]
    path = directory / f"{cut}-split.otlp.json"
    path.write_text(json.dumps(doc))
    return path, original, NEW_TRACE


def _value(any_value: dict[str, Any]) -> Any:
    if "stringValue" in any_value:
        return any_value["stringValue"]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    if "doubleValue" in any_value:
        return float(any_value["doubleValue"])
    if "boolValue" in any_value:
        return bool(any_value["boolValue"])
    if "arrayValue" in any_value:
        return [_value(v) for v in any_value["arrayValue"].get("values", [])]
    raise AssertionError(f"no SDK attribute type for {any_value}")


def _attrs(kvs: list[dict[str, Any]]) -> dict[str, Any]:
    return {kv["key"]: _value(kv["value"]) for kv in kvs}


def _context(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=False,
                       trace_flags=TraceFlags(TraceFlags.SAMPLED))  # fmt: skip


def readable_spans(path: Path) -> dict[str, list[ReadableSpan]]:
    """The OTLP/JSON file's spans as the SDK hands them to an exporter, by trace id."""
    doc = json.loads(path.read_text())
    out: dict[str, list[ReadableSpan]] = defaultdict(list)
    for rs in doc["resourceSpans"]:
        resource = Resource(_attrs(rs.get("resource", {}).get("attributes", [])))
        for ss in rs["scopeSpans"]:
            scope = InstrumentationScope(ss.get("scope", {}).get("name", ""),
                                         ss.get("scope", {}).get("version") or None)  # fmt: skip
            for sp in ss["spans"]:
                parent = sp.get("parentSpanId")
                status = sp.get("status", {})
                out[sp["traceId"]].append(
                    ReadableSpan(
                        name=sp["name"],
                        context=_context(sp["traceId"], sp["spanId"]),
                        parent=_context(sp["traceId"], parent) if parent else None,
                        resource=resource,
                        attributes=_attrs(sp.get("attributes", [])),
                        events=[
                            Event(
                                e["name"], _attrs(e.get("attributes", [])), int(e["timeUnixNano"])
                            )
                            for e in sp.get("events", [])
                        ],
                        links=[
                            Link(
                                _context(ln["traceId"], ln["spanId"]),
                                _attrs(ln.get("attributes", [])),
                            )
                            for ln in sp.get("links", [])
                        ],
                        kind=SpanKind(max(int(sp.get("kind", 1)), 1) - 1),
                        instrumentation_scope=scope,
                        status=Status(
                            StatusCode(int(status.get("code", 0))), status.get("message") or None
                        ),
                        start_time=int(sp["startTimeUnixNano"]),
                        end_time=int(sp["endTimeUnixNano"]),
                    )
                )
    return dict(out)


def export_each_trace(exporter: SpanExporter, spans: dict[str, list[ReadableSpan]],
                      order: Sequence[str]) -> None:  # fmt: skip
    """One ``export`` call per trace, in ``order``, each acknowledged."""
    for trace_id in order:
        assert exporter.export(spans[trace_id]) is SpanExportResult.SUCCESS, trace_id


def offline_verdicts(path: Path, contracts: Path) -> list[tuple[Any, ...]]:
    """What ``otel-oracles grade --json`` says of the file: ``verdict_key`` of each verdict."""
    proc = subprocess.run(
        [sys.executable, "-c", "from otel_oracles.cli import main; main()", "grade", str(path),
         "-c", str(contracts), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(verdict_key(v) for v in json.loads(proc.stdout)["verdicts"])


def verdict_key(verdict: dict[str, Any]) -> tuple[Any, ...]:
    """What must agree between offline and ``serve``: subject, contract, verdict, counts and
    each check's outcome."""
    results = sorted((r["name"], r["outcome"]) for r in verdict["results"])
    counts = tuple(sorted(verdict["counts"].items()))
    return verdict["subject"], verdict["contract_id"], verdict["passed"], counts, tuple(results)
