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

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, call_order
from fw_adk import script
from fw_mastra import check_model_spans, tool_results, write_sink_bodies
from fw_spring_ai import build_jar, require_whole_trace, write_otlp_json
from otlp_sink import OtlpSink
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "adk_java"
JAR_NAME = "adk-java-capture.jar"
VERSIONED = ("google-adk", "google-genai", "opentelemetry-sdk-trace", "opentelemetry-exporter-otlp")
"""The jars whose versions EXPECTED.md lists, read from the build's ``target/lib``."""


def versions() -> dict[str, str]:
    """The versions of the jars that matter, as the build copied them."""
    found: dict[str, str] = {}
    for path in (build_jar(PROJECT, JAR_NAME).parent / "lib").glob("*.jar"):
        artifact, _, version = path.stem.rpartition("-")
        if artifact in VERSIONED:
            found[artifact] = version
    return {artifact: found.get(artifact, "not copied") for artifact in VERSIONED}


def run_adk_java(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM; returns the tools the run really
    executed, and fails when the final answer is not the scenario's (``project`` is the
    capture's Node project option, unused here)."""
    jar = build_jar(PROJECT, JAR_NAME)
    with zipfile.ZipFile(jar) as packed:  # the app itself, not a stale build
        assert "capture/CaptureApp.class" in packed.namelist()
    agent = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    spec_path = out.resolve() / f".{variant}.spec.json"
    report_path = out.resolve() / f".{variant}.report.json"
    report_path.unlink(missing_ok=True)
    scripted = script(scenario)
    served: list[int] = []
    in_order = call_order()

    def turn_of(request: dict[str, Any]) -> int:
        served.append(turn := in_order(request))
        return turn

    received = OtlpSink()
    env = {**os.environ, "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true" if content else "false"}
    with FakeOpenAI(scripted, turn_of=turn_of) as base_url, received as endpoint:
        spec = {
            "system": scenario.system, "prompt": scenario.prompt, "agent": agent,
            "results": tool_results(scenario), "handoff": scenario.agents_only,
            "baseURL": base_url, "otlp": endpoint, "report": str(report_path),
        }  # fmt: skip
        spec_path.write_text(json.dumps(spec))
        classpath = f"{jar}{os.pathsep}{jar.parent / 'lib' / '*'}"
        command = ["java", "-Xmx512m", "-cp", classpath, "capture.CaptureApp", str(spec_path)]
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, check=False, timeout=300, env=env
            )
        finally:
            spec_path.unlink()
    if proc.returncode != 0 or not report_path.is_file():
        sys.exit(f"{variant}: java failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    report = json.loads(report_path.read_text())
    report_path.unlink()
    if len(served) != len(scripted.turns):
        sys.exit(f"{variant}: the model was asked {len(served)} times, not {len(scripted.turns)}")
    write_sink_bodies(received, out / f"{variant}.raw", variant)
    write_otlp_json(out / f"{variant}.raw", out / f"{variant}.otlp.json")
    require_whole_trace(out / f"{variant}.otlp.json", variant, len(served))
    check_model_spans(out / f"{variant}.otlp.json", variant)
    if report["text"] != scenario.turns[-1]:
        sys.exit(f"{variant}: final answer {report['text']!r} is not the script's")
    if scenario.transfers_back and report["authors"][-1:] != [scenario.handoffs[-1][1]]:
        sys.exit(f"{variant}: answered by {report['authors']}, not after the transfer back")
    executed: list[str] = report["executed"]
    return executed
