"""The official OpenAI Java client under the OpenTelemetry Java instrumentation: one scenario
through the ``openai_java/`` app against the scripted fake OpenAI server, for the
``openai-java`` source.

The app is the Python ``openai-v2`` source's hand-written chat-completions tool loop written
in Java: ``com.openai:openai-java`` 4.x (its OkHttp client, base URL on ``fake_openai.py``,
which this module serves on 127.0.0.1 and answers in call order) wrapped by the library
instrumentation ``io.opentelemetry.instrumentation:opentelemetry-openai-java-1.1``
(``OpenAITelemetry.wrap``), the same code the Java agent applies. The model's tool calls run in
the app, which hands back what ``Tools.call`` returns for each scripted call (a failing search
``{"error": "SearchBackendError: ..."}``), so the model sees what the Python loop sends; the
instrumentation records the model calls only (no tool spans). The loop runs inside the app's
own attribute-less ``agent_run`` span, as the Python loop does.

Content capture is ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``true`` / ``false``),
the variable the Java agent reads; the app hands it to ``setCaptureMessageContent``. The
messages are log records (the instrumentation's GenAI events) sent with the spans over
OTLP/HTTP protobuf to ``otlp_sink.py``; both providers are shut down before the app writes its
report, and a trace missing a root, a parent or a model-call span fails the capture.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import write_bodies
from fw_spring_ai import build_jar, require_whole_trace
from scenarios import TOOL_SCHEMAS, Scenario, Tools

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "openai_java"
JAR_NAME = "openai-java-capture.jar"
VERSIONED = (
    "openai-java-core", "opentelemetry-openai-java-1.1", "opentelemetry-sdk-trace",
    "opentelemetry-exporter-otlp",
)  # fmt: skip
"""The jars whose versions EXPECTED.md lists, read from the build's ``target/lib``."""


def jar_version(stem: str) -> tuple[str, str] | None:
    """A copied jar's artifact and version from its file name without ``.jar``. The
    instrumentation's name ends in a version of its own (``-1.1``) and its version in a
    qualifier (``2.31.1-alpha``), which ``fw_spring_ai.copied_jar_versions``' split at the last
    dash would misread: the version is what follows the first dash after which a digit-led
    ``major.minor[.patch]`` with at most one ``-qualifier`` runs to the end."""
    named = re.fullmatch(r"(.+?)-(\d+\.\d+(?:\.\d+)?(?:-[A-Za-z0-9.]+)?)", stem)
    return (named[1], named[2]) if named else None


def versions() -> dict[str, str]:
    """The versions of the jars that matter, as the build copied them (``target/lib``)."""
    found: dict[str, str] = {}
    for path in (build_jar(PROJECT, JAR_NAME).parent / "lib").glob("*.jar"):
        named = jar_version(path.stem)
        if named and named[0] in VERSIONED:
            found[named[0]] = named[1]
    return {artifact: found.get(artifact, "not copied") for artifact in VERSIONED}


def tool_messages(scenario: Scenario) -> list[str]:
    """The tool message content the loop sends back for each scripted call, in call order:
    what the Python loop sends (``Tools.call``), errors as ``{"error": ...}``."""
    tools = Tools(scenario)
    return [
        tools.call(name, arguments)
        for turn in scenario.turns
        for name, arguments in ([] if isinstance(turn, str) else turn)
    ]


def run_openai_java(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM; returns the tools the run really
    executed, and fails when the final answer is not the scenario's (``project`` is the
    capture's Node project option, unused here)."""
    jar = build_jar(PROJECT, JAR_NAME)
    with zipfile.ZipFile(jar) as packed:  # the app itself, not a stale build
        assert "capture/CaptureApp.class" in packed.namelist()
    switch = "true" if content else "false"
    env = {**os.environ, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": switch}

    def launch(where: Where) -> Program:
        spec = {
            "tools": TOOL_SCHEMAS, "results": tool_messages(scenario),
            "baseURL": where.base_url, "otlp": where.otlp, "report": str(where.report),
        }  # fmt: skip
        classpath = f"{jar}{os.pathsep}{jar.parent / 'lib' / '*'}"
        command = ["java", "-Xmx512m", "-cp", classpath, "capture.CaptureApp", str(where.spec)]
        return Program(spec, command, env)

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, "java", True)
    write_bodies(run.received, out, variant)
    if scenario.killed_at is None:  # a killed run's root span never ends (z_killed_*)
        require_whole_trace(out / f"{variant}.otlp.json", variant, run.model_calls)
    return check_answer(run, scenario, variant, out)
