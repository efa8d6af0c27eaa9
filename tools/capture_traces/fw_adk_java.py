"""Google ADK for Java: one scenario through the ``adk_java/`` app against the scripted fake
OpenAI server, for the ``adk-java`` source.

The agents are ADK ``LlmAgent``s whose ``FunctionTool`` tools return or throw what the scenario
scripts, on ADK's own OpenAI-compatible chat-completions client (``ApigeeLlm`` with an
``apigee/openai/gpt-4o-mini`` model, its proxy URL on the fake server, which this module serves
on 127.0.0.1 and answers in call order). A tool that throws is handled by ADK's
``FunctionTool`` itself, which hands the model ``{"status": "error", "message": "An internal
error occurred."}`` (an ``onToolErrorCallback`` is never reached). ADK traces through the global
OpenTelemetry, which the app sets up with an OTLP/HTTP exporter sending to ``otlp_sink.py`` and
shuts down once every span ADK started has ended (ADK ends its invocation span on its own
thread after the last event); the bodies are kept as sent and merged into the OTLP/JSON file
(``fw_spring_ai``'s helpers), and a trace missing a root or a parent fails the capture.

Content capture off is ADK's ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false`` (on: ``true``).
``g_handoff`` uses ADK's sub-agents and its built-in ``transfer_to_agent`` tool
(``fw_adk.script``), as the Python ADK sources do; in ``n_handback`` the research agent
transfers back to its parent, the triage agent, which must give the answer.
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk import script
from fw_mastra import tool_results
from fw_spring_ai import build_jar, copied_jar_versions, keep_trace
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "adk_java"
JAR_NAME = "adk-java-capture.jar"
VERSIONED = ("google-adk", "google-genai", "opentelemetry-sdk-trace", "opentelemetry-exporter-otlp")
"""The jars whose versions EXPECTED.md lists, read from the build's ``target/lib``."""


POM_LATEST = "pom-adk-java-latest.xml"
"""The same sources with the newest OpenTelemetry Java and google-genai 1.x (source
``adk-java-latest``): new releases can change the spans, and verdicts are measured on them."""


def versions(pom: str = "pom.xml") -> dict[str, str]:
    """The versions of the jars that matter, as the build with ``pom`` copied them."""
    return copied_jar_versions(PROJECT, JAR_NAME, VERSIONED, pom)


def versions_latest() -> dict[str, str]:
    """``versions`` of the ``adk-java-latest`` build (``pom-adk-java-latest.xml``)."""
    return versions(POM_LATEST)


def run_adk_java_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_adk_java`` on the ``adk-java-latest`` build."""
    return run_adk_java(scenario, variant, content, out, project, POM_LATEST)


def run_adk_java(
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
    with zipfile.ZipFile(jar) as packed:  # the app itself, not a stale build
        assert "capture/CaptureApp.class" in packed.namelist()
    env = {**os.environ, "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true" if content else "false"}

    def launch(where: Where) -> Program:
        spec = {
            "results": tool_results(scenario), "baseURL": where.base_url, "otlp": where.otlp,
            "report": str(where.report),
        }  # fmt: skip
        classpath = f"{jar}{os.pathsep}{jar.parent / 'lib' / '*'}"
        command = ["java", "-Xmx512m", "-cp", classpath, "capture.CaptureApp", str(where.spec)]
        return Program(spec, command, env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "java", True)
    keep_trace(run, out, variant)
    executed = check_answer(run, scenario, variant, out)
    authors = run.report["authors"]
    if scenario.transfers_back and authors[-1:] != [scenario.handoffs[-1][1]]:
        sys.exit(f"{variant}: answered by {authors}, not after the transfer back")
    return executed
