"""LlamaIndex.TS agents traced by OpenLLMetry JS: one scenario through
``llamaindex_js/agent.mjs`` against the scripted fake OpenAI server, for the
``llamaindex-js-openllmetry`` source (the TypeScript twin of ``llamaindex-openllmetry``).

The agent is ``@llamaindex/workflow``'s ``agent()`` (an ``AgentWorkflow`` of one
``FunctionAgent``, which streams every model call) on ``@llamaindex/openai``'s ``OpenAI`` model
pointed at ``fake_openai.py``, answered in call order; the scripted tools are ``llamaindex``
``tool()``s returning the scripted result as JSON text or throwing (the workflow hands the
model ``Error: <the error>``). ``g_handoff`` and ``s_delegated_*`` are a ``multiAgent()``
whose triage agent hands off natively with the workflow's ``handOff`` tool
(``{"toAgent", "reason"}``), which replaces the scenario's ``transfer_to_research_agent``.

Telemetry is ``traceloop.initialize`` (``@traceloop/node-server-sdk``) given the
``llamaindex`` and ``@llamaindex/openai`` modules (``instrumentModules``, the SDK's way for ES
modules), its OTLP/HTTP protobuf exporter sending to ``otlp_sink.py``, the run inside
``traceloop.withAgent``; content off is ``traceContent: false``. The instrumentation wraps the
model's ``chat`` only: no span for the agent workflow's steps or its tool calls, and a streamed
call's output is its text alone (the requested tool calls are dropped). The
``llamaindex-js-openllmetry-openai`` source gives the SDK the ``openai`` client module too
(``instrumentModules.openAI``): its OpenAI instrumentation records each request to the client
inside LlamaIndex's ``chat`` span, tool calls included. The npm
packages are installed once per content of ``llamaindex_js/package.json`` and its lockfile
(``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from scenarios import Scenario, Turn

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "llamaindex_js"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"
HANDOFF = ("handOff", {"toAgent": "research_agent", "reason": "A research question."})
"""The scripted call of the workflow's own handoff tool (in place of
``transfer_to_research_agent``)."""

VERSIONED = (
    "llamaindex", "@llamaindex/workflow", "@llamaindex/core", "@llamaindex/openai", "openai",
    "@traceloop/node-server-sdk", "@traceloop/instrumentation-llamaindex",
    "@traceloop/instrumentation-openai", "@opentelemetry/sdk-trace-base",
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


def script(scenario: Scenario) -> Scenario:
    """The model's turns with each ``transfer_to_research_agent`` call made the workflow's
    ``handOff`` call; every other turn is the scenario's."""
    turns: list[Turn] = [
        t
        if isinstance(t, str)
        else [HANDOFF if name == "transfer_to_research_agent" else (name, args) for name, args in t]
        for t in scenario.turns
    ]
    return dataclasses.replace(scenario, turns=turns)


def run_llamaindex_js(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    openai: bool = False,
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer is not the script's (``project``, the
    capture's Node project option, is unused: the packages come from ``install``). With
    ``openai`` the SDK instruments the ``openai`` client under ``@llamaindex/openai`` too."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp, "content": content,
            "calls": scripted_calls(scenario), "openai": openai,
        }  # fmt: skip
        env = {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], os.environ | env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)


def run_llamaindex_js_openai(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """The same agents with OpenLLMetry's OpenAI instrumentation on the ``openai`` client too
    (``llamaindex-js-openllmetry-openai``): each model call recorded twice, LlamaIndex's
    ``chat`` span holding the OpenAI instrumentation's, which keeps the requested tool calls."""
    return run_llamaindex_js(scenario, variant, content, out, project, openai=True)
