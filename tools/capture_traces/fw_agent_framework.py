"""Microsoft Agent Framework runs traced by the framework's own OpenTelemetry instrumentation.

The model is the framework's ``OpenAIChatCompletionClient`` on the scripted fake OpenAI
server; tools are plain Python functions handed to ``Agent(tools=...)``, which the framework
wraps as its ``FunctionTool``s and runs in its function-invocation loop. A failing search
raises, as a real backend client would; with ``include_detailed_errors`` the framework sends
the model ``Error: Function failed. Exception: ...`` and marks the ``execute_tool`` span failed.

``g_handoff`` uses the framework's agent-as-tool delegation (``Agent.as_tool``): the triage
agent calls the ``research_agent`` tool, which runs the research agent (its own
``invoke_agent`` span under the tool span); the research agent searches and answers, and the
triage agent passes the answer on. The research agent starts from a fresh history, so the fake
server answers in call order (``fake_openai.call_order``) from the script below.

The framework's spans go to the global tracer provider, which the driver sets. Content capture
is the framework's ``ENABLE_SENSITIVE_DATA`` switch, read from the environment; the framework
defaults to the latest GenAI conventions (``gen_ai.input.messages`` /
``gen_ai.output.messages``, ``gen_ai.tool.call.arguments`` / ``result``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"task": QUESTION}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as plain functions (the framework reads their signatures and
    docstrings); each logs its execution before it runs."""

    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table."""
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return str(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by the framework's own instrumentation, its spans rewritten in place by
    OpenInference's ``AgentFrameworkToOpenInferenceProcessor``
    (``openinference-instrumentation-agent-framework``), which adds OpenInference attributes
    beside the GenAI ones. The processor is put first among the provider's processors, as its
    documentation orders, so the capture holds what the exporter would send; it has no content
    switch of its own (``ENABLE_SENSITIVE_DATA`` decides what the framework records)."""
    from openinference.instrumentation.agent_framework import (
        AgentFrameworkToOpenInferenceProcessor,
    )

    processors = tracer_provider._active_span_processor
    processors._span_processors = (
        AgentFrameworkToOpenInferenceProcessor(),
        *processors._span_processors,
    )
    run(scenario, tracer_provider, logger_provider, tools, executed)


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from agent_framework import Agent
    from agent_framework.openai import OpenAIChatCompletionClient
    from fake_openai import FakeOpenAI, call_order
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider

    trace.set_tracer_provider(tracer_provider)
    set_logger_provider(logger_provider)
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, instructions: str, agent_tools: list[Any]) -> Any:
            client = OpenAIChatCompletionClient(
                "gpt-4o-mini",
                base_url=base_url,
                api_key="capture-not-a-key",
                function_invocation_configuration={"include_detailed_errors": True},
            )
            return Agent(
                client=client, name=name, instructions=instructions, tools=agent_tools,
                description=f"The {name.replace('_', ' ')}.",
            )  # fmt: skip

        all_tools = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, all_tools)
            runner = agent("triage_agent", "Hand research questions to research_agent.",
                           [research.as_tool()])  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, all_tools)
        response = asyncio.run(runner.run(scenario.prompt, options={"temperature": 0.0}))
    answer = str(response.text).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
