"""The application's own spans around a run (no convention knows them) are the run's
wrapper, not blind spots; an unknown span that does not hold the whole run stays
unrecognised, so the checks that need every span fail closed on it. Built on a real
raw-client capture (``openinference-openai``: an ``agent_run`` root, two model calls)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from otel_oracles.mapping import RUN_WRAPPER, load_conventions, map_trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

CAPTURE = (
    Path(__file__).resolve().parents[1]
    / "testdata" / "traces" / "openinference-openai" / "a_happy.otlp.jsonl"
)  # fmt: skip


Docs = list[dict[str, Any]]


def _spans(docs: Docs) -> list[dict[str, Any]]:
    return [
        s for d in docs for rs in d["resourceSpans"] for sc in rs["scopeSpans"] for s in sc["spans"]
    ]


def _add(docs: Docs, span: dict[str, Any]) -> None:
    docs[0]["resourceSpans"][0]["scopeSpans"][0]["spans"].append(span)


def _map(docs: Docs, tmp_path: Path) -> Trajectory:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    assert problems == []
    return map_trace(trace, load_conventions())


def _capture() -> Docs:
    return [json.loads(x) for x in CAPTURE.read_text().splitlines() if x.strip()]


def _new_span(like: dict[str, Any], name: str, parent: str) -> dict[str, Any]:
    keep = {k: like[k] for k in ("traceId", "startTimeUnixNano", "endTimeUnixNano")}
    new = {"spanId": os.urandom(8).hex(), "parentSpanId": parent, "name": name, "kind": 1}
    return keep | new


def test_nested_application_spans_around_the_whole_run_are_wrappers(tmp_path: Path) -> None:
    doc = _capture()
    spans = _spans(doc)
    root = next(s for s in spans if not s.get("parentSpanId"))
    outer = _new_span(root, "POST /chat", "")
    root["parentSpanId"] = outer["spanId"]
    _add(doc, outer)
    trajectory = _map(doc, tmp_path)
    assert trajectory.unmapped_spans == {}
    assert trajectory.conventions[RUN_WRAPPER] == 2


def test_an_unknown_span_holding_part_of_the_run_stays_unrecognised(tmp_path: Path) -> None:
    doc = _capture()
    spans = _spans(doc)
    root = next(s for s in spans if not s.get("parentSpanId"))
    first_call = next(s for s in spans if s.get("parentSpanId") == root["spanId"])
    tool = _new_span(first_call, "delete_records", root["spanId"])
    first_call["parentSpanId"] = tool["spanId"]
    _add(doc, tool)
    trajectory = _map(doc, tmp_path)
    assert trajectory.unmapped_spans == {"delete_records": 1}, "beside, not around, the run"
    assert trajectory.conventions[RUN_WRAPPER] == 1, "the app root still holds it all"


def test_a_trace_with_no_recognised_step_has_no_wrapper(tmp_path: Path) -> None:
    doc = _capture()
    spans = _spans(doc)
    root = next(s for s in spans if not s.get("parentSpanId"))
    for d in doc:
        for rs in d["resourceSpans"]:
            for sc in rs["scopeSpans"]:
                sc["spans"] = [x for x in sc["spans"] if x is root]
    trajectory = _map(doc, tmp_path)
    assert trajectory.unmapped_spans == {"agent_run": 1}
    assert RUN_WRAPPER not in trajectory.conventions
