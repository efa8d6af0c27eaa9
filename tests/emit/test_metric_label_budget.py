"""Metric labels taken from traces (agent name, provider, model, the graded service's
version) are the senders'. Each distinct value starts new series, kept cumulative for the
life of the process; the SDK folds everything past 2,000 series per instrument into one
``otel.metric.overflow`` point, so a sender naming a new agent per trace pushed every real
agent's and contract's later series into that overflow: ``serve``'s dashboards and alerts
went blind for everyone. A bounded number of distinct values per label is kept; the rest
count under ``_other``, so the contract, check and outcome series stay whole.

The real CLI grades generated traces and writes its telemetry with ``--results-out``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from otel_oracles.emit._metrics import MAX_TRACE_LABEL_VALUES, OTHER_LABEL

REPO = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).with_name("otel-oracles"))
TRACES = MAX_TRACE_LABEL_VALUES * 3


def trace_line(i: int) -> str:
    span = {
        "traceId": f"{i + 1:032x}",
        "spanId": "00000000000000a1",
        "name": f"invoke_agent agent_{i}",
        "kind": 1,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": f"agent_{i}"}},
        ],
    }
    resource = {"attributes": [{"key": "service.version", "value": {"stringValue": f"v{i}"}}]}
    return json.dumps(
        {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    )


def test_trace_label_values_are_bounded(tmp_path: Path) -> None:
    traces = tmp_path / "many-agents.jsonl"
    traces.write_text("\n".join(trace_line(i) for i in range(TRACES)) + "\n")
    results = tmp_path / "results.jsonl"
    contract = REPO / "bench" / "contracts" / "any-agent.yaml"
    done = subprocess.run(
        [CLI, "grade", str(traces), "-c", str(contract), "--results-out", str(results), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    values: dict[str, set[str]] = defaultdict(set)
    graded = 0
    for line in results.read_text().splitlines():
        for rm in json.loads(line).get("resourceMetrics", []):
            for sm in rm["scopeMetrics"]:
                for metric in sm["metrics"]:
                    if metric["name"] != "otel_oracles.grade.traces":
                        continue
                    for point in metric["sum"]["dataPoints"]:
                        graded += int(point["asInt"])
                        for a in point.get("attributes", []):
                            values[a["key"]].add(next(iter(a["value"].values())))
    assert graded == TRACES  # every verdict counted, none lost
    for key in ("gen_ai.agent.name", "otel_oracles.subject.service.version"):
        assert len(values[key]) == MAX_TRACE_LABEL_VALUES + 1, key
        assert OTHER_LABEL in values[key], key
    assert "otel.metric.overflow" not in values
