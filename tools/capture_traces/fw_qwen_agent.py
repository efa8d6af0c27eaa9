"""Qwen-Agent (``qwen-agent``) ``Assistant`` runs on the fake OpenAI server, for the
``qwen-agent-otel-genai`` source.

Each scenario runs an ``Assistant`` whose LLM config is Qwen-Agent's ``oai`` backend
(``model_server`` the fake server's URL) with the scenario's tools as ``BaseTool``
subclasses. Qwen-Agent's default function calling does not use the API's ``tools``: it writes
the tool schemas into the system prompt (its ``nous`` template) and parses the model's reply
text for ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` blocks, several blocks
being calls requested together. So the script turns each tool turn into such a reply; the
fake server answers in call order, streamed (``Assistant.run`` streams).

A tool that raises is not a failure to Qwen-Agent: ``Agent._call_tool`` catches the exception
and hands the model ``An error occurred when calling tool ...`` as the tool's result, so the
trace's ``execute_tool`` span ends without an error. ``g_handoff`` is the research agent as
a tool: the triage assistant's ``research_agent`` tool runs a second ``Assistant``.

Traced by the OpenTelemetry project's ``opentelemetry-instrumentation-genai-qwen-agent``
(``invoke_agent`` per ``Agent.run``, ``execute_tool`` per ``Agent._call_tool``) with its
``opentelemetry-instrumentation-genai-openai`` for the model calls, which the Qwen-Agent one
leaves to the client's instrumentation.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from scenarios import QUESTION, TOOL_SCHEMAS, Scenario, Tools

Turn = list[tuple[str, dict[str, Any]]] | str
RESEARCH_TOOL = {
    "name": "research_agent",
    "description": "Ask the research agent a research question; returns its cited answer.",
    "parameters": {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
}


def tool_call_text(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The calls of one turn as the ``nous`` template's reply text Qwen-Agent parses."""
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"
        for name, args in calls
    )


def script(scenario: Scenario) -> Scenario:
    """The model's replies in call order: each tool turn as ``<tool_call>`` text; a delegating
    scenario through the triage agent's ``research_agent`` tool."""
    delegated = scenario.through_agent_tool(("research_agent", {"question": QUESTION}))
    turns: list[Turn] = [
        turn if isinstance(turn, str) else tool_call_text(turn) for turn in delegated.turns
    ]
    return dataclasses.replace(delegated, turns=turns)


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as Qwen-Agent ``BaseTool``s; each call is logged before it runs, so
    the ground truth is what really executed. A failing search raises, as a real backend's
    client would."""
    from qwen_agent.tools.base import BaseTool

    def make(schema: dict[str, Any]) -> Any:
        name = schema["name"]

        class ScenarioTool(BaseTool):
            def call(self, params: str | dict[str, Any], **kwargs: Any) -> str:
                args = json.loads(params) if isinstance(params, str) else params
                executed.append(name)
                return json.dumps(getattr(tools, name)(**args))

        ScenarioTool.name = name
        ScenarioTool.description = schema["description"]
        ScenarioTool.parameters = schema["parameters"]
        return ScenarioTool()

    return [make(t["function"]) for t in TOOL_SCHEMAS]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One instrumented ``Assistant`` run; fails when its answer is not the scripted one."""
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.genai.qwen_agent import QwenAgentInstrumentor

    QwenAgentInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    from fake_openai import FakeOpenAI, call_order
    from qwen_agent.agents import Assistant
    from qwen_agent.tools.base import BaseTool

    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        llm = {"model": "gpt-4o-mini", "model_server": base_url, "api_key": "capture-not-a-key",
               "generate_cfg": {"temperature": 0.0}}  # fmt: skip
        all_tools = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = Assistant(
                llm=llm, function_list=all_tools, system_message=scenario.system,
                name="research_agent",
            )  # fmt: skip

            class ResearchAgentTool(BaseTool):
                name = RESEARCH_TOOL["name"]
                description = RESEARCH_TOOL["description"]
                parameters = RESEARCH_TOOL["parameters"]

                def call(self, params: str | dict[str, Any], **kwargs: Any) -> str:
                    args = json.loads(params) if isinstance(params, str) else params
                    reply = research.run_nonstream([{"role": "user", "content": args["question"]}])
                    return str(reply[-1]["content"])

            agent = Assistant(
                llm=llm, function_list=[ResearchAgentTool()], name="triage_agent",
                system_message="Hand research questions to research_agent.",
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Assistant(
                llm=llm, function_list=all_tools, system_message=scenario.system, name=name
            )
        reply = agent.run_nonstream([{"role": "user", "content": scenario.prompt}])
    answer = str(reply[-1]["content"]).strip()
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {scripted.turns[-1]!r}")
