"""LangChain Deep Agents (``deepagents``) for two capture sources: traced by OpenInference's
LangChain instrumentor (``run_openinference``, ``deepagents-openinference``) or by the
LangSmith SDK's OpenTelemetry mode (``run_langsmith``, ``deepagents-langsmith-otel``).

``create_deep_agent`` is LangGraph's agent harness: a LangChain 1.x ``create_agent`` graph
with the harness's own middleware, which offers the model built-in tools beside the
application's (0.7.32 with this model: the file tools ``ls`` / ``read_file`` / ``write_file``
/ ``edit_file`` / ``delete`` / ``glob`` / ``grep`` on an in-state file system, ``execute``,
and ``task``, which runs a sub-agent; no ``write_todos``). The model is ``ChatOpenAI`` on the
scripted fake OpenAI server, so the script decides which tools the model asks for: the
scenarios' own tools, never a built-in one except ``task`` for the delegation, so the run's
tools are the scenario's ground truth (a built-in call is graded as any tool call, counted
by tool budgets like the others). A failing search raises, and LangChain's
``ToolErrorMiddleware`` hands the model the error text as an error ``ToolMessage``
(LangChain 1.x stops the run on a tool exception without it).

``h_coding_agent``'s ``write_file`` shares its name with the harness's file tool: the
application's tool is passed and replaces the harness's; had the harness's run instead, the
capture would fail (the scenario tool logs itself, the harness's does not, so the executed
tools would not match the script).

``g_handoff`` is Deep Agents' delegation: the main (triage) agent calls
``task {"description": ..., "subagent_type": "research_agent"}``, the harness runs the
declared ``research_agent`` sub-agent (its own graph, from a fresh history) and returns its
answer as the tool result; the triage agent passes it on. The sub-agent starts from a fresh
history, so the fake server answers in call order (``fake_openai.call_order``).
"""

from __future__ import annotations

from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: for ``g_handoff`` the triage agent's ``task`` call,
    the research sub-agent's search and answer, then the triage agent's answer."""
    task = ("task", {"description": QUESTION, "subagent_type": "research_agent"})
    return scenario.through_agent_tool(task)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by ``openinference-instrumentation-langchain``."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    _run(scenario, tools, executed)


def run_langsmith(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by the LangSmith SDK's OpenTelemetry mode (as ``fw_langgraph.
    run_langsmith``: the source's environment switches it on; spans on the global tracer
    provider, ended from the SDK's background thread before the capture reads them)."""
    from fw_langgraph import traced_by_langsmith

    traced_by_langsmith(tracer_provider, lambda: _run(scenario, tools, executed))


def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """Run one scenario; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from deepagents import create_deep_agent
    from fake_openai import FakeOpenAI, call_order
    from fw_langgraph import langchain_tools
    from langchain.agents.middleware import ToolErrorMiddleware
    from langchain_openai import ChatOpenAI

    errors = ToolErrorMiddleware(on_error=lambda exc, request: f"Error: {exc!r}")
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        all_tools = langchain_tools(tools, executed)
        if scenario.agents_only:
            research = {
                "name": "research_agent",
                "description": "Answers research questions from the knowledge base.",
                "system_prompt": scenario.system,
                "tools": all_tools,
                "middleware": [errors],
            }
            agent = create_deep_agent(
                model=model, tools=[], system_prompt="Hand research questions to the "
                "research_agent sub-agent.", subagents=[research], name="triage_agent",
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = create_deep_agent(
                model=model, tools=all_tools, system_prompt=scenario.system,
                middleware=[errors], name=name,
            )  # fmt: skip
        state = agent.invoke(
            {"messages": [{"role": "user", "content": scenario.prompt}]}, {"recursion_limit": 40}
        )
    answer = str(state["messages"][-1].content).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
