"""JetBrains Koog (Kotlin): one scenario through the ``koog/`` program against the scripted fake
OpenAI server, for the ``koog`` source.

The agent is a Koog ``AIAgent`` (its default single-run strategy: ask the model, run the tools
it asked for, send the results, until it answers in text) whose ``ToolSet`` tools return or
throw what the scenario scripts, on Koog's ``OpenAILLMClient`` (chat completions) with its base
URL on the fake server, which this module serves on 127.0.0.1 and answers in call order. A tool
that throws is caught by Koog's agent environment, which hands the model "Tool with name ...
failed to execute due to the error: <message>!" as the tool's result.

Koog traces through its own OpenTelemetry feature (``install(OpenTelemetry)``), handed a Java
OpenTelemetry SDK (``setSdk``) whose batch processor feeds an OTLP/HTTP protobuf exporter that
sends to ``otlp_sink.py``. The program shuts that SDK down itself after the run (the feature's
own Kotlin SDK, ``addSpanExporter``, drops the spans still queued when it shuts down) and writes
its report only after that, so a report means the export is complete. The bodies are kept as
sent and merged into the OTLP/JSON file (``fw_spring_ai``'s helpers).

Koog starts every agent's ``create_agent`` span as a root: the research agent that
``g_handoff``'s tool runs is a trace of its own beside the triage agent's, so that capture holds
two traces (``require_traces``).

The Kotlin project is built once per content of ``koog/`` (pom and sources) in a copy outside
the repository (``~/.cache/otel-oracles/koog-<hash>``, ``mvn -B -q package``, the
dependencies copied to ``target/lib``), so no build output lands in the work tree; each variant
runs in its own JVM.

Content capture on is the feature's ``setVerbose(true)`` (message contents, tool arguments and
results); off is Koog's default (``false``), which writes placeholders instead.

``g_handoff`` is an agent called from a tool, as for frameworks without a native handoff: the
triage agent's ``research_agent`` tool runs a research ``AIAgent``, which starts from its own
history (``fw_vercel5.script``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from external_program import Program, Run, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_mastra import tool_results, write_sink_bodies
from fw_spring_ai import build_jar, copied_jar_versions, write_otlp_json
from fw_vercel5 import script
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "koog"
JAR_NAME = "koog-capture.jar"
VERSIONED = (
    "koog-agents-jvm", "agents-core-jvm", "agents-features-opentelemetry-jvm",
    "prompt-executor-openai-client-jvm", "opentelemetry-sdk-trace",
    "opentelemetry-exporter-otlp", "kotlin-stdlib",
)  # fmt: skip
"""The jars whose versions EXPECTED.md lists, read from the build's ``target/lib``."""
POM_LATEST = "pom-koog-latest.xml"
"""The same sources built with the newest Kotlin and OpenTelemetry Java SDK (source
``koog-latest``): new releases can change the spans, and verdicts are measured on them."""


def versions(pom: str = "pom.xml") -> dict[str, str]:
    """The versions of the jars that matter, as the build with ``pom`` copied them."""
    return copied_jar_versions(PROJECT, JAR_NAME, VERSIONED, pom)


def versions_latest() -> dict[str, str]:
    """``versions`` of the ``koog-latest`` build (``pom-koog-latest.xml``)."""
    return versions(POM_LATEST)


def run_koog_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_koog`` on the ``koog-latest`` build."""
    return run_koog(scenario, variant, content, out, project, POM_LATEST)


def run_koog(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    pom: str = "pom.xml",
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM, the project built with ``pom``;
    returns the tools the run really executed, and fails when the final answer is not the
    scenario's (``project`` is the capture's Node project option, unused here)."""
    jar = build_jar(PROJECT, JAR_NAME, pom)

    def launch(where: Where) -> Program:
        spec = {
            "results": tool_results(scenario), "baseURL": where.base_url, "otlp": where.otlp,
            "verbose": content, "report": str(where.report),
        }  # fmt: skip
        classpath = f"{jar}{os.pathsep}{jar.parent / 'lib' / '*'}"
        command = [
            "java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            "capture.CaptureAppKt", str(where.spec),
        ]  # fmt: skip
        return Program(spec, command)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "java", True)
    keep_traces(run, out, variant, agents=2 if scenario.agents_only else 1)
    return check_answer(run, scenario, variant, out)


def keep_traces(run: Run, out: Path, variant: str, agents: int) -> None:
    """Keep the trace bodies as sent (``<variant>.raw/traces-N.pb``), merge them into
    ``<variant>.otlp.json`` and check them (``require_traces``)."""
    write_sink_bodies(run.received, out / f"{variant}.raw", variant)
    write_otlp_json(out / f"{variant}.raw", out / f"{variant}.otlp.json")
    require_traces(out / f"{variant}.otlp.json", variant, agents, run.model_calls)


def require_traces(path: Path, variant: str, agents: int, model_calls: int) -> None:
    """Fail the capture unless the OTLP/JSON holds one whole trace per agent the run started
    (one root each, every span's parent present) and one inference span (``gen_ai.operation.name``
    ``chat``) per request the fake server answered: a span lost at shutdown would otherwise be
    graded as a step the run never took. Koog's ``invoke_agent`` and ``create_agent`` spans
    also carry ``gen_ai.request.model``, so the operation, not the model name, counts the calls."""
    from capture import MODEL_OPERATIONS

    doc = json.loads(path.read_text())
    spans = [
        span
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]
    ids = {span["spanId"] for span in spans}
    roots = Counter(span["traceId"] for span in spans if not span.get("parentSpanId"))
    orphans = [s["name"] for s in spans if s.get("parentSpanId") and s["parentSpanId"] not in ids]
    traces = {span["traceId"] for span in spans}
    if orphans or len(traces) != agents or any(roots[trace] != 1 for trace in traces):
        sys.exit(f"{variant}: {len(traces)} traces for {agents} agents (roots {dict(roots)}, "
                 f"parent missing for {orphans})")  # fmt: skip
    inference = sum(
        any(kv["key"] == "gen_ai.operation.name"
            and kv["value"].get("stringValue") in MODEL_OPERATIONS
            for kv in span.get("attributes", []))
        for span in spans
    )  # fmt: skip
    if inference != model_calls:
        sys.exit(f"{variant}: {inference} inference spans for {model_calls} model requests")
