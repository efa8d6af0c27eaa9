"""BeeAI Framework runs traced by ``openinference-instrumentation-beeai``.

The agent is BeeAI's ``RequirementAgent`` on its ``OpenAIChatModel`` (LiteLLM underneath)
pointed at the scripted fake OpenAI server. BeeAI ends every run through its built-in
``final_answer`` tool (``final_answer_as_tool``, the default), so each scripted final text is
delivered as that tool's ``response`` argument. Tools are BeeAI ``@tool`` functions over the
scripted ``Tools``; a failing search raises, as a real backend client would, and BeeAI hands
the model the error. The tool-call cycle checker is off: the retry scenarios repeat the same
search on purpose.

``g_handoff`` uses BeeAI's ``HandoffTool``: the triage agent calls the ``research_agent``
tool, which runs the research agent on the task; the research agent searches and answers, and
the triage agent passes the answer on. The research agent starts from a fresh history, so the
fake server answers in call order (``fake_openai.call_order``) from the script below.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from typing import Any

from scenarios import QUESTION, Scenario, Tools

Turn = list[tuple[str, dict[str, Any]]] | str


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order, as BeeAI needs them: a final text becomes a
    ``final_answer`` tool call; ``g_handoff`` calls the research agent's handoff tool, the
    research agent searches and answers, then the triage agent passes the answer on."""

    def final(turn: Turn) -> Turn:
        return [("final_answer", {"response": turn})] if isinstance(turn, str) else turn

    if scenario.agents_only:
        turns: list[Turn] = [
            [("research_agent", {"task": QUESTION})],
            *[final(t) for t in scenario.turns[1:]],
            final(scenario.turns[-1]),  # the research agent's answer, passed on
        ]
    else:
        turns = [final(t) for t in scenario.turns]
    return dataclasses.replace(scenario, turns=turns)


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as BeeAI ``@tool`` functions that log each execution; results are
    JSON text (BeeAI hands the model ``str()`` of a tool's return value)."""
    from beeai_framework.tools import tool

    @tool
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @tool
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    @tool
    def run_command(command: str) -> str:
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
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no cost-map download
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.tools.handoff import HandoffTool
    from fake_openai import FakeOpenAI, call_order
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    BeeAIInstrumentor().instrument(tracer_provider=tracer_provider)
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, instructions: str, agent_tools: list[Any]) -> Any:
            llm = OpenAIChatModel("gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key")
            return RequirementAgent(
                llm=llm, name=name, description=f"The {name.replace('_', ' ')}.",
                instructions=instructions, tools=agent_tools, tool_call_checker=False,
            )  # fmt: skip

        all_tools = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, all_tools)
            runner = agent("triage_agent", "Hand research questions to research_agent.",
                           [HandoffTool(research)])  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, all_tools)

        async def run_agent() -> Any:
            return await runner.run(scenario.prompt)  # a Run, awaitable inside a loop

        output = asyncio.run(run_agent())
    answer = output.last_message.text.strip()
    final = scenario.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
