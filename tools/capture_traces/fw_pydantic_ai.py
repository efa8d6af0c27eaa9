"""pydantic-ai runs traced by pydantic-ai's own instrumentation with OpenInference's span
processor on top (``openinference-instrumentation-pydantic-ai``).

The model is pydantic-ai's ``OpenAIChatModel`` on the scripted fake OpenAI server (real HTTP,
unlike the shared ``pydantic-ai`` corpus's in-process ``FunctionModel``). Tools are
``@agent.tool_plain`` functions over the scripted ``Tools``; a failing search raises
``ModelRetry``, pydantic-ai's way of handing a tool error back to the model
(``search_docs`` allows 3 retries). The OpenInference processor rewrites each finished
pydantic-ai span in place, adding OpenInference attributes (``openinference.span.kind``,
``llm.*``, ``input.value`` / ``output.value``) beside the GenAI ones, which is how Arize
Phoenix users trace pydantic-ai.

``g_handoff`` is agent delegation (pydantic-ai has no handoff primitive): the triage agent's
``delegate_to_research_agent`` tool runs the research agent; the research agent searches and
answers, and the triage agent passes the answer on. The research agent starts from a fresh
history, so the fake server answers in call order (``fake_openai.call_order``).

Content capture is pydantic-ai's ``include_content``; the capture's content-off variant sets
``OPENINFERENCE_HIDE_*`` as well, and the driver turns ``include_content`` off with them.

``run_logfire`` (the ``logfire-pydantic-ai`` source) records the same agents through Logfire's
own integration, ``logfire.instrument_pydantic_ai()``, with ``logfire.configure(send_to_logfire=
False, console=False, metrics=False)`` and the capture's span processor as Logfire's
``additional_span_processors`` (nothing leaves the machine); content off there is
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false``, which the driver turns into
``instrument_pydantic_ai(include_content=False)`` (Logfire reads no environment switch for it).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from scenarios import QUESTION, RECORDS_TASK, Scenario, SearchBackendError, Tools, answer_type


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the delegation tool, the research
    agent searches and answers, then the triage agent passes the answer on (``s_nested_*``:
    the research agent's own delegation tool runs the records agent, whose answer the research
    agent, then the triage agent, pass on)."""
    return scenario.through_agent_tool(
        ("delegate_to_research_agent", {"question": QUESTION}),
        nested=("delegate_to_records_agent", {"question": RECORDS_TASK}),
    )


def add_tools(agent: Any, tools: Tools, executed: list[str]) -> None:
    """The scripted tools as the agent's plain tools; each logs its execution first."""
    from pydantic_ai import ModelRetry

    # w_*_denied: a denied tool requires approval; the run ends with a DeferredToolRequests
    # output naming the call, and the driver denies it (``_run``).
    denied = tools.scenario.denied

    @agent.tool_plain(retries=3, requires_approval="search_docs" in denied)
    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        try:
            result: dict[str, Any] = tools.search_docs(query)
        except SearchBackendError as exc:
            raise ModelRetry(f"SearchBackendError: {exc}") from exc
        return result

    @agent.tool_plain(requires_approval="delete_records" in denied)
    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table."""
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    @agent.tool_plain
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    @agent.tool_plain
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return str(tools.run_command(command))


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """One run traced by pydantic-ai's instrumentation with OpenInference's processor on top;
    ``stream``: every run is ``Agent.run_stream`` (``pydantic-ai-openinference-stream``)."""
    from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
    content = os.environ.get("OPENINFERENCE_HIDE_INPUTS", "").lower() != "true"
    settings = InstrumentationSettings(tracer_provider=tracer_provider, include_content=content)
    Agent.instrument_all(settings)
    _run(scenario, tools, executed, stream)


def run_logfire(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run traced by Logfire's pydantic-ai integration; Logfire owns its tracer
    provider, so the capture's processor (-> in-memory exporter) rides along with it."""
    import logfire

    logfire.configure(
        send_to_logfire=False,
        console=False,
        metrics=False,
        service_name="capture-logfire-pydantic-ai",
        additional_span_processors=[tracer_provider._active_span_processor],
    )
    switch = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    logfire.instrument_pydantic_ai(include_content=switch.lower() != "false")
    _run(scenario, tools, executed)
    logfire.force_flush()


async def streamed(agent: Any, prompt: str, **kwargs: Any) -> tuple[Any, Any]:
    """``agent.run_stream``, its output consumed as it comes (as a chat app shows it), then the
    whole output: the stream's result (for ``all_messages``) and its output."""
    async with agent.run_stream(prompt, **kwargs) as result:
        async for _partial in result.stream_output():
            pass
        output = await result.get_output()
    return result, output


def _run(scenario: Scenario, tools: Tools, executed: list[str], stream: bool = False) -> None:
    """One run; appends each executed scenario tool to ``executed`` and fails when the run's
    answer is not the scripted one. With ``stream`` every agent run, the delegated research
    agent's too, is ``run_stream``: each model request is a streamed chat completion."""
    from fake_openai import FakeOpenAI, call_order
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        model = OpenAIChatModel(
            "gpt-4o-mini", provider=OpenAIProvider(base_url=base_url, api_key="capture-not-a-key")
        )

        def agent(name: str, instructions: str) -> Any:
            # r_structured_*: the output type, delivered through pydantic-ai's output tool
            # (final_result) by default.
            output: Any = answer_type() if scenario.structured else str
            if scenario.denied:  # w_*_denied: a run may end asking for approval
                output = [output, DeferredToolRequests]
            return Agent(
                model, name=name, instructions=instructions, output_type=output,
                model_settings={"temperature": 0.0},
            )  # fmt: skip

        if scenario.agents_only:
            research = agent("research_agent", scenario.system)
            add_tools(research, tools, executed)
            if scenario.nested:  # s_nested_*: the research agent delegates again
                records = agent("records_agent", scenario.system)
                add_tools(records, tools, executed)

                @research.tool_plain
                async def delegate_to_records_agent(question: str) -> str:
                    """Hand a records task to the records agent; returns its answer."""
                    if stream:
                        return str((await streamed(records, question))[1])
                    return str((await records.run(question)).output)

            runner = agent("triage_agent", "Hand research questions to research_agent.")

            @runner.tool_plain
            async def delegate_to_research_agent(question: str) -> str:
                """Hand a research question to the research agent; returns its answer."""
                if stream:
                    return str((await streamed(research, question))[1])
                return str((await research.run(question)).output)

        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system)
            add_tools(runner, tools, executed)
        # q_turn_limit: pydantic-ai's own request limit; the next request raises
        # UsageLimitExceeded instead of being sent.
        limits = UsageLimits(request_limit=scenario.turn_limit) if scenario.turn_limit else None

        def run_turn(prompt: str | None, **kwargs: Any) -> tuple[Any, Any]:
            if stream:
                return asyncio.run(streamed(runner, prompt, **kwargs))
            done = runner.run_sync(prompt, **kwargs)
            return done, done.output

        result, output = run_turn(scenario.prompt, usage_limits=limits)
        while isinstance(output, DeferredToolRequests):
            # The approval step (a human, a policy) denies every call waiting for approval
            # with pydantic-ai's own denial (ToolDenied's default message); the run resumes
            # from the history with the denials as the calls' results.
            denials = DeferredToolResults(approvals={c.tool_call_id: ToolDenied()
                                                     for c in output.approvals})  # fmt: skip
            result, output = run_turn(
                None, message_history=result.all_messages(), deferred_tool_results=denials
            )
        for followup in scenario.followups:  # later user turns get the conversation so far
            result, output = run_turn(followup, message_history=result.all_messages())
        answer = output if scenario.structured else str(output).strip()
    final = scripted.turns[-1]
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
