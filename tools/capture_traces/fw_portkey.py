"""The ``portkey-ai`` client in a hand-written tool loop, traced by
``openinference-instrumentation-portkey`` (the ``portkey-openinference`` source).

Portkey's SDK is an AI gateway client: ``Portkey(base_url=..., api_key=..., provider=...)``
sends OpenAI-shaped chat completions to the gateway, which forwards them to the provider.
Here the gateway is the scripted ``fake_openai.py`` server itself (``base_url`` its ``/v1``
root: the request lands on ``.../chat/completions``, the ``x-portkey-*`` headers ignored),
so no gateway or network is involved. The loop is the raw OpenAI sources' loop: the
scripted tools' schemas on every request, inside the application's ``agent_run`` span; a
failed tool goes back to the model as ``{"error": ...}``. The instrumentation wraps
``chat.completions.create`` and records LLM spans only (tool calls live in them), as
OpenInference's OpenAI instrumentor does.
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
    """One scenario through ``Portkey().chat.completions.create`` under OpenInference."""
    from openinference.instrumentation.portkey import PortkeyInstrumentor
    from portkey_ai import Portkey

    PortkeyInstrumentor().instrument(tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = Portkey(base_url=base_url, api_key="capture-not-a-key", provider="openai")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=TOOL_SCHEMAS, temperature=0.0
            )
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                executed.append(call.function.name)
                result = tools.call(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
