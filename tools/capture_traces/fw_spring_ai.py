"""Spring AI (Java): one scenario through the ``spring_ai/`` Spring Boot app against the
scripted fake OpenAI server, for the ``spring-ai`` source.

The agent is a Spring AI ``ChatClient`` whose ``@Tool`` methods return or throw what the
scenario scripts, on Spring AI's OpenAI chat model (``spring-ai-starter-model-openai``) with its
base URL on the fake server, which this module serves on 127.0.0.1 and answers in call order.
Spring AI records the run through Micrometer Observation; Spring Boot bridges it to
OpenTelemetry (``micrometer-tracing-bridge-otel``) and exports over OTLP/HTTP protobuf to
``otlp_sink.py``. The bodies are kept as sent (``<variant>.raw/traces-N.pb``) and merged into
the OTLP/JSON file. Boot shuts its tracer provider down when the application context closes,
which flushes the batch processor; the app writes its report only after that, so a report
means the export is complete.

The Java project is built once per content of ``spring_ai/`` (pom and sources), in a copy
outside the repository (``~/.cache/otel-oracles/spring_ai-<hash>``, ``mvn -B -q package``), so
no build output lands in the work tree; each variant runs in its own JVM, as each Python
variant runs in its own process.

Content capture on sets every observation content switch Spring AI 1.1 has: the tool
observations' ``include-content`` (tool arguments and results as span attributes) and the
chat model's and chat client's ``log-prompt`` / ``log-completion``, which write the messages to
the application log, not to spans. Off is Spring AI's defaults.

``g_handoff`` is an agent called from a tool, as for frameworks without a native handoff: the
triage ChatClient's ``research_agent`` tool runs the research ChatClient, which starts from
its own history (``fw_vercel5.script``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from external_program import (
    CACHE,
    Program,
    Run,
    Where,
    agent_name,
    check_answer,
    content_key,
    run_program,
)
from fake_openai import FakeOpenAI
from fw_mastra import tool_results, write_sink_bodies
from fw_vercel5 import script
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "spring_ai"
JAR_NAME = "spring-ai-capture.jar"
POM_2 = "pom-spring-ai-2.xml"
"""The same sources on Spring AI 2.0 and Spring Boot 4 (source ``spring-ai-2``)."""
POM_LATEST = "pom-spring-ai-latest.xml"
"""The same sources on the newest Spring AI 1.1 release that resolves (source
``spring-ai-latest``): new releases change the spans, and verdicts are measured on them."""
POM_2_LATEST = "pom-spring-ai-2-latest.xml"
"""The Spring AI 2 build on the newest Spring Boot (source ``spring-ai-2-latest``)."""

CONTENT_ON = [
    "--spring.ai.tools.observations.include-content=true",
    "--spring.ai.chat.observations.log-prompt=true",
    "--spring.ai.chat.observations.log-completion=true",
    "--spring.ai.chat.client.observations.log-prompt=true",
    "--spring.ai.chat.client.observations.log-completion=true",
]
"""Spring AI 1.1's content switches (from its autoconfigure modules' configuration metadata)."""

VERSIONED = (
    "spring-ai-client-chat", "spring-ai-openai", "spring-ai-model", "spring-boot",
    "micrometer-observation", "micrometer-tracing-bridge-otel", "opentelemetry-sdk-trace",
    "opentelemetry-exporter-otlp",
)  # fmt: skip
"""The jars whose versions EXPECTED.md lists, read from the built application."""


def project_files(project: Path = PROJECT, pom: str = "pom.xml") -> list[Path]:
    """The files a Maven project's build depends on: its pom and everything under ``src``."""
    return [project / pom, *sorted(p for p in (project / "src").rglob("*") if p.is_file())]


def build_jar(project: Path = PROJECT, jar_name: str = JAR_NAME, pom: str = "pom.xml") -> Path:
    """The project's jar, built with ``pom`` (copied as ``pom.xml``) once per content of the
    project (keyed by the hash of its files) in a copy outside the repository (``mvn -B -q
    package``); the build's other output (``target/lib`` where the pom copies its
    dependencies) stays beside it."""
    stem = project.name if pom == "pom.xml" else f"{project.name}-{Path(pom).stem}"
    build = CACHE / f"{stem}-{content_key(project, project_files(project, pom))}"
    jar = build / "target" / jar_name
    if jar.is_file():
        return jar
    shutil.rmtree(build, ignore_errors=True)
    for path in project_files(project, pom):
        target = build / ("pom.xml" if path.name == pom else path.relative_to(project))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    proc = subprocess.run(
        ["mvn", "-B", "-q", "package", "-DskipTests"],
        cwd=build, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0 or not jar.is_file():
        output = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        sys.exit(f"{project.name}: mvn package failed:\n{output}")
    return jar


def copied_jar_versions(
    project: Path, jar_name: str, versioned: tuple[str, ...], pom: str = "pom.xml"
) -> dict[str, str]:
    """The versions of the ``versioned`` artifacts among the jars a project's build (with
    ``pom``) copies beside its jar (``target/lib``: the plain-jar builds of ADK for Java and
    Koog)."""
    found: dict[str, str] = {}
    for path in (build_jar(project, jar_name, pom).parent / "lib").glob("*.jar"):
        artifact, _, version = path.stem.rpartition("-")
        if artifact in versioned:
            found[artifact] = version
    return {artifact: found.get(artifact, "not copied") for artifact in versioned}


def versions(pom: str = "pom.xml") -> dict[str, str]:
    """The versions of the jars that matter, as packed in the built application."""
    found: dict[str, str] = {}
    with zipfile.ZipFile(build_jar(PROJECT, JAR_NAME, pom)) as jar:
        for name in jar.namelist():
            if not (name.startswith("BOOT-INF/lib/") and name.endswith(".jar")):
                continue
            stem = name.rsplit("/", 1)[-1][: -len(".jar")]
            artifact, _, version = stem.rpartition("-")
            if artifact in VERSIONED:
                found[artifact] = version
    return {artifact: found.get(artifact, "not packed") for artifact in VERSIONED}


def versions_2() -> dict[str, str]:
    """``versions`` of the Spring AI 2 build (``pom-spring-ai-2.xml``)."""
    return versions(POM_2)


def run_spring_ai_2(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_spring_ai`` on the Spring AI 2 build (Spring AI 2.0, Spring Boot 4)."""
    return run_spring_ai(scenario, variant, content, out, project, POM_2)


def versions_latest() -> dict[str, str]:
    """``versions`` of the newest Spring AI 1.1 build (``pom-spring-ai-latest.xml``)."""
    return versions(POM_LATEST)


def run_spring_ai_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_spring_ai`` on the newest Spring AI 1.1 build."""
    return run_spring_ai(scenario, variant, content, out, project, POM_LATEST)


def versions_2_latest() -> dict[str, str]:
    """``versions`` of the Spring AI 2 build on the newest Boot (``pom-spring-ai-2-latest.xml``)."""
    return versions(POM_2_LATEST)


def run_spring_ai_2_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_spring_ai`` on the Spring AI 2 build on the newest Spring Boot."""
    return run_spring_ai(scenario, variant, content, out, project, POM_2_LATEST)


def run_spring_ai(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    pom: str = "pom.xml",
) -> list[str]:
    """Run one (scenario, content) variant in its own JVM; returns the tools the run really
    executed, and fails when the final answer is not the scenario's (``project`` is the
    capture's Node project option, unused here)."""
    jar = build_jar(PROJECT, JAR_NAME, pom)
    agent = agent_name(scenario)

    def launch(where: Where) -> Program:
        spec = {"results": tool_results(scenario), "report": str(where.report)}
        command = [
            "java", "-Xmx512m", "-XX:TieredStopAtLevel=1", f"-Dcapture.spec={where.spec}",
            "-jar", str(jar),
            f"--spring.ai.openai.base-url={where.base_url.removesuffix('/v1')}",
            f"--management.otlp.tracing.endpoint={where.otlp}/v1/traces",  # Boot 3
            f"--management.opentelemetry.tracing.export.otlp.endpoint={where.otlp}/v1/traces",
            f"--spring.application.name={agent}",
            *(CONTENT_ON if content else []),
        ]  # fmt: skip
        return Program(spec, command)

    # a request the client sent twice (a transport retry) takes a turn from the script
    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "java", True)
    keep_trace(run, out, variant)
    return check_answer(run, scenario, variant, out)


def keep_trace(run: Run, out: Path, variant: str) -> None:
    """Keep a JVM app's trace bodies as sent (``<variant>.raw/traces-N.pb``), merge them into
    ``<variant>.otlp.json`` and fail the capture unless that is one whole trace with a
    model-call span per request the fake server answered (``require_whole_trace``)."""
    write_sink_bodies(run.received, out / f"{variant}.raw", variant)
    write_otlp_json(out / f"{variant}.raw", out / f"{variant}.otlp.json")
    require_whole_trace(out / f"{variant}.otlp.json", variant, run.model_calls)


def write_otlp_json(raw: Path, path: Path) -> None:
    """The sent bodies' spans merged into one canonical OTLP/JSON document (hex ids, integer
    enums), as ``capture.run_sink_driver`` writes them."""
    from capture import hex_ids
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    merged = ExportTraceServiceRequest()
    for body in sorted(raw.glob("traces-*.pb"), key=lambda p: int(p.stem.split("-")[1])):
        request = ExportTraceServiceRequest()
        request.ParseFromString(body.read_bytes())
        merged.resource_spans.extend(request.resource_spans)
    doc = hex_ids(MessageToDict(merged, use_integers_for_enums=True))
    path.write_text(json.dumps(doc, indent=1) + "\n")


def require_whole_trace(path: Path, variant: str, model_calls: int) -> None:
    """Fail the capture unless the OTLP/JSON holds one trace with one root, every span's
    parent and one model-call span per request the fake server answered: a span that ended
    after the exporter shut down is lost, and a capture missing it would be graded as a run
    that never had it."""
    from capture import is_model_call

    doc = json.loads(path.read_text())
    spans = [
        span
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]
    ids = {span["spanId"] for span in spans}
    roots = [span["name"] for span in spans if not span.get("parentSpanId")]
    orphans = [s["name"] for s in spans if s.get("parentSpanId") and s["parentSpanId"] not in ids]
    if len(roots) != 1 or orphans or len({span["traceId"] for span in spans}) != 1:
        sys.exit(f"{variant}: incomplete trace (roots {roots}, parent missing for {orphans})")
    recorded = sum(
        is_model_call({kv["key"]: next(iter(kv["value"].values()), None)
                       for kv in span.get("attributes", [])})
        for span in spans
    )  # fmt: skip
    if recorded != model_calls:
        sys.exit(f"{variant}: {recorded} model-call spans for {model_calls} model requests")
