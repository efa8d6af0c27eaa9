"""BeeAI Framework for TypeScript traced by OpenInference's BeeAI instrumentation: one scenario
through ``beeai_js/agent.mjs`` against the scripted fake OpenAI server, for the
``beeai-js-openinference`` source (the JavaScript twin of ``beeai-openinference``).

The agent is BeeAI's ``RequirementAgent`` on its ``OpenAIChatModel`` (the AI SDK's OpenAI chat
model underneath, chat completions) pointed at ``fake_openai.py``. BeeAI ends every run
through its built-in ``final_answer`` tool, so the model's turns are ``fw_beeai.script``'s,
as for the Python source: each scripted final text delivered as that tool's ``response``
argument, and ``g_handoff`` a call of BeeAI's ``HandoffTool`` named ``research_agent``, the
research agent's turns, then the triage agent passing the answer on. Tools are
``DynamicTool``s returning the scripted result as JSON text; a failing search throws and
BeeAI hands the model the error. The tool-call cycle checker is off.

Telemetry is ``@arizeai/openinference-instrumentation-beeai``'s ``manuallyInstrument`` on a
tracer provider whose OTLP/HTTP protobuf exporter sends to ``otlp_sink.py``; content off is
its ``traceConfig`` (``hideInputs``, ``hideOutputs``, ``hideInputMessages``,
``hideOutputMessages``). The npm packages are installed once per content of
``beeai_js/package.json``, its lockfile and its ``.npmrc`` (``legacy-peer-deps``: the
framework's optional peers, LangChain and Zep among them, conflict, and none is used)
(``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from fw_beeai import script
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "beeai_js"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "beeai-framework", "@arizeai/openinference-instrumentation-beeai",
    "@arizeai/openinference-core", "ai", "@ai-sdk/openai", "@opentelemetry/sdk-trace-base",
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


def run_beeai_js(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer is not the script's (``project``, the
    capture's Node project option, is unused: the packages come from ``install``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp, "content": content,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        env = {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], os.environ | env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
