"""AgentScope 2 agents traced by AgentScope's own OpenTelemetry ``TracingMiddleware``.

AgentScope 2 (the ``agentscope`` package, 2.x: one ``Agent`` class running the reasoning-acting
loop; 1.x's ``ReActAgent`` and ``agentscope.init(tracing_url=...)`` are gone) builds an agent
from a chat model, a ``Toolkit`` of ``FunctionTool`` objects (schemas read from each function's
signature and docstring) and middlewares. The model is ``OpenAIChatModel`` with an
``OpenAICredential`` whose ``base_url`` is the scripted fake OpenAI server, non-streaming.
Every tool carries an ``ALLOW`` permission decision, so no run stops to ask a user.

Tracing is the agent's ``TracingMiddleware``, which records GenAI spans (``invoke_agent``,
``chat``, ``execute_tool``, messages as ``gen_ai.input.messages`` / ``gen_ai.output.messages``,
tool arguments and results on the tool span) on the global tracer provider, and only when that
provider is an SDK ``TracerProvider``: the driver makes the capture's provider the global one.
The middleware has no content switch (it always writes messages, arguments and results): both
variants hold the same content.

A failing search raises, as a real backend client would: AgentScope's toolkit catches the
exception and hands the model its bare message as a tool result whose ``state`` is ``error``;
the ``execute_tool`` span still ends with status OK, the failure only in
``gen_ai.tool.call.result``.

``g_handoff``: AgentScope 2 has no handoff or agent-as-tool primitive; the triage agent's
``research_agent`` tool runs the research agent (its own traced reply, nested in the tool's
span) and returns its answer. The research agent starts from a fresh history, so the fake
server answers in call order.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as plain functions with Google-style docstrings (AgentScope reads
    the parameter descriptions from them); each logs its execution before it runs."""

    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        Args:
            query (`str`): What to look for.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table.

        Args:
            table (`str`): The table.
            where (`str`): Which rows.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path (`str`): The file's path.
            content (`str`): The file's text.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command (`str`): The command line.
        """
        executed.append("run_command")
        return str(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by AgentScope's ``TracingMiddleware`` on the capture's provider (made the
    global one); fails when the run's answer is not the scripted one."""
    del logger_provider
    from agentscope.agent import Agent
    from agentscope.credential import OpenAICredential
    from agentscope.message import Msg, TextBlock
    from agentscope.middleware import TracingMiddleware
    from agentscope.model import OpenAIChatModel
    from agentscope.permission import PermissionBehavior, PermissionDecision
    from agentscope.tool import FunctionTool, Toolkit
    from fake_openai import FakeOpenAI, call_order
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    allow = PermissionDecision(behavior=PermissionBehavior.ALLOW, message="capture: allowed")
    scripted = script(scenario)

    def user(text: str) -> Any:
        return Msg(name="user", content=[TextBlock(text=text)], role="user")

    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, system: str, functions: list[Any]) -> Any:
            model = OpenAIChatModel(
                credential=OpenAICredential(api_key="capture-not-a-key", base_url=base_url),
                model="gpt-4o-mini", stream=False,
            )  # fmt: skip
            toolkit = Toolkit(tools=[FunctionTool(f, permission=allow) for f in functions])
            return Agent(
                name=name, system_prompt=system, model=model, toolkit=toolkit,
                middlewares=[TracingMiddleware()],
            )  # fmt: skip

        functions = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, functions)

            async def research_agent(question: str) -> str:
                """Answer a research question with citations.

                Args:
                    question (`str`): The question to research.
                """
                reply = await research.reply(user(question))
                return str(reply.get_text_content())

            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, functions)
        reply = asyncio.run(runner.reply(user(scenario.prompt)))
    answer = str(reply.get_text_content()).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")


def run_v1(
    scenario: Scenario,
    endpoint: str,
    tools: Tools,
    executed: list[str],
    *,
    content: bool,
) -> None:
    """AgentScope 1.x (``agentscope-1``): a ``ReActAgent`` with a ``Toolkit`` whose functions
    return ``ToolResponse`` objects, ``OpenAIChatModel`` on the fake server through its client's
    ``base_url``, traced the 1.x way, ``agentscope.init(tracing_url=...)``: AgentScope's own
    OTLP/HTTP exporter on the sink. A failing search raises; AgentScope's toolkit hands the
    model ``Error: <message>``. No content switch (``content`` changes nothing). Fails when
    the run's answer is not the scripted one."""
    del content
    import agentscope
    from agentscope.agent import ReActAgent
    from agentscope.formatter import OpenAIChatFormatter
    from agentscope.memory import InMemoryMemory
    from agentscope.message import Msg, TextBlock
    from agentscope.model import OpenAIChatModel
    from agentscope.tool import Toolkit, ToolResponse
    from fake_openai import FakeOpenAI, call_order
    from opentelemetry import trace

    agentscope.init(project="capture-agentscope-1", tracing_url=f"{endpoint}/v1/traces")
    scripted = script(scenario)

    def responding(fn: Any) -> Any:
        """The scenario function as a 1.x tool: its text in a ``ToolResponse``."""

        def tool(**kwargs: Any) -> Any:
            return ToolResponse(content=[TextBlock(type="text", text=fn(**kwargs))])

        tool.__name__, tool.__doc__ = fn.__name__, fn.__doc__
        tool.__signature__ = __import__("inspect").signature(fn)  # type: ignore[attr-defined]
        return tool

    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, system: str, functions: list[Any]) -> Any:
            toolkit = Toolkit()
            for function in functions:
                toolkit.register_tool_function(function)
            return ReActAgent(
                name=name, sys_prompt=system,
                model=OpenAIChatModel(
                    model_name="gpt-4o-mini", api_key="capture-not-a-key", stream=False,
                    client_kwargs={"base_url": base_url},
                ),
                formatter=OpenAIChatFormatter(), toolkit=toolkit, memory=InMemoryMemory(),
                parallel_tool_calls=True,
            )  # fmt: skip

        functions = [responding(f) for f in scenario_tools(tools, executed)]
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, functions)

            async def research_agent(question: str) -> Any:
                """Answer a research question with citations.

                Args:
                    question (`str`): The question to research.
                """
                reply = await research(Msg("user", question, "user"))
                return ToolResponse(content=[TextBlock(type="text", text=reply.get_text_content())])

            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, functions)
        reply = asyncio.run(runner(Msg("user", scenario.prompt, "user")))
    provider = trace.get_tracer_provider()
    provider.force_flush()  # type: ignore[attr-defined]
    answer = str(reply.get_text_content()).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
