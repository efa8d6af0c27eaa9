"""A hand-built LangGraph ReAct graph on the fake OpenAI server, for ``langgraph-graph-*``.

The ``langgraph-*`` sources run the prebuilt ``create_react_agent``, which watches its own
remaining steps and, when they run out, answers a canned text instead of raising. A graph an
application builds itself (``StateGraph(MessagesState)`` with a model node ``agent``, the
prebuilt ``ToolNode`` as ``tools`` and ``tools_condition`` between them, as LangGraph's
documentation builds a ReAct agent) has no such guard: when its ``recursion_limit`` runs out,
``invoke`` raises ``GraphRecursionError``. That ending (``q_turn_limit``) is what these sources
capture: ``recursion_limit`` is twice the turn limit, so the limit's model calls and their
tools run, and the next model call would be the step past the limit. The tools are
``fw_langgraph.langchain_tools`` in a ``ToolNode`` with ``handle_tool_errors``, as there.
"""

from __future__ import annotations

from typing import Any

from fake_openai import FakeOpenAI
from fw_langgraph import langchain_tools
from scenarios import Scenario, Tools


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """``openinference-instrumentation-langchain`` (LangChain callbacks -> OpenInference spans)."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed)


def recursion_limit(model_calls: int) -> int:
    """The ``recursion_limit`` under which the graph runs ``model_calls`` model calls and
    their tools (two graph steps each) and raises ``GraphRecursionError`` at the next."""
    return 2 * model_calls


def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    from langchain_core.messages import SystemMessage
    from langchain_openai import ChatOpenAI
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    if scenario.agents_only or scenario.followups or scenario.structured:
        raise SystemExit(f"{scenario.name}: the hand-built graph runs one agent, one turn")
    with FakeOpenAI(scenario) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        scripted = langchain_tools(tools, executed)
        bound = model.bind_tools(scripted)

        def agent(state: MessagesState) -> dict[str, Any]:
            return {
                "messages": [bound.invoke([SystemMessage(scenario.system), *state["messages"]])]
            }

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode(scripted, handle_tool_errors=True))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
        graph = builder.compile(name=name)
        config: dict[str, Any] = {"recursion_limit": 25}
        if scenario.turn_limit:
            config["recursion_limit"] = recursion_limit(scenario.turn_limit)
        graph.invoke({"messages": [{"role": "user", "content": scenario.prompt}]}, config)
