"""Mastra (Node): one scenario through ``mastra.mjs`` against the scripted fake OpenAI server.

Mastra is a TypeScript framework, so the agent runs in Node (``node mastra.mjs``, from a scratch
npm project whose ``node_modules`` hold ``@mastra/core`` and friends) while this module serves
the scripted model on 127.0.0.1 (``Agent.generate`` calls the provider without streaming) and
computes the tools' results with the same ``scenarios.Tools`` as every other source. Mastra
records the run with its own observability and the real ``@mastra/otel-exporter``; content
capture off is Mastra's per-run ``tracingOptions: {hideInput: true, hideOutput: true}``.

``g_handoff`` is a supervisor: the triage agent's ``agents: {research_agent}`` become Mastra's
``agent-research_agent`` tool, whose sub-agent starts from its own history, so the fake server
answers in call order.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from fake_openai import FakeOpenAI, call_order
from otlp_sink import OtlpSink
from scenarios import QUESTION, Scenario, SearchBackendError, Tools
from scripted_server import ScriptedServer

HERE = Path(__file__).resolve().parent
SUB_AGENT_TOOL = "agent-research_agent"


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: for ``g_handoff`` the triage agent calls the sub-agent
    tool, the research agent searches and answers, then the triage agent answers the same."""
    return scenario.through_agent_tool((SUB_AGENT_TOOL, {"prompt": QUESTION}), scenario.turns[-1])


def tool_results(scenario: Scenario) -> list[dict[str, Any]]:
    """What each scripted tool call returns, in call order (``raise`` for a failing call);
    the calls the framework rejects before running them (``Scenario.rejected``) return
    nothing and are left out."""
    tools = Tools(scenario)
    results: list[dict[str, Any]] = []
    rejected = scenario.rejected
    for turn in scenario.turns:
        for name, arguments in [] if isinstance(turn, str) else turn:
            if name.startswith("transfer_to_"):
                continue
            if rejected:
                rejected -= 1
                continue
            try:
                results.append({"ok": getattr(tools, name)(**arguments)})
            except SearchBackendError as exc:
                results.append({"raise": f"SearchBackendError: {exc}"})
    return results


def run_mastra(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    stream: bool = False,
) -> list[str]:
    """Run one (scenario, content) variant; returns the tools the run really executed.

    Mastra's ``Agent`` retries a failed model call ``maxRetries`` times, 0 unless configured
    (and hands the AI SDK's own retry the same 0), so ``u_model_retry``'s HTTP 503 ends the run
    in the error: ``recovers=False`` (``capture.py``'s ``"model_retry_fails"``). ``stream``:
    the run is ``Agent.stream``, its chunks consumed as they arrive (``mastra-stream``)."""
    return run_node_agent(
        "mastra.mjs", script(scenario), scenario, variant, content, out, project,
        extra={"stream": stream}, recovers=False,
    )  # fmt: skip


def run_node_agent(
    node_script: str,
    scripted: Scenario,
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    sink: bool = False,
    extra: dict[str, Any] | None = None,
    recovers: bool = True,
) -> list[str]:
    """Run ``node_script`` (a Node agent beside this file, copied into ``project`` for its
    ``node_modules``) on one (scenario, content) variant while the fake server answers
    ``scripted`` in call order; returns the tools the run really executed, and fails when its
    final answer is not the scenario's.

    With ``sink``, the script's OTLP exporter sends to an ``otlp_sink.py`` on 127.0.0.1 (the
    spec's ``otlp`` endpoint) and the trace bodies are kept as sent
    (``<variant>.raw/traces-N.pb``); the script writes the OTLP/JSON itself either way. A run
    whose JSON holds no model-call span fails the capture (``capture.require_model_spans``).
    ``extra`` adds keys to the spec the script reads (a script serving several tracers reads
    which one from there). ``recovers``: whether the framework retries a model request that
    failed transiently (``u_model_retry``) with its default settings; where it does not, the
    run must end in the scripted HTTP 503's error, as ``o_run_error``'s ends in its 500's."""
    agent = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    script_path = project / node_script
    if script_path.resolve() != (HERE / node_script).resolve():
        shutil.copyfile(HERE / node_script, script_path)
    spec_path = out.resolve() / f".{variant}.spec.json"
    received = OtlpSink()
    failures_before = ScriptedServer.failures_served
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url, received as endpoint:
        spec = {
            "system": scenario.system, "prompt": scenario.prompt, "baseURL": base_url,
            "results": tool_results(scenario), "content": content, "agent": agent,
            "handoff": scenario.agents_only, "otlp": endpoint, **(extra or {}),
        }  # fmt: skip
        spec_path.write_text(json.dumps(spec))
        try:
            proc = subprocess.run(
                ["node", str(script_path), str(spec_path), str(out.resolve() / variant)],
                cwd=project, capture_output=True, text=True, check=False, timeout=300,
            )  # fmt: skip
        finally:
            spec_path.unlink()
    if proc.returncode != 0:
        sys.exit(f"{variant}: node failed:\n{proc.stderr}")
    if sink:
        write_sink_bodies(received, out / f"{variant}.raw", variant)
    check_model_spans(out / f"{variant}.otlp.json", variant)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    served = ScriptedServer.failures_served - failures_before
    if scenario.model_fails_from is not None or (scenario.model_retry and not recovers):
        # The run must end in the error the script caused (``capture.ends_as_scripted``).
        if not report.get("error") or not served:
            sys.exit(f"{variant}: expected the run to end in the scripted HTTP error: {report}")
    elif report["text"] != scenario.turns[-1]:
        sys.exit(f"{variant}: final answer {report['text']!r} is not the script's")
    elif scenario.model_retry and served != scenario.model_transient_failures:
        # The run recovered, but from nothing: the scripted HTTP 503 was never served.
        sys.exit(f"{variant}: the model API answered HTTP 503 {served} time(s): {report}")
    executed: list[str] = report["executed"]
    return executed


def write_sink_bodies(sink: OtlpSink, raw: Path, variant: str) -> None:
    """Keep the trace bodies the script's exporter sent, as ``traces-N.pb`` (protobuf only)."""
    bodies = [item for item in sink.received if item.signal == "traces"]
    if not bodies or any("protobuf" not in item.content_type for item in bodies):
        sys.exit(f"{variant}: expected OTLP protobuf trace bodies at the sink, got {len(bodies)}")
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    for i, item in enumerate(bodies, 1):
        (raw / f"traces-{i}.pb").write_bytes(item.body)


def check_model_spans(path: Path, variant: str) -> None:
    """Fail the capture when the run's OTLP/JSON holds no span or no model-call span, as
    ``capture.require_model_spans`` does for the Python sources (its source name is read from
    the folder the capture is written to)."""
    from capture import require_model_spans

    doc = json.loads(path.read_text())
    spans = [
        _Span(span["name"], {kv["key"]: _scalar(kv["value"]) for kv in span.get("attributes", [])})
        for rs in doc.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]
    require_model_spans(path.parent.name, variant, spans)


class _Span(NamedTuple):
    name: str
    attributes: dict[str, Any]


def _scalar(value: dict[str, Any]) -> Any:
    """The value an OTLP/JSON ``AnyValue`` holds (arrays and maps as their JSON)."""
    return next(iter(value.values()), None)
