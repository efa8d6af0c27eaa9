"""Offline grading survives a crashing check, a crash outside the checks and a killed
worker: each costs only the verdicts it touches, which are ``error`` (never a pass, never a
missing row), every other trace is graded as usual, and the exit code is not 0.

Everything runs for real: ``otel-oracles grade`` as a subprocess, the plug-ins of
``crash_plugins`` installed on its path, and the worker killed with SIGKILL at the moment
the hold check tells the test (through a FIFO) that it is grading.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import zstandard

from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Verdict
from otel_oracles.pipeline import read_traces
from otel_oracles.session import (
    FROM_START,
    GradeRun,
    GradingSession,
    NotGraded,
    Resume,
    SessionSpec,
    shard_of,
)
from tests.parallel.crash_plugins import (
    CRASH_CONVENTION,
    agent_trace,
    install_plugins,
    read_pid,
    write_export,
)
from tests.parallel.test_worker_lifeline import children, wait_for

CLI = str(Path(sys.executable).with_name("otel-oracles"))
TIMEOUT = 240.0
"""Seconds a grading subprocess may take on a loaded machine."""


def tid(n: int) -> str:
    return f"{n:032x}"


TRACES = 100
"""Traces in the export, in this order: ids 1 to 100."""
HOLD = 81
"""Graded by the hold check (the worker is killed there); owned by worker 1, after 40 of
its traces, so it has delivered a chunk (32) and holds some graded but undelivered."""
EXIT = 91
"""Graded by a contract with a check raising SystemExit; owned by worker 1, after HOLD."""
PARSE = 93
"""Mapping it calls a parser plug-in that raises SystemExit; owned by worker 1, after HOLD."""
NORMAL = [n for n in range(1, TRACES + 1) if n not in (HOLD, EXIT, PARSE)]
"""Plain traces, on both shards."""
FORBIDDEN = {n for n in NORMAL if n % 10 == 2}
"""Plain traces that call the forbidden tool."""
SPANS = 3 * TRACES + len(FORBIDDEN)


class Setup:
    """Plug-ins, contracts, mapping file and export for one test, in ``tmp``."""

    def __init__(self, tmp: Path) -> None:
        assert {shard_of(tid(n), 2) for n in (HOLD, EXIT, PARSE)} == {1}
        assert {shard_of(tid(n), 2) for n in NORMAL} == {0, 1}
        self.env = {**os.environ, **install_plugins(tmp / "site")}
        self.ready = tmp / "ready"
        self.release = tmp / "release"
        os.mkfifo(self.ready)
        os.mkfifo(self.release)
        basic = tmp / "basic.yaml"
        basic.write_text(
            "id: basic\ninvariants:\n  - {type: tool_not_called, tool: delete_records}\n"
        )
        exits = tmp / "exits.yaml"
        exits.write_text(
            "id: exits\nmatch: {resource: {service.name: exit-agent}}\ninvariants:\n"
            "  - {name: exits, type: crash_test_exit}\n"
            "  - {name: no-deletes, type: tool_not_called, tool: delete_records}\n"
        )
        self.hold = tmp / "hold.yaml"
        self.hold.write_text(
            "id: hold\nmatch: {resource: {service.name: hold-agent}}\ninvariants:\n"
            f"  - {{name: holds, type: crash_test_hold, ready: '{self.ready}', "
            f"release: '{self.release}'}}\n"
        )
        self.contracts = [basic, exits]
        self.convention = tmp / "crash.yaml"
        self.convention.write_text(CRASH_CONVENTION)
        traces = []
        for n in range(1, TRACES + 1):
            service = {HOLD: "hold-agent", EXIT: "exit-agent"}.get(n, "normal")
            tools = ["search_docs", "delete_records"] if n in FORBIDDEN else ["search_docs"]
            extra = {"crash.parse": "exit"} if n == PARSE else None
            traces.append(agent_trace(tid(n), service, tools, extra, second=n))
        self.export = write_export(tmp / "export.otlp.json", traces)
        self.junit = tmp / "junit.xml"

    def argv(self, *extra: str, hold: bool = True) -> list[str]:
        contracts = [*self.contracts, self.hold] if hold else self.contracts
        return [
            CLI, "grade", "-q", "--json", "--explain", "full", "--junit", str(self.junit),
            "--conventions", str(self.convention),
            *(arg for c in contracts for arg in ("-c", str(c))), *extra, str(self.export),
        ]  # fmt: skip


def by_key(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(trace id, contract id) -> verdict, asserting there is one of each and that they
    are listed in input order (the order one process lists them, whatever crashed)."""
    keyed = {(v["trace_id"], v["contract_id"]): v for v in report["verdicts"]}
    assert len(keyed) == len(report["verdicts"]), "one verdict per trace and contract"
    ids = [v["trace_id"] for v in report["verdicts"]]
    assert ids == sorted(ids), ids
    return keyed


def only_result(verdict: dict[str, Any]) -> dict[str, Any]:
    (result,) = verdict["results"]
    return result


def assert_graded_as_usual(verdicts: dict[tuple[str, str], dict[str, Any]]) -> None:
    """The traces no crash touched: graded, and the forbidden calls found."""
    for n in NORMAL:
        result = only_result(verdicts[tid(n), "basic"])
        expected = "invariant_failure" if n in FORBIDDEN else "pass"
        assert result["outcome"] == expected, (n, result)
    # A check's SystemExit is that check's error: its sibling check and the other
    # contract on the same trace are graded.
    exits = {r["name"]: r for r in verdicts[tid(EXIT), "exits"]["results"]}
    assert exits["exits"]["outcome"] == "error", exits
    assert exits["exits"]["details"]["error.type"] == "SystemExit", exits
    assert "plug-in called sys.exit" in exits["exits"]["message"], exits
    assert exits["no-deletes"]["outcome"] == "pass", exits
    assert only_result(verdicts[tid(EXIT), "basic"])["outcome"] == "pass"
    # A crash while mapping (outside every check): that trace's verdicts are errors.
    crashed = only_result(verdicts[tid(PARSE), "basic"])
    assert crashed["name"] == "grading_crash", crashed
    assert crashed["outcome"] == "error", crashed
    assert crashed["details"]["error.type"] == "SystemExit", crashed
    assert crashed["message"] == (
        "grading this trace crashed (SystemExit: parser plug-in called sys.exit); not graded"
    )


def junit_errors(path: Path) -> set[tuple[str, str]]:
    """(contract, trace id) of the JUnit test cases that carry an ``<error>``."""
    return {
        (case.get("classname", ""), case.get("name", ""))
        for case in ET.parse(path).iter("testcase")
        if case.find("error") is not None
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFO poll semantics")
def test_a_worker_killed_mid_trace_costs_only_that_trace(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    ready = os.open(setup.ready, os.O_RDONLY | os.O_NONBLOCK)
    proc = subprocess.Popen(
        setup.argv("--workers", "2"),
        env=setup.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        worker = read_pid(ready, TIMEOUT)
        stat = Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[1]) == proc.pid, "the hold check runs in a worker of grade"
        os.kill(worker, signal.SIGKILL)  # mid-trace, as the OOM killer would
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        os.close(ready)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    report = json.loads(out)
    verdicts = by_key(report)
    assert len(verdicts) == TRACES + 2, sorted(verdicts)  # every trace, + exits and hold
    # The trace in hand: an error verdict from every contract selecting it, not graded
    # again (the check would block again), worded as serve words it.
    for contract in ("basic", "hold"):
        died = only_result(verdicts[tid(HOLD), contract])
        assert died["name"] == died["oracle_type"] == "worker_died", died
        assert died["outcome"] == "error", died
        assert died["details"]["error.type"] == "WorkerProcessDied", died
        assert died["message"] == NotGraded.worker_died(-signal.SIGKILL).message
        assert "killed by SIGKILL" in died["message"]
    # The rest of the dead worker's share (EXIT, PARSE, later plain traces) and the other
    # worker's: graded as one process grades them.
    assert_graded_as_usual(verdicts)
    assert any(
        note.startswith("grading worker 1 died (killed by SIGKILL) with 1 trace in hand")
        for note in report["notes"]
    ), report["notes"]
    # Counted once each: the dead worker's delivered counts, then its successor's.
    assert report["notes"][0] == f"{TRACES} trace(s), {SPANS} span(s) read", report["notes"]
    assert junit_errors(setup.junit) == {
        ("basic", tid(HOLD)),
        ("hold", tid(HOLD)),
        ("basic", tid(PARSE)),
        ("exits", tid(EXIT)),
    }, setup.junit.read_text()


def test_sequential_grade_reports_crashes_and_goes_on(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    proc = subprocess.run(
        setup.argv(hold=False), env=setup.env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert proc.returncode == 1, proc.stderr
    verdicts = by_key(json.loads(proc.stdout))
    assert len(verdicts) == TRACES + 1, sorted(verdicts)
    assert only_result(verdicts[tid(HOLD), "basic"])["outcome"] == "pass"
    assert_graded_as_usual(verdicts)
    # The crash is logged with its traceback for whoever debugs the plug-in.
    assert f"grading trace {tid(PARSE)} crashed; reported as error" in proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFO poll semantics")
def test_ctrl_c_during_a_check_stops_the_run(tmp_path: Path) -> None:
    """A real Ctrl-C (SIGINT) while a check runs is the user stopping the run, not that
    check's error: ``grade`` stops as on any Ctrl-C (``aborted``, exit 2), without a
    report."""
    setup = Setup(tmp_path)
    ready = os.open(setup.ready, os.O_RDONLY | os.O_NONBLOCK)
    proc = subprocess.Popen(
        setup.argv(), env=setup.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert read_pid(ready, TIMEOUT) == proc.pid  # no workers: grade itself holds it
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        os.close(ready)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err.strip()) == (2, "aborted")
    assert '"verdicts"' not in out


def test_worker_died_is_worded_by_how_it_ended() -> None:
    """A dead worker's traces (offline and ``serve`` word them with the one ``NotGraded``)
    name the signal that killed the worker, or its exit code; a crash names the exception."""
    for exitcode, how in (
        (-signal.SIGKILL, "killed by SIGKILL"),
        (-signal.SIGSEGV, "killed by SIGSEGV"),
        (3, "exit code 3"),
    ):
        died = NotGraded.worker_died(exitcode)
        assert (died.stage, died.error_type) == ("worker_died", "WorkerProcessDied")
        assert f"({how}) while this trace was in hand" in died.message, died
    crash = NotGraded.crashed(SystemExit("bye"))
    assert tuple(crash) == (
        "grading_crash",
        "grading this trace crashed (SystemExit: bye); not graded",
        "SystemExit",
    )


def test_a_resumed_run_grades_only_what_was_not_delivered() -> None:
    """``GradingSession.run`` with a ``Resume``: what a fresh worker does for a dead one.
    Subjects up to ``after`` are neither graded nor counted again, the lost one gets
    ``worker_died`` verdicts from exactly the contracts that selected it, the rest is graded
    as before, and the counts carried over add up to one uninterrupted run's."""
    repo = Path(__file__).resolve().parent.parent.parent
    contracts = [repo / "examples" / "contracts" / "support-rag.yaml"]
    session = GradingSession.load(SessionSpec(tuple(contracts)))
    paths = [str(repo / "examples" / "traces")]

    def graded(resume: Resume, counts: GradeRun) -> dict[int, list[Verdict]]:
        batches = session.limits.read(paths, counts.problems)
        run = session.run(batches, counts, resume=resume)
        return {order: [v for v, _ in pairs] for order, pairs in run}

    whole_counts = GradeRun()
    whole = graded(FROM_START, whole_counts)
    assert len(whole) >= 3, "the example traces must be selected by the example contract"
    first, lost, *rest = sorted(whole)
    # What the dead worker had delivered when it died: subjects up to ``first``, and the
    # counts it sent with them.
    delivered = GradeRun()
    run = session.run(session.limits.read(paths, delivered.problems), delivered)
    assert next(run).order == first
    run.close()
    done = delivered.subject_part()
    died = NotGraded.worker_died(-signal.SIGKILL)
    resumed = graded(Resume(first, {lost: died}), done)
    assert sorted(resumed) == [lost, *rest]
    for order in rest:
        assert [v.model_dump(exclude={"duration_ns", "results"}) for v in resumed[order]] == [
            v.model_dump(exclude={"duration_ns", "results"}) for v in whole[order]
        ]
    assert [v.contract_id for v in resumed[lost]] == [v.contract_id for v in whole[lost]]
    for verdict in resumed[lost]:
        (result,) = verdict.results
        assert (result.name, result.message) == ("worker_died", died.message)
        assert verdict.verdict == "error"
    assert (done.traces, done.spans) == (whole_counts.traces, whole_counts.spans)


def reading(pid: int, name: str) -> bool:
    """Whether process ``pid`` has the file called ``name`` open (``/proc/<pid>/fd``)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd).endswith(name):
                return True
        except OSError:
            continue
    return False


SHARE_ONE = 40
"""Traces of the export, all owned by worker 1 of 2 (odd ids): more than a delivery chunk
(32), so worker 1 delivers verdicts while it reads the next file."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_share_whose_workers_keep_dying_before_any_progress_stops_the_run(
    tmp_path: Path,
) -> None:
    """A worker killed while still reading (nothing graded or delivered) is replaced once;
    when its replacement dies the same way, the run stops: one line on stderr naming the
    worker and its share, exit 1 (as for a trace whose worker died), and the verdicts the
    other worker had delivered are reported, never dropped with a traceback."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    owned = [tid(2 * k + 1) for k in range(SHARE_ONE)]
    assert {shard_of(t, 2) for t in owned} == {1}
    # One request per line, as the collector's file exporter writes them; then three traces
    # of 10,001 spans (worker 1's too), which release those before them (a trace is released
    # one span after its last with --idle-spans 1, and passed on once 20,000 spans of later
    # traces went by, in case they join a run), so worker 1 grades its traces and delivers a
    # chunk before it reads the blank file.
    padding = [
        {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "padding"}, "spans": [
            {"traceId": tid(1001 + 2 * k), "spanId": f"{i + 1:016x}", "name": "padding",
             "startTimeUnixNano": str(1_900_000_000_000_000_000 + i),
             "endTimeUnixNano": str(1_900_000_000_000_000_001 + i)}
            for i in range(10_001)
        ]}]}]}
        for k in range(3)
    ]  # fmt: skip
    requests = [
        {"resourceSpans": [agent_trace(t, "normal", ["search_docs"], second=k)]}
        for k, t in enumerate(owned)
    ]
    (inputs / "a_traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (inputs / "b_padding.jsonl").write_text("".join(json.dumps(r) + "\n" for r in padding))
    # 1 GiB of blank lines in ~80 KB of zstd, read after the traces: seconds of reading and
    # no subject at all, so both workers are busy there, worker 0 having had nothing to
    # grade and worker 1 having delivered its first chunk, when worker 0 is killed.
    blank = "c_blank.jsonl.zst"
    (inputs / blank).write_bytes(zstandard.ZstdCompressor(level=19).compress(b"\n" * (1 << 30)))
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\ninvariants:\n  - {type: tool_not_called, tool: wipe}\n")
    argv = [CLI, "grade", "-q", "--json", "--workers", "2", "--idle-spans", "1",
            "-c", str(contract), str(inputs)]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen: set[int] = set()

        def both_on_the_blank_file() -> bool:
            seen.update(children(proc.pid))
            live = children(proc.pid)
            return len(live) == 2 and all(reading(pid, blank) for pid in live)

        wait_for(both_on_the_blank_file, TIMEOUT, "two workers reading the blank file")
        first = min(seen)  # worker 0, started first
        os.kill(first, signal.SIGKILL)
        started = set(seen)

        def fresh_on_the_blank_file() -> bool:
            fresh = set(children(proc.pid)) - started
            return len(fresh) == 1 and reading(next(iter(fresh)), blank)

        wait_for(fresh_on_the_blank_file, TIMEOUT, "a fresh worker reading the blank file")
        (fresh,) = set(children(proc.pid)) - started
        os.kill(fresh, signal.SIGKILL)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert lines == [
        f"error: {inputs}: grading worker 0 died (killed by SIGKILL), 2 times in a row before "
        "it graded or delivered anything: its share (1 of 2) of the traces was not graded and "
        "the run stopped"
    ], err
    report = json.loads(out)
    delivered = [v["trace_id"] for v in report["verdicts"]]
    assert len(delivered) >= 32 and delivered == owned[: len(delivered)], delivered
    assert shard_of(tid(1001), 2) == 1
    assert all(v["verdict"] == "pass" for v in report["verdicts"])
    assert not any(n.startswith("grading worker 0 ") for n in report["notes"]), report["notes"]


def test_a_trace_not_graded_keeps_the_contracts_that_select_it_by_mapped_agent_name() -> None:
    """A contract selecting by an agent name that only mapping gives cannot tell whether
    it selects a trace that was never mapped (mapping crashed, or the worker died): it
    reports the trace as an error too rather than let it drop out of the report."""
    repo = Path(__file__).resolve().parent.parent.parent
    capture = repo / "tests" / "testdata" / "traces" / "crewai-openinference"
    path = next(capture.glob("d_forbidden_tool.otlp.json*"))
    (trace,) = [t for t in read_traces([str(path)], []) if len(t.spans) > 1]
    assert all("gen_ai.agent.name" not in s.attributes for s in trace.spans), "the premise"

    def by_agent(contract_id: str, agent: str) -> Contract:
        return parse_contract(
            {
                "id": contract_id,
                "match": {"span": {"gen_ai.agent.name": agent}},
                "invariants": [{"type": "tool_not_called", "tool": "delete_records"}],
            },
            "inline",
        )

    session = GradingSession(
        [by_agent("support", "support_agent"), by_agent("other", "some_other_agent")],
        load_conventions(),
    )
    assert [v.contract_id for v, _ in session.grade(trace)] == ["support"], "mapped, it is"
    died = NotGraded.worker_died(-signal.SIGKILL)
    verdicts = [v for v, _ in session.not_graded(trace, *died)]
    assert [v.contract_id for v in verdicts] == ["support", "other"]
    for verdict in verdicts:
        (result,) = verdict.results
        assert result.name == "worker_died" and verdict.verdict == "error"
        assert result.message == (
            f"{died.message} (this contract selects by an agent name only mapping gives)"
        )
