"""Swiftide (Rust): one scenario through the ``swiftide_agent/`` program against the scripted
fake OpenAI server, for the ``swiftide`` source.

The agent is ``swiftide_agents::Agent`` on swiftide-integrations' OpenAI chat-completions
client (an ``async_openai`` client whose API base is ``fake_openai.py``), with one ``Tool`` per
scripted tool (``scenarios.TOOL_SCHEMAS``) and Swiftide's default ``stop`` tool; Swiftide runs the
loop (its tools of one turn concurrently) and ends it when the model answers without tool
calls. A failing tool returns an error; Swiftide hands the model ``ToolOutput::fail`` with the
error's text and logs a WARN event "Tool call failed, retrying" on the step's span; the tool's
span carries no status.

Swiftide's ``tracing`` spans (``agent.query``, ``step-N``, ``complete``, ``tool.<name>``,
``add_message`` with the message's text as a field) become OpenTelemetry spans through
``tracing-opentelemetry`` (INFO and above), exported by ``opentelemetry-otlp`` over HTTP protobuf
to ``otlp_sink.py``; the program shuts its tracer provider down before it reports. Swiftide has
no content switch for its spans: the ``add_message`` spans hold every message's text whatever
the setting, so both variants are the same run (its ``langfuse`` feature adds Langfuse fields at
DEBUG, which an INFO application does not export).

The program is a Cargo project of its own (not a member of ``native/``'s workspace), built once
per content of ``swiftide_agent/`` (Cargo.toml, Cargo.lock, src/) with ``--locked -j1`` into
``~/.cache/otel-oracles/swiftide-<hash>/`` (``CARGO_TARGET_DIR``), so no build output lands in the
work tree; each variant runs in its own process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from external_program import CACHE, Program, Where, check_answer, content_key, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from scenarios import TOOL_SCHEMAS, Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "swiftide_agent"
BINARY = "swiftide-capture"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "swiftide-agents", "swiftide-core", "swiftide-integrations", "async-openai", "tracing",
    "tracing-opentelemetry", "opentelemetry", "opentelemetry_sdk", "opentelemetry-otlp",
)  # fmt: skip
"""The crates whose versions EXPECTED.md lists, read from the program's Cargo.lock."""


def project_files() -> list[Path]:
    """What the build depends on: the manifest, the lockfile and the Rust sources."""
    return [PROJECT / "Cargo.toml", PROJECT / "Cargo.lock", *sorted(PROJECT.glob("src/**/*.rs"))]


def build() -> Path:
    """The program's binary, built once per content of the project (keyed by the hash of its
    files) into a target folder outside the repository; one job, since the machine is shared,
    and ``--locked``, so the build uses exactly the crate versions EXPECTED.md lists."""
    target_dir = CACHE / f"swiftide-{content_key(PROJECT, project_files())}"
    binary = target_dir / "release" / BINARY
    if binary.is_file():
        return binary
    target_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["cargo", "build", "--release", "--locked", "-j1"],
        cwd=PROJECT, capture_output=True, text=True, check=False, timeout=3600,
        env={**os.environ, "CARGO_TARGET_DIR": str(target_dir)},
    )  # fmt: skip
    if proc.returncode != 0 or not binary.is_file():
        sys.exit(f"{PROJECT.name}: cargo build failed:\n{proc.stderr[-6000:]}")
    return binary


def versions() -> dict[str, str]:
    """The versions of ``VERSIONED`` that the program's Cargo.lock pins (what the build
    compiled in; ``async-openai`` the one swiftide-integrations uses, the newest locked)."""
    text = (PROJECT / "Cargo.lock").read_text()
    found: dict[str, str] = {}
    for crate, version in re.findall(r'(?m)^name = "([^"]+)"\nversion = "([^"]+)"', text):
        found[crate] = version  # the lockfile lists a crate's versions in ascending order
    return {crate: found.get(crate, "not locked") for crate in VERSIONED}


def run_swiftide(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own process; returns the tools the run
    really executed, and fails when the answer is not the script's (``content`` changes
    nothing: Swiftide has no content switch; ``project``, the capture's Node project option,
    is unused)."""
    binary = build()

    def launch(where: Where) -> Program:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp, "NO_PROXY": "127.0.0.1"}
        spec = {
            "baseURL": where.base_url, "model": MODEL, "tools": TOOL_SCHEMAS,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, BINARY)
    write_bodies(run.received, out, variant)
    executed = check_answer(run, scenario, variant, out)
    doc = json.loads((out / f"{variant}.otlp.json").read_text())
    spans = [
        span
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]
    calls = sum(span["name"] == "complete" for span in spans)
    ids = {span["spanId"] for span in spans}
    roots = [span["name"] for span in spans if not span.get("parentSpanId")]
    orphans = [s["name"] for s in spans if s.get("parentSpanId") and s["parentSpanId"] not in ids]
    if calls != run.model_calls or len(roots) != 1 or orphans:
        sys.exit(f"{variant}: {calls} `complete` spans for {run.model_calls} model requests, "
                 f"roots {roots}, parent missing for {orphans}")  # fmt: skip
    return executed
