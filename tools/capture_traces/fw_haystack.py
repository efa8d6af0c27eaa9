"""Haystack 2 agents on the fake OpenAI server, for the ``haystack-openinference`` source.

Each scenario runs a Haystack ``Agent`` component whose ``OpenAIChatGenerator`` is pointed at
``fake_openai.py`` with ``api_base_url``; the scripted tools are Haystack ``Tool``s (the
``@tool`` decorator over typed functions). A failing search raises, as a real backend client
would; with ``raise_on_tool_invocation_failure=False`` Haystack's ``ToolInvoker`` sends the
model the error as a tool result flagged ``error``. ``g_handoff`` gives the triage agent the
research agent as a tool (Haystack's ``ComponentTool`` over the ``Agent`` component, the
framework's own agent-as-tool mechanism); the research agent starts from a fresh history, so
the fake server answers in call order (``fake_openai.call_order``) from the script below.
Traced by ``openinference-instrumentation-haystack`` (``run``, the ``haystack-openinference``
source), by OpenLLMetry's ``opentelemetry-instrumentation-haystack`` (``run_openllmetry``, the
``haystack-openllmetry`` source) or by Haystack's own OpenTelemetry tracer (``run_native``, the
``haystack-native`` source): the same agents, so the same truth. On haystack-ai 3 the
OpenInference instrumentation sees nothing of a standalone ``Agent`` run, so
``run_in_pipeline`` (the ``haystack-openinference-latest`` source) runs the top agent as the one
component of a ``Pipeline``, as Haystack's pipelines hold components.
"""

from __future__ import annotations

from typing import Any

from scenarios import QUESTION, Scenario, Tools

RESEARCH_CALL = (
    "research_agent",
    {"messages": [{"role": "user", "content": [{"text": QUESTION}]}]},
)
"""The triage agent's scripted call of the research agent (a ``ComponentTool``: its input is
the ``Agent`` component's ``messages``, as Haystack serialises a ``ChatMessage``)."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: for ``g_handoff`` the triage agent calls the research
    agent, which searches and answers; then the triage agent passes the answer on."""
    return scenario.through_agent_tool(RESEARCH_CALL)


def haystack_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as Haystack ``@tool`` functions; each call is logged before it runs,
    so the ground truth is what really executed."""
    import json

    from haystack.tools import tool

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
        return json.dumps(tools.write_file(path, content))

    @tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One ``Agent`` run traced by OpenInference's Haystack instrumentation."""
    from openinference.instrumentation.haystack import HaystackInstrumentor

    HaystackInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed)


def run_in_pipeline(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The ``run`` agents on haystack-ai 3, the top agent the one component of a ``Pipeline``:
    the instrumentation wraps ``Pipeline.run`` and the components a pipeline runs, and Haystack
    3's ``Agent`` no longer runs its chat generator and ``ToolInvoker`` through the pipeline
    (a standalone ``Agent.run`` exports no span at all), so the trace holds a pipeline span and
    the agent's span, and nothing of its model or tool calls."""
    from openinference.instrumentation.haystack import HaystackInstrumentor

    HaystackInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed, piped=True)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run traced by OpenLLMetry's Haystack instrumentation (it reads
    ``TRACELOOP_TRACE_CONTENT`` for its content switch) with OpenLLMetry's OpenAI
    instrumentation, as ``Traceloop.init()`` would enable them: the Haystack one records a
    generator run without its model or tool calls, the OpenAI one the request under it."""
    from opentelemetry.instrumentation.haystack import HaystackInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    HaystackInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    run_in_app_span(scenario, tracer_provider, tools, executed)


def run_in_app_span(
    scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str]
) -> None:
    """The run inside the application's own ``agent_run`` span, for tracers that record the
    generator runs but not the Agent's (OpenLLMetry's, OpenLIT's): without it each generator
    call would be a trace of its own."""
    with tracer_provider.get_tracer("capture.app").start_as_current_span("agent_run"):
        _run(scenario, tools, executed)


def run_native(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run traced by Haystack's own tracer: its ``OpenTelemetryTracer`` (in the
    ``opentelemetry-haystack`` integration since haystack-ai 3; in core before) on the capture's
    tracer provider, as ``tracing.enable_tracing`` installs it. Haystack reads
    ``HAYSTACK_CONTENT_TRACING_ENABLED`` once, when ``haystack.tracing`` is imported, so the
    subprocess's environment is the content switch."""
    from haystack import tracing

    try:
        from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer
    except ImportError:  # haystack-ai 2.x ships the tracer in core
        from haystack.tracing import OpenTelemetryTracer  # type: ignore[attr-defined, no-redef]

    tracing.enable_tracing(OpenTelemetryTracer(tracer_provider.get_tracer("haystack")))
    _run(scenario, tools, executed)


def _run(scenario: Scenario, tools: Tools, executed: list[str], piped: bool = False) -> None:
    """One ``Agent`` run (in a one-component ``Pipeline`` when ``piped``); fails when the run's
    answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage
    from haystack.tools import ComponentTool
    from haystack.utils import Secret

    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(system: str, agent_tools: list[Any]) -> Any:
            generator = OpenAIChatGenerator(
                api_key=Secret.from_token("capture-not-a-key"), model="gpt-4o-mini",
                api_base_url=base_url, generation_kwargs={"temperature": 0.0},
            )  # fmt: skip
            built = Agent(
                chat_generator=generator, tools=agent_tools, system_prompt=system,
                max_agent_steps=10, raise_on_tool_invocation_failure=False,
            )  # fmt: skip
            built.warm_up()
            return built

        all_tools = haystack_tools(tools, executed)
        if scenario.agents_only:
            research = ComponentTool(
                component=agent(scenario.system, all_tools), name="research_agent",
                description="Answers research questions from the document search.",
                outputs_to_string={"source": "last_message"},
            )  # fmt: skip
            top = agent("Hand research questions to research_agent.", [research])
        else:
            top = agent(scenario.system, all_tools)
        messages = [ChatMessage.from_user(scenario.prompt)]
        if piped:
            from haystack import Pipeline

            pipeline = Pipeline()
            pipeline.add_component("agent", top)
            result = pipeline.run({"agent": {"messages": messages}})["agent"]
        else:
            result = top.run(messages=messages)
    answer = result["messages"][-1].text
    if answer != scripted.turns[-1]:
        raise SystemExit(f"{scenario.name}: run answered {answer!r}, script says "
                         f"{scripted.turns[-1]!r}")  # fmt: skip
