"""Laminar (the ``lmnr`` Python SDK) tracing agent frameworks, for the ``laminar-*`` sources.

Laminar is built on OpenTelemetry and instruments the frameworks itself (its own LangChain
callback handler, LangGraph, OpenAI Agents SDK and OpenAI client instrumentations, bundled in
``lmnr``). ``Laminar.initialize`` keeps its own tracer provider and OTLP exporter; there is no
exporter argument, but ``base_url`` / ``http_port`` with ``force_http=True`` make that exporter
post OTLP/HTTP protobuf to ``<base_url>:<http_port>/v1/traces``, so pointing them at the
capture's sink on 127.0.0.1 is all it takes (the project key is a placeholder: nothing reaches
Laminar's cloud). Spans go through Laminar's default batching processor, as in production; the
run ends with ``Laminar.flush()`` / ``Laminar.shutdown()`` before the sink is read.

Content off: ``LMNR_TRACE_CONTENT=false`` (the source's ``off`` environment), which Laminar's
instrumentations read on every span.

The apps are the other sources' own: ``fw_langgraph._run`` (LangGraph prebuilt ReAct agents, a
langgraph-swarm for ``g_handoff``), ``fw_openai_agents.run_app`` (the OpenAI Agents SDK
agents, a native handoff for ``g_handoff``), ``fw_pydantic_ai._run`` (pydantic-ai agents, the
research agent run from the triage agent's tool for ``g_handoff``), ``fw_adk.run`` (Google
ADK agents, ``transfer_to_agent`` for ``g_handoff``) and ``fw_crewai.run_crew`` (a CrewAI crew,
delegation to a coworker for ``g_handoff``).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from scenarios import Scenario, Tools


def traced(endpoint: str, run: Callable[[], None]) -> None:
    """Initialize Laminar exporting to ``endpoint`` (the capture's sink), run the app, and
    export every span before returning."""
    from lmnr import Laminar

    where = urlsplit(endpoint)
    Laminar.initialize(
        project_api_key="capture-not-a-key",
        base_url=f"{where.scheme}://{where.hostname}",
        http_port=where.port,
        force_http=True,
    )
    try:
        run()
    finally:
        Laminar.flush()
        Laminar.shutdown()


def run_langgraph(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``fw_langgraph`` agents under Laminar's LangChain / LangGraph instrumentation."""
    from fw_langgraph import _run

    traced(endpoint, lambda: _run(scenario, tools, executed))


def run_openai_agents(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``fw_openai_agents`` app under Laminar's OpenAI Agents SDK instrumentation (the
    SDK's own export to OpenAI off first, so only Laminar's processor is left)."""
    from agents import set_trace_processors
    from fw_openai_agents import run_app

    set_trace_processors([])
    traced(endpoint, lambda: run_app(scenario, tools, executed))


def run_pydantic_ai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``fw_pydantic_ai`` agents: Laminar's pydantic-ai instrumentation turns on
    pydantic-ai's own (``Agent.instrument_all`` on Laminar's tracer provider, semconv version
    5), beside its OpenAI client instrumentation; the app itself instruments nothing."""
    from fw_pydantic_ai import _run

    traced(endpoint, lambda: _run(scenario, tools, executed))


def run_google_adk(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``fw_adk`` agents (ADK's own tracing, telemetry schema 2 by default) on Laminar's
    tracer provider, which Laminar registers globally and ADK traces through, with Laminar's
    ADK and LiteLLM instrumentations."""
    from fw_adk import run

    traced(endpoint, lambda: run(scenario, None, None, tools, executed))


def run_crewai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``fw_crewai`` crew: Laminar's CrewAI instrument is OpenLLMetry's
    ``opentelemetry-instrumentation-crewai`` (installed beside ``lmnr``) on Laminar's tracer
    provider, with Laminar's own LiteLLM instrumentation for the model calls."""
    from fw_crewai import run_crew

    traced(endpoint, lambda: run_crew(scenario, tools, executed))


def run_openai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The decorated chat-completions loop (``decorated_loop.py``) on the ``openai`` client,
    written as Laminar's documentation shows (``laminar-openai``): the run an ``@observe()``
    function, each tool an ``@observe(span_type="TOOL")`` function, the model calls recorded
    by Laminar's OpenAI client instrumentation."""

    def app() -> None:
        from decorated_loop import run_on_openai
        from lmnr import observe

        run_on_openai(
            scenario,
            tools,
            executed,
            agent=lambda name: observe(name=name),
            tool=lambda name: observe(name=name, span_type="TOOL"),
        )

    traced(endpoint, app)
