"""Mirascope v2 agents traced by Mirascope's own ``ops`` OpenTelemetry instrumentation.

The agent is the loop Mirascope documents for ``mirascope.llm``: an ``@llm.call`` prompt
function with ``@llm.tool`` tools, then ``while response.tool_calls: response =
response.resume(response.execute_tools())``, the whole run an ``@ops.trace`` function.
``ops.configure(tracer_provider=...)`` plus ``ops.instrument_llm()`` make one GenAI
``chat`` span per model call (``gen_ai.input.messages`` / ``gen_ai.output.messages`` with
the tool calls and their results, GenAI conventions 1.38) under the run's trace span.
Mirascope writes no span per tool execution: tools appear only in the messages.

The model is ``openai/gpt-4o-mini`` on Mirascope's OpenAI provider (registered with
``llm.register_provider("openai", base_url=...)``), which prefers the Responses API for that
model: the scripted fake Responses server answers it, in call order.

A failing search raises, as a real backend client would: Mirascope's ``Tool.execute``
catches the exception and sends the model its text as the tool's output.

``g_handoff``: Mirascope has no handoff primitive; the triage agent's ``research_agent``
tool runs the research agent (its own traced loop) and returns its answer.

Mirascope's ``instrument_llm`` has no content switch (it always writes the messages): both
variants hold the same content.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by Mirascope's ``ops`` instrumentation on the capture's provider;
    appends each executed scenario tool to ``executed`` and fails when the run's answer is
    not the scripted one."""
    del logger_provider
    from fake_openai_responses import FakeOpenAIResponses
    from mirascope import llm, ops

    ops.configure(tracer_provider=tracer_provider)
    ops.instrument_llm()

    @llm.tool
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @llm.tool
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @llm.tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    @llm.tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return str(tools.run_command(command))

    all_tools = [search_docs, delete_records, write_file, run_command]
    model = "openai/gpt-4o-mini"

    def agent(name: str, system: str, agent_tools: list[Any]) -> Any:
        """A documented Mirascope agent: a call with tools, resumed with the tools' outputs
        until the model answers in text; the whole loop one ``@ops.trace`` span."""

        @llm.call(model, tools=agent_tools, temperature=0.0)
        def prompt(question: str) -> list[llm.Message]:
            return [llm.messages.system(system), llm.messages.user(question)]

        def loop(question: str) -> str:
            response = prompt(question)
            while response.tool_calls:
                response = response.resume(response.execute_tools())
            return str(response.text())

        loop.__name__ = loop.__qualname__ = name  # the trace span is named after it
        return ops.trace(tags=[name])(loop)

    scripted = script(scenario)
    with FakeOpenAIResponses(scripted) as base_url:
        llm.register_provider("openai", base_url=base_url, api_key="capture-not-a-key")
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, all_tools)

            @llm.tool
            def research_agent(question: str) -> str:
                """Answers research questions with citations."""
                return str(research(question))

            triage = agent(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
            answer = str(triage(scenario.prompt))
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            answer = str(agent(name, scenario.system, all_tools)(scenario.prompt))
    tracer_provider.force_flush()
    final = scripted.turns[-1]
    if answer.strip() != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
