"""The raw sources' hand-written tool loop on the ``openai`` client for JavaScript, traced by a
JavaScript tracing SDK: one scenario through ``openai_js/loop.mjs`` against the scripted fake
OpenAI server, for the ``openinference-openai-js``, ``langfuse-openai-js`` and
``openllmetry-openai-js`` sources.

The loop is ``decorated_loop.py``'s, written in JavaScript: the run is one agent function, each
tool a function that really runs (a failing search throws, and the loop hands the model
``{"error": "SearchBackendError: ..."}``), and ``g_handoff`` (with ``s_delegated_*``) a triage
agent whose ``transfer_to_research_agent`` tool runs a research agent continuing the
conversation. Each tracer wraps those functions the way its SDK documents for an application
of one's own and records the model calls with its OpenAI instrumentation:

- ``openinference``: ``@arizeai/openinference-instrumentation-openai`` and
  ``@arizeai/openinference-core``'s ``traceAgent`` / ``traceTool`` (content off: the
  ``traceConfig`` hiding inputs, outputs and messages, the Python ``OPENINFERENCE_HIDE_*``);
- ``langfuse``: ``@langfuse/openai``'s ``observeOpenAI`` and ``@langfuse/tracing``'s
  ``observe(fn, {asType})``, exported by ``@langfuse/otel``'s ``LangfuseSpanProcessor``
  (content off: its ``mask`` returning nothing, and ``captureInput`` / ``captureOutput``
  false), as the Python ``langfuse-openai`` source;
- ``openllmetry``: ``@traceloop/node-server-sdk`` with ``instrumentModules: {openAI}`` and its
  ``withAgent`` / ``withTool`` wrappers (content off: ``traceContent: false``), as the Python
  ``traceloop-sdk`` source.

Every tracer's exporter sends OTLP/HTTP protobuf to ``otlp_sink.py``; bodies are kept as sent
(``<variant>.raw/traces-N.pb``) and written as OTLP/JSON (``fw_adk_go.write_bodies``). The npm
packages are installed once per content of ``openai_js/package.json`` and its lockfile
(``fw_adk_js.install``), outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from decorated_loop import TRANSFER_SCHEMA
from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import scripted_calls, write_bodies
from fw_adk_js import install
from scenarios import TOOL_SCHEMAS, Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "openai_js"
SCRIPT = "loop.mjs"
MODEL = "gpt-4o-mini"

VERSIONED = {
    "openinference": (
        "openai", "@arizeai/openinference-instrumentation-openai",
        "@arizeai/openinference-core", "@opentelemetry/sdk-trace-base",
        "@opentelemetry/exporter-trace-otlp-proto",
    ),
    "langfuse": (
        "openai", "@langfuse/openai", "@langfuse/tracing", "@langfuse/otel", "@langfuse/core",
        "@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-proto",
    ),
    "openllmetry": (
        "openai", "@traceloop/node-server-sdk", "@traceloop/instrumentation-openai",
        "@traceloop/ai-semantic-conventions", "@opentelemetry/sdk-trace-base",
        "@opentelemetry/exporter-trace-otlp-proto",
    ),
}  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists per tracer, read from the lockfile."""


def _versions(tracer: str) -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``tracer``'s packages."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED[tracer]
    }


def versions_openinference() -> dict[str, str]:
    """``openinference-openai-js``'s package versions."""
    return _versions("openinference")


def versions_langfuse() -> dict[str, str]:
    """``langfuse-openai-js``'s package versions."""
    return _versions("langfuse")


def versions_openllmetry() -> dict[str, str]:
    """``openllmetry-openai-js``'s package versions."""
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

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)


def run_openinference(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``openinference-openai-js`` (``project``, the capture's Node project option, is unused:
    the packages come from ``install``)."""
    return _run("openinference", scenario, variant, content, out)


def run_langfuse(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``langfuse-openai-js``."""
    return _run("langfuse", scenario, variant, content, out)


def run_openllmetry(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``openllmetry-openai-js``."""
    return _run("openllmetry", scenario, variant, content, out)
