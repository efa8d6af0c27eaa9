"""MLflow tracing (mlflow 3.x, the ``mlflow-tracing`` SDK) of the decorated tool loop.

``mlflow.openai.autolog()`` records each call of the ``openai`` client as a ``CHAT_MODEL`` span;
the run is an ``@mlflow.trace(span_type="AGENT")`` function and each tool an
``@mlflow.trace(span_type="TOOL")`` function (``decorated_loop.py``). With
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set, MLflow exports through the OpenTelemetry SDK's
OTLP/HTTP exporter instead of to a tracking server: pointed at the capture's sink, nothing
else is contacted (MLflow's usage telemetry is off, ``MLFLOW_DISABLE_TELEMETRY``).

Content off: MLflow has no switch; its documented hook is a span processor given to
``mlflow.tracing.configure(span_processors=[...])``, and the off variant's processor replaces
every span's inputs and outputs with ``[REDACTED]``, as MLflow's own masking example does for
the fields it masks.

``run_openai_agents`` (``mlflow-openai-agents``): the OpenAI Agents SDK app of
``fw_openai_agents.py`` traced by the same ``mlflow.openai.autolog()``, which also registers
MLflow's processor for the SDK's own spans (agent runs, model calls, function tools,
handoffs); the SDK's export to OpenAI is off (``set_trace_processors([])`` first).

``run_langgraph`` (``mlflow-langgraph``): the LangGraph agents of ``fw_langgraph.py`` traced by
``mlflow.langchain.autolog()`` (MLflow's LangChain callback, added to every run), beside the
OpenAI autolog (``ChatOpenAI``'s client calls: a second span inside each chat-model span).

``run_dspy`` (``mlflow-dspy``): the DSPy ``ReAct`` program of ``fw_dspy.py`` traced by
``mlflow.dspy.autolog()`` alone (MLflow's DSPy callback: modules, adapter calls, LM calls and
tools).

``run_create_agent`` (``mlflow-create-agent``): the LangChain 1.x ``create_agent`` agents of
``fw_langchain_create_agent.py`` traced by ``mlflow.langchain.autolog()`` alone (the chat
model's own span is the only record of each model call).

``run_pydantic_ai`` (``mlflow-pydantic-ai``): the pydantic-ai agents of ``fw_pydantic_ai.py``
(a delegation tool running the research agent for ``g_handoff``) traced by
``mlflow.pydantic_ai.autolog()`` alone (pydantic-ai's own instrumentation stays off).

``run_agno`` (``mlflow-agno``): the Agno agents of ``fw_agno.py`` (a ``Team`` delegating to a
member for ``g_handoff``) traced by ``mlflow.agno.autolog()`` alone, which for Agno 2+ runs
OpenInference's Agno instrumentor on MLflow's tracer provider.

``run_strands`` (``mlflow-strands``): the Strands agents of ``fw_strands.py`` (an agent as a tool
for ``g_handoff``) traced by ``mlflow.strands.autolog()``, which turns Strands' own OpenTelemetry
spans into MLflow spans.

``run_crewai`` (``mlflow-crewai``): the CrewAI crew of ``fw_crewai.py`` (delegation to a
coworker for ``g_handoff``) traced by ``mlflow.crewai.autolog()`` alone.

``run_llamaindex`` (``mlflow-llamaindex``): the LlamaIndex agents of ``fw_llamaindex.py`` (an
``AgentWorkflow`` with its ``handoff`` tool for ``g_handoff``) traced by
``mlflow.llama_index.autolog()`` alone (MLflow's handler on LlamaIndex's instrumentation
dispatcher: workflow steps, model calls and tools).

``run_smolagents`` (``mlflow-smolagents``): the smolagents ``ToolCallingAgent`` of
``fw_smolagents.py`` (a managed agent for ``g_handoff``) traced by ``mlflow.smolagents.autolog()``
alone.

``run_autogen`` (``mlflow-autogen``): the AutoGen AgentChat agents of ``fw_autogen.py`` (a
``Swarm`` handoff for ``g_handoff``) traced by ``mlflow.autogen.autolog()`` alone (it patches the
agent and model-client classes already imported, so they are imported first; autogen-core's own
spans go to the global tracer provider, which stays unset).

``run_gemini`` (``mlflow-gemini``) and ``run_bedrock`` (``mlflow-bedrock``): the raw
``google-genai`` and boto3 Converse tool loops of ``fw_google_genai.py`` / ``fw_bedrock.py``
traced by ``mlflow.gemini.autolog()`` / ``mlflow.bedrock.autolog()`` alone, the loop inside an
``mlflow.start_span("agent_run")`` (the application's own span, as the raw sources' loop has
one; without it each model call would be a trace of its own).
"""

from __future__ import annotations

import os
from typing import Any

from decorated_loop import run_decorated
from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools

REDACTED = "[REDACTED]"


def redact_content(span: Any) -> None:
    """An MLflow span processor that keeps no inputs or outputs."""
    span.set_inputs(REDACTED)
    span.set_outputs(REDACTED)


def configure(endpoint: str, *, content: bool, openai: bool = True) -> Any:
    """MLflow's OTLP export pointed at ``endpoint`` (nothing else contacted), OpenAI autolog
    on unless ``openai`` is false (a framework's own autolog alone), and for content off the
    masking span processor; returns the ``mlflow`` module."""
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{endpoint}/v1/traces"
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    os.environ.setdefault("OTEL_SERVICE_NAME", "capture-mlflow-openai")
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    os.environ["MLFLOW_TRACKING_URI"] = endpoint  # never used for export; skips store lookup
    import mlflow

    if openai:
        mlflow.openai.autolog()
    if not content:
        mlflow.tracing.configure(span_processors=[redact_content])
    return mlflow


def flush() -> None:
    """MLflow's OTLP exporter sits behind a BatchSpanProcessor: flush it before the sink
    closes."""
    from mlflow.tracing.provider import provider

    provider.get().force_flush()


def run(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """Run one scenario; ``executed`` receives each tool that really ran, in order."""
    mlflow = configure(endpoint, content=content)
    from openai import OpenAI

    with FakeOpenAI(scenario) as base_url:
        client = OpenAI(base_url=base_url, api_key="capture-not-a-key")
        run_decorated(
            scenario,
            client,
            tools,
            executed,
            agent=lambda name: mlflow.trace(name=name, span_type="AGENT"),
            tool=lambda name: mlflow.trace(name=name, span_type="TOOL"),
        )
    flush()


def run_openai_agents(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The OpenAI Agents SDK app traced by MLflow's autolog (its agents trace processor)."""
    from agents import set_trace_processors
    from fw_openai_agents import run_app

    set_trace_processors([])  # no export to OpenAI's tracing backend; MLflow adds its own
    configure(endpoint, content=content)
    run_app(scenario, tools, executed)
    flush()


def run_langgraph(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The LangGraph agents traced by MLflow's LangChain autolog."""
    from fw_langgraph import _run

    mlflow = configure(endpoint, content=content)
    mlflow.langchain.autolog()
    try:
        _run(scenario, tools, executed)
    finally:
        flush()  # a run that ended in an error (o_run_error) exports its spans too


def run_dspy(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The DSPy ReAct program traced by MLflow's DSPy autolog, and nothing else."""
    from fw_dspy import run_react

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.dspy.autolog()
    run_react(scenario, tools, executed)
    flush()


def run_crewai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The CrewAI crew traced by MLflow's CrewAI autolog, and nothing else."""
    from fw_crewai import run_crew

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.crewai.autolog()
    run_crew(scenario, tools, executed)
    flush()


def run_llamaindex(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The LlamaIndex agents traced by MLflow's LlamaIndex autolog alone."""
    import asyncio

    from fw_llamaindex import _run

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.llama_index.autolog()
    asyncio.run(_run(scenario, tools, executed))
    flush()


def run_create_agent(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The LangChain 1.x create_agent agents traced by MLflow's LangChain autolog alone."""
    from fw_langchain_create_agent import _run

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.langchain.autolog()
    _run(scenario, tools, executed)
    flush()


def run_pydantic_ai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The pydantic-ai agents traced by MLflow's pydantic-ai autolog alone."""
    from fw_pydantic_ai import _run

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.pydantic_ai.autolog()
    _run(scenario, tools, executed)
    flush()


def run_agno(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The Agno agents (or team) traced by MLflow's Agno autolog alone."""
    from fw_agno import run_agents

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.agno.autolog()
    run_agents(scenario, tools, executed)
    flush()


def run_strands(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The Strands agents traced by MLflow's Strands autolog alone."""
    from fw_strands import run_agent

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.strands.autolog()
    run_agent(scenario, tools, executed)
    flush()


def run_smolagents(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The smolagents ``ToolCallingAgent`` traced by MLflow's smolagents autolog alone."""
    from fw_smolagents import run_tool_calling

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.smolagents.autolog()
    try:
        run_tool_calling(scenario, tools, executed)
    finally:
        flush()  # a run that ended in an error (o_run_error) exports its spans too


def run_autogen(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The AutoGen AgentChat agents traced by MLflow's AutoGen autolog alone."""
    import autogen_agentchat.agents  # noqa: F401 - autolog patches the classes imported
    import autogen_ext.models.openai  # noqa: F401
    from fw_autogen import _run

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.autogen.autolog()
    try:
        _run(scenario, tools, executed)
    finally:
        flush()


def run_gemini(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The raw google-genai tool loop traced by MLflow's Gemini autolog alone."""
    from fw_google_genai import loop

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.gemini.autolog()
    try:
        loop(scenario, tools, executed, lambda name: mlflow.start_span(name=name))
    finally:
        flush()


def run_bedrock(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The raw boto3 Converse tool loop traced by MLflow's Bedrock autolog alone."""
    from fw_bedrock import loop

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.bedrock.autolog()
    try:
        loop(scenario, tools, executed, lambda name: mlflow.start_span(name=name))
    finally:
        flush()
