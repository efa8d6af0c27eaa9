"""Agent frameworks whose tools come from a real MCP server, each through its own MCP client.

Every source here runs the scenario's agent with no tool of its own: the tools live on
``mcp_tools_server.py`` (the ``mcp`` package's server over stdio, started by the framework's
MCP client as a subprocess on the capture's interpreter), and the framework lists and calls
them as its MCP integration documents. A failing search raises inside the server, which
answers the call with an ``isError`` result, as deployed MCP servers do: nothing raises on
the agent's side, so the framework's own tool span usually ends OK and the failure is only in
the result it hands the model (and in the MCP server's own span, when the SDK writes one).

Both processes trace to the capture's sink, as an agent and a tool server sharing one
collector do: the agent with its framework's tracing on a global tracer provider whose
OTLP/HTTP exporter sends to the sink (the ``mcp`` 2.x SDK's client spans ride on it, and
carry the context to the server in each request's ``_meta``), the server on its own provider.

Where the framework qualifies tool names by their server or toolset (``tool_prefix`` in
``capture.py``), the script calls the tools under the qualified name the framework offers them
by (``docs_search_docs``), and the run's executed tools are reported so.

``g_handoff`` and the other multi-agent scenarios are not run: these sources are about where
a tool's facts live, and each framework's agent composition has a source of its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scenarios import Scenario, Tools

SERVER = Path(__file__).resolve().parent / "mcp_tools_server.py"
PREFIX = "docs_"
"""What the frameworks that qualify tool names by their toolset put before each tool (toolset
``docs``, then ``_``): ``tool_prefix`` in ``capture.py``."""
STARTUP = 120
"""Seconds a client waits for the server to start and answer (a loaded machine's interpreter
start and imports, not the tools: they answer at once)."""


def qualified(scenario: Scenario, prefix: str) -> Scenario:
    """The scenario with each tool called by ``<prefix><tool>``, the name a framework that
    qualifies MCP tools by their toolset offers it under."""
    if not prefix:
        return scenario
    turns = [
        step if isinstance(step, str) else [(prefix + t, a) for t, a in step]
        for step in scenario.turns
    ]
    return dataclasses.replace(scenario, turns=turns)


def traced(endpoint: str, service: str) -> Any:
    """A global tracer provider exporting to the capture's sink (OTLP/HTTP protobuf); the
    frameworks' tracing and the ``mcp`` SDK's client spans take the global provider.
    ``openinference-instrumentation-mcp`` carries the context where it is installed."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    try:
        from openinference.instrumentation.mcp import MCPInstrumentor
    except ImportError:
        pass
    else:
        MCPInstrumentor().instrument(tracer_provider=provider)
    return provider


@dataclasses.dataclass
class ServerRun:
    """The server's command line for one scenario, and the tools it ran (read at the end)."""

    command: str
    args: list[str]
    ran: Path

    def executed(self, prefix: str) -> list[str]:
        """The tools the server ran, as the framework names them."""
        names = self.ran.read_text().split()
        return [prefix + n for n in names]


@contextlib.contextmanager
def mcp_server(scenario: Scenario, endpoint: str) -> Iterator[ServerRun]:
    """A temporary record of executed tools and the command that serves the scenario's tools
    (the framework's MCP client starts it)."""
    with tempfile.TemporaryDirectory() as tmp:
        ran = Path(tmp) / "executed"
        ran.touch()
        yield ServerRun(sys.executable, [str(SERVER), scenario.name, endpoint, str(ran)], ran)


def agent_name(scenario: Scenario) -> str:
    return "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"


def check_answer(scenario: Scenario, answer: Any) -> None:
    """Fails the capture when the run's answer is not the script's."""
    if not scenario.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {scenario.turns[-1]!r}")


def _sink_run(
    scenario: Scenario,
    endpoint: str,
    executed: list[str],
    service: str,
    prefix: str,
    body: Any,
    provider: Any = None,
) -> None:
    """Common frame: tracing on (``provider``, else ``traced``), the server's command,
    ``body(scripted, server)``, then the provider flushed and the executed tools read back."""
    provider = provider or traced(endpoint, service)
    with mcp_server(scenario, endpoint) as server:
        try:
            body(qualified(scenario, prefix), server)
        finally:  # a run that ended in the framework's exception (o_run_error) ran tools too
            provider.force_flush()
            provider.shutdown()
            executed.extend(server.executed(prefix))


# --- Strands Agents: MCPClient, Strands' built-in OpenTelemetry tracing ------------------


def run_strands(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """Strands ``MCPClient`` over stdio (``prefix="docs"``), the agent traced by Strands' own
    tracing (content off: the ``OTEL_SEMCONV_STABILITY_OPT_IN`` redaction allow-list)."""

    def body(scripted: Scenario, server: ServerRun) -> None:
        from fake_openai import FakeOpenAI
        from mcp import StdioServerParameters, stdio_client
        from strands import Agent
        from strands.models.openai import OpenAIModel
        from strands.tools.mcp import MCPClient

        params = StdioServerParameters(command=server.command, args=server.args)
        client = MCPClient(
            lambda: stdio_client(params), prefix=PREFIX.rstrip("_"), startup_timeout=STARTUP
        )
        with FakeOpenAI(scripted) as base_url, client:
            model = OpenAIModel(
                client_args={"base_url": base_url, "api_key": "capture-not-a-key"},
                model_id="gpt-4o-mini", params={"temperature": 0.0}, stream=False,
            )  # fmt: skip
            agent = Agent(
                name=agent_name(scenario), system_prompt=scenario.system, model=model,
                tools=client.list_tools_sync(), callback_handler=None,
            )  # fmt: skip
            answer = str(agent(scenario.prompt)).strip()
        check_answer(scripted, answer)

    _sink_run(scenario, endpoint, executed, "capture-strands-mcp", PREFIX, body)


# --- pydantic-ai: MCPToolset (FastMCP client) under Logfire's pydantic-ai integration -----


def run_pydantic_ai_logfire(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """pydantic-ai's ``MCPToolset`` on a stdio transport, ``.prefixed("docs")``, the agent
    traced by ``logfire.instrument_pydantic_ai()``; Logfire owns the global tracer provider
    (``send_to_logfire=False``), the capture's OTLP exporter rides along as an additional
    processor, so the ``mcp`` SDK's client spans reach the sink through it too."""
    import logfire
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    logfire.configure(
        send_to_logfire=False, console=False, metrics=False,
        service_name="capture-pydantic-ai-mcp",
        additional_span_processors=[
            SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces"))
        ],
    )  # fmt: skip
    logfire.instrument_pydantic_ai(include_content=content)

    class Flush:
        """Logfire's provider, flushed and shut down through ``logfire``."""

        def force_flush(self) -> None:
            logfire.force_flush()

        def shutdown(self) -> None:
            logfire.shutdown()

    def body(scripted: Scenario, server: ServerRun) -> None:
        from fake_openai import FakeOpenAI
        from fastmcp.client.transports import StdioTransport
        from pydantic_ai import Agent
        from pydantic_ai.mcp import MCPToolset
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        toolset = MCPToolset(
            StdioTransport(server.command, server.args), max_retries=3, init_timeout=STARTUP
        )
        with FakeOpenAI(scripted) as base_url:
            model = OpenAIChatModel(
                "gpt-4o-mini",
                provider=OpenAIProvider(base_url=base_url, api_key="capture-not-a-key"),
            )
            agent = Agent(
                model, name=agent_name(scenario), instructions=scenario.system,
                toolsets=[toolset.prefixed(PREFIX.rstrip("_"))],
                model_settings={"temperature": 0.0},
            )  # fmt: skip
            answer = str(agent.run_sync(scenario.prompt).output).strip()
        check_answer(scripted, answer)

    _sink_run(scenario, endpoint, executed, "", PREFIX, body, provider=Flush())


# --- Google ADK: McpToolset, ADK's own OpenTelemetry tracing ------------------------------


def run_google_adk(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """ADK's ``McpToolset`` over stdio (``tool_name_prefix="docs"``) in an ``LlmAgent`` on
    ADK's ``LiteLlm`` model class, traced by ADK's own tracing (telemetry schema 2, content by
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``) on the global provider. ADK hands
    the model an ``isError`` result as the tool's response; nothing raises."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import

    def body(scripted: Scenario, server: ServerRun) -> None:
        import asyncio

        from fake_openai import FakeOpenAI
        from fw_adk import _run
        from google.adk.agents import LlmAgent
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.runners import InMemoryRunner
        from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
        from google.genai import types
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=server.command, args=server.args)
        toolset = McpToolset(
            connection_params=StdioConnectionParams(server_params=params, timeout=STARTUP),
            tool_name_prefix=PREFIX.rstrip("_"),
        )
        with FakeOpenAI(scripted) as base_url:
            model = LiteLlm(
                model="openai/gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key"
            )
            agent = LlmAgent(
                name=agent_name(scenario), instruction=scenario.system, model=model,
                tools=[toolset],
            )  # fmt: skip
            runner = InMemoryRunner(agent=agent, app_name="capture")
            answer, _ = asyncio.run(_run(runner, scenario, types))
        check_answer(scripted, answer)

    _sink_run(scenario, endpoint, executed, "capture-google-adk-mcp", PREFIX, body)


# --- LangGraph: langchain-mcp-adapters under openinference-instrumentation-langchain -----


def run_langgraph_openinference(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """``langchain-mcp-adapters``' ``MultiServerMCPClient`` (one stdio server named ``docs``,
    ``tool_name_prefix=True``: tools offered as ``docs_<tool>``; ``handle_tool_errors`` on,
    its default: an ``isError`` result becomes a ``ToolMessage`` with ``status="error"``) in
    LangGraph's prebuilt ReAct agent, traced by ``openinference-instrumentation-langchain``
    (content off: ``OPENINFERENCE_HIDE_*``). The adapters pin ``mcp`` 1.x, which writes no
    spans of its own: the LangChain tool span is the only record of a call."""
    provider = traced(endpoint, "capture-langgraph-mcp")
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)

    def body(scripted: Scenario, server: ServerRun) -> None:
        import asyncio

        from fake_openai import FakeOpenAI
        from langchain_mcp_adapters.client import MultiServerMCPClient
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import create_react_agent

        client = MultiServerMCPClient(
            {PREFIX.rstrip("_"): {"transport": "stdio", "command": server.command,
                                  "args": server.args}},
            tool_name_prefix=True,
        )  # fmt: skip

        async def run() -> Any:
            mcp_tools = await client.get_tools()
            with FakeOpenAI(scripted) as base_url:
                model = ChatOpenAI(
                    model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key",
                    temperature=0.0,
                )  # fmt: skip
                graph = create_react_agent(
                    model, mcp_tools, prompt=scenario.system, name=agent_name(scenario)
                )
                messages = [{"role": "user", "content": scenario.prompt}]
                return await graph.ainvoke({"messages": messages}, {"recursion_limit": 25})

        state = asyncio.run(run())
        check_answer(scripted, str(state["messages"][-1].content).strip())

    _sink_run(scenario, endpoint, executed, "", PREFIX, body, provider=provider)


# --- Agno: MCPTools under openinference-instrumentation-agno ------------------------------


def run_agno_openinference(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """Agno's ``MCPTools`` over stdio (``tool_name_prefix="docs"``) in an ``Agent`` on
    ``OpenAIChat``, traced by ``openinference-instrumentation-agno`` (content off:
    ``OPENINFERENCE_HIDE_*``). Agno hands the model an ``isError`` result as plain text
    (``Error from MCP tool '<name>': [...]``), with no error flag: its tool span ends OK."""
    import os

    os.environ["AGNO_TELEMETRY"] = "false"
    provider = traced(endpoint, "capture-agno-mcp")
    from openinference.instrumentation.agno import AgnoInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=provider)

    def body(scripted: Scenario, server: ServerRun) -> None:
        import asyncio

        from agno.agent import Agent
        from agno.models.openai import OpenAIChat
        from agno.tools.mcp import MCPTools
        from fake_openai import FakeOpenAI
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=server.command, args=server.args)

        async def run() -> Any:
            async with MCPTools(
                server_params=params, tool_name_prefix=PREFIX.rstrip("_"),
                timeout_seconds=STARTUP,
            ) as mcp_tools:  # fmt: skip
                with FakeOpenAI(scripted) as base_url:
                    model = OpenAIChat(
                        id="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key",
                        temperature=0.0,
                    )  # fmt: skip
                    agent = Agent(
                        name=agent_name(scenario), instructions=scenario.system, model=model,
                        tools=[mcp_tools], telemetry=False,
                    )  # fmt: skip
                    return (await agent.arun(scenario.prompt)).content

        check_answer(scripted, str(asyncio.run(run())).strip())

    _sink_run(scenario, endpoint, executed, "", PREFIX, body, provider=provider)


# --- LlamaIndex: McpToolSpec under openinference-instrumentation-llama-index --------------


def run_llamaindex_openinference(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """``llama-index-tools-mcp``'s ``McpToolSpec`` on a ``BasicMCPClient`` over stdio (tool
    names unqualified) in a ``FunctionAgent``, traced by
    ``openinference-instrumentation-llama-index`` (content off: ``OPENINFERENCE_HIDE_*``).
    The tool spec returns the ``CallToolResult`` itself, ``isError=True`` included, as the
    tool's output: nothing raises."""
    provider = traced(endpoint, "capture-llamaindex-mcp")
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

    def body(scripted: Scenario, server: ServerRun) -> None:
        import asyncio

        from fake_openai import FakeOpenAI
        from llama_index.core.agent.workflow import FunctionAgent
        from llama_index.llms.openai import OpenAI
        from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

        client = BasicMCPClient(server.command, args=server.args, timeout=STARTUP)

        async def run() -> Any:
            mcp_tools = await McpToolSpec(client=client).to_tool_list_async()
            with FakeOpenAI(scripted) as base_url:
                llm = OpenAI(
                    model="gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key",
                    temperature=0.0,
                )  # fmt: skip
                agent = FunctionAgent(
                    name=agent_name(scenario), description="Answers with the tools it has.",
                    system_prompt=scenario.system, llm=llm, tools=mcp_tools, streaming=False,
                )  # fmt: skip
                return await agent.run(user_msg=scenario.prompt)

        output = asyncio.run(run())
        check_answer(scripted, str(output.response.content).strip())

    _sink_run(scenario, endpoint, executed, "", "", body, provider=provider)


# --- smolagents: ToolCollection.from_mcp under openinference-instrumentation-smolagents --


def run_smolagents_openinference(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """smolagents' ``ToolCollection.from_mcp`` (mcpadapt over the ``mcp`` client, unqualified
    names; its MCP session runs on an event loop of its own in another thread) in a
    ``ToolCallingAgent``, traced by ``openinference-instrumentation-smolagents`` (content off:
    ``OPENINFERENCE_HIDE_*``). mcpadapt hands the model an ``isError`` result's text as the
    tool's output, with no error flag: its tool span ends OK."""
    provider = traced(endpoint, "capture-smolagents-mcp")
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=provider)

    def body(scripted: Scenario, server: ServerRun) -> None:
        from fake_openai import FakeOpenAI
        from fw_smolagents import script
        from mcp import StdioServerParameters
        from smolagents import LogLevel, OpenAIServerModel, ToolCallingAgent, ToolCollection

        params = StdioServerParameters(command=server.command, args=server.args)
        with (
            ToolCollection.from_mcp(params, trust_remote_code=True) as collection,
            FakeOpenAI(script(scripted)) as base_url,
        ):
            model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=base_url, api_key="capture")
            agent = ToolCallingAgent(
                tools=[*collection.tools], model=model, name=agent_name(scenario),
                instructions=scenario.system, verbosity_level=LogLevel.OFF,
            )  # fmt: skip
            answer = agent.run(scenario.prompt, max_steps=10)
        check_answer(scripted, answer)

    _sink_run(scenario, endpoint, executed, "", "", body, provider=provider)


# --- AutoGen: McpWorkbench under openinference-instrumentation-autogen-agentchat -------------


def run_autogen_openinference(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """AutoGen's ``McpWorkbench`` over stdio (unqualified names) in an ``AssistantAgent``,
    traced by autogen-core's own spans on the global provider with
    ``openinference-instrumentation-autogen-agentchat`` and OpenInference's OpenAI
    instrumentor for the model calls, as the ``autogen-openinference`` source (content off:
    ``OPENINFERENCE_HIDE_*``). autogen-ext 0.7.5 needs ``mcp`` 1.x: no MCP spans."""
    provider = traced(endpoint, "capture-autogen-mcp")
    from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    AutogenAgentChatInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)

    def body(scripted: Scenario, server: ServerRun) -> None:
        import asyncio

        from autogen_agentchat.agents import AssistantAgent
        from autogen_ext.models.openai import OpenAIChatCompletionClient
        from autogen_ext.tools.mcp import McpWorkbench, StdioServerParams
        from fake_openai import FakeOpenAI

        params = StdioServerParams(
            command=server.command, args=server.args, read_timeout_seconds=STARTUP
        )

        async def run(base_url: str) -> str:
            async with McpWorkbench(server_params=params) as workbench:
                model = OpenAIChatCompletionClient(
                    model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key",
                    temperature=0.0,
                )  # fmt: skip
                agent = AssistantAgent(
                    agent_name(scenario), model_client=model, workbench=workbench,
                    system_message=scenario.system, max_tool_iterations=10,
                )  # fmt: skip
                result = await agent.run(task=scenario.prompt)
            return str(result.messages[-1].content).strip()

        with FakeOpenAI(scripted) as base_url:
            answer = asyncio.run(run(base_url))
        check_answer(scripted, answer)

    _sink_run(scenario, endpoint, executed, "", "", body, provider=provider)
