"""Firebase Genkit for Go: one scenario through the ``genkit_go/`` program against the scripted
fake OpenAI server, for the ``genkit-go`` source.

The agents are Genkit flows whose ``genkit.Generate`` runs the tool loop (``genkit.DefineTool``
tools, ``ai.WithMaxTurns(10)``) on the OpenAI plugin of Genkit's ``compat_oai`` (the
``openai-go`` client, its base URL on ``fake_openai.py``, retries off). As in the Genkit JS
capture (``genkit``), a tool that failed returns ``{"error": "SearchBackendError: ..."}``,
since a Genkit tool returning an error ends the whole ``Generate`` call; ``g_handoff`` is the
research agent's flow called from a ``research_agent`` tool, which starts from its own
history, so the fake server answers in call order (``fw_vercel5.script``).

Genkit for Go records its actions on the global OpenTelemetry tracer provider; the program
installs an SDK provider there whose batch processor feeds the OTLP/HTTP protobuf exporter
(``OTEL_EXPORTER_OTLP_ENDPOINT``: ``otlp_sink.py``) and shuts it down before reporting.
Genkit has no content switch (every action's ``genkit:input`` / ``genkit:output`` is
recorded), so the content-off variant is the same run. Built as ``fw_adk_go`` builds its
program: once per content of ``genkit_go/``, into ``~/.cache/otel-oracles/capture-go/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, call_order
from fw_adk_go import build, go_versions, scripted_calls, write_bodies
from fw_mastra import check_model_spans
from fw_vercel5 import script
from otlp_sink import OtlpSink
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "genkit_go"
BINARY = "genkit-go-capture"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "github.com/firebase/genkit/go", "github.com/openai/openai-go", "go.opentelemetry.io/otel/sdk",
    "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
)  # fmt: skip
"""The Go modules whose versions EXPECTED.md lists, read from the program's go.mod."""


def versions() -> dict[str, str]:
    """The Genkit Go program's module versions."""
    return go_versions(PROJECT, VERSIONED)


def run_genkit_go(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own process; returns the tools the run
    really executed, and fails when the answer is not the script's (``content`` and the
    Node ``project`` option are unused: Genkit has no content switch)."""
    binary = build(PROJECT, BINARY)
    agent = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    scripted = script(scenario)
    spec_path = out.resolve() / f".{variant}.spec.json"
    served: list[int] = []
    in_order = call_order()

    def turn_of(request: dict[str, Any]) -> int:
        served.append(turn := in_order(request))
        return turn

    received = OtlpSink()
    with FakeOpenAI(scripted, turn_of=turn_of) as base_url, received as endpoint:
        spec = {
            "system": scenario.system, "prompt": scenario.prompt, "baseURL": base_url,
            "model": MODEL, "agent": agent, "handoff": scenario.agents_only,
            "calls": scripted_calls(scenario),
        }  # fmt: skip
        spec_path.write_text(json.dumps(spec))
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "NO_PROXY": "127.0.0.1"}
        try:
            proc = subprocess.run(
                [str(binary), str(spec_path)],
                env=env, capture_output=True, text=True, check=False, timeout=300,
            )  # fmt: skip
        finally:
            spec_path.unlink()
    if proc.returncode != 0:
        sys.exit(f"{variant}: {BINARY} failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if len(served) != len(scripted.turns):
        sys.exit(f"{variant}: the model was asked {len(served)} times, not {len(scripted.turns)}")
    write_bodies(received, out, variant)
    check_model_spans(out / f"{variant}.otlp.json", variant)
    if report["text"] != scenario.turns[-1]:
        sys.exit(f"{variant}: final answer {report['text']!r} is not the script's")
    executed: list[str] = report["executed"]
    return executed
