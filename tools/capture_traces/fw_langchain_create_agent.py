"""LangChain 1.x agents (``langchain.agents.create_agent``) for two capture sources: traced by
OpenLLMetry (``run_openllmetry``, ``langchain-create-agent-openllmetry``) or by the LangSmith
SDK's OpenTelemetry mode (``run_langsmith``, ``langsmith-otel-create-agent``).

``create_agent`` is LangChain's current agent runtime: a LangGraph graph with a ``model``
node and a ``tools`` node, configured by middleware. The model is ``ChatOpenAI`` on the
scripted fake OpenAI server; tools are LangChain ``@tool`` functions over the scripted
``Tools``. A failing search raises, and LangChain's ``ToolErrorMiddleware`` (tool errors are
opt-in in 1.x: without it the run stops on the exception) hands the model the error text as
an error ``ToolMessage``, so the run goes on.

``g_handoff`` follows LangChain's subagent pattern: the triage agent's only tool,
``research_agent``, invokes the research agent (its own ``create_agent`` graph) and returns
its answer; the research agent searches and answers, and the triage agent passes the answer
on. The research agent starts from a fresh history, so the fake server answers in call order
(``fake_openai.call_order``) from the script of ``fw_langchain_agents.script``.
"""

from __future__ import annotations

from typing import Any

from fw_langchain_agents import script
from fw_langgraph import langchain_tools
from scenarios import Scenario, Tools, answer_type


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by OpenLLMetry's ``opentelemetry-instrumentation-langchain``."""
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(
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
    """One run traced by the LangSmith SDK's OpenTelemetry mode (``fw_langgraph.
    run_langsmith``: the source's environment switches it on; spans on the global tracer
    provider, ended from the SDK's background thread before the capture reads them)."""
    from fw_langgraph import traced_by_langsmith

    traced_by_langsmith(tracer_provider, lambda: _run(scenario, tools, executed))


def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """Run one scenario; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolErrorMiddleware
    from langchain.agents.structured_output import ToolStrategy
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    errors = ToolErrorMiddleware(on_error=lambda exc, request: f"Error: {exc!r}")
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        all_tools = langchain_tools(tools, executed)
        if scenario.agents_only:
            research = create_agent(
                model, all_tools, system_prompt=scenario.system, middleware=[errors],
                name="research_agent",
            )  # fmt: skip

            @tool
            def research_agent(question: str) -> str:
                """Hand a research question to the research agent; returns its answer."""
                state = research.invoke({"messages": [{"role": "user", "content": question}]})
                return str(state["messages"][-1].content)

            agent = create_agent(
                model, [research_agent], system_prompt="Hand research questions to "
                "research_agent.", name="triage_agent",
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # r_structured_*: the tool strategy, an output tool named after the type whose
            # call ends the run (the run's structured_response).
            output = ToolStrategy(answer_type()) if scenario.structured else None
            middleware: list[Any] = [errors]
            if scenario.denied:  # w_*_denied: LangChain's human-in-the-loop middleware
                gated = {t: {"allowed_decisions": ["approve", "reject"]} for t in scenario.denied}
                middleware.append(HumanInTheLoopMiddleware(interrupt_on=gated))
            agent = create_agent(
                model, all_tools, system_prompt=scenario.system, middleware=middleware,
                name=name, response_format=output,
                checkpointer=InMemorySaver() if scenario.denied else None,
            )  # fmt: skip
        config: dict[str, Any] = {"recursion_limit": 25}
        if scenario.denied:  # the interrupted run resumes on the same checkpointer thread
            config["configurable"] = {"thread_id": "approval-1"}
        state = agent.invoke({"messages": [{"role": "user", "content": scenario.prompt}]}, config)
        while state.get("__interrupt__"):
            # The reviewer rejects every gated call without a reason: LangChain hands the
            # model its own "User rejected the tool call ..." as an error ToolMessage.
            decisions = [
                {"type": "reject"}
                for pause in state["__interrupt__"]
                for _request in pause.value["action_requests"]
            ]
            state = agent.invoke(Command(resume={"decisions": decisions}), config)
    answer: Any = str(state["messages"][-1].content).strip()
    if scenario.structured:
        answer = state["structured_response"]
    final = scripted.turns[-1]
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
