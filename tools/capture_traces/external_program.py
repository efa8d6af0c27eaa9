"""One variant of a scenario run by an agent program outside Python (a Go binary, a JVM).

The Go and Java capture drivers (``fw_adk_go``, ``fw_genkit_go``, ``fw_adk_java``,
``fw_spring_ai``) each build their program once, into a cache folder outside the repository
keyed by the hash of its sources (``CACHE``, ``content_key``), and then, per variant, do the
same things: serve the scripted model and the OTLP sink on 127.0.0.1, hand the program a spec
JSON, run it in its own process and read back its report (the final answer and the tools that
really ran). That sequence lives here once (``run_program``, ``check_answer``), so that every
such source fails its capture in the same cases: the program failing or writing no report, the
model asked more or fewer times than the script has turns (a resent request takes a turn from
the script), no model-call span in the OTLP/JSON, or a final answer that is not the script's.
What differs per framework stays in its driver: the fake model API, the spec's extra keys, the
command line and environment, and how the sent bodies become the OTLP/JSON file.

A killed run (``Scenario.killed_at``, ``z_killed_*``) is run here too: the spec says
``killed`` and names a ``journal`` file the program appends each tool to as it runs, the
program exports each span as it ends, and the scripted model server SIGKILLs the program
(``ScriptedServer.victim``, its pid) in the model call the scenario names
(``killed_run``). Node drivers use this helper as well (``fw_openai_js``).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from fake_openai import call_order
from fw_mastra import check_model_spans
from otlp_sink import OtlpGrpcSink, OtlpSink
from scenarios import Scenario
from scripted_server import ScriptedServer

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "otel-oracles"
"""Where programs are built: outside the repository, so no build output lands in the work tree."""


def content_key(project: Path, files: Iterable[Path]) -> str:
    """16 hex digits of the hash of ``files`` (each one's path inside ``project`` and bytes),
    naming a build folder: a program is rebuilt exactly when a file its build reads changed."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class Where(NamedTuple):
    """What a program is told to use during one run: the fake model's base URL, the OTLP sink's
    endpoint, the spec file it reads and the file it writes its report to (for programs that
    report in a file rather than on their last stdout line)."""

    base_url: str
    otlp: str
    spec: Path
    report: Path


class Program(NamedTuple):
    """How to run the program for one variant: the spec keys beyond the ones every program
    reads (``system``, ``prompt``, ``agent``, ``handoff``), its command line, and its
    environment (``None``: this process's)."""

    spec: dict[str, Any]
    command: list[str]
    env: dict[str, str] | None = None


@dataclass
class Run:
    """What one finished run left: the program's report, the bodies its exporters sent, and
    how many requests the fake model answered."""

    report: dict[str, Any]
    received: OtlpSink | OtlpGrpcSink
    model_calls: int


FakeServer = Callable[..., AbstractContextManager[str]]
"""A scripted model server class (``FakeOpenAI``, ``FakeGemini``): ``(scripted, turn_of=...)``
entered as its base URL."""


def agent_name(scenario: Scenario) -> str:
    """The agent the scenario runs: its coding agent or the support agent."""
    return "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"


def run_program(
    scenario: Scenario,
    scripted: Scenario,
    variant: str,
    out: Path,
    server: FakeServer,
    launch: Callable[[Where], Program],
    name: str,
    report_file: bool = False,
    sink: Callable[[], OtlpSink | OtlpGrpcSink] = OtlpSink,
) -> Run:
    """Run the program ``launch`` describes on one variant while ``server`` answers
    ``scripted`` in call order and an ``otlp_sink.py`` receives what its exporters send.

    The program's report is the JSON object on its last stdout line, or with ``report_file``
    the file ``Where.report`` (a JVM app that writes it only after its tracer provider shut
    down, so a report means the export is complete). The spec file and the report file are
    removed after the run. Fails the capture when the program exits non-zero or writes no
    report, or when the model was asked more or fewer times than ``scripted`` has turns.
    ``sink``: the receiver its exporters send to, ``OtlpGrpcSink`` for a program whose
    exporter speaks OTLP over gRPC only (``Where.otlp`` is then ``127.0.0.1:<port>``)."""
    spec_path = out.resolve() / f".{variant}.spec.json"
    report_path = out.resolve() / f".{variant}.report.json"
    report_path.unlink(missing_ok=True)
    served: list[int] = []
    in_order = call_order()

    def turn_of(request: dict[str, Any]) -> int:
        served.append(turn := in_order(request))
        return turn

    received = sink()
    failures_before = ScriptedServer.failures_served
    killed = scenario.killed_at is not None
    journal = out.resolve() / f".{variant}.executed.tmp"
    with server(scripted, turn_of=turn_of) as base_url, received as endpoint:
        program = launch(Where(base_url, endpoint, spec_path, report_path))
        spec = {
            "system": scenario.system, "prompt": scenario.prompt, "agent": agent_name(scenario),
            "handoff": scenario.agents_only, **program.spec,
        }  # fmt: skip
        if killed:  # z_killed_*: export each span as it ends, journal each tool as it runs
            journal.write_text("")
            spec |= {"killed": True, "journal": str(journal)}
        spec_path.write_text(json.dumps(spec))
        try:
            with subprocess.Popen(
                program.command, env=program.env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            ) as child:  # fmt: skip
                ScriptedServer.victim = child.pid if killed else None
                try:
                    stdout, stderr = child.communicate(timeout=300)
                except subprocess.TimeoutExpired:
                    child.kill()
                    raise
            proc = subprocess.CompletedProcess(program.command, child.returncode, stdout, stderr)
        finally:
            ScriptedServer.victim = None
            spec_path.unlink()
    if killed:
        return killed_run(proc, journal, received, len(served), scenario, variant, name)
    if proc.returncode != 0 or (report_file and not report_path.is_file()):
        output = f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        sys.exit(f"{variant}: {name} failed ({proc.returncode}):\n{output}")
    if report_file:
        report = json.loads(report_path.read_text())
        report_path.unlink()
    else:
        report = json.loads(proc.stdout.strip().splitlines()[-1])
    if len(served) != len(scripted.turns):
        sys.exit(f"{variant}: the model was asked {len(served)} times, not {len(scripted.turns)}")
    failed = ScriptedServer.failures_served - failures_before
    if scripted.model_retry and failed != scripted.model_transient_failures:
        # ``u_model_retry``: a run that recovered from a failure never served is ``a_happy``'s.
        sys.exit(f"{variant}: the model API answered HTTP 503 {failed} time(s), not "
                 f"{scripted.model_transient_failures}")  # fmt: skip
    return Run(report, received, len(served))


def killed_run(
    proc: subprocess.CompletedProcess[str],
    journal: Path,
    received: OtlpSink | OtlpGrpcSink,
    served: int,
    scenario: Scenario,
    variant: str,
    name: str,
) -> Run:
    """A ``z_killed_*`` run (``Scenario.killed_at``): the scripted model server SIGKILLed the
    program in the model call it names (``ScriptedServer.victim``), so there is no report;
    the tools it executed are the ones it journalled as they ran. Fails the capture unless
    the program died of SIGKILL in the model call the script names."""
    executed = journal.read_text().split()
    journal.unlink()
    if proc.returncode != -signal.SIGKILL:
        output = f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        sys.exit(f"{variant}: {name} was not killed (exit {proc.returncode}):\n{output}")
    if served != (scenario.killed_at or 0) + 1:
        sys.exit(f"{variant}: killed in model call {served}, not {(scenario.killed_at or 0) + 1}")
    return Run({"text": None, "executed": executed}, received, served)


def check_answer(run: Run, scenario: Scenario, variant: str, out: Path) -> list[str]:
    """The tools the run really executed, once its OTLP/JSON (``<variant>.otlp.json``, written
    by the driver) holds a model-call span and its final answer is the script's; fails the
    capture otherwise."""
    check_model_spans(out / f"{variant}.otlp.json", variant)
    if scenario.killed_at is not None:  # no answer: the run died (``killed_run``)
        executed: list[str] = run.report["executed"]
        return executed
    if run.report["text"] != scenario.turns[-1]:
        sys.exit(f"{variant}: final answer {run.report['text']!r} is not the script's")
    answered: list[str] = run.report["executed"]
    return answered
