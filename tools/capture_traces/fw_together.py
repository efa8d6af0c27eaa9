"""The ``together`` client (Together AI's SDK) in a hand-written tool loop, traced by
``openinference-instrumentation-together`` (the ``together-openinference`` source).

Together's API is OpenAI-compatible: ``Together(base_url=...)`` sends chat completions to
``{base_url}/chat/completions``, so the scripted ``fake_openai.py`` server's ``/v1`` root
answers them. The loop is the raw OpenAI sources' loop: the scripted tools' schemas on every
request, inside the application's ``agent_run`` span; a failed tool goes back to the model as
``{"error": ...}``. The instrumentation wraps ``chat.completions.create`` and records LLM
spans only (tool calls live in them).
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
    """One scenario through ``Together().chat.completions.create`` under OpenInference."""
    from openinference.instrumentation.together import TogetherInstrumentor
    from together import Together

    TogetherInstrumentor().instrument(tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = Together(base_url=base_url, api_key="capture-not-a-key")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat.completions.create(
                model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
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
