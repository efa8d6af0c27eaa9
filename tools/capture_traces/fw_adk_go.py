"""Google ADK for Go: one scenario through the ``adk_go/`` program against the scripted fake
Gemini server, for the ``adk-go`` source.

The agent is an ADK Go ``llmagent`` on ADK's Gemini model (``model/gemini`` over
``google.golang.org/genai``, its base URL on ``fake_gemini.py``), with ``functiontool`` tools
that return or fail with what the scenario scripts: a failing search returns a Go error,
which ADK itself turns into ``{"error": "SearchBackendError: ..."}`` for the model (and an
ERROR status on the tool span), with no callback. ``g_handoff`` and ``n_handback`` use ADK's
sub-agents and its built-in ``transfer_to_agent`` tool (``fw_adk.script``), as the Python
``google-adk`` source does; each agent sees the session in its own way, so the fake server
answers in call order.

Telemetry is ADK Go's own: ``telemetry.New`` configures an OTLP/HTTP protobuf span exporter
and log exporter from ``OTEL_EXPORTER_OTLP_ENDPOINT`` (here ``otlp_sink.py`` on 127.0.0.1),
and ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (content on) makes its
``gen_ai.*`` message log records carry the messages; off, they say ``<elided>``. The
``execute_tool`` spans' ``gcp.vertex.agent.tool_call_args`` / ``tool_response`` are written
either way (ADK Go has no switch for them). Bodies are kept as sent
(``<variant>.raw/traces-N.pb``, ``logs-N.pb``) and written as OTLP/JSON.

The Go program is built once per content of ``adk_go/`` (go.mod, go.sum, main.go), into a
cache folder outside the repository (``~/.cache/otel-oracles/capture-go/<hash>/``), so no
build output lands in the work tree; each variant runs in its own process. The
``adk-go-latest`` source builds the same program with ``go.latest.mod`` / ``go.latest.sum``
(``go build -modfile``): ADK's modules moved to their newest releases, so its verdicts are
measured on the spans and log records those write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from external_program import CACHE, Program, Where, check_answer, content_key, run_program
from fake_gemini import MODEL, FakeGemini
from fw_adk import script
from fw_mastra import tool_results
from otlp_sink import OtlpSink
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "adk_go"
BINARY = "adk-go-capture"
MODFILE_LATEST = "go.latest.mod"
"""The module file with the program's modules at their newest releases (``-latest`` sources)."""

VERSIONED = (
    "google.golang.org/adk", "google.golang.org/genai", "go.opentelemetry.io/otel/sdk",
    "go.opentelemetry.io/otel/sdk/log",
    "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
    "go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp",
)  # fmt: skip
"""The Go modules whose versions EXPECTED.md lists, read from the program's go.mod."""


def project_files(project: Path, modfile: str = "go.mod") -> list[Path]:
    """What the build depends on: the module file ``modfile`` with its checksums (``go.sum``
    beside ``go.mod``, ``go.latest.sum`` beside ``go.latest.mod``) and the Go sources."""
    sums = project / f"{modfile.removesuffix('.mod')}.sum"
    return [project / modfile, sums, *sorted(project.glob("*.go"))]


def build(project: Path, binary: str, modfile: str = "go.mod") -> Path:
    """The program's binary, built with ``modfile`` once per content of ``project`` (keyed by
    the hash of the files the build reads) into a cache folder outside the repository."""
    files = project_files(project, modfile)
    target = CACHE / "capture-go" / content_key(project, files) / binary
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    chosen = [] if modfile == "go.mod" else [f"-modfile={modfile}"]
    proc = subprocess.run(
        ["go", "build", "-p", "1", "-buildvcs=false", *chosen, "-o", str(target), "."],
        cwd=project, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0 or not target.is_file():
        sys.exit(f"{project.name}: go build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return target


def go_versions(project: Path, modules: tuple[str, ...], modfile: str = "go.mod") -> dict[str, str]:
    """The versions ``project``'s ``modfile`` requires (what ``go build`` compiled in)."""
    text = (project / modfile).read_text()
    found = dict(re.findall(r"(?m)^\s*(?:require\s+)?(\S+)\s+(v\S+)", text))
    return {module: found.get(module, "not required") for module in modules}


def versions() -> dict[str, str]:
    """The ADK Go program's module versions."""
    return go_versions(PROJECT, VERSIONED)


def versions_latest() -> dict[str, str]:
    """The module versions of the ``adk-go-latest`` build (``go.latest.mod``)."""
    return go_versions(PROJECT, VERSIONED, MODFILE_LATEST)


def run_adk_go_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_adk_go`` on the program built with ``go.latest.mod``."""
    return run_adk_go(scenario, variant, content, out, project, MODFILE_LATEST)


def scripted_calls(scenario: Scenario) -> list[dict[str, Any]]:
    """Each scripted tool call's name and what it returns (``ok``) or raises (``raise``), in
    script order (transfers are ADK's own tool and not scripted here): ``tool_results`` with
    the tool's name, since a Go program's tool reads its result by name. Calls the framework
    rejects before running them (``Scenario.rejected``) are left out: they never run."""
    names = [
        name
        for turn in scenario.turns
        for name, _ in ([] if isinstance(turn, str) else turn)
        if not name.startswith("transfer_to_")
    ][scenario.rejected :]
    results = tool_results(scenario)
    return [{"tool": name, **result} for name, result in zip(names, results, strict=True)]


def run_adk_go(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    modfile: str = "go.mod",
) -> list[str]:
    """Run one (scenario, content) variant in its own process, the program built with
    ``modfile``; returns the tools the run really executed, and fails when the answer (or,
    after a transfer back, the agent giving it) is not the script's (``project`` is the
    capture's Node project option, unused)."""
    binary = build(PROJECT, BINARY, modfile)

    def launch(where: Where) -> Program:
        env = {
            **os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true" if content else "false",
            "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
        }  # fmt: skip
        spec = {"baseURL": where.base_url, "model": MODEL, "calls": scripted_calls(scenario)}
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeGemini, launch, BINARY)
    write_bodies(run.received, out, variant)
    executed = check_answer(run, scenario, variant, out)
    if scenario.transfers_back and run.report["author"] != scenario.handoffs[-1][1]:
        sys.exit(f"{variant}: answered by {run.report['author']}, not after the transfer back")
    return executed


def write_bodies(sink: OtlpSink, out: Path, variant: str) -> None:
    """Keep the trace and log bodies as sent (``<variant>.raw/traces-N.pb``, ``logs-N.pb``),
    the spans merged into ``<variant>.otlp.json`` and each log body one line of
    ``<variant>.logs.otlp.jsonl`` (canonical OTLP/JSON: hex ids, integer enums)."""
    from capture import hex_ids
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    traces = [item for item in sink.received if item.signal == "traces"]
    logs = [item for item in sink.received if item.signal == "logs"]
    if not traces or any("protobuf" not in i.content_type for i in [*traces, *logs]):
        sys.exit(f"{variant}: expected OTLP protobuf bodies at the sink, got {len(traces)} traces")
    raw = out / f"{variant}.raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    merged = ExportTraceServiceRequest()
    for i, item in enumerate(traces, 1):
        (raw / f"traces-{i}.pb").write_bytes(item.body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(item.body)
        merged.resource_spans.extend(request.resource_spans)
    doc = hex_ids(MessageToDict(merged, use_integers_for_enums=True))
    (out / f"{variant}.otlp.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = []
    for i, item in enumerate(logs, 1):
        (raw / f"logs-{i}.pb").write_bytes(item.body)
        log_request = ExportLogsServiceRequest()
        log_request.ParseFromString(item.body)
        lines.append(json.dumps(hex_ids(MessageToDict(log_request, use_integers_for_enums=True))))
    log_path = out / f"{variant}.logs.otlp.jsonl"
    log_path.unlink(missing_ok=True)
    if lines:
        log_path.write_text("\n".join(lines) + "\n")
