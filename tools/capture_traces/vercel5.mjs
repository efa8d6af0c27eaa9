// Vercel AI SDK 5 agents (`Experimental_Agent` with `stopWhen: stepCountIs(10)`, `tool()` tools)
// on the SDK's OpenAI-compatible provider, the model being the scripted fake OpenAI server that
// fw_vercel5.py runs on 127.0.0.1 (generate calls the provider without streaming; with
// spec.stream the agents run through `agent.stream`, AI SDK's streamText, the provider streaming
// every call with its defaults: no `stream_options.include_usage`). Traced by
// the SDK's own `experimental_telemetry` (ai.* spans) on an OpenTelemetry tracer whose spans go
// to an in-memory exporter; they are written as the OTLP protobuf body and as OTLP/JSON.
// Called by fw_vercel5.py: node vercel5.mjs SPEC.json OUT_PREFIX
// SPEC = {system, prompt, baseURL, results: [{ok: value} | {raise: "Type: message"}],
//         content: true|false, agent, handoff: true|false, stream: true|false}
// Tool results are computed by fw_vercel5.py (scenarios.Tools) in call order; a failed call
// throws, as a real tool would: AI SDK 5 hands the model the error and goes on.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as ai from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Resource } from "@opentelemetry/resources";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";

// AI SDK 6 renamed Experimental_Agent to ToolLoopAgent (keeping the old name as an alias) and
// takes the system prompt as `instructions`, overwriting a `system` setting with it; AI SDK 5
// reads `system`. The same script runs on both, so a newer major can be captured as it is.
const { jsonSchema, stepCountIs, tool } = ai;
const Agent = ai.ToolLoopAgent ?? ai.Experimental_Agent;
const systemKey = ai.ToolLoopAgent ? "instructions" : "system";

const [specPath, outPrefix] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: new Resource({ "service.name": "capture-vercel-ai-sdk-5" }),
});
provider.addSpanProcessor(new SimpleSpanProcessor(memory));
const tracer = provider.getTracer("capture");
const telemetry = (functionId) => ({
  isEnabled: true, functionId, tracer, recordInputs: spec.content, recordOutputs: spec.content,
});

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
const schema = (props) => jsonSchema({ type: "object", properties: props, required: Object.keys(props) });
const str = { type: "string" };
const tools = {
  search_docs: tool({ description: "Search the knowledge base and return matching documents.", inputSchema: schema({ query: str }), execute: run("search_docs") }),
  delete_records: tool({ description: "Delete records from a database table.", inputSchema: schema({ table: str, where: str }), execute: run("delete_records") }),
  write_file: tool({ description: "Write a file in the workspace.", inputSchema: schema({ path: str, content: str }), execute: run("write_file") }),
  run_command: tool({ description: "Run a shell command in the workspace.", inputSchema: schema({ command: str }), execute: run("run_command") }),
};

const model = createOpenAICompatible({ name: "openai", baseURL: spec.baseURL, apiKey: "capture-not-a-key" })
  .chatModel("gpt-4o-mini");
const agent = (name, system, agentTools) => new Agent({
  model, [systemKey]: system, tools: agentTools, stopWhen: stepCountIs(10), temperature: 0,
  experimental_telemetry: telemetry(name),
});

// A run as the app makes it: `generate`, or `stream` with every part consumed as it arrives (a
// chat UI's way). A streamed run does not throw: an error is a part of the stream, and the
// result's promises reject once it ends without a step.
const answer = async (agent, prompt) => {
  if (!spec.stream) return agent.generate({ prompt });
  const streamed = await agent.stream({ prompt }); // AI SDK 6: a promise of the result
  let failed = null;
  for await (const part of streamed.fullStream) {
    if (part.type === "error") failed = part.error;
  }
  const text = await streamed.text;
  if (failed) throw failed;
  return { text };
};

let runner;
if (spec.handoff) {
  const research = agent("research_agent", spec.system, tools);
  runner = agent("triage_agent", "Hand research questions to research_agent.", {
    research_agent: tool({
      description: "Hand a research question to the research agent; returns its answer.",
      inputSchema: schema({ question: str }),
      execute: async ({ question }) => (await answer(research, question)).text,
    }),
  });
} else {
  runner = agent(spec.agent, spec.system, tools);
}
// A run that ends in an error (o_run_error: the model API failing) still writes its spans;
// the error is reported for the driver to check against the script.
let result = null;
let error = null;
try {
  result = await answer(runner, spec.prompt);
} catch (e) {
  error = `${e?.name}: ${e?.message}`;
}
await provider.forceFlush();
const spans = memory.getFinishedSpans();
mkdirSync(`${outPrefix}.raw`, { recursive: true });
writeFileSync(`${outPrefix}.raw/1.pb`, ProtobufTraceSerializer.serializeRequest(spans));
const body = JsonTraceSerializer.serializeRequest(spans);
writeFileSync(`${outPrefix}.otlp.json`, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
await provider.shutdown();
console.log(JSON.stringify({ executed, text: result?.text ?? null, error }));
