"""The OpenAI Agents SDK app traced by instrumentations that are not the SDK's own processor:
OpenLIT (``openlit-openai-agents``), OpenLLMetry (``openllmetry-openai-agents``) and the
OpenTelemetry project's GenAI instrumentations (``openai-agents-otel-genai``).

The app is the ``openinference-openai-agents`` one: ``OpenAIChatCompletionsModel`` on the
scripted fake OpenAI server, ``@function_tool`` tools over the shared ``scenarios.Tools`` (a
failed search raises; the SDK sends the model its generic error text), a native handoff from
``triage_agent`` to ``research_agent`` for ``g_handoff``. The SDK's own export to OpenAI is
off (``set_trace_processors([])`` before the instrumentation adds its processor), so nothing
leaves 127.0.0.1.

``init_openlit`` is shared with the ``openlit-openai`` source (the raw client loop in
``capture.py``): OpenLIT reuses the SDK tracer and logger providers it finds registered
globally, so the capture's providers are registered first; metrics are off (they would need
an OTLP endpoint). OpenLIT reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false``
as its content switch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools, answer_type


def init_openlit(tracer_provider: Any, logger_provider: Any) -> None:
    """``openlit.init()`` on the capture's providers: every instrumentor OpenLIT has for the
    installed libraries (openai, and openai-agents when present)."""
    from opentelemetry import _logs, trace

    trace.set_tracer_provider(tracer_provider)
    _logs.set_logger_provider(logger_provider)
    import openlit

    openlit.init(application_name="capture-openlit", disable_metrics=True, disable_batch=True)


def run_openlit(
    scenario: Scenario, tracer_provider: Any, logger_provider: Any, tools: Tools,
    executed: list[str], stream: bool = False,
) -> None:  # fmt: skip
    """The app instrumented by ``openlit.init()`` (its openai_agents and openai instrumentors);
    ``stream``: every run ``Runner.run_streamed`` (``openlit-openai-agents-stream``)."""
    from agents import set_trace_processors

    set_trace_processors([])  # no export to OpenAI's tracing backend; OpenLIT adds its own
    init_openlit(tracer_provider, logger_provider)
    run_app(scenario, tools, executed, stream=stream)


def run_openllmetry(
    scenario: Scenario, tracer_provider: Any, logger_provider: Any, tools: Tools,
    executed: list[str], stream: bool = False,
) -> None:  # fmt: skip
    """The app instrumented by OpenLLMetry's ``opentelemetry-instrumentation-openai-agents``;
    ``stream``: every run ``Runner.run_streamed`` (``openllmetry-openai-agents-stream``)."""
    from agents import set_trace_processors
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # no export to OpenAI's tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)
    run_app(scenario, tools, executed, stream=stream)


def run_otel_genai(
    scenario: Scenario, tracer_provider: Any, logger_provider: Any, tools: Tools,
    executed: list[str],
) -> None:  # fmt: skip
    """The app traced by the OpenTelemetry project's own GenAI instrumentations
    (opentelemetry-python-genai): ``opentelemetry-instrumentation-genai-openai-agents``, the
    successor of python-contrib's ``opentelemetry-instrumentation-openai-agents-v2``, turns the
    SDK's trace, agent and function spans into ``invoke_workflow`` / ``invoke_agent`` /
    ``execute_tool`` spans and writes no model call, which its documentation leaves to
    ``opentelemetry-instrumentation-genai-openai`` on the ``openai`` client the SDK's model
    uses; both are installed, as that documentation says. ``disable_openai_trace_export``
    removes the SDK's own exporter (nothing leaves 127.0.0.1). Content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``SPAN_ONLY`` / ``NO_CONTENT``)."""
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.genai.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider,
        disable_openai_trace_export=True,
    )  # fmt: skip
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    run_app(scenario, tools, executed)


def run_turns(
    agent: Any, scenario: Scenario, group_id: str | None = None, stream: bool = False
) -> Any:
    """Every user turn of ``scenario`` as one run of ``agent``: the first on the prompt, each
    follow-up on the previous result's ``to_input_list()`` plus the new user message (the
    SDK's documented way to carry a conversation by hand). With ``group_id`` the runs share
    one ``trace("Conversation", group_id=...)`` (the SDK's documented way to make several
    runs one trace); without it each run is a trace of its own, as in a chat server that runs
    the agent once per request. With ``stream`` each run is ``Runner.run_streamed``, its events
    consumed to the end as a chat app showing them live would. Returns the last run's result."""
    from agents import Runner, trace

    # q_turn_limit: the SDK's own limit, one turn per model call; past it, MaxTurnsExceeded.
    max_turns = scenario.turn_limit or 10

    def run_one(given: Any) -> Any:
        if not stream:
            result = Runner.run_sync(agent, given, max_turns=max_turns)
            # w_*_denied: the run pauses on each call of a tool with needs_approval; the
            # approval step (a human, a policy) rejects it and the run resumes from its state.
            while result.interruptions:
                state = result.to_state()
                for item in result.interruptions:
                    state.reject(item)  # the SDK's own rejection message
                result = Runner.run_sync(agent, state, max_turns=max_turns)
            return result

        async def streamed() -> Any:
            result = Runner.run_streamed(agent, given, max_turns=max_turns)
            async for _event in result.stream_events():
                pass
            return result

        return asyncio.run(streamed())

    def run_all() -> Any:
        result = run_one(scenario.prompt)
        for followup in scenario.followups:
            result = run_one([*result.to_input_list(), {"role": "user", "content": followup}])
        return result

    if scenario.denied and group_id is None:
        # A run paused for approval and resumed from its state is two runs to the SDK: left
        # alone, the resumed one re-attaches to the first one's trace after that ended (which
        # OpenInference's processor no longer records) or starts a trace of its own (Logfire).
        # One trace() around both, the SDK's documented way to make several runs one trace.
        with trace("Agent workflow"):
            return run_all()
    if group_id is None:
        return run_all()
    with trace("Conversation", group_id=group_id):
        return run_all()


def run_app(scenario: Scenario, tools: Tools, executed: list[str], stream: bool = False) -> None:
    """Run one scenario; ``executed`` receives each tool the SDK really ran, in order. With
    ``stream`` each run is ``Runner.run_streamed`` (``run_turns``)."""
    from agents import Agent, OpenAIChatCompletionsModel, function_tool
    from openai import AsyncOpenAI

    def logged(name: str, fn: Callable[..., Any], **kwargs: Any) -> str:
        executed.append(name)
        return json.dumps(fn(**kwargs))

    @function_tool(needs_approval="search_docs" in scenario.denied)
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        return logged("search_docs", tools.search_docs, query=query)

    @function_tool(needs_approval="delete_records" in scenario.denied)
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        return logged("delete_records", tools.delete_records, table=table, where=where)

    @function_tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        return logged("write_file", tools.write_file, path=path, content=content)

    @function_tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        return logged("run_command", tools.run_command, command=command)

    all_tools = [search_docs, delete_records, write_file, run_command]
    with FakeOpenAI(scenario) as base_url:
        client = AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key")
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
        if scenario.agents_only:
            research = Agent(
                name="research_agent", instructions=scenario.system, model=model, tools=all_tools
            )
            agent = Agent(
                name="triage_agent", instructions="Hand research questions off.", model=model,
                handoffs=[research],
            )  # fmt: skip
            if scenario.transfers_back:
                research.handoffs = [agent]  # n_handback: transfer_to_triage_agent
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                research.handoffs = [
                    Agent(name="records_agent", instructions=scenario.system, model=model,
                          tools=all_tools)
                ]  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            output = answer_type() if scenario.structured else None  # r_structured_*
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools,
                          output_type=output)  # fmt: skip
        result = run_turns(agent, scenario, stream=stream)
    if not scenario.answered_as_scripted(result.final_output):
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
    if scenario.transfers_back and result.last_agent.name != scenario.handoffs[-1][1]:
        raise RuntimeError(f"answered by {result.last_agent.name}, not after the transfer back")
