"""Pipecat pipelines driven as text and traced by Pipecat's own OpenTelemetry tracing.

Pipecat is a framework for realtime voice pipelines; a pipeline needs no transport, audio or
speech services when its frames are text: here it is a user context aggregator, the
``OpenAILLMService`` (``base_url`` on the scripted fake OpenAI server; it always streams) and
an assistant context aggregator, run by a ``PipelineWorker`` with ``enable_tracing=True`` and
started with an ``LLMRunFrame`` on a context holding the system and user messages. The
scenario tools are registered with ``llm.register_function`` and advertised through a
``ToolsSchema``; Pipecat runs the calls the model asks for, adds their results to the context
and asks the model again, until it answers in text. The driver ends the pipeline (an
``EndFrame``) when the assistant aggregator reports a turn that ended with text, or when the
worker reports an ``ErrorFrame`` (``o_run_error``: the model API's HTTP 500 after the
``openai`` client's retries), which it then raises as ``PipelineErrorFrame``.

A failing search is caught by its handler, which hands the model ``{"error": ...}`` through
``params.result_callback``, as Pipecat's examples return a tool's failure (a handler that
raises gets the model a generic text and pushes an error frame).

Pipecat has no agents to hand a conversation to (``pipecat-flows`` is a separate package),
no turn limit of its own and no structured-output type: ``g_handoff``, ``n_handback``,
``q_turn_limit`` and ``r_structured_*`` are not captured.

Tracing: Pipecat's decorators take the global tracer provider (``trace.get_tracer``), which
the driver sets to the capture's: a ``conversation`` span (scope ``pipecat.turn``,
``conversation.id``) holding ``turn`` spans holding one ``llm`` span per model call (scope
``pipecat``: GenAI ``chat`` keys, usage, the request's messages as ``input`` and its text as
``output``). There is no span per tool call and no content switch: both variants hold the
same attributes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from scenarios import TOOL_SCHEMAS, Scenario, SearchBackendError, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One pipeline run traced by Pipecat on the capture's provider; appends each executed
    scenario tool to ``executed`` and fails when the answer is not the scripted one."""
    del logger_provider
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)  # Pipecat's decorators use the global one
    asyncio.run(_pipeline(scenario, tools, executed))


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same pipeline traced by ``openinference-instrumentation-pipecat``'s
    ``PipecatInstrumentor`` instead of Pipecat's own tracing (``enable_tracing=False``): it
    wraps ``PipelineWorker.__init__`` to attach its observer, which writes OpenInference
    spans from the frames it sees (a turn's CHAIN span, an LLM span per model call, a TOOL
    span per ``FunctionCallResultFrame``). Content off is its ``OPENINFERENCE_HIDE_*``
    switches, read by its ``TraceConfig``."""
    del logger_provider
    from openinference.instrumentation.pipecat import PipecatInstrumentor

    PipecatInstrumentor().instrument(tracer_provider=tracer_provider)
    asyncio.run(_pipeline(scenario, tools, executed, tracing=False))


async def _pipeline(
    scenario: Scenario, tools: Tools, executed: list[str], tracing: bool = True
) -> None:
    from fake_openai import FakeOpenAI
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
    from pipecat.frames.frames import EndFrame, LLMRunFrame
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.runner import PipelineRunner
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
    from pipecat.services.openai.llm import OpenAILLMService

    answers: list[str] = []
    errors: list[str] = []
    answered = asyncio.Event()
    with FakeOpenAI(scenario) as base_url:
        llm = OpenAILLMService(
            api_key="capture-not-a-key",
            base_url=base_url,
            settings=OpenAILLMService.Settings(model="gpt-4o-mini"),
        )
        for schema in TOOL_SCHEMAS:
            llm.register_function(schema["function"]["name"], handler(schema, tools, executed))
        functions = [
            FunctionSchema(
                name=s["function"]["name"],
                description=s["function"]["description"],
                properties=s["function"]["parameters"]["properties"],
                required=s["function"]["parameters"]["required"],
            )
            for s in TOOL_SCHEMAS
        ]
        context = LLMContext(
            [{"role": "system", "content": scenario.system},
             {"role": "user", "content": scenario.prompt}],
            tools=ToolsSchema(standard_tools=functions),
        )  # fmt: skip
        aggregators = LLMContextAggregatorPair(context)
        assistant = aggregators.assistant()
        pipeline = Pipeline([aggregators.user(), llm, assistant])
        worker = PipelineWorker(pipeline, enable_tracing=tracing, conversation_id=scenario.name)

        @assistant.event_handler("on_assistant_turn_stopped")
        async def on_turn_stopped(_aggregator: Any, message: Any) -> None:
            if message.content:  # a turn that only asked for tools has no text
                answers.append(message.content)
                answered.set()

        @worker.event_handler("on_pipeline_error")
        async def on_pipeline_error(_worker: Any, frame: Any) -> None:
            errors.append(str(frame.error))  # the model API failed: Pipecat's ErrorFrame
            answered.set()

        async def end_when_answered() -> None:
            await answered.wait()
            await worker.queue_frame(EndFrame())

        await worker.queue_frames([LLMRunFrame()])
        ender = asyncio.create_task(end_when_answered())
        await PipelineRunner(handle_sigint=False).run(worker)
        await ender
    if errors:
        raise PipelineErrorFrame("; ".join(errors))
    final = scenario.turns[-1]
    if answers != [final]:
        raise SystemExit(f"{scenario.name}: answers {answers!r} != scripted [{final!r}]")


class PipelineErrorFrame(Exception):
    """The run ended in an ``ErrorFrame`` (a failed model call): Pipecat reports it to the
    worker's ``on_pipeline_error`` handler instead of raising; the driver ends the pipeline
    there and raises this, so the capture sees the run end in the framework's error."""


def handler(schema: dict[str, Any], tools: Tools, executed: list[str]) -> Any:
    """The Pipecat function handler for one scripted tool: logs its execution, runs it and
    reports its result, a failing search's as ``{"error": ...}``."""
    name = schema["function"]["name"]

    async def call(params: Any) -> None:
        executed.append(name)
        try:
            result = getattr(tools, name)(**params.arguments)
        except SearchBackendError as exc:
            result = {"error": f"SearchBackendError: {exc}"}
        await params.result_callback(json.loads(json.dumps(result)))

    return call
