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

``g_handoff`` is an agent called from a tool, as for frameworks without a native handoff: the
triage AI service's ``research_agent`` tool calls the research AI service (``fw_vercel5.script``).
"""

from __future__ import annotations

from pathlib import Path

from external_program import Program, Where, agent_name, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_mastra import tool_results
from fw_spring_ai import build_jar, keep_trace
from fw_vercel5 import script
from scenarios import Scenario

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


def versions() -> dict[str, str]:
    """The versions of the jars that matter, as the build laid them in ``quarkus-app/lib``."""
    found: dict[str, str] = {}
    for path in (build_jar(PROJECT, JAR_NAME).parent / "lib" / "main").glob("*.jar"):
        artifact, _, version = path.stem.rpartition("-")
        if artifact in VERSIONED:
            found[artifact] = version
    return {a.rpartition(".")[2]: found.get(a, "not laid out") for a in VERSIONED}


def run_quarkus_langchain4j(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM; returns the tools the run really
    executed, and fails when the final answer is not the scenario's (``project`` is the
    capture's Node project option, unused here)."""
    jar = build_jar(PROJECT, JAR_NAME)

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

    # a request the client sent twice (a transport retry) takes a turn from the script
    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "java", True)
    keep_trace(run, out, variant)
    return check_answer(run, scenario, variant, out)
