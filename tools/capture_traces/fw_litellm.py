"""``litellm.completion`` in a hand-written tool loop, recorded by LiteLLM's own OpenTelemetry
callback (``litellm.callbacks = ["otel"]``), for the ``litellm-otel`` source.

The loop is the raw OpenAI sources' loop on LiteLLM's OpenAI-compatible provider
(``openai/gpt-4o-mini`` with ``api_base`` on the scripted ``fake_openai.py`` server) inside the
application's ``agent_run`` span; a failed tool goes back to the model as ``{"error": ...}``.
LiteLLM's callback makes no tool spans. It takes the global tracer provider when one is set
(as an application that already runs OpenTelemetry has), so the driver sets the capture's
provider globally before turning the callback on. Content follows the standard
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` switch, which the callback reads when
it is created; unset, LiteLLM records messages (its ``message_logging`` default).
"""

from __future__ import annotations

import json
import os
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
    """One scenario through ``litellm.completion`` with LiteLLM's ``otel`` callback."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map download
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    import litellm

    litellm.callbacks = ["otel"]
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = litellm.completion(
                model="openai/gpt-4o-mini",
                api_base=base_url,
                api_key="capture-not-a-key",
                messages=messages,
                tools=TOOL_SCHEMAS,
                temperature=0.0,
            )
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                executed.append(call.function.name)
                result = tools.call(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    litellm.callbacks = []  # flushes nothing by itself: write_outputs flushes the provider
