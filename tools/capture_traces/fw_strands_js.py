"""Strands Agents for TypeScript: one scenario through ``strands_js/agent.mjs`` against the
scripted fake OpenAI Responses server, for the ``strands-js`` and ``strands-js-latest`` sources.

The agents are ``@strands-agents/sdk`` ``Agent``s on Strands' ``OpenAIModel`` on its default
API, OpenAI Responses, streamed (base URL on ``fake_openai_responses.py``; Strands 1.19's Chat
Completions adapter keeps only the last of several tool calls streamed in one turn, so
``i_parallel_tools`` and ``l_parallel_failures`` could not run on it), with ``tool()``
tools that return or throw what the scenario scripts: a failing search throws, and Strands
hands the model an error tool result. ``g_handoff`` uses Strands' agents as tools
(``Agent.asTool``, one ``input`` argument), as the Python ``strands`` source does; the
research agent starts from its own history, so the fake server answers in call order.

Telemetry is Strands' own: its tracer takes the global tracer provider, which the script
registers with an OTLP/HTTP protobuf exporter to ``otlp_sink.py``; bodies are kept as sent
and written as OTLP/JSON (``fw_adk_go.write_bodies``). Strands for TypeScript has no switch
for content (the Python SDK's ``gen_ai_unredacted_attributes`` allow-list is absent), so the
``.nocontent`` variant is the same run; what differs between the two sources is
``OTEL_SEMCONV_STABILITY_OPT_IN``: unset (per-message span events) or
``gen_ai_latest_experimental`` (one ``gen_ai.client.inference.operation.details`` event).

The npm packages are installed once per content of ``strands_js/package.json`` and its
lockfile (``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from external_program import Program, Where, check_answer, run_program
from fake_openai_responses import FakeOpenAIResponses
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from scenarios import QUESTION, Scenario
from scripted_server import Reply

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "strands_js"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "@strands-agents/sdk", "openai", "@opentelemetry/sdk-trace-node",
    "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: for ``g_handoff`` the triage agent calls the
    ``research_agent`` tool, the research agent searches and answers, then the triage agent
    passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"input": QUESTION}))


class _Responses(FakeOpenAIResponses):
    """The Responses fake as ``run_program`` starts a server: with its ``turn_of`` told of
    each model call (it counts them against the script; the fake answers in call order)."""

    def __init__(self, scenario: Scenario, turn_of: Callable[[dict[str, Any]], int]) -> None:
        self._turn_of = turn_of
        super().__init__(scenario)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if path.endswith("/responses"):
            self._turn_of(body)
        return super()._answer(path, body)


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def _run(scenario: Scenario, variant: str, out: Path, opt_in: str) -> list[str]:
    """One variant in its own Node process with ``OTEL_SEMCONV_STABILITY_OPT_IN=opt_in``;
    returns the tools the run really executed, and fails when the answer is not the
    script's."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env |= {
            "OTEL_SEMCONV_STABILITY_OPT_IN": opt_in,
            "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
        }  # fmt: skip
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, _Responses, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)


def run_strands_js(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """The ``strands-js`` source: Strands' default conventions (``content`` and ``project``
    unused: no content switch, the packages come from ``install``)."""
    return _run(scenario, variant, out, "")


def run_strands_js_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """The ``strands-js-latest`` source: ``gen_ai_latest_experimental`` conventions."""
    return _run(scenario, variant, out, "gen_ai_latest_experimental")
