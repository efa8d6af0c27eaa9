"""CloudWeGo Eino: one scenario through the ``eino_go/`` program against the scripted fake
OpenAI server, for the ``eino-apmplus`` and ``eino-react-apmplus`` sources.

The agents are Eino ``adk.ChatModelAgent``s on eino-ext's OpenAI chat model (its base URL on
``fake_openai.py``), run by ``adk.Runner``, whose tools return or fail with what the scenario
scripts: a failing tool returns a Go error, and a ``ToolCallMiddleware`` (Eino's hook around a
tool call) hands the model ``{"error": "<the error>"}``, so the tool's own callback still
records the failure. ``g_handoff`` and the ``s_delegated_*`` scenarios: the triage agent calls
the research agent through ``adk.NewAgentTool`` (a tool named after the agent whose argument
is ``{"request": ...}``); the research agent starts from its own history, so the fake server
answers in call order. ``eino-react-apmplus`` runs the same agents on Eino's older
``flow/agent/react`` runtime (``react.NewAgent`` with its default graph name), whose research
agent a ``research_agent`` tool of the application's own runs (that runtime has no agent tool).

Tracing is eino-ext's APMPlus callback handler (``callbacks/apmplus``, the Eino handler that
writes OpenTelemetry spans), registered as a global Eino callback handler: it builds its own
tracer and meter providers exporting OTLP over gRPC only, so the capture serves
``otlp_sink.OtlpGrpcSink`` and keeps the trace bodies as sent (``<variant>.raw/traces-N.pb``)
beside the merged OTLP/JSON. The handler has no content switch (every span carries the
component's input and output), so the content-off variant is the same run. Built as
``fw_adk_go`` builds its program: once per content of ``eino_go/``, into
``~/.cache/otel-oracles/capture-go/``.
"""

from __future__ import annotations

import os
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import build, go_versions, scripted_calls, write_bodies
from otlp_sink import OtlpGrpcSink
from scenarios import QUESTION, Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "eino_go"
BINARY = "eino-go-capture"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "github.com/cloudwego/eino", "github.com/cloudwego/eino-ext/callbacks/apmplus",
    "github.com/cloudwego/eino-ext/components/model/openai", "go.opentelemetry.io/otel/sdk",
)  # fmt: skip
"""The Go modules whose versions EXPECTED.md lists, read from the program's go.mod."""


def versions() -> dict[str, str]:
    """The Eino program's module versions."""
    return go_versions(PROJECT, VERSIONED)


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a handoff scenario's transfer is the triage agent's
    call of the research agent's tool, ``research_agent {"request": ...}`` (Eino's agent tool
    takes one ``request`` argument), then the research agent's turns, then the triage agent
    passes its answer on."""
    return scenario.through_agent_tool(("research_agent", {"request": QUESTION}))


def run_eino_react(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_eino_go`` on Eino's older ``flow/agent/react`` runtime (``eino-react-apmplus``)."""
    return run_eino_go(scenario, variant, content, out, project, runtime="react")


def run_eino_go(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    runtime: str = "adk",
) -> list[str]:
    """Run one (scenario, content) variant in its own process, its agents on Eino's
    ``runtime`` (``adk``: ``adk.ChatModelAgent``; ``react``: ``react.NewAgent``); returns the
    tools the run really executed, and fails when the answer is not the script's (``content``
    and the Node ``project`` option are unused: the APMPlus handler has no content switch)."""
    binary = build(PROJECT, BINARY)

    def launch(where: Where) -> Program:
        env = {**os.environ, "NO_PROXY": "127.0.0.1"}
        spec = {
            "baseURL": where.base_url, "model": MODEL, "otlp": where.otlp,
            "calls": scripted_calls(scenario), "runtime": runtime,
        }  # fmt: skip
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(
        scenario, script(scenario), variant, out, FakeOpenAI, launch, BINARY, sink=OtlpGrpcSink
    )
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
