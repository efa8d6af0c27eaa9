"""The Azure AI Inference SDK (``azure-ai-inference``) in a hand-written tool loop, traced by
the SDK's own ``AIInferenceInstrumentor``, for the ``azure-ai-inference`` source.

The loop is the raw OpenAI sources' loop on ``ChatCompletionsClient.complete`` with the
scripted tools as ``ChatCompletionsToolDefinition``s, inside the application's ``agent_run``
span; a failed tool goes back to the model as ``{"error": ...}`` in a ``ToolMessage``. The
client's endpoint is the scripted ``fake_openai.py`` server (``/v1``): the SDK posts to
``<endpoint>/chat/completions?api-version=...``, an OpenAI-shaped body both ways.

Tracing is set up as the SDK documents it: azure-core's tracing implementation set to
OpenTelemetry (``azure-core-tracing-opentelemetry``, which takes the global tracer provider:
the capture's provider is made global here, one run per process) and
``AIInferenceInstrumentor().instrument()``, whose content switch is the environment variable
``AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED``. The model call is a ``chat <model>`` span
with the messages as ``gen_ai.<role>.message`` / ``gen_ai.choice`` span events (their JSON in
``gen_ai.event.content``); with content off only the choice events stay, each tool call's id
and type kept and its name and arguments removed. azure-core's own pipeline adds an HTTP
client span per request under the ``chat`` span. No tool spans (tool calls live in the model
spans only).
"""

from __future__ import annotations

import json
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import TOOL_SCHEMAS, Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through ``ChatCompletionsClient.complete`` under the SDK's own tracing."""
    from azure.ai.inference import ChatCompletionsClient
    from azure.ai.inference.models import (
        AssistantMessage,
        ChatCompletionsToolDefinition,
        ChatRequestMessage,
        FunctionDefinition,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from azure.ai.inference.tracing import AIInferenceInstrumentor
    from azure.core.credentials import AzureKeyCredential
    from azure.core.settings import settings
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    settings.tracing_implementation = "opentelemetry"
    AIInferenceInstrumentor().instrument()  # content switch: the environment variable
    definitions = [
        ChatCompletionsToolDefinition(function=FunctionDefinition(**schema["function"]))
        for schema in TOOL_SCHEMAS
    ]
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = ChatCompletionsClient(
            endpoint=base_url, credential=AzureKeyCredential("capture-not-a-key")
        )
        messages: list[ChatRequestMessage] = [
            SystemMessage(content=scenario.system),
            UserMessage(content=scenario.prompt),
        ]
        for _ in range(10):
            response = client.complete(
                model="gpt-4o-mini", messages=messages, tools=definitions, temperature=0.0
            )
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(
                AssistantMessage(content=message.content, tool_calls=message.tool_calls)
            )
            for call in message.tool_calls:
                executed.append(call.function.name)
                result = tools.call(call.function.name, json.loads(call.function.arguments))
                messages.append(ToolMessage(content=result, tool_call_id=call.id))
