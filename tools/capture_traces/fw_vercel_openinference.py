"""Vercel AI SDK 7 agents converted to OpenInference: one scenario through
``vercel_openinference/agent.mjs`` against the scripted fake OpenAI server, for the
``vercel-ai-sdk-openinference`` source.

The agents are AI SDK 7 ``ToolLoopAgent``s (``stopWhen: stepCountIs(10)``) on
``@ai-sdk/openai-compatible`` (base URL on ``fake_openai.py``, answered in call order), with
``tool()`` tools that return or throw what the scenario scripts. ``g_handoff`` is an agent
used as a tool, as in ``fw_vercel5.py``: the triage agent's ``research_agent`` tool runs the
research agent.

Telemetry is AI SDK 7's ``@ai-sdk/otel`` (``registerTelemetry(new OpenTelemetry())``; each
call's ``telemetry`` option turns it on and sets ``recordInputs`` / ``recordOutputs``, which
the content-off variant sets false), whose spans ``@arizeai/openinference-vercel``'s
``OpenInferenceSimpleSpanProcessor`` gives OpenInference attributes before an OTLP/HTTP
protobuf exporter sends them to ``otlp_sink.py``; bodies are kept as sent and written as
OTLP/JSON (``fw_adk_go.write_bodies``).

The npm packages are installed once per content of ``vercel_openinference/package.json``
and its lockfile (``fw_adk_js.install``), outside the repository.
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
from fw_vercel5 import script
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "vercel_openinference"
SCRIPT = "agent.mjs"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "ai", "@ai-sdk/otel", "@ai-sdk/openai-compatible", "@arizeai/openinference-vercel",
    "@opentelemetry/sdk-trace-node", "@opentelemetry/exporter-trace-otlp-proto",
)  # fmt: skip
"""The npm packages whose versions EXPECTED.md lists, read from the project's lockfile."""


def versions() -> dict[str, str]:
    """The versions the lockfile pins (what ``npm ci`` installs) for ``VERSIONED``."""
    packages = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    return {
        name: packages.get(f"node_modules/{name}", {}).get("version", "not installed")
        for name in VERSIONED
    }


def run_vercel_openinference(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    stream: bool = False,
) -> list[str]:
    """Run one (scenario, content) variant in its own Node process; returns the tools the run
    really executed, and fails when the answer is not the script's (``project`` unused: the
    packages come from ``install``). ``stream``: every agent runs through ``agent.stream``
    (``vercel-ai-sdk-openinference-stream``)."""
    installed = install(PROJECT)
    shutil.copyfile(PROJECT / SCRIPT, installed / SCRIPT)

    def launch(where: Where) -> Program:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env |= {"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        spec = {
            "model": MODEL, "baseURL": where.base_url, "otlp": where.otlp, "content": content,
            "calls": scripted_calls(scenario), "stream": stream,
        }  # fmt: skip
        return Program(spec, ["node", str(installed / SCRIPT), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, "node")
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
