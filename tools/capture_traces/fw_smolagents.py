"""smolagents ``ToolCallingAgent`` runs traced by ``openinference-instrumentation-smolagents``.

The model is ``OpenAIServerModel`` on the scripted fake OpenAI server. smolagents ends every
run through its built-in ``final_answer`` tool, so each scripted final text is delivered as
that tool's ``answer`` argument (the fabricated citation of ``e_fabricated_citation``
included). ``g_handoff`` uses smolagents' managed agents: the triage agent calls the
``research_agent`` managed agent like a tool, the research agent searches and answers, and
the triage agent passes that answer on. A managed agent starts from a fresh history, so the
fake server answers in call order (``fake_openai.call_order``) from the script below.

Tools are smolagents ``@tool`` functions over the scripted ``Tools``; a failing search
raises, as a real backend client would, and smolagents reports the error to the model.

``run_code_agent`` drives a ``CodeAgent`` instead: the scripted model writes Python in
``<code>`` blocks that call the tools (and ``final_answer``) inside smolagents' local
executor, so h_coding_agent's ``curl`` sits in generated code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from typing import Any

from scenarios import QUESTION, RECORDS_TASK, Scenario, Tools

Turn = list[tuple[str, dict[str, Any]]] | str


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order, as smolagents needs them: a final text becomes a
    ``final_answer`` tool call; ``g_handoff`` calls the managed agent, then the research
    agent searches and answers, then the triage agent passes the answer on."""

    def final(turn: Turn) -> Turn:
        return [("final_answer", {"answer": turn})] if isinstance(turn, str) else turn

    if scenario.agents_only:
        delegated = scenario.through_agent_tool(
            ("research_agent", {"task": QUESTION}),
            nested=("records_agent", {"task": RECORDS_TASK}),  # s_nested_*
        )
        turns: list[Turn] = [final(t) for t in delegated.turns]  # each agent's answer, passed on
    elif scenario.turn_limit:  # the last text answers smolagents' own final-answer request
        turns = [*[final(t) for t in scenario.turns[:-1]], scenario.turns[-1]]
    else:
        turns = [final(t) for t in scenario.turns]
    return dataclasses.replace(scenario, turns=turns)


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as smolagents ``@tool`` functions that log each execution."""
    from smolagents import tool

    @tool
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @tool
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table.

        Args:
            table: The table to delete from.
            where: SQL condition selecting the rows.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: Workspace-relative path.
            content: The new file content.
        """
        executed.append("write_file")
        return json.dumps(tools.write_file(path, content))

    @tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The shell command line.
        """
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """One ``ToolCallingAgent`` run traced by ``openinference-instrumentation-smolagents``;
    ``stream``: streamed as ``run_tool_calling`` says (``smolagents-openinference-stream``)."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=tracer_provider)
    run_tool_calling(scenario, tools, executed, stream=stream)


def run_otel_genai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One ``ToolCallingAgent`` run traced by the OpenTelemetry project's own GenAI
    instrumentations (opentelemetry-python-genai): ``opentelemetry-instrumentation-genai-
    smolagents`` with ``opentelemetry-instrumentation-genai-openai`` for the model calls (the
    ``smolagents-otel-genai`` source); content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``SPAN_ONLY`` / ``NO_CONTENT``)."""
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.genai.smolagents import SmolagentsInstrumentor

    for instrumentor in (SmolagentsInstrumentor(), OpenAIInstrumentor()):
        instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    run_tool_calling(scenario, tools, executed)


def run_tool_calling(
    scenario: Scenario, tools: Tools, executed: list[str], stream: bool = False
) -> None:
    """One ``ToolCallingAgent`` run (instrumented by the caller); appends each executed
    scenario tool to ``executed`` and fails when the run's answer is not the scripted one.
    With ``stream`` every agent streams its model's output (``stream_outputs=True``: each
    model call a streamed chat completion) and each run is ``agent.run(..., stream=True)``,
    its step events consumed as a chat UI would, the answer the last one's output."""
    from fake_openai import FakeOpenAI, call_order
    from smolagents import LogLevel, OpenAIServerModel, ToolCallingAgent

    all_tools = scenario_tools(tools, executed)
    quiet = LogLevel.OFF  # the capture's stdout carries the executed-tools line
    with FakeOpenAI(script(scenario), turn_of=call_order()) as base_url:
        model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=base_url, api_key="capture")
        if scenario.agents_only:
            records = [  # s_nested_*: the research agent's own managed agent
                ToolCallingAgent(
                    tools=scenario_tools(tools, executed), model=model, name="records_agent",
                    description="Changes records in the database.",
                    instructions=scenario.system, verbosity_level=quiet, stream_outputs=stream,
                )
            ] if scenario.nested else []  # fmt: skip
            research = ToolCallingAgent(
                tools=all_tools, model=model, name="research_agent", managed_agents=records,
                description="Answers research questions from the document search.",
                instructions=scenario.system, verbosity_level=quiet, stream_outputs=stream,
            )  # fmt: skip
            agent = ToolCallingAgent(
                tools=[], model=model, name="triage_agent", managed_agents=[research],
                instructions="Hand research questions to research_agent.", verbosity_level=quiet,
                stream_outputs=stream,
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = ToolCallingAgent(
                tools=all_tools, model=model, name=name, instructions=scenario.system,
                verbosity_level=quiet, stream_outputs=stream,
            )  # fmt: skip
        # q_turn_limit: smolagents' own step limit; past it, the agent asks the model for a
        # final answer itself (a request offering no tools).
        steps = scenario.turn_limit or 10
        answer = _answer(agent.run(scenario.prompt, max_steps=steps, stream=stream), stream)
        for followup in scenario.followups:  # later user turns keep the agent's memory
            run = agent.run(followup, max_steps=steps, reset=False, stream=stream)
            answer = _answer(run, stream)
    _check_answer(scenario, answer)


def _answer(result: Any, stream: bool) -> Any:
    """A run's answer: ``agent.run``'s return value, or with ``stream`` the output of the last
    event its generator yields (``FinalAnswerStep``), every event consumed. smolagents shows a
    streamed model output live on its console whatever the log level: sent to a buffer, as
    the capture's stdout carries the executed-tools line."""
    if not stream:
        return result
    with contextlib.redirect_stdout(io.StringIO()):
        events = list(result)
    last = events[-1] if events else None
    return getattr(last, "output", last)


def code_script(scenario: Scenario) -> Scenario:
    """The model's turns for a ``CodeAgent``: each turn is text with a ``<code>`` block that
    calls the scripted tools (the ``curl`` of h_coding_agent sits in generated code), and the
    final text goes out through ``final_answer(...)`` in code."""

    def code(turn: Turn) -> str:
        if isinstance(turn, str):
            calls = [f"final_answer({turn!r})"]
        else:
            calls = [
                f"print({name}({', '.join(f'{k}={v!r}' for k, v in args.items())}))"
                for name, args in turn
            ]
        return "Thought: next step.\n<code>\n" + "\n".join(calls) + "\n</code>"

    return dataclasses.replace(scenario, turns=[code(t) for t in scenario.turns])


def run_code_agent(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One instrumented ``CodeAgent`` run: the tools run inside smolagents' local Python
    executor, called from the code the scripted model writes."""
    from fake_openai import FakeOpenAI, call_order
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import CodeAgent, LogLevel, OpenAIServerModel

    SmolagentsInstrumentor().instrument(tracer_provider=tracer_provider)
    with FakeOpenAI(code_script(scenario), turn_of=call_order()) as base_url:
        model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=base_url, api_key="capture")
        name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
        agent = CodeAgent(
            tools=scenario_tools(tools, executed), model=model, name=name,
            instructions=scenario.system, verbosity_level=LogLevel.OFF,
        )  # fmt: skip
        answer = agent.run(scenario.prompt, max_steps=10)
    _check_answer(scenario, answer)


def _check_answer(scenario: Scenario, answer: Any) -> None:
    want = scenario.handed_up or scenario.turns[-1]  # s_nested_rewritten: the triage's
    if answer != want:
        raise SystemExit(f"{scenario.name}: run answered {answer!r}, script says {want!r}")
