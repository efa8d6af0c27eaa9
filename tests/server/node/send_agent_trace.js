// Sends GenAI agent traces to otel-oracles serve with the OpenTelemetry JS SDK
// (BatchSpanProcessor + @opentelemetry/exporter-trace-otlp-http, which speaks OTLP/JSON).
// Usage: node send_agent_trace.js <url of /v1/traces> <n traces> [bearer token]
// Prints {"traceIds": [...], "forbidden": [...]} on stdout once everything is exported.
// Every second trace also calls the forbidden tool delete_records.
"use strict";

const { trace, context, SpanKind, SpanStatusCode } = require("@opentelemetry/api");
const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const { Resource } = require("@opentelemetry/resources");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http");

async function main() {
  const [url, countArg, token] = process.argv.slice(2);
  const count = Number(countArg || "1");
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const exporter = new OTLPTraceExporter({ url, headers });
  const provider = new BasicTracerProvider({
    resource: new Resource({ "service.name": "node-support-agent" }),
  });
  provider.addSpanProcessor(new BatchSpanProcessor(exporter, { maxExportBatchSize: 7 }));
  const tracer = provider.getTracer("node-agent-test", "1.0.0");

  const traceIds = [];
  const forbidden = [];
  for (let i = 0; i < count; i++) {
    const root = tracer.startSpan("invoke_agent support", {
      kind: SpanKind.INTERNAL,
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support" },
    });
    const ctx = trace.setSpan(context.active(), root);
    const chat = tracer.startSpan(
      "chat gpt-4o-mini",
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-4o-mini",
          "gen_ai.usage.input_tokens": 120,
          "gen_ai.usage.output_tokens": 30,
        },
      },
      ctx,
    );
    chat.end();
    const tools = i % 2 === 1 ? ["search_docs", "delete_records"] : ["search_docs"];
    for (const tool of tools) {
      const span = tracer.startSpan(
        `execute_tool ${tool}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": `call_${i}_${tool}`,
            "gen_ai.tool.call.arguments": JSON.stringify({ query: "refund policy" }),
            "gen_ai.tool.call.result": JSON.stringify({ documents: ["doc-42"] }),
          },
        },
        ctx,
      );
      span.setStatus({ code: SpanStatusCode.OK });
      span.end();
    }
    root.end();
    const id = root.spanContext().traceId;
    traceIds.push(id);
    if (tools.includes("delete_records")) forbidden.push(id);
  }
  await provider.forceFlush();
  await provider.shutdown();
  process.stdout.write(JSON.stringify({ traceIds, forbidden }) + "\n");
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
