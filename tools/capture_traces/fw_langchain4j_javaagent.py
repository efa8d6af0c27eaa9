"""Plain LangChain4j under the OpenTelemetry Java agent: one scenario through the
``langchain4j_javaagent/`` app against the scripted fake OpenAI server, for the
``langchain4j-javaagent`` source.

The app is an ``AiServices`` agent (LangChain4j 1.19.0) whose ``@Tool`` methods hand the model
what the scenario scripts (``fw_openai_java.tool_messages``: a failing search answers
``{"error": "SearchBackendError: ..."}``), on ``langchain4j-open-ai``'s ``OpenAiChatModel`` with
its base URL on ``fake_openai.py``, which this module serves on 127.0.0.1 and answers in call
order. The app has no tracing code: the JVM runs with ``-javaagent`` on the OpenTelemetry Java
agent 2.31.1, the instrumentation a Java service most often gets, exporting OTLP/HTTP protobuf
to ``otlp_sink.py`` (metrics and logs off). No instrumentation for LangChain4j exists that
the registry serves (OpenInference's ``openinference-instrumentation-langchain4j`` and
LangChain4j's own ``langchain4j-observation`` are not served), and the agent has none either:
LangChain4j sends each request with its own JDK ``HttpClient``, so the trace is the agent's
``java-http-client`` spans, one per model request, each its own trace (nothing holds them).
It shows that the process made HTTP requests to the model API and nothing of what they
asked, answered or ran, as ``openai-go-otelhttp`` does in Go. No content switch applies, so the
content-off variant is the same run. The agent's shutdown hook exports at JVM exit, before
``run_program`` reads the sink.

Built once per content of ``langchain4j_javaagent/`` (``fw_spring_ai.build_jar``: ``mvn -B -q
package`` in a copy outside the repository; the dependencies in ``target/lib``, the agent jar
in ``target/agent``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from external_program import Program, Where, agent_name, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import write_bodies
from fw_openai_go import http_client_spans
from fw_openai_java import jar_version, tool_messages
from fw_spring_ai import build_jar
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "langchain4j_javaagent"
JAR_NAME = "langchain4j-javaagent-capture.jar"
AGENT = "agent/opentelemetry-javaagent-2.31.1.jar"
"""The agent jar as the build copies it, beside ``target/lib``."""
MODEL = "gpt-4o-mini"
VERSIONED = ("langchain4j", "langchain4j-open-ai", "langchain4j-http-client-jdk")
"""The jars whose versions EXPECTED.md lists, read from the build's ``target/lib``."""


def versions() -> dict[str, str]:
    """The versions of the jars that matter, as the build copied them, and the agent's."""
    target = build_jar(PROJECT, JAR_NAME).parent
    found: dict[str, str] = {}
    for path in [*(target / "lib").glob("*.jar"), *(target / "agent").glob("*.jar")]:
        named = jar_version(path.stem)
        if named:
            found[named[0]] = named[1]
    wanted = (*VERSIONED, "opentelemetry-javaagent")
    return {artifact: found.get(artifact, "not copied") for artifact in wanted}


def run_langchain4j_javaagent(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM; returns the tools the run really
    executed, and fails when the answer is not the script's or when the trace lacks an HTTP
    client span for a model request (``content`` and the Node ``project`` option are unused:
    no span holds content)."""
    jar = build_jar(PROJECT, JAR_NAME)
    env = {
        **os.environ, "OTEL_SERVICE_NAME": agent_name(scenario), "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }  # fmt: skip

    def launch(where: Where) -> Program:
        spec = {"baseURL": where.base_url, "model": MODEL, "results": tool_messages(scenario)}
        classpath = f"{jar}{os.pathsep}{jar.parent / 'lib' / '*'}"
        command = [
            "java", "-Xmx512m", "-XX:TieredStopAtLevel=1", f"-javaagent:{jar.parent / AGENT}",
            "-cp", classpath, "capture.CaptureApp", str(where.spec),
        ]  # fmt: skip
        return Program(spec, command, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp})

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, "java")
    write_bodies(run.received, out, variant)
    requests = http_client_spans(out / f"{variant}.otlp.json")
    if requests != run.model_calls:
        sys.exit(f"{variant}: {requests} HTTP client spans for {run.model_calls} model requests")
    return check_answer(run, scenario, variant, out)
