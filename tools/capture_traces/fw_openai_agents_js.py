"""OpenAI Agents SDK for JavaScript: one scenario through ``openai_agents_js/agent.mjs`` against
the scripted fake OpenAI server, for the ``openai-agents-js`` source.

The agents are ``@openai/agents`` ``Agent``s on the SDK's ``OpenAIChatCompletionsModel`` (an
``openai`` client whose base URL is ``fake_openai.py``, which serves chat completions only),
with ``tool()`` tools that return or throw what the scenario scripts: a failing search throws,
and the SDK's default error function hands the model its error text. ``g_handoff`` and
``n_handback`` use the SDK's native handoffs (``transfer_to_research_agent``, and
``transfer_to_triage_agent`` back), the same tool names the scenarios script, so the model's
turns need no translation; the fake server answers in call order.

Telemetry is OpenInference's (``@arizeai/openinference-instrumentation-openai-agents``): its
trace processor replaces the SDK's own (no export to OpenAI's backend) and writes the SDK's
spans as OpenTelemetry spans on a tracer provider whose OTLP/HTTP protobuf exporter sends to
``otlp_sink.py``; bodies are kept as sent (``<variant>.raw/traces-N.pb``) and written as
OTLP/JSON (``fw_adk_go.write_bodies``). Content off is OpenInference's ``traceConfig``
(``hideInputs``, ``hideOutputs``, ``hideInputMessages``, ``hideOutputMessages``), the switch
the Python ``openinference-openai-agents`` source turns off through its environment variables.

The npm packages are installed once per content of ``openai_agents_js/package.json`` and its
lockfile (``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "openai_agents_js"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "@openai/agents", "@openai/agents-core", "@openai/agents-openai", "openai",
    "@arizeai/openinference-instrumentation-openai-agents", "@arizeai/openinference-core",
    "@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def run_openai_agents_js(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer (or, after handoffs, the agent giving it) is
    not the script's (``project`` is the capture's Node project option, unused: the packages
    come from ``install``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp, "content": content,
            "transfersBack": scenario.transfers_back, "calls": scripted_calls(scenario),
        }  # fmt: skip
        env = {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], os.environ | env)

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    executed = check_answer(run, scenario, variant, out)
    # A handoff the SDK did not make leaves the triage agent answering: no capture.
    if scenario.agents_only and run.report["author"] != scenario.handoffs[-1][1]:
        sys.exit(f"{variant}: answered by {run.report['author']}, not after the last handoff")
    return executed
