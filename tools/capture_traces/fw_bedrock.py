"""The AWS Bedrock Runtime Converse API through ``boto3`` in a hand-written tool loop, for the
``bedrock-openllmetry`` source.

Like the raw Anthropic sources: an application ``agent_run`` span around a ``converse`` loop
(``toolConfig`` with the scenarios' tools) on the scripted ``fake_bedrock.py`` server; each
``toolUse`` block is run and answered with a ``toolResult`` block (``status: error`` when the
scripted tool failed). The loop makes no tool spans of its own. OpenLLMetry's
``opentelemetry-instrumentation-bedrock`` records the client; it reads
``TRACELOOP_TRACE_CONTENT`` to decide whether prompts and completions are recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from fake_bedrock import MODEL, FakeBedrock
from scenarios import TOOL_SCHEMAS, Scenario, Tools

BEDROCK_TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": schema["function"]["name"],
                "description": schema["function"]["description"],
                "inputSchema": {"json": schema["function"]["parameters"]},
            }
        }
        for schema in TOOL_SCHEMAS
    ]
}
"""The scenarios' tools in the Converse API's ``toolConfig`` format."""


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """opentelemetry-instrumentation-bedrock (Traceloop OpenLLMetry) on a boto3 client."""
    from opentelemetry.instrumentation.bedrock import BedrockInstrumentor

    BedrockInstrumentor().instrument(tracer_provider=tracer_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop recorded by ``openinference-instrumentation-bedrock``
    (``openinference-bedrock``)."""
    from openinference.instrumentation.bedrock import BedrockInstrumentor

    BedrockInstrumentor().instrument(tracer_provider=tracer_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def run_openlit(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop under ``openlit.init()`` (``openlit-bedrock``: its bedrock instrumentor,
    and the httpx one it also enables)."""
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    loop(scenario, tools, executed, tracer_provider.get_tracer("capture.app").start_as_current_span)


def loop(
    scenario: Scenario,
    tools: Tools,
    executed: list[str],
    root: Callable[[str], AbstractContextManager[Any]],
) -> None:
    """The Converse tool loop inside ``root("agent_run")`` (the application's own span), the
    boto3 client instrumented by the caller."""
    import boto3

    with FakeBedrock(scenario) as endpoint_url:
        client = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=endpoint_url,
            aws_access_key_id="capture-not-a-key",
            aws_secret_access_key="capture-not-a-secret",
        )
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": scenario.prompt}]}]
        with root("agent_run"):
            for _ in range(10):
                response = client.converse(
                    modelId=MODEL,
                    system=[{"text": scenario.system}],
                    messages=messages,
                    toolConfig=BEDROCK_TOOLS,
                    inferenceConfig={"maxTokens": 1024, "temperature": 0.0},
                )
                message = response["output"]["message"]
                uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
                if response["stopReason"] != "tool_use" or not uses:
                    break
                messages.append(message)
                messages.append(
                    {"role": "user", "content": [_tool_result(tools, executed, u) for u in uses]}
                )


def _tool_result(tools: Tools, executed: list[str], use: dict[str, Any]) -> dict[str, Any]:
    """Run one requested tool; a failure goes back with ``status: error``."""
    executed.append(use["name"])
    content = tools.call(use["name"], dict(use["input"]))
    parsed = json.loads(content)
    failed = isinstance(parsed, dict) and "error" in parsed
    block = {"json": parsed} if isinstance(parsed, dict) else {"text": content}
    result: dict[str, Any] = {"toolUseId": use["toolUseId"], "content": [block]}
    if failed:
        result["status"] = "error"
    return {"toolResult": result}
