"""The benchmark harness must keep running as the stages change (CI runs its quick mode).

These tests check that the harness works and prints every goal line, never the absolute speed:
CI machines are too noisy for a speed assertion to mean anything.
"""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

REPO = Path(__file__).resolve().parent.parent.parent
BENCH = REPO / "bench"


def _messages(path: Path) -> list[ExportTraceServiceRequest]:
    out = []
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        req = ExportTraceServiceRequest()
        req.ParseFromString(data[pos + 4 : pos + 4 + size])
        out.append(req)
        pos += 4 + size
    return out


def _spans(req: ExportTraceServiceRequest) -> list[object]:
    return [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]


def test_generator_writes_the_same_spans_as_protobuf_and_otlp_json(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            str(BENCH / "gen_traces.py"),
            "--traces",
            "40",
            "--out",
            str(tmp_path),
            "--batch",
            "100",
        ],
        check=True,
        capture_output=True,
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    reqs = _messages(tmp_path / "traces.binpb")
    lines = (tmp_path / "traces.jsonl").read_bytes().splitlines()
    assert len(reqs) == len(lines) == manifest["requests"], "one JSON line per protobuf message"
    pb_ids = [s.span_id.hex() for r in reqs for s in _spans(r)]  # type: ignore[attr-defined]
    js_ids = [
        s["spanId"]
        for line in lines
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    assert pb_ids == js_ids, "both formats must carry the same spans in the same order"
    assert len(pb_ids) == manifest["spans"]
    assert all(len(_spans(r)) == 100 for r in reqs[:-1]), "full batches of --batch spans"
    traces = {s.trace_id for r in reqs for s in _spans(r)}  # type: ignore[attr-defined]
    assert len(traces) == 40
    assert 15 <= manifest["spans"] / 40 <= 25, "about 20 spans per trace"


def test_generator_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    for name in ("a", "b"):
        subprocess.run(
            [
                sys.executable,
                str(BENCH / "gen_traces.py"),
                "--traces",
                "15",
                "--no-jsonl",
                "--out",
                str(tmp_path / name),
            ],
            check=True,
            capture_output=True,
        )
    assert (tmp_path / "a" / "traces.binpb").read_bytes() == (
        tmp_path / "b" / "traces.binpb"
    ).read_bytes()


def test_generated_spans_follow_the_genai_conventions(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            str(BENCH / "gen_traces.py"),
            "--traces",
            "30",
            "--no-jsonl",
            "--out",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    spans = [s for r in _messages(tmp_path / "traces.binpb") for s in _spans(r)]
    ops: dict[str, int] = {}
    for s in spans:
        attrs = {kv.key: kv.value for kv in s.attributes}  # type: ignore[attr-defined]
        op = attrs["gen_ai.operation.name"].string_value
        ops[op] = ops.get(op, 0) + 1
        if op == "chat":
            assert attrs["gen_ai.usage.input_tokens"].int_value > 0
            assert attrs["gen_ai.provider.name"].string_value
        if op == "execute_tool":
            assert 200 <= len(attrs["gen_ai.tool.call.arguments"].string_value) <= 500
            if s.status.code != 2:  # type: ignore[attr-defined]
                assert 700 <= len(attrs["gen_ai.tool.call.result"].string_value) <= 1600
    assert set(ops) == {"invoke_agent", "chat", "execute_tool"}
    roots = [s for s in spans if not s.parent_span_id]  # type: ignore[attr-defined]
    assert len(roots) == 30 and all(s.name.startswith("invoke_agent") for s in roots)  # type: ignore[attr-defined]


def test_quick_mode_prints_every_goal_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run_goals.py"),
            "--quick",
            "--out",
            str(tmp_path),
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for goal in ("G1a", "G1b", "G2", "G3", "G4", "G4b", "G6"):
        assert re.search(rf"^{goal}\s.*\b(PASS|FAIL|SKIP)\b", proc.stdout, re.M), (
            f"goal line {goal} missing from:\n{proc.stdout}"
        )
    assert "baseline proto_walk" in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["manifest"]["spans"] > 0


def test_serve_load_quick_runs_every_phase_with_zero_loss(tmp_path: Path) -> None:
    """bench/serve_load.py against real serve subprocesses (worker processes and threads),
    the baseline receiver and a sink: every figure is produced and nothing is lost, the
    sustained phase's stream included."""
    out = tmp_path / "serve_load.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "serve_load.py"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    for mode in ("throughput", "throughput_threads"):
        assert result[mode]["zero_loss"] is True, result[mode]
        assert result[mode]["traces_graded"] == result["traces"]
    assert result["throughput"]["workers_cpu_s"] > 0, "worker processes did the grading"
    assert result["throughput_threads"]["workers_cpu_s"] == 0
    assert result["baseline_receiver"]["spans_per_cpu_s"] > 0
    assert result["receiving_core_vs_baseline"] > 0
    assert result["latency_at_half_load"]["p99"] is not None
    assert result["memory"]["buffered_spans"] == result["spans"]
    assert "receiving core with grading on" in proc.stderr
    steady = result["sustained"]["rates"][0]  # a slow stream, just past the windows
    assert steady["zero_loss"] is True, steady
    assert steady["traces_graded"] == steady["traces_sent"] > 0
    assert steady["graded_spans_per_s"] > 0 and steady["workers_us_per_span"] > 0
    assert "sustained: highest offered rate held" in proc.stderr


def test_peer_quick_without_the_peer_skips_it_and_measures_the_baselines(tmp_path: Path) -> None:
    """CI has no agentevals venv: the peer comparison says how to install it, never fails,
    and the two decode-and-walk ratios are still measured from jobs that did their work."""
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "peer_agentevals.py"),
            "--quick",
            "--out",
            str(tmp_path),
            "--peer-venv",
            str(tmp_path / "no-such-venv"),
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^I18a\s.*\bSKIP\b.*--install-peer", proc.stdout, re.M), proc.stdout
    for goal in ("I18b", "I18c"):
        assert re.search(
            rf"^{goal}\s.*\d\.\d\d\s+goal >= 1\.00\s+(PASS|FAIL)", proc.stdout, re.M
        ), proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    traces, spans = report["manifest"]["traces"], report["manifest"]["spans"]
    assert set(report["jobs"]) == {"grade_json", "grade_proto", "proto_walk", "json_orjson"}
    assert report["jobs"]["grade_json"]["work"]["traces"] == traces
    assert report["jobs"]["grade_proto"]["work"]["verdicts"] >= traces
    assert report["jobs"]["json_orjson"]["work"]["spans"] == spans
    assert all(job["cpu_s"] > 0 for job in report["jobs"].values())


def test_trace_size_quick_grades_each_size_and_prints_the_linearity_goal(tmp_path: Path) -> None:
    """The same spans as many small and as a few large traces (``--rounds``), every trace of
    each size graded, and the per-span ratio printed against its 1.5x goal."""
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "trace_size.py"),
            "--quick",
            "--out",
            str(tmp_path),
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert re.search(r"^I18d\s.*\d\.\d\d\s+goal <= 1\.50\s+(PASS|FAIL)", proc.stdout, re.M), (
        proc.stdout
    )
    report = json.loads((tmp_path / "r.json").read_text())
    sets, jobs = report["sets"], report["jobs"]
    assert set(jobs) == {"small", "medium", "large"}
    per_trace = {name: sets[name]["spans"] / sets[name]["traces"] for name in sets}
    assert per_trace["small"] < 30 < per_trace["medium"] < per_trace["large"], per_trace
    spans = [sets[name]["spans"] for name in sets]
    assert max(spans) < 1.2 * min(spans), "each size grades about the same number of spans"
    for name, job in jobs.items():
        assert job["work"]["traces"] == sets[name]["traces"], name


def _bench_module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining a class
    spec.loader.exec_module(module)
    return module


def _agentevals_output(statuses: list[str], invocations: int = 1) -> str:
    return json.dumps(
        {
            "traces": [
                {
                    "trace_id": f"{i:032x}",
                    "num_invocations": invocations,
                    "metrics": [{"metric_name": "tool_trajectory_avg_score", "eval_status": s}],
                }
                for i, s in enumerate(statuses)
            ],
            "errors": [],
            "performance_metrics": {"counts": {"total_tool_calls": 7}},
        }
    )


def test_a_peer_run_that_scored_nothing_is_an_error_not_a_fast_result() -> None:
    peer = _bench_module("peer_agentevals")
    scored = peer.agentevals_work(_agentevals_output(["FAILED", "PASSED"]), 2, scored=True)
    assert (scored["scored"], scored["passed"], scored["tool_calls"]) == (2, 1, 7)
    with pytest.raises(peer.WorkMissing, match="scored 1 of 2"):
        peer.agentevals_work(_agentevals_output(["FAILED", "NOT_EVALUATED"]), 2, scored=True)
    with pytest.raises(peer.WorkMissing, match="0 with a trajectory"):
        peer.agentevals_work(_agentevals_output(["NOT_EVALUATED"] * 2, 0), 2, scored=False)
    with pytest.raises(peer.WorkMissing, match="returned 1 results"):
        peer.agentevals_work(_agentevals_output(["NOT_EVALUATED"]), 2, scored=False)
    bare = peer.agentevals_work(_agentevals_output(["NOT_EVALUATED"] * 2), 2, scored=False)
    assert (bare["traces"], bare["scored"], bare["not_evaluated"]) == (2, 0, 2)


def test_a_grade_run_that_missed_traces_is_an_error() -> None:
    peer = _bench_module("peer_agentevals")
    verdict = {"trace_id": "a", "passed": False, "results": [{}, {}]}
    report = {"verdicts": [verdict], "input_errors": []}
    assert peer.grade_work(json.dumps(report), 1)["results"] == 2
    with pytest.raises(peer.WorkMissing, match="graded 1 of 2"):
        peer.grade_work(json.dumps(report), 2)
    with pytest.raises(peer.WorkMissing, match="walked 3 of 4"):
        peer.baseline_work('{"spans": 3}', 4)


def test_a_job_s_peak_rss_is_its_own_not_the_driver_s() -> None:
    """Linux starts a child's ru_maxrss at its parent's RSS; jobs go through spawn.py so a
    grown benchmark driver does not floor every job's peak at its own size."""
    run_goals = _bench_module("run_goals")
    ballast = bytearray(256 * 2**20)
    for i in range(0, len(ballast), 4096):  # touch every page so it is resident
        ballast[i] = 1
    done = run_goals.run_process([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert done.returncode == 3
    assert done.maxrss_kb < 64 * 1024, f"{done.maxrss_kb} KB: the driver's 256 MB leaked in"
    assert done.cpu_s > 0 and done.wall_s > 0
    del ballast


def test_a_job_past_its_time_limit_is_killed_with_its_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_goals = _bench_module("run_goals")
    monkeypatch.setattr(run_goals, "JOB_TIMEOUT_S", 1.0)
    with pytest.raises(RuntimeError, match="killed"):
        run_goals.run_process([sys.executable, "-c", "import time; time.sleep(120)"])


def test_serve_load_passes_share_no_trace_or_session_id(tmp_path: Path) -> None:
    """The sustained phase sends the data set pass after pass: each pass renders every
    request under its own trace ids and session ids (same lengths, nothing else changed), so
    however short a pass is, serve joins none of its runs to the previous pass's."""
    serve_load = _bench_module("serve_load")
    gen = _bench_module("gen_traces")
    data = tmp_path / "data"
    gen.ensure(gen.Params(traces=40), data, jsonl=False)
    passes = serve_load.Passes(serve_load.read_bodies(data / "traces.binpb"))

    def ids(key: tuple[int, int]) -> tuple[list[bytes], list[str]]:
        req = ExportTraceServiceRequest.FromString(passes.render(key))
        spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
        sessions = [kv.value.string_value for s in spans for kv in s.attributes
                    if kv.key == "gen_ai.conversation.id"]  # fmt: skip
        return [s.trace_id for s in spans], sessions

    first_traces, first_sessions = ids((0, 0))
    assert first_sessions, "the data set's spans carry conversation ids"
    for k in (1, 2, 31, 32, 1025):
        traces, sessions = ids((k, 0))
        assert len(passes.render((k, 0))) == len(passes.render((0, 0)))
        assert not set(traces) & set(first_traces)
        assert not set(sessions) & set(first_sessions)
        assert [len(s) for s in sessions] == [len(s) for s in first_sessions]
        # One session maps to one session within a pass (the join still sees the run).
        assert len(set(zip(first_sessions, sessions, strict=True))) == len(set(first_sessions))
        assert len(set(sessions)) == len(set(first_sessions))
    assert ids((3, 0))[1] != ids((5, 0))[1]


def test_serve_load_sustains_a_rate_whose_passes_are_shorter_than_the_windows(
    tmp_path: Path,
) -> None:
    """A pass over 40 traces lasts well under the decision wait and join window at this
    rate: with ids rewritten per pass every trace sent is still graded as its own run."""
    out = tmp_path / "serve_load.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "serve_load.py"), "--traces", "40", "--phases", "sustained",
         "--sustained-rates", "1500", "--sustained-seconds", "11", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (rate,) = json.loads(out.read_text())["sustained"]["rates"]
    assert rate["traces_sent"] > 5 * 40, rate
    assert rate["zero_loss"] is True and rate["traces_graded"] == rate["traces_sent"], rate
