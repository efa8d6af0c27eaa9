"""The raw Anthropic sources' hand-written tool loop on the Anthropic TypeScript SDK, traced by
a JavaScript tracing SDK: one scenario through ``anthropic_js/loop.mjs`` against the scripted
``fake_anthropic.py`` server, for the ``openinference-anthropic-js`` and
``openllmetry-anthropic-js`` sources.

The loop is ``fw_anthropic.py``'s Messages API loop with ``fw_openai_js.py``'s functions: the
run is one agent function, each tool a function that really runs (a failing search throws, and
the loop hands the model a ``tool_result`` block with ``is_error: true``), and ``g_handoff``
(with ``s_delegated_*``) a triage agent whose ``transfer_to_research_agent`` tool runs a
research agent continuing the conversation. Each tracer wraps those functions the way its SDK
documents for an application of one's own and records the model calls with its Anthropic
instrumentation:

- ``openinference``: ``@arizeai/openinference-instrumentation-anthropic`` and
  ``@arizeai/openinference-core``'s ``traceAgent`` / ``traceTool`` (content off: the
  ``traceConfig`` hiding inputs, outputs and messages);
- ``openllmetry``: ``@traceloop/node-server-sdk`` with ``instrumentModules: {anthropic}`` (its
  ``@traceloop/instrumentation-anthropic``) and its ``withAgent`` / ``withTool`` wrappers
  (content off: ``traceContent: false``).

Both exporters send OTLP/HTTP protobuf to ``otlp_sink.py``; bodies are kept as sent
(``<variant>.raw/traces-N.pb``) and written as OTLP/JSON (``fw_adk_go.write_bodies``). The npm
packages are installed once per content of ``anthropic_js/package.json`` and its lockfile
(``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from decorated_loop import TRANSFER_SCHEMA
from external_program import Program, Where, check_answer, run_program
from fake_anthropic import MODEL, FakeAnthropic
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from scenarios import TOOL_SCHEMAS, Scenario
from scripted_server import Reply

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "anthropic_js"
SCRIPT = "loop.mjs"

VERSIONED = {
    "openinference": (
        "@anthropic-ai/sdk", "@arizeai/openinference-instrumentation-anthropic",
        "@arizeai/openinference-core", "@opentelemetry/sdk-trace-base",
        "@opentelemetry/exporter-trace-otlp-proto",
    ),
    "openllmetry": (
        "anthropic-sdk-0", "@traceloop/node-server-sdk", "@traceloop/instrumentation-anthropic",
        "@traceloop/ai-semantic-conventions", "@opentelemetry/sdk-trace-base",
        "@opentelemetry/exporter-trace-otlp-proto",
    ),
}  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists per tracer, read from the lockfile."""


class _CountedAnthropic(FakeAnthropic):
    """``fake_anthropic.py``'s server reporting each Messages request to ``turn_of``, so that
    ``run_program`` checks the model was asked as many times as the script has turns (the
    turn answered is still chosen by the request's assistant messages: the loop carries the
    whole conversation on, so the two agree)."""

    def __init__(self, scenario: Scenario, turn_of: Callable[[dict[str, Any]], int]) -> None:
        self.count_turn = turn_of
        super().__init__(scenario)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if path.split("?")[0].endswith("/v1/messages"):
            self.count_turn(body)
        return super()._answer(path, body)


def _versions(tracer: str) -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``tracer``'s packages."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED[tracer]
    }


def versions_openinference() -> dict[str, str]:
    """``openinference-anthropic-js``'s package versions."""
    return _versions("openinference")


def versions_openllmetry() -> dict[str, str]:
    """``openllmetry-anthropic-js``'s package versions."""
    return _versions("openllmetry")


def _run(tracer: str, scenario: Scenario, variant: str, content: bool, out: Path) -> list[str]:
    """Run one (scenario, content) variant of ``tracer``'s source in its own Node process;
    returns the tools the run really executed, and fails when the answer is not the
    script's."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        spec = {
            "tracer": tracer, "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp,
            "content": content, "tools": TOOL_SCHEMAS, "transfer": TRANSFER_SCHEMA,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        env = {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], os.environ | env)

    run = run_program(scenario, scenario, variant, out, _CountedAnthropic, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)


def run_openinference(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``openinference-anthropic-js`` (``project``, the capture's Node project option, is
    unused: the packages come from ``install``)."""
    return _run("openinference", scenario, variant, content, out)


def run_openllmetry(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``openllmetry-anthropic-js``."""
    return _run("openllmetry", scenario, variant, content, out)
