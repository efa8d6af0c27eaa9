"""The OpenAI Agents SDK app with its tools on a real MCP server (``openinference-mcp``).

The agents are the ``openinference-openai-agents`` ones (``OpenAIChatCompletionsModel`` on the
scripted fake OpenAI server, a native handoff from ``triage_agent`` to ``research_agent`` for
``g_handoff``), but they hold no tool of their own: every tool lives on
``mcp_tools_server.py``, started as a stdio subprocess (``MCPServerStdio``) and listed to the
model by the SDK. A search that fails raises inside the server, which answers the call with an
``isError`` result; the SDK hands its text to the model as the tool's output.

Both processes trace to the capture's sink, as an agent and a tool server sharing one
collector do: the agent with ``openinference-instrumentation-openai-agents`` (its processor on
the SDK's own spans) and the ``mcp`` SDK's client spans on the global tracer provider,
``openinference-instrumentation-mcp`` carrying the context over stdio in each request's
``_meta``; the server with the SDK's server spans on its own provider (``mcp_tools_server.py``).
The SDK's export to OpenAI is off (``set_trace_processors([])``): nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools

SERVER = Path(__file__).resolve().parent / "mcp_tools_server.py"


def run(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """One scenario traced to ``endpoint``; ``executed`` receives the tools the server ran.
    Content is switched by the ``OPENINFERENCE_HIDE_*`` environment, which the server's spans
    (names and status only) do not need."""
    from agents import set_trace_processors
    from openinference.instrumentation.mcp import MCPInstrumentor
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "capture-mcp-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)  # the mcp SDK's client spans use the global provider
    set_trace_processors([])  # no export to OpenAI's tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    MCPInstrumentor().instrument(tracer_provider=provider)
    with tempfile.TemporaryDirectory() as tmp:
        ran = Path(tmp) / "executed"
        ran.touch()
        try:
            asyncio.run(run_app(scenario, endpoint, ran))
        finally:
            provider.shutdown()
        executed.extend(ran.read_text().split())


async def run_app(scenario: Scenario, endpoint: str, ran: Path) -> None:
    """The agents with the MCP server's tools; fails when the answer is not the script's."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    params: Any = {
        "command": sys.executable,
        "args": [str(SERVER), scenario.name, endpoint, str(ran)],
    }
    async with MCPServerStdio(params=params, name="capture-tools") as server:
        with FakeOpenAI(scenario) as base_url:
            client = AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key")
            model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
            if scenario.agents_only:
                research = Agent(name="research_agent", instructions=scenario.system,
                                 model=model, mcp_servers=[server])  # fmt: skip
                agent = Agent(name="triage_agent", instructions="Hand research questions off.",
                              model=model, handoffs=[research])  # fmt: skip
            else:
                name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
                agent = Agent(name=name, instructions=scenario.system, model=model,
                              mcp_servers=[server])  # fmt: skip
            result = await Runner.run(agent, scenario.prompt, max_turns=10)
    if result.final_output != scenario.turns[-1]:
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
