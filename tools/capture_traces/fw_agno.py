"""Agno agent runs traced by ``openinference-instrumentation-agno`` (``run``) or by
OpenLLMetry's ``opentelemetry-instrumentation-agno`` (``run_openllmetry``): the same agents, so
the same truth.

The model is Agno's ``OpenAIChat`` on the scripted fake OpenAI server. Tools are plain Python
functions handed to ``Agent(tools=...)``, Agno's own function-tool mechanism, over the
scripted ``Tools``; a failing search raises, as a real backend client would, and Agno sends
the model the error text.

``g_handoff`` uses an Agno ``Team``: the team leader delegates with Agno's built-in
``delegate_task_to_member`` tool to the ``research_agent`` member, which searches and answers,
and the leader passes the answer on. A member starts from a fresh history, so the fake server
answers in call order (``fake_openai.call_order``) from the script below.

Agno's own usage telemetry (a call to its cloud API) is turned off: the capture touches
nothing but 127.0.0.1.
"""

from __future__ import annotations

import os
from typing import Any

from scenarios import QUESTION, RECORDS_TASK, Scenario, Tools, answer_type

MEMBER_ID = "research-agent"
"""Agno's member id for the member named ``research_agent`` (its name, url-safe)."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` delegates to the research member, the
    member searches and answers, then the team leader passes the answer on."""
    return scenario.through_agent_tool(
        ("delegate_task_to_member", {"member_id": MEMBER_ID, "task": QUESTION}),
        nested=("delegate_task_to_member", {"member_id": "records-agent", "task": RECORDS_TASK}),
    )


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as Agno function tools that log each execution."""

    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table.

        Args:
            table: The table to delete from.
            where: SQL condition selecting the rows.
        """
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: File path relative to the workspace.
            content: The whole new file content.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The command line to run.
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
    """``openinference-instrumentation-agno`` (the ``agno-openinference`` source)."""
    from openinference.instrumentation.agno import AgnoInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=tracer_provider)
    run_agents(scenario, tools, executed)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """OpenLLMetry's ``opentelemetry-instrumentation-agno`` with its OpenAI instrumentation,
    as ``Traceloop.init()`` would enable both (the ``openllmetry-agno`` source); content
    switch ``TRACELOOP_TRACE_CONTENT``."""
    from opentelemetry.instrumentation.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    run_agents(scenario, tools, executed)


def run_otel_genai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The OpenTelemetry project's own GenAI instrumentations (opentelemetry-python-genai):
    ``opentelemetry-instrumentation-genai-agno`` (agent runs, tool executions) with
    ``opentelemetry-instrumentation-genai-openai`` for the model calls, which the Agno one does
    not trace (the ``agno-otel-genai`` source); content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``SPAN_ONLY`` / ``NO_CONTENT``)."""
    from opentelemetry.instrumentation.genai.agno import AgnoInstrumentor
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    run_agents(scenario, tools, executed)


def run_agents(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """One run (instrumented by the caller); appends each executed scenario tool to
    ``executed`` and fails when the run's answer is not the scripted one."""
    os.environ["AGNO_TELEMETRY"] = "false"
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from agno.team import Team
    from fake_openai import FakeOpenAI, call_order

    all_tools = scenario_tools(tools, executed)
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def model() -> OpenAIChat:
            return OpenAIChat(
                id="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
            )

        runner: Any
        if scenario.agents_only and scenario.nested:
            # s_nested_*: the research agent is a team of its own, leading the records agent
            # (a team as a member of a team), with the scripted tools beside the delegation.
            records = Agent(
                name="records_agent", role="Changes records in the database.",
                instructions=scenario.system, model=model(), tools=all_tools, telemetry=False,
            )  # fmt: skip
            research: Any = Team(
                name="research_agent", role="Answers research questions with citations.",
                members=[records], instructions=scenario.system, model=model(),
                tools=all_tools, telemetry=False,
            )  # fmt: skip
        elif scenario.agents_only:
            research = Agent(
                name="research_agent", role="Answers research questions with citations.",
                instructions=scenario.system, model=model(), tools=all_tools, telemetry=False,
            )  # fmt: skip
        if scenario.agents_only:
            runner = Team(
                name="triage_agent", members=[research], model=model(), telemetry=False,
                instructions="Hand research questions to research_agent.",
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # r_structured_*: the agent's output_schema (Agno asks the model for the type).
            schema = {"output_schema": answer_type()} if scenario.structured else {}
            runner = Agent(
                name=name, instructions=scenario.system, model=model(), tools=all_tools,
                telemetry=False, **schema,
            )  # fmt: skip
        content = runner.run(scenario.prompt).content
        answer = content if scenario.structured else str(content).strip()
    final = scripted.turns[-1]
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
