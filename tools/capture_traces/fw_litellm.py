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
from collections.abc import Callable
from contextlib import AbstractContextManager
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
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)
    litellm.callbacks = []  # flushes nothing by itself: write_outputs flushes the provider


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop recorded by ``openinference-instrumentation-litellm``
    (``openinference-litellm``), LiteLLM's own callbacks off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from openinference.instrumentation.litellm import LiteLLMInstrumentor

    LiteLLMInstrumentor().instrument(tracer_provider=tracer_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def run_openlit(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop under ``openlit.init()`` (``openlit-litellm``: its litellm instrumentor,
    and the openai and httpx ones it also enables), LiteLLM's own callbacks off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def loop(
    scenario: Scenario,
    tools: Tools,
    executed: list[str],
    root: Callable[[str], AbstractContextManager[Any]],
) -> None:
    """The tool loop inside ``root("agent_run")`` (the application's own span), LiteLLM
    instrumented by the caller."""
    import litellm

    with FakeOpenAI(scenario) as base_url, root("agent_run"):
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
