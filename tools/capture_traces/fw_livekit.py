"""LiveKit Agents sessions driven as text and traced by LiveKit's own OpenTelemetry tracing.

LiveKit Agents is a framework for realtime voice agents; an ``AgentSession`` needs no room,
no audio and no LiveKit server when it is driven the way LiveKit's own tests drive it:
``await session.start(agent)`` without a room, then ``session.run(user_input=...)`` for each
user turn, awaited to the end of the reply (its ``RunResult`` lists the function calls, their
outputs, the handoffs and the assistant's messages). The model is the ``livekit-plugins-openai``
``LLM`` pointed at the scripted fake OpenAI server (``base_url``; the plugin always streams).
Tools are plain functions made function tools with ``function_tool(fn, name=...,
description=...)`` and given to the ``Agent``; ``AgentSession(max_tool_steps=...)`` is raised
above the default 3 (a run of ``m_excess_calls`` needs six tool steps), except for
``q_turn_limit``, where it is the limit under test.

A failing search raises ``ToolError`` with the backend's message, the way LiveKit documents
handing an error to the model: the model sees the message, the ``function_tool`` span records
``lk.function_tool.is_error`` true and no ERROR status.

``g_handoff`` / ``n_handback``: LiveKit's native handoff, a function tool that returns another
``Agent`` (``transfer_to_research_agent``, and back ``transfer_to_triage_agent``); each new
agent gets the conversation so far (``chat_ctx=``, as LiveKit's multi-agent examples pass it),
so the scripted turns count on. The session goes on with the new agent's reply.

``p_second_turn``: ``session.run`` twice on the same session, whose chat context carries the
first turn into the second (one ``agent_session`` span: one trace).

Tracing: ``livekit.agents.telemetry.set_tracer_provider`` with the capture's provider (LiveKit's
spans, scope ``livekit-agents``: ``agent_session``, ``agent_turn``, ``llm_node``,
``llm_request``, ``function_tool``, ...). Content: LiveKit strips every ``lk.pii.*`` attribute
and the GenAI content attributes in-process when ``LIVEKIT_TELEMETRY_ALLOW_PII`` is false
(``set_tracer_provider(allow_pii=...)`` reads it when not given).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from scenarios import TOOL_SCHEMAS, Scenario, SearchBackendError, Tools, answer_type

MAX_TOOL_STEPS = 10
"""Above every scenario's tool steps (``m_excess_calls`` has six, ``h_coding_agent`` four)."""


def tool_functions(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as LiveKit function tools; each logs its execution before it runs,
    and a failing search raises ``ToolError`` with the backend's message."""
    from livekit.agents import ToolError, function_tool

    async def search_docs(query: str) -> str:
        executed.append("search_docs")
        try:
            return json.dumps(tools.search_docs(query))
        except SearchBackendError as exc:
            raise ToolError(f"SearchBackendError: {exc}") from exc

    async def delete_records(table: str, where: str) -> str:
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    async def write_file(path: str, content: str) -> str:
        executed.append("write_file")
        return json.dumps(tools.write_file(path, content))

    async def run_command(command: str) -> str:
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    functions = {f.__name__: f for f in (search_docs, delete_records, write_file, run_command)}
    return [
        function_tool(functions[s["function"]["name"]], name=s["function"]["name"],
                      description=s["function"]["description"])
        for s in TOOL_SCHEMAS
    ]  # fmt: skip


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One session traced by LiveKit's tracing on the capture's provider; appends each
    executed scenario tool to ``executed`` and fails when the run's answer is not the
    scripted one (or, after a transfer back, not the triage agent's)."""
    del logger_provider
    from livekit.agents.telemetry import set_tracer_provider

    set_tracer_provider(tracer_provider)  # allow_pii from LIVEKIT_TELEMETRY_ALLOW_PII
    asyncio.run(_session(scenario, tools, executed))


async def _session(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    from fake_openai import FakeOpenAI, call_order
    from livekit.agents import Agent, AgentSession, AgentTask, function_tool
    from livekit.agents.voice.run_result import AgentHandoffEvent, ChatMessageEvent
    from livekit.plugins import openai as lk_openai

    class NamedAgent(Agent):
        """An agent whose id (its ``lk.agent_label`` / ``gen_ai.agent.name``) is the one
        given (LiveKit names a plain ``Agent`` ``default_agent``); one handed the
        conversation replies on entering, as LiveKit's multi-agent examples do in
        ``on_enter`` (a bare handoff asks the previous agent for no reply)."""

        handed_over = False

        async def on_enter(self) -> None:
            if self.handed_over:
                self.session.generate_reply()

    class SupportAgent(AgentTask[answer_type()]):  # type: ignore[misc]
        """The support agent as an ``AgentTask`` whose result is the structured answer: its
        ``submit_answer`` tool completes the task with the object (``r_structured_*``); its
        id, from the class name, is ``support_agent``."""

    def submit_tool(task: list[Any]) -> Any:
        async def submit_answer(answer: str, sources: list[str]) -> None:
            task[0].complete(answer_type()(answer=answer, sources=sources))

        return function_tool(
            submit_answer, name="submit_answer",
            description="Give the final answer and the ids of the documents it cites.",
        )  # fmt: skip

    scenario_tools = tool_functions(tools, executed)

    running: AgentSession | None = None

    def agent(name: str, session: AgentSession | None = None) -> Agent:
        """The agent ``name`` with the conversation so far, the scenario's tools and, in a
        handoff scenario, the transfer tool to the other agent."""
        other = "research_agent" if name == "triage_agent" else "triage_agent"

        async def transfer() -> Any:
            return agent(other, running)  # a bare handoff: the new agent replies

        transfer_tools = []
        if scenario.agents_only:
            transfer_tools.append(function_tool(
                transfer, name=f"transfer_to_{other}",
                description=f"Hand the conversation to the {other.replace('_', ' ')}.",
            ))  # fmt: skip
        history = session.history.copy() if session is not None else None
        if scenario.structured:
            task: list[Any] = []
            task.append(SupportAgent(
                instructions=scenario.system, tools=[*scenario_tools, submit_tool(task)]
            ))  # fmt: skip
            return task[0]
        named = NamedAgent(
            instructions=scenario.system,
            tools=[*scenario_tools, *transfer_tools],
            chat_ctx=history,
            id=name,
        )
        named.handed_over = session is not None
        return named

    # max_tool_steps counts the tool steps after the first: N model calls asking for tools
    # run theirs, then the next call may not ask for any.
    limit = scenario.turn_limit - 1 if scenario.turn_limit is not None else MAX_TOOL_STEPS
    # The handed-over agent's history lacks the transfer call still running when it is
    # built, so a handoff scenario is answered in call order (its calls are sequential).
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(scenario, turn_of=turn_of) as base_url:
        llm = lk_openai.LLM(model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key")
        async with AgentSession(llm=llm, max_tool_steps=limit) as session:
            running = session
            first = "triage_agent" if scenario.agents_only else "support_agent"
            await session.start(agent(first))
            answer: Any = None
            speaker = first
            for prompt in scenario.prompts:
                output_type = answer_type() if scenario.structured else None
                result = await session.run(user_input=prompt, output_type=output_type)
                if scenario.structured:
                    answer = result.final_output
                for event in result.events:
                    if isinstance(event, AgentHandoffEvent):
                        speaker = event.new_agent.id
                    if isinstance(event, ChatMessageEvent) and event.item.role == "assistant":
                        answer = event.item.text_content
    final = scenario.turns[-1]
    if not scenario.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
    if scenario.transfers_back and speaker != "triage_agent":
        raise SystemExit(f"{scenario.name}: answered by {speaker}, not after the transfer back")
