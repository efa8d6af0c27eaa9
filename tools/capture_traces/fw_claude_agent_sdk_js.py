"""The Claude Agent SDK for TypeScript driving the real Claude Code executable, traced by
OpenInference's JavaScript instrumentation: one scenario through ``claude_agent_sdk_js/agent.mjs``
for the ``claude-agent-sdk-js`` source, the TypeScript twin of ``claude-agent-sdk``.

``query()`` (``@anthropic-ai/claude-agent-sdk``) starts the Claude Code executable of its
platform package; it talks to the same scripted Anthropic Messages server as the Python source
(``fw_claude_agent_sdk.ClaudeCodeScript``: streamed answers, the scenario's calls under Claude
Code's ``mcp__scenario__<tool>`` names, side calls answered with a short text) and calls the
scenario's tools as in-process SDK MCP tools, whose results this module computes in call order
(``fw_adk_go.scripted_calls``). ``g_handoff`` delegates through Claude Code's ``Agent`` tool to
the ``research_agent`` ``AgentDefinition``. The CLI runs with an empty ``HOME`` in a temporary
directory, no built-in tools, and every connection not to 127.0.0.1 sent to a dead proxy.

Telemetry is ``@arizeai/openinference-instrumentation-claude-agent-sdk``'s
``manuallyInstrument`` on a tracer provider whose OTLP/HTTP protobuf exporter sends to
``otlp_sink.py``; content off is its ``traceConfig``. The npm packages are installed once per
content of ``claude_agent_sdk_js/package.json`` and its lockfile (``fw_adk_js.install``),
outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fake_anthropic import MODEL
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from fw_claude_agent_sdk import PREFIX, RESEARCH_PROMPT, ClaudeCodeScript
from fw_mastra import check_model_spans
from otlp_sink import OtlpSink
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "claude_agent_sdk_js"
SCRIPT = "agent.mjs"

VERSIONED = (
    "@anthropic-ai/claude-agent-sdk", "@arizeai/openinference-instrumentation-claude-agent-sdk",
    "@arizeai/openinference-core", "@opentelemetry/sdk-trace-node",
    "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def research_tools(scenario: Scenario) -> list[str]:
    """The tools the research agent's turns call (``search_docs``; ``s_delegated_forbidden``
    also ``delete_records``), under Claude Code's names, as the Python driver offers them."""
    return sorted(
        {
            PREFIX + tool
            for turn in scenario.turns[1:]
            for tool, _ in ([] if isinstance(turn, str) else turn)
        }
    )


def run_claude_agent_sdk_js(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed (Claude Code's names), and fails when no model-call span was exported or
    the answer is not the script's (``project``, the capture's Node project option, is
    unused: the packages come from ``install``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)
    spec_path = out.resolve() / f".{variant}.spec.json"
    received = OtlpSink()
    with (
        ClaudeCodeScript(scenario) as base_url,
        received as endpoint,
        tempfile.TemporaryDirectory() as home,
    ):
        research = (
            {"prompt": RESEARCH_PROMPT, "tools": research_tools(scenario)}
            if scenario.agents_only
            else None
        )
        spec = {
            "system": scenario.system, "prompt": scenario.prompt, "handoff": scenario.agents_only,
            "agent": "coding_agent" if scenario.name == "h_coding_agent" else "support_agent",
            "baseURL": base_url, "otlp": endpoint, "content": content, "home": home,
            "model": MODEL, "research": research, "denied": list(scenario.denied),
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        spec_path.write_text(json.dumps(spec))
        env = os.environ | {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        try:
            proc = subprocess.run(
                ["node", str(installed / SCRIPT), str(spec_path)],
                env=env, cwd=installed, capture_output=True, text=True, check=False, timeout=300,
            )  # fmt: skip
        finally:
            spec_path.unlink()
    if proc.returncode != 0:
        sys.exit(f"{variant}: node failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    write_bodies(received, out, variant)
    check_model_spans(out / f"{variant}.otlp.json", variant)
    if scenario.model_fails_from is not None:
        if not report.get("error"):
            sys.exit(f"{variant}: expected the run to end in the scripted HTTP error: {report}")
    elif report["text"] != scenario.turns[-1]:
        sys.exit(f"{variant}: final answer {report['text']!r} is not the script's: {report}")
    executed: list[str] = report["executed"]
    return executed
