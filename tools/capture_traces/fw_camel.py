"""CAMEL-AI agents (``camel-ai``) traced by ``openinference-instrumentation-openai``, for the
``camel-openinference`` source.

CAMEL has no OpenTelemetry tracing of its own (its documented tracking is AgentOps' or
Langfuse's services); what records a CAMEL run in OpenTelemetry is the instrumentation of the
model client it calls. A ``ChatAgent`` on ``ModelFactory.create(OPENAI_COMPATIBLE_MODEL,
"gpt-4o-mini", url=...)`` calls the ``openai`` package's client on the scripted server, which
OpenInference's OpenAI instrumentor records as one ``ChatCompletion`` LLM span per model
call; the run is the application's ``agent_run`` span, so one run's model calls share a trace.
The model gets CAMEL's ``StubTokenCounter``: the default counter loads a tiktoken encoding
from the network, which this capture never reaches.

Tools are ``FunctionTool`` wrappers of plain functions, and CAMEL runs them itself: no span
records a tool run (the calls are the model's requests, the results the next call's ``tool``
messages). A tool that raises is caught by ``ChatAgent``, which sends the model the text
``Tool execution failed: Error executing tool '<name>': ...`` as the tool's result, with no
error flag; an unknown tool gets ``Tool execution failed: Tool '<name>' not found in
registered tools``.

``g_handoff`` and the ``s_delegated_*`` runs: the triage agent's ``research_agent`` tool runs
the research agent's ``step`` and returns its answer, which the triage agent passes on
(``Scenario.through_agent_tool``); the research agent starts from its own history, so the
scripted server answers in call order.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a handoff scenario's transfer is the triage agent's
    ``research_agent`` tool, which runs the research agent's turns."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as CAMEL ``FunctionTool``s; each logs its execution before it runs
    and raises what the scripted backend raises."""
    from camel.toolkits import FunctionTool

    def search_docs(query: str) -> str:
        r"""Search the knowledge base and return matching documents.

        Args:
            query (str): What to look for.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    def delete_records(table: str, where: str) -> str:
        r"""Delete records from a database table.

        Args:
            table (str): The table.
            where (str): Which rows.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    def write_file(path: str, content: str) -> str:
        r"""Write a file in the workspace.

        Args:
            path (str): The file's path.
            content (str): The file's text.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        r"""Run a shell command in the workspace.

        Args:
            command (str): The command line.
        """
        executed.append("run_command")
        return str(tools.run_command(command))

    return [FunctionTool(f) for f in (search_docs, delete_records, write_file, run_command)]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through CAMEL ``ChatAgent``s under OpenInference's OpenAI instrumentation;
    fails when the run's answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    from camel.agents import ChatAgent
    from camel.models import ModelFactory
    from camel.models.stub_model import StubTokenCounter
    from camel.toolkits import FunctionTool
    from camel.types import ModelPlatformType

    tracer = tracer_provider.get_tracer("capture.app")
    scripted = script(scenario)
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(scripted, turn_of=turn_of) as base_url:

        def agent(system: str, functions: list[Any]) -> Any:
            model = ModelFactory.create(
                model_platform=ModelPlatformType.OPENAI_COMPATIBLE_MODEL,
                model_type="gpt-4o-mini", url=base_url, api_key="capture-not-a-key",
                token_counter=StubTokenCounter(),
            )  # fmt: skip
            return ChatAgent(system_message=system, model=model, tools=functions)

        functions = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent(scenario.system, functions)

            def research_agent(question: str) -> str:
                r"""Answer a research question with citations.

                Args:
                    question (str): The question to research.
                """
                reply = research.step(question)
                return str(reply.msgs[0].content)

            runner = agent(
                "Hand research questions to research_agent.", [FunctionTool(research_agent)]
            )
        else:
            runner = agent(scenario.system, functions)
        with tracer.start_as_current_span("agent_run"):
            reply = runner.step(scenario.prompt)
    answer = reply.msgs[0].content if reply.msgs else None
    final = scripted.turns[-1]
    if str(answer or "").strip() != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
