"""The official OpenAI Go SDK under OpenTelemetry's generic HTTP instrumentation only: one
scenario through the ``openai_go/`` program against the scripted fake OpenAI server, for the
``openai-go-otelhttp`` source.

The program is the raw sources' chat-completions tool loop written in Go on
``github.com/openai/openai-go/v3`` (base URL on ``fake_openai.py``, retries off): it asks the
model, runs each requested tool as a plain Go function (a failing one hands the model
``{"error": "SearchBackendError: ..."}``) and asks again until the model answers. Nothing
GenAI-specific traces it: the SDK's HTTP client transport is ``otelhttp.NewTransport`` (one
HTTP client span per request, the HTTP semantic conventions only) inside the application's
own ``agent_run`` span, exported over OTLP/HTTP protobuf to ``otlp_sink.py``. The trace shows
that the process made HTTP requests to the model API and nothing of what they asked, answered
or ran: the source measures what a grader can and cannot judge from it. No content switch
exists (the spans never hold content), so the content-off variant is the same run. Built as
``fw_adk_go`` builds its program: once per content of ``openai_go/``, into
``~/.cache/otel-oracles/capture-go/``. A killed run (``z_killed_*``) exports each span as it
ends (the SDK's syncer) and journals each tool as it runs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from external_program import Program, Where, check_answer, run_program
from fake_openai import FakeOpenAI
from fw_adk_go import build, go_versions, scripted_calls, write_bodies
from scenarios import Scenario

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "openai_go"
BINARY = "openai-go-capture"
MODEL = "gpt-4o-mini"

VERSIONED = (
    "github.com/openai/openai-go/v3",
    "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp",
    "go.opentelemetry.io/otel/sdk",
)
"""The Go modules whose versions EXPECTED.md lists, read from the program's go.mod."""


def versions() -> dict[str, str]:
    """The program's module versions."""
    return go_versions(PROJECT, VERSIONED)


def run_openai_go(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant in its own process; returns the tools the run
    really executed, and fails when the answer is not the script's (``content`` and the Node
    ``project`` option are unused: no span holds content)."""
    binary = build(PROJECT, BINARY)

    def launch(where: Where) -> Program:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": where.otlp, "NO_PROXY": "127.0.0.1"}
        spec = {"baseURL": where.base_url, "model": MODEL, "calls": scripted_calls(scenario)}
        return Program(spec, [str(binary), str(where.spec)], env)

    run = run_program(scenario, scenario, variant, out, FakeOpenAI, launch, BINARY)
    write_bodies(run.received, out, variant)
    requests = http_client_spans(out / f"{variant}.otlp.json")
    # A killed run (z_killed_*) dies inside its last request, whose span never ends.
    ended = run.model_calls - (scenario.killed_at is not None)
    if requests != ended:
        sys.exit(f"{variant}: {requests} HTTP client spans for {ended} model requests that ended")
    return check_answer(run, scenario, variant, out)


def http_client_spans(path: Path) -> int:
    """How many HTTP client spans (``http.request.method``, kind client) the OTLP/JSON holds:
    the capture fails unless there is one per request the model server answered, since these
    spans are all the trace says about the model calls (the source's entry in ``capture.py``
    declares that it writes no model-call span)."""
    doc = json.loads(path.read_text())
    return sum(
        span.get("kind") == 3
        and any(kv["key"] == "http.request.method" for kv in span.get("attributes", []))
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    )
