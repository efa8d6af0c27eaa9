"""LangGraph agents on the fake OpenAI server, for the ``langgraph-*`` capture sources.

Each scenario runs LangGraph's prebuilt ReAct agent (``create_react_agent``) with a
``ChatOpenAI`` model pointed at ``fake_openai.py`` and the scripted tools as LangChain
``@tool`` functions in a ``ToolNode``. Tool failures are the tool's own exception, turned into an
error ``ToolMessage`` by the ToolNode (``handle_tool_errors=True``), as a LangGraph app that
keeps going after a tool error is written. ``g_handoff`` is a ``langgraph-swarm``: a triage
agent whose only tool is the library's ``transfer_to_research_agent`` handoff tool, and a
research agent with the real tools (for ``n_handback`` also ``transfer_to_triage_agent``, and
the run must end with the triage agent active). The instrumentation is chosen by the source's
entry point (``run_openinference`` / ``run_openllmetry`` / ``run_langsmith``, or
``fw_langfuse.run_langgraph`` with Langfuse's callback handler); nothing else differs between
the sources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools, answer_type


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """``openinference-instrumentation-langchain`` (LangChain callbacks -> OpenInference spans);
    ``stream`` runs the graph as a chat app streaming tokens does (``-stream``)."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed, stream=stream)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """OpenLLMetry's ``opentelemetry-instrumentation-langchain`` (Traceloop callbacks)."""
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    _run(scenario, tools, executed)


def run_otel_genai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The OpenTelemetry project's own ``opentelemetry-instrumentation-genai-langchain``
    (opentelemetry-python-genai: LangChain callbacks -> GenAI semantic-convention spans; the
    ``langgraph-otel-genai`` source); content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``SPAN_ONLY`` / ``NO_CONTENT``)."""
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    _run(scenario, tools, executed)


def run_langsmith(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The LangSmith SDK's OpenTelemetry mode: LangChain's own LangSmith tracer (switched on by
    ``LANGSMITH_TRACING``) hands each run to the SDK, which, with ``LANGSMITH_OTEL_ENABLED`` and
    ``LANGSMITH_OTEL_ONLY``, writes it as an OTel span on the application's global tracer
    provider instead of posting it to LangSmith. The SDK ends its spans from a background
    thread, so the run waits for every tracer before the capture reads the exporter."""
    traced_by_langsmith(tracer_provider, lambda: _run(scenario, tools, executed))


def traced_by_langsmith(tracer_provider: Any, run: Callable[[], None]) -> None:
    """``run()`` under the LangSmith SDK's OpenTelemetry mode (``run_langsmith`` says how):
    its spans on ``tracer_provider`` as the global provider, every LangChain tracer waited
    for before returning. The LangChain-based drivers' ``run_langsmith`` all go through it."""
    from langchain_core.tracers.langchain import wait_for_all_tracers
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    run()
    wait_for_all_tracers()


def langchain_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as LangChain tools; each call is logged before it runs, so the
    ground truth is what really executed, not what a trace says."""
    from langchain_core.tools import tool

    def logged(name: str) -> Callable[..., Any]:
        method = getattr(tools, name)

        def call(**kwargs: Any) -> Any:
            executed.append(name)
            return method(**kwargs)

        return call

    @tool
    def search_docs(query: str) -> Any:
        """Search the knowledge base and return matching documents."""
        return logged("search_docs")(query=query)

    @tool
    def delete_records(table: str, where: str) -> Any:
        """Delete records from a database table."""
        return logged("delete_records")(table=table, where=where)

    @tool
    def write_file(path: str, content: str) -> Any:
        """Write a file in the workspace."""
        return logged("write_file")(path=path, content=content)

    @tool
    def run_command(command: str) -> Any:
        """Run a shell command in the workspace."""
        return logged("run_command")(command=command)

    return [search_docs, delete_records, write_file, run_command]


def saver(scenario: Scenario) -> Any:
    """An in-memory checkpointer for a scenario of several user turns (``followups``): the
    thread's saved state carries the conversation from one invoke to the next."""
    if not scenario.followups:
        return None
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def limit_steps(model_calls: int) -> int:
    """The ``recursion_limit`` under which the prebuilt ReAct agent runs ``model_calls`` model
    calls with their tools (two graph steps each): the next model call sees fewer than two
    remaining steps and the agent answers ``LIMIT_ANSWER`` in place of its tool calls."""
    return 2 * model_calls + 2


LIMIT_ANSWER = "Sorry, need more steps to process this request."
"""What ``create_react_agent`` answers when its steps run out with tool calls pending."""


def _run(
    scenario: Scenario,
    tools: Tools,
    executed: list[str],
    callbacks: Sequence[Any] = (),
    stream: bool = False,
) -> None:
    """Run one scenario; ``callbacks`` are LangChain callback handlers (a tracer that hooks
    in that way, such as Langfuse's ``CallbackHandler``), handed to the graph's run. With
    ``stream`` each user turn is ``graph.stream(..., stream_mode=["messages", "values"])``,
    the way a chat app sends tokens as they come: LangGraph's messages mode makes the chat
    model stream (``ChatOpenAI`` with its default settings), the last ``values`` chunk is the
    run's final state."""
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    with FakeOpenAI(scenario) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        tool_node = ToolNode(langchain_tools(tools, executed), handle_tool_errors=True)
        if scenario.agents_only:
            from langgraph_swarm import create_handoff_tool, create_swarm

            handoff = create_handoff_tool(
                agent_name="research_agent",
                description="Hand research questions to the research agent.",
            )
            triage = create_react_agent(
                model, [handoff], prompt="Hand research questions off.", name="triage_agent"
            )
            research_tools: Any = tool_node
            if scenario.transfers_back:  # n_handback: the research agent can hand back
                back = create_handoff_tool(
                    agent_name="triage_agent", description="Hand the question back to triage."
                )
                research_tools = ToolNode(
                    [*langchain_tools(tools, executed), back], handle_tool_errors=True
                )
            agents = []
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                onward = create_handoff_tool(
                    agent_name="records_agent", description="Hand records work to records."
                )
                research_tools = ToolNode(
                    [*langchain_tools(tools, executed), onward], handle_tool_errors=True
                )
                agents.append(
                    create_react_agent(
                        model, tool_node, prompt=scenario.system, name="records_agent"
                    )
                )
            research = create_react_agent(
                model, research_tools, prompt=scenario.system, name="research_agent"
            )
            app: Any = create_swarm(
                [triage, research, *agents], default_active_agent="triage_agent"
            )
            graph = app.compile()
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # r_structured_*: the prebuilt agent's response_format, one more model call after
            # the loop that asks for the output type.
            graph = create_react_agent(
                model, tool_node, prompt=scenario.system, name=name, checkpointer=saver(scenario),
                response_format=answer_type() if scenario.structured else None,
            )  # fmt: skip
        # One invoke per user turn: with a checkpointer, the thread's saved messages are the
        # history and each invoke adds only the new user message (LangGraph's documented
        # multi-turn conversation).
        config: dict[str, Any] = {"recursion_limit": 25, "callbacks": list(callbacks)}
        if scenario.turn_limit:  # q_turn_limit: LangGraph's own step limit (limit_steps)
            config["recursion_limit"] = limit_steps(scenario.turn_limit)
        if scenario.followups:
            config["configurable"] = {"thread_id": "conversation-1"}
        for prompt in scenario.prompts:
            inputs = {"messages": [{"role": "user", "content": prompt}]}
            if not stream:
                state = graph.invoke(inputs, config)
                continue
            for mode, chunk in graph.stream(inputs, config, stream_mode=["messages", "values"]):
                if mode == "values":  # "messages" chunks: (token, metadata), shown as they come
                    state = chunk
    if scenario.structured and not scenario.answered_as_scripted(state["structured_response"]):
        raise SystemExit(f"{scenario.name}: structured answer {state['structured_response']!r}")
    if scenario.followups and state["messages"][-1].content != scenario.turns[-1]:
        raise SystemExit(f"{scenario.name}: last answer {state['messages'][-1].content!r}")
    if scenario.turn_limit and state["messages"][-1].content != LIMIT_ANSWER:
        raise SystemExit(f"{scenario.name}: the limit's answer {state['messages'][-1].content!r}")
    answering = state.get("active_agent")
    if scenario.transfers_back and answering != scenario.handoffs[-1][1]:
        raise SystemExit(f"{scenario.name}: answered by {answering}, not after the transfer back")
