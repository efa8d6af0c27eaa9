"""PraisonAI agents (``praisonaiagents``) traced by ``openinference-instrumentation-openai``, for
the ``praisonai-openinference`` source.

PraisonAI's own ``obs`` module is an adapter protocol whose backends live in another package;
what records a PraisonAI run in OpenTelemetry is the instrumentation of the model client it
calls: ``Agent(llm="gpt-4o-mini")`` without a ``base_url`` goes through PraisonAI's own
``OpenAIClient`` (the ``openai`` package, pointed at the scripted server by
``OPENAI_BASE_URL``), which OpenInference's OpenAI instrumentor records as one
``ChatCompletion`` LLM span per model call. PraisonAI runs the tools itself and no span records
a tool run: the calls are the model's requests, the results the next call's ``tool`` messages.
The run is the application's ``agent_run`` span, so the model calls of one run share a trace.

Tools are plain functions. A tool that raises is not a failure the model hears of in
PraisonAI 1.7.17: its tool execution retries an exception that reads as a timeout (three
attempts, exponential backoff) and then ends the whole run with ``ToolExecutionError``, and a
``RetryPolicy(max_attempts=1)`` ends it at once. So each tool catches its backend's error and
returns it, as the raw client loops do: ``{"error": "SearchBackendError: ..."}`` (``Tools.call``),
which PraisonAI sends the model as the ``tool`` message; the model retries or not as the script
says. PraisonAI asks a person to approve a tool it deems risky by its name (``write_file``,
``run_command``: a console prompt that a closed stdin answers "no"), so each agent gets
``approval=True``, its documented auto-approving backend: the scripted run's tools all run.

``g_handoff`` and the ``s_delegated_*`` runs use PraisonAI's native handoff
(``Agent(handoffs=[research_agent])``): the triage agent's model asks for the
``transfer_to_research_agent`` tool, which runs the research agent on the conversation and
returns ``Handoff successful. research_agent response: <answer>``, which the triage agent then
passes on (``Scenario.through_agent_tool``). The research agent starts from its own history,
so the scripted server answers in call order.
"""

from __future__ import annotations

import json
import os
from typing import Any

from scenarios import Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a handoff scenario's transfer is the triage agent's
    ``transfer_to_research_agent`` tool, which runs the research agent's turns."""
    return scenario.through_agent_tool(("transfer_to_research_agent", {}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as PraisonAI function tools returning a failure as an error object
    (``Tools.call``); each logs its execution before it runs."""

    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        return tools.call("search_docs", {"query": query})

    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table.

        Args:
            table: The table.
            where: Which rows.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: The file's path.
            content: The file's text.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The command line.
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
    """One scenario through PraisonAI agents under OpenInference's OpenAI instrumentation;
    fails when the run's answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from openinference.instrumentation.openai import OpenAIInstrumentor

    os.environ["PRAISONAI_TELEMETRY_DISABLED"] = "true"  # no usage pings
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("capture.app")
    scripted = script(scenario)
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(scripted, turn_of=turn_of) as base_url:
        os.environ["OPENAI_BASE_URL"] = base_url
        os.environ["OPENAI_API_KEY"] = "capture-not-a-key"
        from praisonaiagents import Agent

        def agent(name: str, instructions: str, **kwargs: Any) -> Any:
            return Agent(
                name=name, instructions=instructions, llm="gpt-4o-mini", approval=True,
                **kwargs,
            )  # fmt: skip

        functions = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, tools=functions)
            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", handoffs=[research]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, tools=functions)
        with tracer.start_as_current_span("agent_run"):
            answer = runner.start(scenario.prompt)
    final = scripted.turns[-1]
    if scenario.model_fails_from is None and str(answer or "").strip() != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
