"""Semantic Kernel with its native OpenTelemetry diagnostics, for the ``semantic-kernel`` source.

A ``ChatCompletionAgent`` on an ``OpenAIChatCompletion`` connector pointed at the scripted fake
OpenAI server, with the scenario tools as ``@kernel_function`` methods of one plugin class,
``SupportTools``, and automatic function calling. Semantic Kernel advertises plugin functions
to the model under their fully qualified names (``SupportTools-search_docs``) and records them
that way on its ``execute_tool`` spans, so the fake model is scripted with those names.

Semantic Kernel reads its diagnostics switches
(``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS[_SENSITIVE]``) from the environment
and traces through the global tracer provider; message content goes to Python ``logging``
records, bridged to OTLP log records with a ``LoggingHandler`` on the logger provider, as its
own telemetry sample does. For ``g_handoff`` a ``triage_agent`` delegates to a
``research_agent`` through a plugin function (``ResearchAgent-research_agent``) that calls it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Annotated, Any

from fake_openai import FakeOpenAI, call_order
from scenarios import Scenario, Tools

PLUGIN = "SupportTools"
RESEARCH_PLUGIN = "ResearchAgent"


def qualified(scenario: Scenario) -> Scenario:
    """The scenario with tool names as Semantic Kernel advertises them (``Plugin-function``).

    ``transfer_to_research_agent`` becomes the research agent's plugin function."""

    def name(tool: str) -> str:
        if tool == "transfer_to_research_agent":
            return f"{RESEARCH_PLUGIN}-research_agent"
        return f"{PLUGIN}-{tool}"

    def args(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if tool == "transfer_to_research_agent":
            return {"messages": scenario.prompt}  # the agent function's one required argument
        return arguments

    turns = [
        step if isinstance(step, str) else [(name(t), args(t, a)) for t, a in step]
        for step in scenario.turns
    ]
    return dataclasses.replace(scenario, turns=turns)


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Run one scenario under Semantic Kernel's own diagnostics."""
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggingHandler

    trace.set_tracer_provider(tracer_provider)
    set_logger_provider(logger_provider)
    handler = LoggingHandler(logger_provider=logger_provider)
    handler.addFilter(logging.Filter("semantic_kernel"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        asyncio.run(_run(scenario, tools, executed))
    finally:
        root.removeHandler(handler)


def support_tools(tools: Tools, executed: list[str]) -> Any:
    """The scripted tools as one Semantic Kernel plugin; each call is logged in ``executed``."""
    from semantic_kernel.functions import kernel_function

    class SupportTools:
        """Support and coding tools (scripted: nothing touches the network or the disk)."""

        @kernel_function(description="Search the knowledge base and return matching documents.")
        def search_docs(self, query: Annotated[str, "The search query."]) -> Any:
            executed.append(f"{PLUGIN}-search_docs")
            return tools.search_docs(query)  # raises SearchBackendError on a scripted failure

        @kernel_function(description="Delete records from a database table.")
        def delete_records(
            self, table: Annotated[str, "The table."], where: Annotated[str, "SQL condition."]
        ) -> Any:
            executed.append(f"{PLUGIN}-delete_records")
            return tools.delete_records(table, where)

        @kernel_function(description="Write a file in the workspace.")
        def write_file(
            self, path: Annotated[str, "File path."], content: Annotated[str, "File content."]
        ) -> Any:
            executed.append(f"{PLUGIN}-write_file")
            return tools.write_file(path, content)

        @kernel_function(description="Run a shell command in the workspace.")
        def run_command(self, command: Annotated[str, "The command line."]) -> Any:
            executed.append(f"{PLUGIN}-run_command")
            return tools.run_command(command)

    return SupportTools()


def delegation(research: Any) -> Any:
    """The research agent as a plugin function of the triage agent.

    Semantic Kernel 1.45's built-in agent-as-plugin function passes its own
    ``instructions_override=None`` down as a kernel argument, which then shows up in the
    arguments of every tool the research agent calls; calling the agent from a plugin function
    keeps the recorded tool arguments what the model asked for."""
    from semantic_kernel.functions import kernel_function

    class ResearchAgent:
        @kernel_function(name="research_agent", description="Ask the research agent.")
        async def research_agent(self, messages: Annotated[str, "The question."]) -> str:
            response = await research.get_response(messages=messages)
            return str(response.content)

    return ResearchAgent()


def kernel_with(plugin: object, plugin_name: str) -> Any:
    """A kernel holding one plugin under the given name (Semantic Kernel's tool namespace)."""
    from semantic_kernel import Kernel

    kernel = Kernel()
    kernel.add_plugin(plugin, plugin_name=plugin_name)
    return kernel


async def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import (
        OpenAIChatCompletion,
        OpenAIChatPromptExecutionSettings,
    )
    from semantic_kernel.functions import KernelArguments

    # A delegated agent starts from a fresh history: answer in arrival order there.
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(qualified(scenario), turn_of) as base_url:
        service = OpenAIChatCompletion(
            ai_model_id="gpt-4o-mini",
            async_client=AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key"),
        )
        # Auto invocation stops after five rounds by default, and m_excess_calls scripts six:
        # the sixth request would be answered without running its tool.
        auto = FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=10)
        settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=auto, temperature=0.0)
        plugin = support_tools(tools, executed)
        if scenario.agents_only:
            research = ChatCompletionAgent(
                service=service, name="research_agent", instructions=scenario.system,
                kernel=kernel_with(plugin, PLUGIN),
                arguments=KernelArguments(settings=settings),
                description="Answers research questions from the knowledge base.",
            )  # fmt: skip
            agent = ChatCompletionAgent(
                service=service, name="triage_agent",
                instructions="Hand research questions to the research agent.",
                kernel=kernel_with(delegation(research), RESEARCH_PLUGIN),
                arguments=KernelArguments(settings=settings),
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = ChatCompletionAgent(
                service=service, name=name, instructions=scenario.system,
                kernel=kernel_with(plugin, PLUGIN),
                arguments=KernelArguments(settings=settings),
            )  # fmt: skip
        await agent.get_response(messages=scenario.prompt)
