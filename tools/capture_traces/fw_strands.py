"""Strands Agents runs traced by Strands' built-in OpenTelemetry tracing.

The model is Strands' ``OpenAIModel`` (the OpenAI-compatible provider) on the scripted fake
OpenAI server, with ``stream=False`` because the fake server answers whole completions (the
spans Strands writes do not depend on streaming). Tools are Strands ``@tool`` functions over
the scripted ``Tools``; a failing search raises, as a real backend client would, and Strands
sends the model an error ``toolResult`` and marks the tool span failed.

``g_handoff`` uses Strands' agents as tools (``Agent.as_tool``): the triage agent calls the
``research_agent`` tool, which runs the research agent (its own ``invoke_agent`` span under
the tool span); the research agent searches and answers, and the triage agent passes the
answer on. The research agent starts from a fresh history, so the fake server answers in call
order (``fake_openai.call_order``) from the script below.

Strands reads ``OTEL_SEMCONV_STABILITY_OPT_IN`` when its tracer is first created:
``gen_ai_latest_experimental`` switches from per-message span events (``gen_ai.user.message``,
``gen_ai.choice``, ...) to ``gen_ai.client.inference.operation.details`` events with
``gen_ai.input.messages`` / ``gen_ai.output.messages``; ``gen_ai_unredacted_attributes=``
(an empty allow-list) replaces every message, tool argument and tool result with
``[REDACTED]``, which is how content capture is turned off.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scenarios import QUESTION, RECORDS_TASK, Scenario, Tools, answer_type


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(
        ("research_agent", {"input": QUESTION}),
        nested=("records_agent", {"input": RECORDS_TASK}),  # s_nested_*
    )


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """One run traced by Strands' own tracing on the capture's provider; ``stream``: the
    streaming run of ``strands-stream`` (``run_agent``)."""
    from opentelemetry import trace

    # Strands' tracer takes the global provider when it is first created (in Agent()).
    trace.set_tracer_provider(tracer_provider)
    run_agent(scenario, tools, executed, stream)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by Strands' own tracing, its spans rewritten in place by OpenInference's
    ``StrandsAgentsToOpenInferenceProcessor`` (``openinference-instrumentation-strands-agents``).

    The processor mutates each ended span, so its documentation has it added before the
    exporting processor: it is put first among the provider's processors here, and the capture
    holds what the exporter would send. Content off is its ``OPENINFERENCE_HIDE_*`` switches
    (read by its ``TraceConfig``), which drop the raw Strands content too."""
    from openinference.instrumentation.strands_agents import (
        StrandsAgentsToOpenInferenceProcessor,
    )
    from opentelemetry import trace

    processors = tracer_provider._active_span_processor
    processors._span_processors = (
        StrandsAgentsToOpenInferenceProcessor(),
        *processors._span_processors,
    )
    trace.set_tracer_provider(tracer_provider)
    run_agent(scenario, tools, executed)


def run_agent(scenario: Scenario, tools: Tools, executed: list[str], stream: bool = False) -> None:
    """One run on whatever global tracer provider the caller set up; appends each executed
    scenario tool to ``executed`` and fails when the run's answer is not the scripted one.
    With ``stream`` the run is a chat app's: ``OpenAIModel`` with its default ``stream=True``
    (streamed chat completions with ``stream_options.include_usage``) and each user turn
    ``agent.stream_async(prompt)``, its events consumed as they come, the answer the
    ``AgentResult`` of the last event."""
    from fake_openai import FakeOpenAI, call_order
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    @tool
    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    @tool
    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table.

        Args:
            table: The table to delete from.
            where: SQL condition selecting the rows.
        """
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: File path relative to the workspace.
            content: The whole new file content.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    @tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The command line to run.
        """
        executed.append("run_command")
        return str(tools.run_command(command))

    all_tools = [search_docs, delete_records, write_file, run_command]
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def model() -> OpenAIModel:
            return OpenAIModel(
                client_args={"base_url": base_url, "api_key": "capture-not-a-key"},
                model_id="gpt-4o-mini",
                params={"temperature": 0.0},
                stream=stream,
            )

        if scenario.agents_only:
            onward = [  # s_nested_*: the research agent calls the records agent as a tool
                Agent(
                    name="records_agent", description="Changes records in the database.",
                    system_prompt=scenario.system, model=model(), tools=all_tools,
                    callback_handler=None,
                ).as_tool()
            ] if scenario.nested else []  # fmt: skip
            research = Agent(
                name="research_agent", description="Answers research questions with citations.",
                system_prompt=scenario.system, model=model(), tools=[*all_tools, *onward],
                callback_handler=None,
            )  # fmt: skip
            agent = Agent(
                name="triage_agent", system_prompt="Hand research questions to research_agent.",
                model=model(), tools=[research.as_tool()], callback_handler=None,
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(
                name=name, system_prompt=scenario.system, model=model(), tools=all_tools,
                callback_handler=None, hooks=[Approval(scenario.denied)],
            )  # fmt: skip
        # The same Agent object for every user turn: it keeps the conversation's messages.
        for prompt in scenario.prompts:
            kwargs: dict[str, Any] = {}
            if scenario.structured:  # r_structured_*: Strands' structured-output tool
                kwargs["structured_output_model"] = answer_type()
            output: Any = (
                asyncio.run(streamed(agent, prompt, **kwargs))
                if stream
                else agent(prompt, **kwargs)
            )
            answer = output.structured_output if scenario.structured else str(output).strip()
    final = scripted.turns[-1]
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")


class Approval:
    """A policy approval step as Strands' hooks make one: a ``BeforeToolCallEvent`` callback
    that refuses each call of a tool the policy does not allow by cancelling it
    (``cancel_tool = True``: Strands hands the model its own ``tool cancelled by user`` as an
    error tool result; the tool never runs). A human's refusal through ``event.interrupt()``
    ends in the same cancellation, but the interrupted run and its resumption are two agent
    invocations, two traces with nothing joining them; the policy keeps the run one trace."""

    def __init__(self, denied: tuple[str, ...]) -> None:
        self.denied = denied

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        from strands.hooks import BeforeToolCallEvent

        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: Any) -> None:
        if event.tool_use["name"] in self.denied:
            event.cancel_tool = True


async def streamed(agent: Any, prompt: str, **kwargs: Any) -> Any:
    """``agent.stream_async``: its events consumed as they come (text deltas, tool use), the
    run's ``AgentResult`` taken from the last event, which holds it under ``result``."""
    result: Any = None
    async for event in agent.stream_async(prompt, **kwargs):
        if "result" in event:
            result = event["result"]
    if result is None:
        raise SystemExit("stream_async ended without an AgentResult event")
    return result
