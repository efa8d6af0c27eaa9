"""The Langfuse Python SDK (v3+, OpenTelemetry-based) tracing the decorated tool loop.

The loop (``decorated_loop.py``) runs on Langfuse's drop-in OpenAI client
(``from langfuse.openai import OpenAI``), which records each model call as a ``generation``
observation; the run is an ``@observe(as_type="agent")`` function and each tool an
``@observe(as_type="tool")`` function. Langfuse keeps its own tracer provider and OTLP/HTTP
exporter; ``base_url`` points it at the capture's sink on 127.0.0.1, which receives the bodies
at ``/api/public/otel/v1/traces`` exactly as a Langfuse server would.

Content off: the SDK's ``LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED=false`` drops the
decorated functions' inputs and outputs, but the OpenAI integration has no switch of its own;
the client's documented ``mask`` hook, returning nothing for every input, output and metadata
value, is how an application keeps message content out, so the off variant uses both.

``run_langgraph`` (``langfuse-langgraph``): the LangGraph agents of ``fw_langgraph.py`` traced
by Langfuse's LangChain integration (``langfuse.langchain.CallbackHandler`` in the graph run's
callbacks), which types each LangChain run as an observation (chains, tools, model calls,
agents by name).
"""

from __future__ import annotations

from typing import Any

from decorated_loop import run_decorated
from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools


def drop_everything(*, data: Any, **_: Any) -> None:
    """A Langfuse mask that keeps no content: the attribute is then not written at all."""
    return None


def client(endpoint: str, *, content: bool) -> Any:
    """The Langfuse client, exporting to ``endpoint``; content off masks every payload."""
    from langfuse import Langfuse

    return Langfuse(
        public_key="pk-lf-capture",
        secret_key="sk-lf-capture",
        base_url=endpoint,
        mask=None if content else drop_everything,
    )


def run(
    scenario: Scenario,
    endpoint: str,
    tools: Tools,
    executed: list[str],
    *,
    content: bool,
    typed: bool = True,
) -> None:
    """Run one scenario; ``executed`` receives each tool that really ran, in order.
    ``typed=False`` decorates with a bare ``@observe()`` (Langfuse's default ``span`` type, and
    the only form before observation types existed)."""
    from langfuse import observe
    from langfuse.openai import OpenAI

    langfuse = client(endpoint, content=content)
    with FakeOpenAI(scenario) as base_url:
        openai_client = OpenAI(base_url=base_url, api_key="capture-not-a-key")
        run_decorated(
            scenario,
            openai_client,
            tools,
            executed,
            agent=lambda name: observe(name=name, as_type="agent" if typed else None),
            tool=lambda name: observe(name=name, as_type="tool" if typed else None),
        )
    langfuse.flush()
    langfuse.shutdown()


def run_untyped(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The ``langfuse-openai`` app decorated with bare ``@observe()``: no observation types."""
    run(scenario, endpoint, tools, executed, content=content, typed=False)


def run_langgraph(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """The LangGraph agents with Langfuse's LangChain callback handler."""
    from fw_langgraph import _run
    from langfuse.langchain import CallbackHandler

    langfuse = client(endpoint, content=content)
    _run(scenario, tools, executed, callbacks=[CallbackHandler()])
    langfuse.flush()
    langfuse.shutdown()
