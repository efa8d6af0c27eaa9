// Vercel AI SDK legacy telemetry (ai 3.x-4.x `experimental_telemetry`: ai.* spans), captured
// with the SDK's own mock model. Called by capture.py: node vercel_legacy.mjs SPEC.json OUT.json
// SPEC = {name, system, prompt, turns: [[[tool, args], ...] | "final text"], results: [..],
//         content: true|false, functionId}
// Tool results are precomputed by capture.py (scenarios.Tools) in call order; a failed call
// returns {"error": "..."} as raw-client loops do (ai 4 aborts generateText on a throwing tool).
import { readFileSync, writeFileSync } from "node:fs";
import { generateText, tool, jsonSchema } from "ai";
import { MockLanguageModelV1 } from "ai/test";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Resource } from "@opentelemetry/resources";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";

const [specPath, outPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: new Resource({ "service.name": "capture-vercel-ai-sdk-legacy" }),
});
provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
const tracer = provider.getTracer("capture");

let turn = 0;
const model = new MockLanguageModelV1({
  provider: "openai.chat",
  modelId: "gpt-4o-mini",
  doGenerate: async () => {
    const step = spec.turns[Math.min(turn, spec.turns.length - 1)];
    const usage = { promptTokens: 60 + 40 * turn, completionTokens: 20 };
    const id = turn++;
    if (typeof step === "string") {
      return { rawCall: { rawPrompt: null, rawSettings: {} }, finishReason: "stop", usage, text: step };
    }
    return {
      rawCall: { rawPrompt: null, rawSettings: {} },
      finishReason: "tool-calls",
      usage,
      toolCalls: step.map(([name, args], j) => ({
        toolCallType: "function", toolCallId: `call_${id}_${j}`, toolName: name, args: JSON.stringify(args),
      })),
    };
  },
});

const executed = [];
const schema = (props) => jsonSchema({ type: "object", properties: props, required: Object.keys(props) });
const run = (name) => async () => {
  executed.push(name);
  return spec.results[executed.length - 1];
};
const str = { type: "string" };
const tools = {
  search_docs: tool({ description: "Search the knowledge base.", parameters: schema({ query: str }), execute: run("search_docs") }),
  delete_records: tool({ description: "Delete records.", parameters: schema({ table: str, where: str }), execute: run("delete_records") }),
  write_file: tool({ description: "Write a file.", parameters: schema({ path: str, content: str }), execute: run("write_file") }),
  run_command: tool({ description: "Run a command.", parameters: schema({ command: str }), execute: run("run_command") }),
};

await generateText({
  model, tools, maxSteps: 10, system: spec.system, prompt: spec.prompt,
  experimental_telemetry: {
    isEnabled: true, functionId: spec.functionId, tracer,
    recordInputs: spec.content, recordOutputs: spec.content,
  },
});
await provider.forceFlush();
const body = JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans());
writeFileSync(outPath, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
console.log(JSON.stringify(executed));
