"""AgentOps (``agentops`` 0.4, OpenTelemetry-based) tracing the CrewAI crew of ``fw_crewai.py``
(``agentops-crewai``) and the OpenAI Agents SDK app of ``fw_openai_agents.py``
(``agentops-openai-agents``).

``agentops.init()`` builds its own tracer provider and instruments every agent framework it
finds installed (its ``instrument_llm_calls`` default), under a session span it starts itself
(``auto_start_session``). It wants an API key only to fetch a token for its cloud: without one
it traces all the same. Its own exporter (``AuthenticatedOTLPExporter``, a subclass of the
SDK's OTLP/HTTP exporter) fails on every export with the OpenTelemetry SDK 1.45 that CrewAI
1.15 requires (it reads the parent's ``_headers``, which that release no longer has), so the
spans are sent by the SDK's own OTLP/HTTP exporter added to AgentOps' tracer provider with the
provider's public ``add_span_processor``; AgentOps' exporter points at a closed local port.
Its metrics go to an endpoint that ``init`` does not take, so the tracing core is initialised
first with that endpoint on the sink (``tracer.initialize``, the call ``init`` makes; ``init``
then finds it done). The API endpoint is the closed port, and so are the proxies
(``HTTPS_PROXY``, ``NO_PROXY=127.0.0.1``): a request to anywhere else fails here instead of
leaving the machine. The framework is imported before ``init``: AgentOps instruments CrewAI
from an import hook, which on CrewAI 1.15 fails with a circular import while ``crewai`` is
still loading.

AgentOps has no content switch for these frameworks (its OpenAI provider instrumentation reads
``TRACELOOP_TRACE_CONTENT``, but AgentOps turns provider instrumentation off once an agent
framework is instrumented): the ``.nocontent`` variant is the same run.
"""

from __future__ import annotations

import os
from typing import Any

from scenarios import Scenario, Tools

CLOSED = "http://127.0.0.1:9"
"""A local port nothing listens on: the API endpoint and the proxies."""


def init_agentops(endpoint: str) -> Any:
    """AgentOps' tracing sent to the sink at ``endpoint``; returns the ``agentops`` module."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        os.environ[name] = CLOSED
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    os.environ.pop("AGENTOPS_API_KEY", None)
    os.environ["AGENTOPS_LOGGING_TO_FILE"] = "false"  # else it writes ./agentops.log
    import agentops
    from agentops.sdk.core import tracer
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer.initialize(
        service_name="capture-agentops",
        exporter_endpoint=f"{CLOSED}/v1/traces",
        metrics_endpoint=f"{endpoint}/v1/metrics",
    )
    agentops.init(
        endpoint=CLOSED, exporter_endpoint=f"{CLOSED}/v1/traces", env_data_opt_out=True,
        log_session_replay_url=False, log_level="CRITICAL",
    )  # fmt: skip
    tracer.provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces"))
    )
    return agentops


def finish(agentops: Any) -> None:
    """End the session span and send everything before the sink closes."""
    from agentops.sdk.core import tracer

    agentops.end_trace(end_state="Success")
    tracer.shutdown()


def run_crewai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The CrewAI crew (``fw_crewai.run_crew``) under AgentOps' CrewAI instrumentation."""
    import crewai  # noqa: F401 - loaded before AgentOps' import hook (see the module doc)
    from fw_crewai import run_crew

    agentops = init_agentops(endpoint)
    try:
        run_crew(scenario, tools, executed)
    finally:
        finish(agentops)


def run_openai_agents(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The OpenAI Agents SDK app (``fw_openai_agents.run_app``) under AgentOps' processor for
    the SDK's spans; the SDK's own export to OpenAI is off first."""
    from agents import set_trace_processors
    from fw_openai_agents import run_app

    set_trace_processors([])
    agentops = init_agentops(endpoint)
    try:
        run_app(scenario, tools, executed)
    finally:
        finish(agentops)


def run_openai(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The decorated chat-completions loop (``decorated_loop.py``) on the ``openai`` client:
    the run an ``@agent`` function, each tool a ``@tool`` function (AgentOps' own
    decorators), the model calls recorded by AgentOps' OpenAI provider instrumentation, which
    is on when no agent framework is installed (``agentops-openai``)."""
    agentops = init_agentops(endpoint)
    from agentops.sdk.decorators import agent, tool
    from decorated_loop import run_on_openai

    try:
        run_on_openai(
            scenario,
            tools,
            executed,
            agent=lambda name: agent(name=name),
            tool=lambda name: tool(name=name),
        )
    finally:
        finish(agentops)
