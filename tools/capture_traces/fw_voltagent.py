"""VoltAgent (TypeScript): one scenario through ``voltagent/agent.mjs`` against the scripted fake
OpenAI server, for the ``voltagent`` source.

The agents are ``@voltagent/core`` ``Agent``s on the AI SDK's ``@ai-sdk/openai-compatible``
chat model (base URL on ``fake_openai.py``), with ``createTool`` tools that return or throw
what the scenario scripts. ``g_handoff`` is VoltAgent's supervisor: the triage agent's
``subAgents`` give it the ``delegate_task`` tool (``{"task", "targetAgents"}``), whose
sub-agent starts from its own history, so the fake server answers in call order.

Telemetry is VoltAgent's own observability: a ``VoltAgentObservability`` (its own tracer
provider) handed an OTLP/HTTP protobuf exporter to ``otlp_sink.py`` as a span processor;
bodies are kept as sent and written as OTLP/JSON (``fw_adk_go.write_bodies``). VoltAgent has
no switch for content, so the ``.nocontent`` variant is the same run.

The npm packages are installed once per content of ``voltagent/package.json`` and its
lockfile (``fw_adk_js.install``), outside the repository.
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
from scenarios import QUESTION, Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "voltagent"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"
DELEGATE = "delegate_task"

VERSIONED = (
    "@voltagent/core", "ai", "@ai-sdk/openai-compatible", "@opentelemetry/sdk-trace-base",
    "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: for ``g_handoff`` the triage agent calls
    ``delegate_task``, the research agent searches and answers, then the triage agent
    answers the same."""
    delegate = (DELEGATE, {"task": QUESTION, "targetAgents": ["research_agent"]})
    return scenario.through_agent_tool(delegate, scenario.turns[-1])


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def run_voltagent(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer is not the script's (``content`` and
    ``project`` unused: VoltAgent has no content switch, the packages come from ``install``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        # Outside production VoltAgent fetches the models.dev registry at import: not here.
        env = os.environ | {
            "NODE_ENV": "production", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
        }  # fmt: skip
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
