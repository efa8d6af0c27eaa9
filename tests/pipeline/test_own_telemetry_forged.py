"""A sender cannot hide a span by dressing it as the grader's own telemetry (DESIGN.md §8:
traces are untrusted). The grader's scope name and ``service.name`` are strings any SDK can
write; only a record that is also shaped as a grade span or evaluation record is left out.

Real components: the run is produced by the OpenTelemetry Python SDK and encoded by its OTLP
encoder into a ``.pb`` file, which the real ``otel-oracles grade`` command grades against
``examples/contracts/support-rag.yaml``. The grader's own output for that run (written by
``--results-out``) graded beside it changes nothing: it is still recognised and skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.server.agent_traces import FORGERIES, send_forged_run

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]


def _grade(*args: str, cwd: Path) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [*CLI, "grade", *args, "-c", str(CONTRACT), "--json"],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # every run here calls delete_records
    return json.loads(done.stdout), done.stderr


def _outcome(report: dict[str, Any], check: str) -> str:
    (verdict,) = report["verdicts"]
    (result,) = [r for r in verdict["results"] if r["name"] == check]
    return str(result["outcome"])


def _results(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each result as compared: name, outcome, message, details (not its duration)."""
    (verdict,) = report["verdicts"]
    return [(r["name"], r["outcome"], r["message"], r["details"]) for r in verdict["results"]]


@pytest.mark.parametrize("forge", FORGERIES)
def test_a_tool_span_dressed_as_the_graders_own_is_graded(forge: str, tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    send_forged_run(exporter, forge)
    run = tmp_path / "run.pb"
    run.write_bytes(encode_spans(exporter.get_finished_spans()).SerializeToString())
    report, stderr = _grade(str(run), "--results-out", "results.jsonl", cwd=tmp_path)
    assert _outcome(report, "no-destructive-tools") == "invariant_failure", stderr
    # The root and both tool spans: nothing skipped.
    assert report["notes"] == ["1 trace(s), 3 span(s) read"], stderr

    # The grade span and evaluation records the grader emitted for the run, read back with
    # it, are recognised and left out: the same verdict, the same spans read.
    again, stderr_again = _grade(str(run), "results.jsonl", cwd=tmp_path)
    assert _results(again) == _results(report)
    assert again["notes"] == report["notes"], stderr_again
