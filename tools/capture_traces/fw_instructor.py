"""Instructor (``instructor``) on the ``openai`` client in a hand-written tool loop, traced by
``openinference-instrumentation-instructor`` with ``openinference-instrumentation-openai``
(OpenInference's documented pair for Instructor), for the ``instructor-openinference`` source.

The application makes every model call through Instructor's patched client
(``instructor.from_openai``): the tool turns with ``response_model=None``, which Instructor
passes through to the API (the scripted tools' schemas, the raw completion back), so the loop
is the raw OpenAI sources' loop; a failed tool goes back to the model as ``{"error": ...}``.
A structured-output scenario (``r_structured_*``) then asks for the answer as the output type:
one more call with ``response_model=SupportAnswer`` (Instructor's default ``TOOLS`` mode
offers a function named after the type and forces it), which the scripted server answers
with the script's object as that function's arguments (``fake_openai.output_tool``); the
answer is the validated object. Instructor's instrumentation wraps each call of the patched
client (Instructor 1.17's v2 core) in an ``instructor.create`` span of OpenInference kind
``CHAIN`` around the OpenAI instrumentation's ``ChatCompletion`` LLM span; with a response
model it records the type's name (``instructor.response_model``) and the validated object
(``output.value``). The tools the model asked for run in no span (tool calls live in the
model spans only).
"""

from __future__ import annotations

import json
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import TOOL_SCHEMAS, Scenario, Tools, answer_type

STRUCTURED_REQUEST = "Return that answer as a SupportAnswer."
"""The user message of the structured call: the answer the loop got, asked for as the type."""


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through Instructor's patched ``openai`` client under OpenInference."""
    import instructor
    import openai
    from openinference.instrumentation.instructor import InstructorInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    InstructorInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = instructor.from_openai(
            openai.OpenAI(base_url=base_url, api_key="capture-not-a-key")
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        message: dict[str, Any] = {}
        for _ in range(10):
            response = client.chat.completions.create(
                model="gpt-4o-mini",
                response_model=None,
                messages=messages,
                tools=TOOL_SCHEMAS,
                temperature=0.0,
            )
            message = response.choices[0].message.model_dump(exclude_none=True)
            message.setdefault("content", None)  # Instructor's message conversion reads it
            if not message.get("tool_calls"):
                break
            messages.append(message)
            for call in message["tool_calls"]:
                name = call["function"]["name"]
                executed.append(name)
                result = tools.call(name, json.loads(call["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if not scenario.structured:
            return
        messages += [message, {"role": "user", "content": STRUCTURED_REQUEST}]
        answer = client.chat.completions.create(
            model="gpt-4o-mini",
            response_model=answer_type(),
            messages=messages,
            temperature=0.0,
            max_retries=1,
        )
        if not scenario.answered_as_scripted(answer):
            raise RuntimeError(f"structured answer {answer!r} is not the script's")
