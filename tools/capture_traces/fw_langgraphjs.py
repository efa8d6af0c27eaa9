"""LangGraph.js agents (Node): one scenario through ``langgraphjs.mjs`` against the scripted
fake OpenAI server, for the ``langgraphjs-openinference`` and ``openllmetry-js`` sources.

The agent is LangGraph.js's prebuilt ReAct agent (``createReactAgent``, a ``ToolNode`` that
turns a thrown tool error into an error ``ToolMessage``) on ``@langchain/openai``'s
``ChatOpenAI``, run by Node from a scratch npm project's ``node_modules`` while this module serves
the scripted model on 127.0.0.1 and computes the tools' results with the same
``scenarios.Tools`` as every other source (``fw_mastra``'s ``run_node_agent``).
``@arizeai/openinference-instrumentation-langchain`` records the run (``run_langgraphjs``), or
Traceloop's OpenLLMetry JS SDK, ``@traceloop/node-server-sdk``, with its LangChain
instrumentation (``run_openllmetry``); either exports over OTLP/HTTP protobuf to
``otlp_sink.py``, whose bodies are kept as sent. Content capture off is OpenInference's trace
config (inputs, outputs and messages hidden) or Traceloop's ``traceContent: false``.

``g_handoff`` is a ``@langchain/langgraph-swarm``, as in the Python ``langgraph-openinference``
source: the triage agent calls the library's ``transfer_to_research_agent`` tool, then the
research agent, sharing the history, searches and answers; the scripted turns are the
scenario's own, answered in call order.
"""

from __future__ import annotations

from pathlib import Path

from fw_mastra import run_node_agent
from scenarios import Scenario


def run_langgraphjs(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    stream: bool = False,
) -> list[str]:
    """Run one (scenario, content) variant; returns the tools the run really executed.

    ``stream``: the graph runs through ``graph.stream`` in the messages and values modes,
    every model call streamed (``langgraphjs-openinference-stream``)."""
    return run_node_agent(
        "langgraphjs.mjs", scenario, scenario, variant, content, out, project, sink=True,
        extra={"stream": stream},
    )  # fmt: skip


def run_openllmetry(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    stream: bool = False,
) -> list[str]:
    """The same agents traced by OpenLLMetry JS (``traceloop.initialize``, its LangChain
    instrumentation); ``stream`` as for ``run_langgraphjs`` (``openllmetry-js-stream``)."""
    return run_node_agent(
        "langgraphjs.mjs", scenario, scenario, variant, content, out, project, sink=True,
        extra={"tracer": "openllmetry", "stream": stream},
    )  # fmt: skip
