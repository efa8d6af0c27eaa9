"""CrewAI crews traced by ``openinference-instrumentation-crewai`` (+ its LiteLLM sibling).

One Agent with ``@tool`` tools runs one Task in a Crew; the model is CrewAI's ``LLM`` routed
through LiteLLM (``is_litellm=True``) to the scripted fake OpenAI server. The CrewAI
instrumentor records crews, tasks, agents and tools but no model calls, so, as CrewAI users
do, ``openinference-instrumentation-litellm`` records those. ``g_handoff`` uses CrewAI's
delegation: the triage agent (``allow_delegation=True``) calls the built-in "Delegate work
to coworker" tool, and the research agent works on the delegated task with a fresh history,
so the fake server answers in call order (``fake_openai.call_order``).

``run_event_listener`` traces the same crew with the instrumentor's event-listener mode
(``use_event_listener=True``), which builds spans from CrewAI's event bus and records model
calls itself, so no LiteLLM instrumentation is added there.

``run_openllmetry`` (the ``crewai-openllmetry`` source) traces the same crew with OpenLLMetry's
``opentelemetry-instrumentation-crewai`` and its OpenAI instrumentation, as
``Traceloop.init()`` would enable them.

CrewAI's own telemetry is off (``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_TRACING_ENABLED``) and
LiteLLM reads its bundled model price map (``LITELLM_LOCAL_MODEL_COST_MAP``): nothing leaves
127.0.0.1. ``OTEL_SDK_DISABLED`` is left alone, since it would disable these spans too.
"""

from __future__ import annotations

import json
import os
from typing import Any

from scenarios import QUESTION, Scenario, Tools, answer_type

DELEGATE = "delegate_work_to_coworker"
"""The built-in delegation tool as the model sees it ("Delegate work to coworker")."""

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` delegates, the research agent searches
    and answers, then the triage agent passes the answer on."""
    delegate = {"task": QUESTION, "context": QUESTION, "coworker": "research_agent"}
    return scenario.through_agent_tool((DELEGATE, delegate))


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The instrumentor's default (wrapper) mode, model calls recorded by the LiteLLM
    instrumentation."""
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.litellm import LiteLLMInstrumentor

    CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
    LiteLLMInstrumentor().instrument(tracer_provider=tracer_provider)
    run_crew(scenario, tools, executed)


def run_event_listener(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The instrumentor's event-listener mode (``use_event_listener=True``): spans built from
    CrewAI's event bus, model calls included, with no LiteLLM instrumentation."""
    from openinference.instrumentation.crewai import CrewAIInstrumentor

    CrewAIInstrumentor().instrument(tracer_provider=tracer_provider, use_event_listener=True)
    run_crew(scenario, tools, executed)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """OpenLLMetry's ``opentelemetry-instrumentation-crewai`` (crew, task, agent and LLM.call
    spans) with its OpenAI instrumentation enabled, as ``Traceloop.init()`` would enable both;
    content switch ``TRACELOOP_TRACE_CONTENT`` (which the CrewAI one ignores)."""
    from opentelemetry.instrumentation.crewai import CrewAIInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    CrewAIInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    run_crew(scenario, tools, executed)


def run_crew(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """One crew run (instrumented by the caller); appends each executed scenario tool to
    ``executed`` and fails when the crew's answer is not the scripted one."""
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool
    from fake_openai import FakeOpenAI, call_order

    @tool("search_docs")
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @tool("delete_records")
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @tool("write_file")
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return json.dumps(tools.write_file(path, content))

    @tool("run_command")
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    all_tools = [search_docs, delete_records, write_file, run_command]
    if scenario.denied:  # w_*_denied: a policy hook refuses the denied tools' calls
        from crewai.hooks import before_tool_call

        @before_tool_call(tools=list(scenario.denied))
        def refuse(context: Any) -> bool:
            """CrewAI's before_tool_call hook: ``False`` blocks the call; CrewAI hands the
            model its own ``Tool execution blocked by hook. Tool: <tool>``."""
            return False

    with FakeOpenAI(script(scenario), turn_of=call_order()) as base_url:
        llm = LLM(model="openai/gpt-4o-mini", is_litellm=True, base_url=base_url,
                  api_key="capture", temperature=0.0)  # fmt: skip

        # q_turn_limit: CrewAI's own iteration limit; past it, the agent asks the model for a
        # final answer itself (a request offering no tools).
        max_iter = scenario.turn_limit or 10

        def agent(name: str, goal: str, **kw: Any) -> Any:
            return Agent(role=name, goal=goal, backstory=scenario.system, llm=llm,
                         verbose=False, max_iter=max_iter, **kw)  # fmt: skip

        if scenario.agents_only:
            research = agent("research_agent", "Answer research questions from the documents.",
                             tools=all_tools, allow_delegation=False)  # fmt: skip
            triage = agent("triage_agent", "Hand research questions to research_agent.",
                           tools=[], allow_delegation=True)  # fmt: skip
            agents, lead = [triage, research], triage
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            lead = agent(name, "Complete the user's request.", tools=all_tools,
                         allow_delegation=False)  # fmt: skip
            agents = [lead]
        # r_structured_*: the task's output_pydantic, the crew's answer parsed into the type.
        output = {"output_pydantic": answer_type()} if scenario.structured else {}
        task = Task(description=scenario.prompt, expected_output="The answer.", agent=lead,
                    **output)  # fmt: skip
        crew = Crew(agents=agents, tasks=[task], verbose=False)
        result = crew.kickoff()
        answer: Any = result.pydantic if scenario.structured else str(result.raw)
    want = scenario.turns[-1]
    if not scenario.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: crew answered {answer!r}, script says {want!r}")
