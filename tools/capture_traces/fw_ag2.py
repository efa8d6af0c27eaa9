"""AG2 1.x agents traced by AG2's own OpenTelemetry middleware, for the ``ag2-native`` source.

AG2 1.x (the ``ag2`` package; the 0.x ``autogen`` API with ``ConversableAgent`` and
``initiate_chat`` lives on as AG2 Classic) builds agents from a model config, plain Python
function tools and middleware. Each scenario runs an ``Agent`` whose ``OpenAIConfig`` points at
the scripted fake OpenAI server; tracing is AG2's ``TelemetryMiddleware`` on the capture's
tracer provider, one per agent with that agent's name (the middleware writes ``unknown``
otherwise), which records ``invoke_agent`` / ``chat`` / ``execute_tool`` GenAI spans. A failing
search raises, as a real backend client would: AG2 hands the model the traceback as the tool
result and the ``execute_tool`` span ends with status ERROR.

``g_handoff`` uses AG2's agent-as-tool delegation (``Agent.as_tool``, a ``task_research_agent``
tool with an ``objective`` argument): the research agent runs as a sub-task inside the triage
agent's tool call, searches and answers, and the triage agent passes the answer on. The
research agent starts from a fresh history, so the fake server answers in call order
(``fake_openai.call_order``) from the script below.

Content capture is the middleware's ``capture_content`` argument, which the driver sets from
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``false`` turns it off).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("task_research_agent", {"objective": QUESTION}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as plain functions (AG2 reads their signatures and docstrings);
    each logs its execution before it runs."""

    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table."""
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return str(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    from ag2 import Agent
    from ag2.config.openai import OpenAIConfig
    from ag2.middleware.builtin.telemetry import TelemetryMiddleware
    from fake_openai import FakeOpenAI, call_order

    capture = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        config = OpenAIConfig(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0,
        )  # fmt: skip

        def agent(name: str, prompt: str, agent_tools: list[Any]) -> Any:
            telemetry = TelemetryMiddleware(
                tracer_provider=tracer_provider, agent_name=name,
                capture_content=capture.lower() != "false",
            )  # fmt: skip
            return Agent(name, prompt, config=config, tools=agent_tools, middleware=[telemetry])

        all_tools = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, all_tools)
            delegate = research.as_tool(description="Answers research questions from the "
                                        "document search.")  # fmt: skip
            runner = agent("triage_agent", "Hand research questions to research_agent.",
                           [delegate])  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, all_tools)
        reply = asyncio.run(runner.ask(scenario.prompt))
    answer = str(reply.body).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The AG2 Classic agents of ``run_classic`` (the ``ag2-openinference`` source) traced by
    ``openinference-instrumentation-ag2``, which wraps ``ConversableAgent``: an AGENT span per
    ``initiate_chat`` and per ``generate_reply``, a TOOL span per ``execute_function`` (ERROR
    when AG2 reports the call failed). It records no model call, so OpenInference's OpenAI
    instrumentor records the requests, as Arize's AG2 guide pairs them. Content off is
    ``OPENINFERENCE_HIDE_*``, read by both instrumentors' ``TraceConfig``."""
    from openinference.instrumentation.ag2 import AG2Instrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    AG2Instrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    run_classic(scenario, tools, executed)


def run_classic(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """The same agents on AG2 Classic, the ``autogen`` package AG2 0.x ships (the API OpenLIT's
    ag2 instrumentor wraps: ``ConversableAgent``), untraced by AG2 itself. Each agent is an
    LLM ``ConversableAgent`` paired with a tool executor (``llm_config=False``, no human
    input) that runs the tools ``register_function`` gave it and ends the chat at the agent's
    first reply without tool calls; a raised tool error reaches the model as AG2's
    ``Error: ...`` tool result. ``g_handoff`` runs the research agent's own chat inside the
    triage agent's ``task_research_agent`` tool."""
    from autogen import ConversableAgent, register_function
    from fake_openai import FakeOpenAI, call_order

    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        llm_config = {
            "config_list": [
                {"model": "gpt-4o-mini", "base_url": base_url, "api_key": "capture-not-a-key"}
            ],
            "temperature": 0.0,
            "cache_seed": None,
        }

        def pair(name: str, prompt: str, agent_tools: list[Any]) -> tuple[Any, Any]:
            agent = ConversableAgent(
                name, system_message=prompt, llm_config=llm_config, human_input_mode="NEVER"
            )
            executor = ConversableAgent(
                f"{name}_executor", llm_config=False, human_input_mode="NEVER",
                is_termination_msg=lambda m: not m.get("tool_calls"),
            )  # fmt: skip
            for fn in agent_tools:
                register_function(
                    fn, caller=agent, executor=executor, description=fn.__doc__ or fn.__name__
                )
            return agent, executor

        def ask(agent: Any, executor: Any, message: str) -> str:
            chat = executor.initiate_chat(agent, message=message, silent=True)
            return str(chat.chat_history[-1].get("content") or "").strip()

        all_tools = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = pair("research_agent", scenario.system, all_tools)

            def task_research_agent(objective: str) -> str:
                """Answers research questions from the document search."""
                return ask(*research, objective)

            runner = pair(
                "triage_agent", "Hand research questions to research_agent.",
                [task_research_agent],
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = pair(name, scenario.system, all_tools)
        answer = ask(*runner, scenario.prompt)
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
