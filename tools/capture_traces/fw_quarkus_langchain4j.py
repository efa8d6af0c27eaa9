"""Quarkus LangChain4j (Java): one scenario through the ``quarkus_langchain4j/`` Quarkus app
against the scripted fake OpenAI server, for the ``quarkus-langchain4j`` source.

The agent is a ``@RegisterAiService`` AI service (LangChain4j's AI services, declared the
Quarkus way) whose ``@Tool`` methods return or throw what the scenario scripts, on the
extension's OpenAI chat model with its base URL on the fake server, which this module serves on
127.0.0.1 and answers in call order. With ``quarkus-opentelemetry`` present the extension traces
the run itself: a span per AI service method call, per tool execution and per model call; Quarkus
exports them over OTLP/HTTP protobuf to ``otlp_sink.py``. The bodies are kept as sent and merged
into the OTLP/JSON file (``fw_spring_ai``'s helpers). Quarkus shuts its tracer provider down
before the app's exit handler writes its report, so a report means the export is complete.

The Maven project is built once per content of ``quarkus_langchain4j/`` (``mvn -B -q package``,
the Quarkus fast-jar layout ``target/quarkus-app``) in a copy outside the repository
(``fw_spring_ai.build_jar``); each variant runs in its own JVM.

Content capture on sets every tracing content switch the extension has
(``quarkus.langchain4j.tracing.include-prompt`` / ``include-completion`` /
``include-tool-arguments`` / ``include-tool-result``); off is its defaults (all false).

``o_run_error``: the model API answers HTTP 500 after the search (the extension resends the
failing request once, its least ``max-retries``); the AI service throws, the app reports the
exception instead of an answer (after Quarkus flushed the spans) and the capture fails unless
the run ended so.

``g_handoff`` is an agent called from a tool, as for frameworks without a native handoff: the
triage AI service's ``research_agent`` tool calls the research AI service (``fw_vercel5.script``).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from external_program import Program, Where, agent_name, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_mastra import check_model_spans, tool_results
from fw_spring_ai import build_jar, keep_trace
from fw_vercel5 import script
from scenarios import Scenario
from scripted_server import ScriptedServer

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "quarkus_langchain4j"
JAR_NAME = "quarkus-app/quarkus-run.jar"
"""The fast-jar launcher; its dependencies are in ``quarkus-app/lib/main``."""

CONTENT_ON = [
    f"-Dquarkus.langchain4j.tracing.{switch}=true"
    for switch in ("include-prompt", "include-completion", "include-tool-arguments",
                   "include-tool-result")
]  # fmt: skip
"""The extension's tracing content switches (from its configuration metadata)."""

VERSIONED = (
    "io.quarkiverse.langchain4j.quarkus-langchain4j-core",
    "io.quarkiverse.langchain4j.quarkus-langchain4j-openai",
    "dev.langchain4j.langchain4j",
    "dev.langchain4j.langchain4j-open-ai",
    "io.quarkus.quarkus-opentelemetry",
    "io.opentelemetry.opentelemetry-sdk-trace",
    "io.opentelemetry.opentelemetry-exporter-otlp",
)
"""The jars whose versions EXPECTED.md lists (fast-jar names: ``group.artifact-version``)."""


POM_LATEST = "pom-quarkus-latest.xml"
"""The same sources on the newest Quarkus the registry serves (source
``quarkus-langchain4j-latest``): new releases can change the spans, and verdicts are measured on
them."""


def versions(pom: str = "pom.xml") -> dict[str, str]:
    """The versions of the jars that matter, as the build with ``pom`` laid them in
    ``quarkus-app/lib``."""
    found: dict[str, str] = {}
    for path in (build_jar(PROJECT, JAR_NAME, pom).parent / "lib" / "main").glob("*.jar"):
        artifact, _, version = path.stem.rpartition("-")
        if artifact in VERSIONED:
            found[artifact] = version
    return {a.rpartition(".")[2]: found.get(a, "not laid out") for a in VERSIONED}


def versions_latest() -> dict[str, str]:
    """``versions`` of the ``quarkus-langchain4j-latest`` build (``pom-quarkus-latest.xml``)."""
    return versions(POM_LATEST)


def run_quarkus_langchain4j_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_quarkus_langchain4j`` on the ``quarkus-langchain4j-latest`` build."""
    return run_quarkus_langchain4j(scenario, variant, content, out, project, POM_LATEST)


def run_quarkus_langchain4j(
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
        spec = {"results": tool_results(scenario), "report": str(where.report)}
        command = [
            "java", "-Xmx512m", "-XX:TieredStopAtLevel=1", f"-Dcapture.spec={where.spec}",
            f"-Dquarkus.langchain4j.openai.base-url={where.base_url}",
            f"-Dquarkus.otel.exporter.otlp.traces.endpoint={where.otlp}",
            f"-Dquarkus.otel.service.name={agent_name(scenario)}",
            *(CONTENT_ON if content else []),
            "-jar", str(jar),
        ]  # fmt: skip
        return Program(spec, command)

    failures_before = ScriptedServer.failures_served
    # a request the client sent twice (a transport retry) takes a turn from the script
    scripted = script(scenario)
    if scenario.model_fails_from is not None:
        # The extension resends a failing request once (``max-retries``, at least 1): the
        # resent request takes a turn, answered HTTP 500 as every one from there on.
        scripted = replace(scripted, turns=[*scripted.turns, scripted.turns[-1]])
    run = run_program(scenario, scripted, variant, out, FakeOpenAI, launch, "java", True)
    if scenario.model_fails_from is None:
        keep_trace(run, out, variant)
    else:  # the resend is inside the failing call's span: one model-call span fewer
        keep_trace(replace(run, model_calls=run.model_calls - 1), out, variant)
    if scenario.model_fails_from is None:
        return check_answer(run, scenario, variant, out)
    # o_run_error: the run must end in the exception the script caused (the HTTP 500), with
    # no answer (``capture.ends_as_scripted``); its spans are kept as for any run.
    check_model_spans(out / f"{variant}.otlp.json", variant)
    if "error" not in run.report or ScriptedServer.failures_served == failures_before:
        sys.exit(f"{variant}: expected the run to end in the scripted HTTP 500: {run.report}")
    executed: list[str] = run.report["executed"]
    return executed
