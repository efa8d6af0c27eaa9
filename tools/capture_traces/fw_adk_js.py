"""Google ADK for TypeScript: one scenario through ``adk_js/agent.mjs`` against the scripted
fake Gemini server, for the ``adk-js`` source.

The agent is an ADK ``LlmAgent`` on ADK's ``Gemini`` model class (``@google/genai`` with its
base URL on ``fake_gemini.py`` through ``GOOGLE_GEMINI_BASE_URL``, the variable the client
reads), with ``FunctionTool`` tools that return or throw what the scenario scripts: a failing
search throws, and ADK itself hands the model ``{"error": "Error in tool 'search_docs':
SearchBackendError: ..."}``, with no callback. ``g_handoff`` and ``n_handback`` use ADK's
sub-agents and its built-in ``transfer_to_agent`` tool, as the Python ``google-adk`` and
``adk-go`` sources do, except that ADK JS names the tool's argument ``agentName`` (``script``;
an ``agent_name`` argument fails its schema, so the transfer never happens); each agent sees
the session in its own way, so the fake server answers in call order.

Telemetry is ADK's own: ``maybeSetOtelProviders`` registers a global tracer provider with the
span processor the script gives it, an OTLP/HTTP protobuf exporter sending to
``otlp_sink.py``; bodies are kept as sent (``<variant>.raw/traces-N.pb``) and written as
OTLP/JSON (``fw_adk_go.write_bodies``). Content capture is ADK's
``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS``, which ADK reads at each span and which is on unless
set to something other than ``true`` / ``1``: the content-on variant sets ``true`` and the
off variant ``false``.

The npm packages are installed once per content of ``adk_js/package.json`` and its lockfile
(``npm ci``), into a cache folder outside the repository
(``~/.cache/otel-oracles/capture-node/adk_js-<hash>/``), so no ``node_modules`` lands in the
work tree; the script is copied there before each run, since Node resolves packages from the
script's own folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import fw_adk
from external_program import CACHE, Program, Where, check_answer, content_key, run_program
from fake_gemini import MODEL, FakeGemini
from fw_adk_go import scripted_calls, write_bodies
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "adk_js"
SCRIPT = "agent.mjs"

VERSIONED = (
    "@google/adk", "@google/genai", "@opentelemetry/api", "@opentelemetry/sdk-trace-base",
    "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order (``fw_adk.script``: each transfer a call of ADK's
    ``transfer_to_agent``), the target agent in ADK JS's ``agentName`` argument."""
    scripted = fw_adk.script(scenario)

    def js(turn: fw_adk.Turn) -> fw_adk.Turn:
        if isinstance(turn, str):
            return turn
        return [
            (name, {"agentName": args["agent_name"]})
            if name == "transfer_to_agent"
            else (name, args)
            for name, args in turn
        ]

    return dataclasses.replace(scripted, turns=[js(turn) for turn in scripted.turns])


def install(project: Path) -> Path:
    """A folder holding ``project``'s ``node_modules``, installed with ``npm ci`` once per
    content of its ``package.json`` and lockfile (keyed by their hash), outside the
    repository; an install that failed half-way is removed, so it is redone next time. A
    project's ``.npmrc`` (npm settings its lockfile was made with, e.g. ``legacy-peer-deps``)
    is installed with it and keys the folder too."""
    manifests = [project / "package.json", project / "package-lock.json"]
    manifests += [npmrc for npmrc in [project / ".npmrc"] if npmrc.is_file()]
    target = CACHE / "capture-node" / f"{project.name}-{content_key(project, manifests)}"
    if (target / "node_modules" / ".package-lock.json").is_file():
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for manifest in manifests:
        shutil.copyfile(manifest, target / manifest.name)
    proc = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=target, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        sys.exit(f"{project.name}: npm ci failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return target


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def run_adk_js(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer (or, after transfers, the agent giving it)
    is not the script's (``project`` is the capture's Node project option, unused: the
    packages come from ``install``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        # ADK adds exporters of its own for OTEL_EXPORTER_OTLP_*: the sink's is the only one.
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP")}
        env |= {
            "GOOGLE_GEMINI_BASE_URL": where.base_url,
            "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "true" if content else "false",
            "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
        }  # fmt: skip
        spec = {"model": MODEL, "otlp": where.otlp, "calls": scripted_calls(scenario)}
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeGemini, launch, "node")
    write_bodies(run.received, out, variant)
    executed = check_answer(run, scenario, variant, out)
    # The answer comes from the agent the last transfer went to: a transfer ADK did not make
    # (a failed transfer_to_agent call leaves the triage agent running) is no capture.
    if scenario.agents_only and run.report["author"] != scenario.handoffs[-1][1]:
        sys.exit(f"{variant}: answered by {run.report['author']}, not after the last transfer")
    return executed
