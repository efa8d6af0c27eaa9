"""Atomic Agents (``atomic-agents``) traced by its own OpenTelemetry instrumentation
(``AtomicAgentsInstrumentor``, the ``observability`` extra), for the ``atomic-agents`` source.

Atomic Agents has no tool-calling loop of its own: an ``AtomicAgent`` turns one input schema
into one output schema through Instructor (``instructor.from_openai`` on the ``openai`` client,
pointed at the scripted server), and the application decides what to do with the output. Its
documented orchestration pattern is an output schema whose field is a union of the tools' input
schemas: the application runs the tool the agent chose (``BaseTool.run``), hands the result back
with ``AtomicAgent.add_tool_result`` and runs the agent again with no new input, until the agent
answers. Here the output schema is ``AgentStep``: ``tool_calls``, a list of tool inputs (a turn
may ask for two), and ``answer``. Instructor's default ``TOOLS`` mode offers the model one
function named ``AgentStep`` and forces it, so every model turn is a call of that function whose
arguments are the step (``fake_openai``'s output tool: each scripted turn is served as the step
it stands for, ``as_steps``).

The instrumentation records an ``invoke_agent <name>`` span per ``AtomicAgent.run`` (GenAI
``gen_ai.operation.name`` ``invoke_agent``, ``gen_ai.agent.name``; the input and output schemas'
JSON as ``atomic_agents.input`` / ``atomic_agents.output``), a ``chat <model>`` span per model
attempt under it (model and usage only, no messages), and an ``execute_tool <name>`` span per
``BaseTool.run`` (``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``;
a raised exception ends it ERROR with ``error.type``). The tools run in the application's loop,
so their spans are siblings of the agent's, under the application's ``agent_run`` span. Without
OpenInference installed it writes no OpenInference attributes (``TracingConfig``'s
``openinference_attributes=False`` says so here, where the capture virtualenv holds it); the
content switch is ``ATOMIC_AGENTS_TRACE_HIDE_INPUTS`` / ``_OUTPUTS`` (``__REDACTED__``).

A failing search raises, as a real backend client would; the application catches it and hands
the agent ``ToolError`` (``{"tool": ..., "error": "SearchBackendError: ..."}``) as the result.

``g_handoff`` and the ``s_delegated_*`` runs: the triage agent's ``research_agent`` tool (a
``BaseTool``) runs the research agent's own loop on the question and returns its answer, which
the triage agent passes on (``Scenario.through_agent_tool``); the research agent has its own
history, so the scripted server answers in call order.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from scenarios import QUESTION, Scenario, SearchBackendError, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a handoff scenario's transfer is the triage agent's
    ``research_agent`` tool, which runs the research agent's turns."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def as_steps(scenario: Scenario) -> Scenario:
    """``scenario`` as the server serves it to Instructor: every turn the ``AgentStep`` object
    it stands for (a turn's calls as ``tool_calls``, the answer as ``answer``), delivered as the
    arguments of the output function the request forces (``fake_openai.output_tool``)."""

    def step(turn: Any) -> str:
        if isinstance(turn, str):
            return json.dumps({"tool_calls": [], "answer": turn})
        return json.dumps({"tool_calls": [args for _, args in turn], "answer": None})

    return replace(scenario, turns=[step(turn) for turn in scenario.turns], structured=True)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """``run`` with the instrumentation's OpenInference attributes on, as it writes them when
    OpenInference is installed (the ``phoenix`` extra, Arize Phoenix's setup), for the
    ``atomic-agents-openinference`` source."""
    run(scenario, tracer_provider, logger_provider, tools, executed, openinference=True)


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    *,
    openinference: bool = False,
) -> None:
    """One scenario through Atomic Agents' orchestration loop under its own instrumentation
    (``openinference``: with its OpenInference attributes too); fails when the run's answer is
    not the script's."""
    import instructor
    import openai
    from atomic_agents import AgentConfig, AtomicAgent, BaseIOSchema, BaseTool, BaseToolConfig
    from atomic_agents.context import ChatHistory, SystemPromptGenerator
    from atomic_agents.observability import AtomicAgentsInstrumentor, TracingConfig
    from fake_openai import FakeOpenAI, call_order
    from pydantic import Field

    config = replace(TracingConfig.from_environment(), openinference_attributes=openinference)
    AtomicAgentsInstrumentor().instrument(tracer_provider=tracer_provider, config=config)

    class UserMessage(BaseIOSchema):
        """The user's message to the agent."""

        message: str = Field(..., description="What the user asks.")

    class SearchDocsInput(BaseIOSchema):
        """Search the knowledge base and return matching documents."""

        query: str = Field(..., description="What to look for.")

    class SearchDocsOutput(BaseIOSchema):
        """The documents the search found."""

        documents: list[dict[str, str]] = Field(..., description="Matching documents.")
        status: str | None = Field(None, description="The index's status, when degraded.")

    class DeleteRecordsInput(BaseIOSchema):
        """Delete records from a database table."""

        table: str = Field(..., description="The table.")
        where: str = Field(..., description="Which rows.")

    class DeleteRecordsOutput(BaseIOSchema):
        """How many records were deleted."""

        deleted: int = Field(..., description="Records deleted.")
        table: str = Field(..., description="The table.")

    class WriteFileInput(BaseIOSchema):
        """Write a file in the workspace."""

        path: str = Field(..., description="The file's path.")
        content: str = Field(..., description="The file's text.")

    class RunCommandInput(BaseIOSchema):
        """Run a shell command in the workspace."""

        command: str = Field(..., description="The command line.")

    class TextOutput(BaseIOSchema):
        """What the tool reported."""

        output: str = Field(..., description="The tool's report.")

    class ToolError(BaseIOSchema):
        """A tool call that failed, and why."""

        tool: str = Field(..., description="The tool.")
        error: str = Field(..., description="What went wrong.")

    class SearchDocs(BaseTool[SearchDocsInput, SearchDocsOutput]):
        def run(self, params: SearchDocsInput) -> SearchDocsOutput:
            executed.append("search_docs")
            return SearchDocsOutput(**tools.search_docs(params.query))

    class DeleteRecords(BaseTool[DeleteRecordsInput, DeleteRecordsOutput]):
        def run(self, params: DeleteRecordsInput) -> DeleteRecordsOutput:
            executed.append("delete_records")
            return DeleteRecordsOutput(**tools.delete_records(params.table, params.where))

    class WriteFile(BaseTool[WriteFileInput, TextOutput]):
        def run(self, params: WriteFileInput) -> TextOutput:
            executed.append("write_file")
            return TextOutput(output=tools.write_file(params.path, params.content))

    class RunCommand(BaseTool[RunCommandInput, TextOutput]):
        def run(self, params: RunCommandInput) -> TextOutput:
            executed.append("run_command")
            return TextOutput(output=tools.run_command(params.command))

    class AgentStep(BaseIOSchema):
        """The agent's next step: the tools to run now, or its answer."""

        tool_calls: list[
            SearchDocsInput | DeleteRecordsInput | WriteFileInput | RunCommandInput
        ] = Field(default_factory=list, description="Tools to run now; empty when answering.")
        answer: str | None = Field(None, description="The answer, once no tool is needed.")

    class ResearchAgentInput(BaseIOSchema):
        """Hand a research question to the research agent, which answers it with citations."""

        question: str = Field(..., description="The question to research.")

    class TriageStep(BaseIOSchema):
        """The triage agent's next step: the research agent to ask, or its answer."""

        tool_calls: list[ResearchAgentInput] = Field(
            default_factory=list, description="Questions to hand over; empty when answering."
        )
        answer: str | None = Field(None, description="The answer, once no tool is needed.")

    def tool(cls: type[Any], name: str) -> Any:
        return cls(BaseToolConfig(title=name))

    scripted = as_steps(script(scenario))
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(scripted, turn_of=turn_of) as base_url:
        client = instructor.from_openai(
            openai.OpenAI(base_url=base_url, api_key="capture-not-a-key")
        )

        def agent(name: str, system: str, output: type[Any]) -> Any:
            return AtomicAgent[UserMessage, output](  # type: ignore[valid-type]
                AgentConfig(
                    client=client, name=name, model="gpt-4o-mini", history=ChatHistory(),
                    system_prompt_generator=SystemPromptGenerator(background=[system]),
                )
            )  # fmt: skip

        def loop(runner: Any, by_input: dict[type[Any], Any], prompt: str) -> str:
            """The orchestration loop: run the tools each step asks for, hand their results
            back, until the agent answers."""
            step = runner.run(UserMessage(message=prompt))
            for _ in range(12):
                if not step.tool_calls:
                    return str(step.answer)
                for params in step.tool_calls:
                    chosen = by_input[type(params)]
                    try:
                        runner.add_tool_result(chosen.run(params))
                    except SearchBackendError as exc:
                        error = f"SearchBackendError: {exc}"
                        runner.add_tool_result(ToolError(tool=chosen.tool_name, error=error))
                step = runner.run()
            raise RuntimeError("the agent never answered")

        support_tools = {
            SearchDocsInput: tool(SearchDocs, "search_docs"),
            DeleteRecordsInput: tool(DeleteRecords, "delete_records"),
            WriteFileInput: tool(WriteFile, "write_file"),
            RunCommandInput: tool(RunCommand, "run_command"),
        }
        tracer = tracer_provider.get_tracer("capture.app")
        with tracer.start_as_current_span("agent_run"):
            if scenario.agents_only:
                research = agent("research_agent", scenario.system, AgentStep)

                class ResearchAgent(BaseTool[ResearchAgentInput, TextOutput]):
                    def run(self, params: ResearchAgentInput) -> TextOutput:
                        return TextOutput(output=loop(research, support_tools, params.question))

                triage = agent(
                    "triage_agent", "Hand research questions to research_agent.", TriageStep
                )
                by_input = {ResearchAgentInput: tool(ResearchAgent, "research_agent")}
                answer = loop(triage, by_input, scenario.prompt)
            else:
                name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
                support = agent(name, scenario.system, AgentStep)
                answer = loop(support, support_tools, scenario.prompt)
    final = script(scenario).turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
