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
program: once per content of ``genkit_go/``, into ``~/.cache/otel-oracles/capture-go/``; the
``genkit-go-latest`` source builds it with ``go.latest.mod`` (every module at its newest
release), so its verdicts are measured on what those write.
"""

from __future__ import annotations

import os
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import MODFILE_LATEST, build, go_versions, scripted_calls, write_bodies
from fw_vercel5 import script
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


def versions_latest() -> dict[str, str]:
    """The module versions of the ``genkit-go-latest`` build (``go.latest.mod``)."""
    return go_versions(PROJECT, VERSIONED, MODFILE_LATEST)


def run_genkit_go_latest(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """``run_genkit_go`` on the program built with ``go.latest.mod``."""
    return run_genkit_go(scenario, variant, content, out, project, MODFILE_LATEST)


def run_genkit_go(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    modfile: str = "go.mod",
) -> list[str]:
    """Run one (scenario, content) variant in its own process, the program built with
    ``modfile``; returns the tools the run really executed, and fails when the answer is not
    the script's (``content`` and the Node ``project`` option are unused: Genkit has no
    content switch)."""
    binary = build(PROJECT, BINARY, modfile)

    def launch(where: Where) -> Program:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp, "NO_PROXY": "127.0.0.1"}
        spec = {"baseURL": where.base_url, "model": MODEL, "calls": scripted_calls(scenario)}
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(scenario, script(scenario), variant, out, FakeOpenAI, launch, BINARY)
    write_bodies(run.received, out, variant)
    return check_answer(run, scenario, variant, out)
