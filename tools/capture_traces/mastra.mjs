// Mastra (@mastra/core Agent, createTool tools) on the AI SDK's OpenAI-compatible provider, the
// model being the scripted fake OpenAI server that fw_mastra.py runs on 127.0.0.1 (Agent.generate
// calls the provider without streaming; with spec.stream the run is Agent.stream, its fullStream
// consumed as it arrives, the provider streaming every call with its defaults: no
// `stream_options.include_usage`). Traced by Mastra's own observability with the real
// @mastra/otel-exporter, whose span processor hands the converted OTel spans to an in-memory
// exporter; they are written as the OTLP protobuf body and as OTLP/JSON.
// Called by fw_mastra.py: node mastra.mjs SPEC.json OUT_PREFIX
// SPEC = {system, prompt, baseURL, results: [{ok: value} | {raise: "Type: message"}],
//         content: true|false, agent, handoff: true|false, stream: true|false}
// Tool results are computed by fw_mastra.py (scenarios.Tools) in call order; a failed call
// throws, as a real tool would, and Mastra hands the model the error.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { z } from "zod";

const [specPath, outPrefix] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

const executed = [];
const run = (name) => async () => {
  executed.push(name);
  const result = spec.results[executed.length - 1];
  if (result && "raise" in result) {
    const [type, ...rest] = result.raise.split(": ");
    const error = new Error(rest.join(": "));
    error.name = type;
    throw error;
  }
  return result?.ok;
};
const tools = {
  search_docs: createTool({
    id: "search_docs", description: "Search the knowledge base and return matching documents.",
    inputSchema: z.object({ query: z.string() }), execute: run("search_docs"),
  }),
  delete_records: createTool({
    id: "delete_records", description: "Delete records from a database table.",
    inputSchema: z.object({ table: z.string(), where: z.string() }), execute: run("delete_records"),
  }),
  write_file: createTool({
    id: "write_file", description: "Write a file in the workspace.",
    inputSchema: z.object({ path: z.string(), content: z.string() }), execute: run("write_file"),
  }),
  run_command: createTool({
    id: "run_command", description: "Run a shell command in the workspace.",
    inputSchema: z.object({ command: z.string() }), execute: run("run_command"),
  }),
};

const provider = createOpenAICompatible({ name: "openai", baseURL: spec.baseURL, apiKey: "capture-not-a-key" });
const model = provider.chatModel("gpt-4o-mini");
const agents = {};
if (spec.handoff) {
  agents.research_agent = new Agent({
    id: "research_agent", name: "research_agent", description: "Answers research questions from the document search.",
    instructions: spec.system, model, tools,
  });
  agents.triage_agent = new Agent({
    id: "triage_agent", name: "triage_agent", instructions: "Hand research questions to research_agent.",
    model, agents: { research_agent: agents.research_agent },
  });
} else {
  agents[spec.agent] = new Agent({ id: spec.agent, name: spec.agent, instructions: spec.system, model, tools });
}

const memory = new InMemorySpanExporter();
const otel = new OtelExporter({
  provider: { custom: { endpoint: "http://127.0.0.1:9/unused", protocol: "http/protobuf" } },
  exporter: memory, signals: { traces: true, logs: false },
});
const mastra = new Mastra({
  agents, logger: false,
  observability: new Observability({ configs: { otel: { serviceName: "capture-mastra", exporters: [otel] } } }),
});

const agent = mastra.getAgent(spec.handoff ? "triage_agent" : spec.agent);
// A run that ends in an error (o_run_error: the model API failing) still writes its spans;
// the error is reported for fw_mastra.py to check against the script.
let result = null;
let error = null;
const options = {
  maxSteps: 10,
  tracingOptions: { hideInput: !spec.content, hideOutput: !spec.content },
};
try {
  if (spec.stream) {
    // A streamed run does not throw: an error is a chunk of the stream, kept on the output.
    const streamed = await agent.stream(spec.prompt, options);
    let failed = null;
    for await (const chunk of streamed.fullStream) {
      if (chunk.type === "error") failed = chunk.payload?.error ?? chunk.payload;
    }
    failed ??= streamed.error;
    if (failed) throw failed instanceof Error ? failed : new Error(String(failed));
    result = { text: await streamed.text };
  } else {
    result = await agent.generate(spec.prompt, options);
  }
} catch (e) {
  error = `${e?.name}: ${e?.message}`;
}
await otel.flush();
const spans = memory.getFinishedSpans();
mkdirSync(`${outPrefix}.raw`, { recursive: true });
writeFileSync(`${outPrefix}.raw/1.pb`, ProtobufTraceSerializer.serializeRequest(spans));
const body = JsonTraceSerializer.serializeRequest(spans);
writeFileSync(`${outPrefix}.otlp.json`, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
await otel.shutdown();
console.log(JSON.stringify({ executed, text: result?.text ?? null, error }));
