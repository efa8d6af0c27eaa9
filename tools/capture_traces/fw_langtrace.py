"""Langtrace's Python SDK (``langtrace-python-sdk``) tracing agent frameworks, for the
``langtrace-*`` capture sources.

``langtrace.init()`` builds its own tracer provider, sets it as the global one and turns on
every instrumentation whose package is installed (LangChain, LangGraph, OpenAI, CrewAI,
LiteLLM, ...), as a user's one-line setup does. Its exporter is the SDK's ``api_host``
option: any host other than Langtrace's cloud gets the OpenTelemetry SDK's OTLP/HTTP protobuf
exporter on ``<api_host>/v1/traces``, here ``otlp_sink.py`` on 127.0.0.1, behind a
``SimpleSpanProcessor`` (``batch=False``), so nothing is sent to Langtrace.

The SDK also reaches out on its own: ``init`` asks GitHub for its latest release (a version
warning) and reports its own errors to Sentry. Sentry is off by the SDK's switch
(``LANGTRACE_ERROR_REPORTING=False``); for the version check, which has no switch, every
non-local HTTP(S) request goes through a closed local port (``HTTPS_PROXY``), so it fails at
once instead of leaving the machine.

Langtrace patches methods of the frameworks' classes rather than hooking their callbacks, and
neither its LangGraph nor its LangChain instrumentation patches a graph's run: without a span
around it, each model call would be a trace of its own. The run is therefore wrapped in the
SDK's documented grouping decorator, ``with_langtrace_root_span()`` (a ``LangtraceRootSpan``
span with no attributes), as a Langtrace user relates the spans of one operation.

Content off: ``TRACE_PROMPT_COMPLETION_DATA=false`` (the SDK's documented opt-out of prompt and
completion data), set by the capture for the ``.nocontent`` variant.

``run_langgraph`` (``langtrace-langgraph``): the LangGraph agents of ``fw_langgraph.py``;
``run_crewai`` (``langtrace-crewai``): the CrewAI crew of ``fw_crewai.py``;
``run_dspy`` (``langtrace-dspy``): the DSPy ``ReAct`` program of ``fw_dspy.py`` on
``dspy.LM(engine="litellm")`` (DSPy's default engine talks HTTP through its own client, which no
Langtrace instrumentation sees; its LiteLLM one records the calls).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from scenarios import Scenario, Tools

CLOSED_PROXY = "http://127.0.0.1:9"
"""A closed local port: a request that tried to leave the machine fails at once."""


def init(endpoint: str) -> Any:
    """Langtrace's one-call setup, exporting to the capture's sink; returns the tracer
    provider it made (flushed before the sink closes)."""
    os.environ["LANGTRACE_ERROR_REPORTING"] = "False"
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        os.environ[name] = CLOSED_PROXY
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    from langtrace_python_sdk import langtrace
    from opentelemetry import trace

    langtrace.init(api_host=endpoint, batch=False, service_name="capture-langtrace")
    return trace.get_tracer_provider()


def in_root_span(run: Callable[..., None]) -> Callable[..., None]:
    """``run`` inside Langtrace's root span (its default name, ``LangtraceRootSpan``)."""
    from langtrace_python_sdk import with_langtrace_root_span

    wrapped: Callable[..., None] = with_langtrace_root_span()(run)
    return wrapped


def run_langgraph(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The LangGraph ReAct agents (a langgraph-swarm for ``g_handoff``)."""
    provider = init(endpoint)
    from fw_langgraph import _run

    in_root_span(_run)(scenario, tools, executed)
    provider.force_flush()


def run_crewai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The CrewAI crew (delegation to a coworker for ``g_handoff``)."""
    provider = init(endpoint)
    from fw_crewai import run_crew

    in_root_span(run_crew)(scenario, tools, executed)
    provider.force_flush()


def run_dspy(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The DSPy ReAct program, its model calls through LiteLLM (no ``g_handoff``)."""
    provider = init(endpoint)
    from fw_dspy import run_react

    in_root_span(run_react)(scenario, tools, executed, engine="litellm")
    provider.force_flush()


def run_openai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The chat-completions tool loop of the raw sources (``decorated_loop.py`` with no
    decorators: Langtrace has none for agents or tools) on the ``openai`` client inside
    Langtrace's root span, the model calls recorded by its OpenAI instrumentation
    (``langtrace-openai``)."""
    provider = init(endpoint)
    from decorated_loop import run_on_openai

    def undecorated(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return lambda function: function

    in_root_span(run_on_openai)(scenario, tools, executed, undecorated, undecorated)
    provider.force_flush()
