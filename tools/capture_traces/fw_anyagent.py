"""any-agent (Mozilla AI) agents traced by any-agent's own OpenTelemetry spans.

any-agent runs an agent written once on one of several frameworks; ``tinyagent`` is its own,
a tool loop over ``any-llm`` (``AgentConfig(model_id="openai:gpt-4o-mini", api_base=...)`` on
the scripted fake OpenAI server). Whatever the framework, any-agent's callbacks write its own
GenAI-style spans on the global tracer provider (scope ``any_agent``), which the driver sets
to the capture's before importing any-agent (its ``tracing`` module installs a provider of
its own when none is set): ``invoke_agent [<name>]`` per run (``gen_ai.agent.name``),
``call_llm <model>`` per model call (operation ``call_llm``; the input messages on the first
call of a trace only; the reply in ``gen_ai.output``, text or a JSON list of
``{"tool.name", "tool.args"}``; usage), ``execute_tool <tool>`` per call (``gen_ai.tool.args``,
the result in ``gen_ai.output``). The default ``ConsolePrintSpan`` callback, which prints each
span to the terminal, is left out (``callbacks=[]``); it records nothing.

A failing search raises, as a real backend client would: tinyagent hands the model
``Error calling tool: <message>`` as the result and any-agent ends the ``execute_tool`` span
with status ERROR.

``g_handoff``: the triage agent's ``research_agent`` tool runs the research agent
(``run_async``) and returns its answer; the research agent starts from a fresh history, so
the fake server answers in call order (``fake_openai.call_order``).

any-agent has no content switch: both variants hold the same attributes.
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
    """The scripted tools as plain functions (any-agent reads their signatures and
    docstrings); each logs its execution before it runs."""

    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

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
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)  # before any_agent installs its own
    from any_agent import AgentConfig, AnyAgent
    from fake_openai import FakeOpenAI, call_order

    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, instructions: str, functions: list[Any]) -> Any:
            config = AgentConfig(
                model_id="openai:gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key",
                name=name, instructions=instructions, tools=functions, callbacks=[],
                model_args={"temperature": 0.0},
            )  # fmt: skip
            return AnyAgent.create("tinyagent", config)

        functions = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, functions)

            async def research_agent(question: str) -> str:
                """Answer a research question with citations from the document search.

                Args:
                    question: The question to research.
                """
                return str((await research.run_async(question)).final_output)

            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, functions)
        answer = str(asyncio.run(runner.run_async(scenario.prompt)).final_output).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
