"""The ``mistralai`` client in a hand-written tool loop, traced by
``openinference-instrumentation-mistralai`` (``run``, the ``mistral-openinference`` source) or
by OpenLLMetry's ``opentelemetry-instrumentation-mistralai`` (``run_openllmetry``,
``mistral-openllmetry``; it wraps ``mistralai.chat.Chat``, the 1.x client's layout, so that
source runs ``mistralai`` 1.x, whose ``Mistral`` is importable from the package root).

The loop is the raw OpenAI sources' loop on Mistral's own SDK: ``client.chat.complete`` with
the scripted tools' schemas, inside the application's ``agent_run`` span; a failed tool goes
back to the model as ``{"error": ...}``. Mistral's chat API has the chat-completions shape
(``POST /v1/chat/completions``, ``tool_calls`` with ``function.name`` / ``arguments``), so the
client's ``server_url`` is the scripted ``fake_openai.py`` server's root. The instrumentation
makes no tool spans (tool calls live in the model spans only).
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
    """One scenario through ``Mistral().chat.complete`` under OpenInference."""
    from openinference.instrumentation.mistralai import MistralAIInstrumentor

    MistralAIInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop under OpenLLMetry's Mistral instrumentation (its default span
    attributes; content switch ``TRACELOOP_TRACE_CONTENT``)."""
    # Imported before the run, not by the capture's writer after it: with mistralai 1.x a
    # thread the client left importing lazily races that import on Python 3.11's module
    # locks (a ``KeyError`` in ``importlib._bootstrap`` in about one run in ten).
    import google.protobuf.json_format  # noqa: F401
    from opentelemetry.instrumentation.mistralai import MistralAiInstrumentor

    MistralAiInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def _loop(scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str]) -> None:
    """The tool loop itself, on whatever instrumentation the caller installed."""
    try:
        from mistralai.client import Mistral  # mistralai 2.x and later
    except ImportError:
        from mistralai import Mistral  # type: ignore[attr-defined, no-redef]  # 1.x

    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = Mistral(api_key="capture-not-a-key", server_url=base_url.removesuffix("/v1"))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat.complete(
                model="mistral-small-latest",
                messages=messages,  # type: ignore[arg-type]
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
                temperature=0.0,
            )
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                name = call.function.name
                arguments = call.function.arguments
                executed.append(name)
                args = json.loads(arguments) if isinstance(arguments, str) else arguments
                result = tools.call(name, args)
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "name": name, "content": result}
                )
