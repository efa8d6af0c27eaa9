"""Microsoft AutoGen AgentChat runs, traced by AutoGen's own GenAI spans and OpenInference.

The model is AutoGen's ``OpenAIChatCompletionClient`` with ``base_url`` on the scripted fake
OpenAI server. Tools are plain Python functions given to ``AssistantAgent(tools=...)`` (AutoGen
wraps them as ``FunctionTool``); a failing search raises, as a real backend client would, and
AutoGen sends the model the error text as a failed ``FunctionExecutionResult``. The agent loops
over tool calls (``max_tool_iterations``) until the model answers in text.

``g_handoff`` uses a ``Swarm``: the triage agent's ``handoffs=["research_agent"]`` gives it
AutoGen's ``transfer_to_research_agent`` tool; the research agent searches and answers, and the
run stops at its text answer (``n_handback``: the research agent's ``handoffs=["triage_agent"]``
hand back, and the run stops at the triage agent's answer). The fake server answers in call
order.

Tracing: the driver sets the global tracer provider, so autogen-core's built-in spans
(``invoke_agent <name>``, ``execute_tool <tool>``, with ``gen_ai.*`` attributes but no content)
are recorded next to those of ``openinference-instrumentation-autogen-agentchat`` (agents,
tools) and ``openinference-instrumentation-openai`` (model calls), the documented way to trace
AgentChat with OpenInference (``run``, the ``autogen-openinference`` source). ``run_native``
(the ``autogen-native`` source) records autogen-core's spans alone: agents and tools, no model
call and no content, whatever a content switch says.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scenarios import Scenario, Tools

LIMIT_SUMMARY = (
    "{'documents': [{'id': 'doc-4', 'title': 'Enterprise contract terms', 'text': 'Contract "
    "terms override the standard policy where they differ.'}]}"
)
"""What ``AssistantAgent`` returns when ``max_tool_iterations`` ends ``q_turn_limit``: its
``ToolCallSummaryMessage``, the last round's tool result as text (the default summary format
``{result}``, the result dict's ``str()``), which no model call read."""


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as plain functions (AutoGen reads names, docs and type hints)."""

    async def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    async def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table."""
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    async def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    async def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
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
    """One run traced by autogen-core's spans and OpenInference (the ``autogen-openinference``
    source)."""
    from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)  # autogen-core's own spans use the global one
    AutogenAgentChatInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed)


def run_native(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run traced by AutoGen's own spans alone (the ``autogen-native`` source): what
    an application that only sets a global tracer provider records."""
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    _run(scenario, tools, executed)


def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """One run; appends each executed scenario tool to ``executed`` and fails when the run's
    answer is not the scripted one."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import TextMessageTermination
    from autogen_agentchat.teams import Swarm
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from fake_openai import FakeOpenAI, call_order

    all_tools = scenario_tools(tools, executed)

    async def main(base_url: str) -> tuple[str, str]:
        def model() -> OpenAIChatCompletionClient:
            return OpenAIChatCompletionClient(
                model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key",
                temperature=0.0,
            )  # fmt: skip

        if scenario.agents_only:
            triage = AssistantAgent(
                "triage_agent", model_client=model(), handoffs=["research_agent"],
                system_message="Hand research questions to research_agent.",
            )  # fmt: skip
            # n_handback: the research agent hands back, and the triage agent answers.
            back = ["triage_agent"] if scenario.transfers_back else []
            answering = "triage_agent" if scenario.transfers_back else "research_agent"
            records = []
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                back, answering = ["records_agent"], "records_agent"
                records = [
                    AssistantAgent(
                        "records_agent", model_client=model(), tools=all_tools,
                        system_message=scenario.system, max_tool_iterations=10,
                    )
                ]  # fmt: skip
            research = AssistantAgent(
                "research_agent", model_client=model(), tools=all_tools, handoffs=back,
                system_message=scenario.system, max_tool_iterations=10,
            )  # fmt: skip
            team = Swarm(
                [triage, research, *records],
                termination_condition=TextMessageTermination(answering),
            )
            result = await team.run(task=scenario.prompt)
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # q_turn_limit: the agent's own limit on tool-call rounds; past it the run returns
            # its summary of the last round's tool results (ToolCallSummaryMessage).
            agent = AssistantAgent(
                name, model_client=model(), tools=all_tools, system_message=scenario.system,
                max_tool_iterations=scenario.turn_limit or 10,
            )  # fmt: skip
            result = await agent.run(task=scenario.prompt)
        last = result.messages[-1]
        if scenario.turn_limit and type(last).__name__ != "ToolCallSummaryMessage":
            raise SystemExit(f"{scenario.name}: the run ended with {type(last).__name__}")
        return str(last.content).strip(), last.source

    with FakeOpenAI(scenario, turn_of=call_order()) as base_url:
        answer, author = asyncio.run(main(base_url))
    final = LIMIT_SUMMARY if scenario.turn_limit else scenario.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
    if scenario.transfers_back and author != scenario.handoffs[-1][1]:
        raise SystemExit(f"{scenario.name}: answered by {author}, not after the transfer back")
