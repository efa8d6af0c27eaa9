"""rig (Rust): one scenario through the ``rig_agent/`` program against the scripted fake OpenAI
server, for the ``rig`` source.

The agent is rig-agent's ``AgentBuilder`` (rig 0.44 keeps the agent runtime in ``rig-agent``,
beside ``rig-core``'s providers and telemetry) on rig-core's OpenAI provider, its Chat
Completions model (``OpenAI::chat``, base URL on ``fake_openai.py``), with one typed ``Tool``
per scripted tool; rig runs the multi-turn tool loop itself. A failing tool returns an error
whose message rig hands the model as the tool's result and records on the ``execute_tool`` span
as ``gen_ai.tool.call.outcome = "error"`` with ``gen_ai.tool.error.type`` (no span status).
``g_handoff``: the research agent as a tool of the triage agent (``Agent::into_tool``, arguments
``{"prompt": ...}``); it starts from its own history, so the fake server answers in call order.

rig's ``tracing`` spans (``invoke_agent``, ``chat``, ``execute_tool``, with GenAI attributes)
become OpenTelemetry spans through ``tracing-opentelemetry``, exported by ``opentelemetry-otlp``
over HTTP protobuf to ``otlp_sink.py``; the program shuts its tracer provider down before it
reports. Content: rig's ``record_content_telemetry(true)`` (on; off is rig's default), which
governs messages, system instructions, tool arguments and results on the spans.

The program is a Cargo project of its own (not a member of ``native/``'s workspace), built
once per content of ``rig_agent/`` (Cargo.toml, Cargo.lock, src/) with ``--locked -j1`` into
``~/.cache/otel-oracles/rig-<hash>/`` (``CARGO_TARGET_DIR``), so no build output lands in the
work tree; each variant runs in its own process. The ``rig-latest`` source builds the same
``src/main.rs`` from ``rig_agent_latest/``, whose manifest and lockfile hold rig 0.46 and the
newest OpenTelemetry crates: rig 0.46 declares Rust 1.97.1, newer than the installed stable
toolchain, so that build runs on the machine's nightly (1.97.0-nightly) with
``--ignore-rust-version``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from external_program import CACHE, Program, Where, check_answer, content_key, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from scenarios import QUESTION, Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "rig_agent"
PROJECT_LATEST = HERE / "rig_agent_latest"
"""The manifest and lockfile with rig and the OpenTelemetry crates at their newest releases."""
NIGHTLY = ["+nightly", "--ignore-rust-version"]
"""How ``rig_agent_latest`` is built: rig 0.46's rust-version (1.97.1) is past the installed
stable toolchain (1.95); the nightly the machine has (1.97.0) compiles it."""
BINARY = "rig-capture"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "rig-core", "rig-agent", "tracing", "tracing-opentelemetry", "opentelemetry",
    "opentelemetry_sdk", "opentelemetry-otlp",
)  # fmt: skip
"""The crates whose versions EXPECTED.md lists, read from the program's Cargo.lock."""


def project_files(project: Path) -> list[Path]:
    """What the build depends on: the manifest, the lockfile and the Rust sources (the
    ``rig_agent/`` sources for both projects: ``rig_agent_latest`` names them as its binary)."""
    sources = sorted(PROJECT.glob("src/**/*.rs"))
    return [project / "Cargo.toml", project / "Cargo.lock", *sources]


def build(project: Path = PROJECT) -> Path:
    """The program's binary, built once per content of ``project`` (keyed by the hash of its
    files) into a target folder outside the repository; one job, since the machine is shared,
    and ``--locked``, so the build uses exactly the crate versions EXPECTED.md lists."""
    if project == PROJECT:
        target_dir = CACHE / f"rig-{content_key(project, project_files(project))}"
        toolchain: list[str] = []
    else:
        target_dir = CACHE / f"rig-{project.name}-{content_key(HERE, project_files(project))}"
        toolchain = NIGHTLY
    binary = target_dir / "release" / BINARY
    if binary.is_file():
        return binary
    target_dir.mkdir(parents=True, exist_ok=True)
    cargo, *flags = ["cargo", *toolchain[:1], "build", *toolchain[1:]]
    proc = subprocess.run(
        [cargo, *flags, "--release", "--locked", "-j1"],
        cwd=project, capture_output=True, text=True, check=False, timeout=3600,
        env={**os.environ, "CARGO_TARGET_DIR": str(target_dir)},
    )  # fmt: skip
    if proc.returncode != 0 or not binary.is_file():
        sys.exit(f"{project.name}: cargo build failed:\n{proc.stderr[-6000:]}")
    return binary


def versions(project: Path = PROJECT) -> dict[str, str]:
    """The versions of ``VERSIONED`` that the program's Cargo.lock pins (what the build
    compiled in)."""
    text = (project / "Cargo.lock").read_text()
    found = dict(re.findall(r'(?m)^name = "([^"]+)"\nversion = "([^"]+)"', text))
    return {crate: found.get(crate, "not locked") for crate in VERSIONED}


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool (rig's
    agent tool takes ``{"prompt": ...}``), the research agent searches and answers, then the
    triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"prompt": QUESTION}))


def versions_latest() -> dict[str, str]:
    """``versions`` of the ``rig-latest`` build (``rig_agent_latest/Cargo.lock``)."""
    return versions(PROJECT_LATEST)


def run_rig_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_rig`` on the program built from ``rig_agent_latest``."""
    return run_rig(scenario, variant, content, out, project, PROJECT_LATEST)


def run_rig(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    cargo_project: Path = PROJECT,
) -> list[str]:
    """Run one (scenario, content) variant in its own process, the program built from
    ``cargo_project``; returns the tools the run really executed, and fails when the answer is
    not the script's (``project``, the capture's Node project option, is unused)."""
    binary = build(cargo_project)

    def launch(where: Where) -> Program:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp, "NO_PROXY": "127.0.0.1"}
        spec = {
            "baseURL": where.base_url, "model": MODEL, "content": content,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, BINARY)
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
