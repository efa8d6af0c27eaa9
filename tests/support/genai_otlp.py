"""Small OTLP/JSON agent runs in the otel-genai convention, for tests that need a trace file
the real CLI reads and no captured source has: one ``invoke_agent`` span with tool calls
under it, each call's arguments chosen by the test."""

from __future__ import annotations

TRACE_ID = "5b8efff798038103d269b633813fc60c"
T0 = 1_700_000_000_000_000_000


def attr(key: str, value: str) -> dict[str, object]:
    """One OTLP/JSON string attribute."""
    return {"key": key, "value": {"stringValue": value}}


def agent_run(calls: list[tuple[str, str]]) -> dict[str, object]:
    """An OTLP/JSON document of one ``support_agent`` run (service ``support-agent``) whose
    tool calls are ``calls``, each ``(tool name, arguments text)``, in order, ids ``call_N``."""
    spans: list[dict[str, object]] = [
        {
            "traceId": TRACE_ID,
            "spanId": "0000000000000001",
            "name": "invoke_agent support_agent",
            "startTimeUnixNano": str(T0),
            "endTimeUnixNano": str(T0 + 10**9),
            "attributes": [
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", "support_agent"),
            ],
        }
    ]
    for i, (tool, arguments) in enumerate(calls):
        spans.append(
            {
                "traceId": TRACE_ID,
                "spanId": f"{0x10 + i:016x}",
                "parentSpanId": "0000000000000001",
                "name": f"execute_tool {tool}",
                "startTimeUnixNano": str(T0 + 10 + 10 * i),
                "endTimeUnixNano": str(T0 + 15 + 10 * i),
                "attributes": [
                    attr("gen_ai.operation.name", "execute_tool"),
                    attr("gen_ai.tool.name", tool),
                    attr("gen_ai.tool.call.id", f"call_{i}"),
                    attr("gen_ai.tool.call.arguments", arguments),
                ],
            }
        )
    resource = {"attributes": [attr("service.name", "support-agent")]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}
