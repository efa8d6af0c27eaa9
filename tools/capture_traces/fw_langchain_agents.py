"""LangChain classic agents (``AgentExecutor``) traced by OpenInference's LangChain tracer.

The agent is ``create_tool_calling_agent`` over a ``ChatOpenAI`` model on the scripted fake
OpenAI server, run by ``AgentExecutor`` (from ``langchain-classic``, the pre-LangGraph agent
runtime many applications still use). Tools are LangChain ``@tool`` functions over the
scripted ``Tools`` with ``handle_tool_error=True``: a failing search raises
``ToolException``, the way LangChain documents tool errors, and the executor hands the model
the error text as the observation, so the run goes on.

``g_handoff`` has no native handoff in ``AgentExecutor``: the triage agent's only tool,
``research_agent``, runs the research agent's own executor (an agent used as a tool); the
research agent searches and answers, and the triage agent passes the answer on. The research
executor starts from a fresh history, so the fake server answers in call order
(``fake_openai.call_order``) from the script below. Each executor is named after its agent
(``AgentExecutor(name=...)``), which names its chain span.
"""

from __future__ import annotations

from typing import Any

from scenarios import QUESTION, Scenario, SearchBackendError, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def langchain_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as LangChain tools that log each execution; a backend failure is
    raised as ``ToolException``, which ``handle_tool_error=True`` turns into the observation
    the model sees."""
    from langchain_core.tools import ToolException, tool

    @tool
    def search_docs(query: str) -> Any:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        try:
            return tools.search_docs(query)
        except SearchBackendError as exc:
            raise ToolException(f"SearchBackendError: {exc}") from exc

    @tool
    def delete_records(table: str, where: str) -> Any:
        """Delete records from a database table."""
        executed.append("delete_records")
        return tools.delete_records(table, where)

    @tool
    def write_file(path: str, content: str) -> Any:
        """Write a file in the workspace."""
        executed.append("write_file")
        return tools.write_file(path, content)

    @tool
    def run_command(command: str) -> Any:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return tools.run_command(command)

    all_tools = [search_docs, delete_records, write_file, run_command]
    for each in all_tools:
        each.handle_tool_error = True
    return all_tools


LIMIT_ANSWER = "Agent stopped due to max iterations."
"""What ``AgentExecutor`` returns when ``max_iterations`` ends its loop (the default
``early_stopping_method="force"``): no model call reads the last tool's result."""


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )

        def executor(name: str, system: str, agent_tools: list[Any]) -> Any:
            prompt = ChatPromptTemplate.from_messages(
                [("system", system), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
            )
            agent = create_tool_calling_agent(model, agent_tools, prompt)
            # q_turn_limit: the executor's own limit; past it the run returns LIMIT_ANSWER.
            return AgentExecutor(agent=agent, tools=agent_tools, name=name,
                                 max_iterations=scenario.turn_limit or 10)  # fmt: skip

        all_tools = langchain_tools(tools, executed)
        if scenario.agents_only:
            research = executor("research_agent", scenario.system, all_tools)

            @tool
            def research_agent(question: str) -> str:
                """Hand a research question to the research agent; returns its answer."""
                return str(research.invoke({"input": question})["output"])

            runner = executor(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = executor(name, scenario.system, all_tools)
        answer = str(runner.invoke({"input": scenario.prompt})["output"]).strip()
    final = LIMIT_ANSWER if scenario.turn_limit else scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
