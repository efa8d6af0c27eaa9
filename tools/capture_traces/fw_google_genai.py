"""The raw ``google-genai`` client in a hand-written tool loop, for the ``google-genai`` source.

Like the raw OpenAI and Anthropic sources: an application ``agent_run`` span around a
``client.models.generate_content`` loop on the scripted ``fake_gemini.py`` server, the tools
declared as ``function_declarations`` (automatic function calling off: the loop runs them),
each result sent back as a ``functionResponse`` part (``{"error": ...}`` when the scripted tool
failed), no tool spans of its own. Recorded by python-contrib's
``opentelemetry-instrumentation-google-genai``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from fake_gemini import MODEL, FakeGemini
from scenarios import TOOL_SCHEMAS, Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Instrument the client, then run the scenario's tool loop inside ``agent_run``."""
    from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

    GoogleGenAiSdkInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop recorded by ``openinference-instrumentation-google-genai``
    (``openinference-google-genai``)."""
    from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor

    GoogleGenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def loop(
    scenario: Scenario,
    tools: Tools,
    executed: list[str],
    root: Callable[[str], AbstractContextManager[Any]],
) -> None:
    """The tool loop inside ``root("agent_run")`` (the application's own span, made by
    whichever tracing API the source's application uses), the client instrumented by the
    caller."""
    from google import genai
    from google.genai import types

    declarations = [
        types.FunctionDeclaration(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            parameters_json_schema=schema["function"]["parameters"],
        )
        for schema in TOOL_SCHEMAS
    ]
    config = types.GenerateContentConfig(
        system_instruction=scenario.system,
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        temperature=0.0,
        # A reasoning scenario asks for thought summaries, as an app showing them would.
        thinking_config=types.ThinkingConfig(include_thoughts=True) if scenario.reasoning else None,
    )
    with FakeGemini(scenario) as base_url:
        client = genai.Client(
            api_key="capture-not-a-key",
            http_options=types.HttpOptions(base_url=base_url, api_version="v1beta"),
        )
        contents: list[Any] = [
            types.Content(role="user", parts=[types.Part.from_text(text=scenario.prompt)])
        ]
        with root("agent_run"):
            for _ in range(10):
                response = client.models.generate_content(
                    model=MODEL, contents=contents, config=config
                )
                calls = response.function_calls or []
                if not calls:
                    break
                contents.append(response.candidates[0].content)  # type: ignore[index]
                contents.append(
                    types.Content(
                        role="user", parts=[_function_response(tools, executed, c) for c in calls]
                    )
                )


def _function_response(tools: Tools, executed: list[str], call: Any) -> Any:
    """Run one requested tool; its JSON result becomes the ``functionResponse`` payload (an
    object, as the Gemini API requires: a non-object result is wrapped as ``{"output": ...}``;
    a failure is the tool's own ``{"error": ...}``)."""
    from google.genai import types

    executed.append(call.name)
    parsed = json.loads(tools.call(call.name, dict(call.args or {})))
    payload = parsed if isinstance(parsed, dict) else {"output": parsed}
    return types.Part.from_function_response(name=call.name, response=payload)
