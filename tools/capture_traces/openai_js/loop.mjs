// The hand-written chat-completions tool loop of the raw sources (decorated_loop.py), on the
// openai client for JavaScript, traced by one of three JavaScript tracing SDKs in the way each
// documents for an application of its own: for the *-openai-js capture sources.
// Called by fw_openai_js.py: node loop.mjs SPEC.json
// SPEC = {tracer: "openinference" | "langfuse" | "openllmetry", system, prompt, agent,
//         handoff: true|false, model, baseURL, otlp: "http://127.0.0.1:PORT",
//         content: true|false, tools: [chat-completions tool schemas], transfer: schema,
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}],
//         killed: true, journal: FILE (z_killed_*, openinference only: simple span processor,
//         each executed tool appended to FILE as it runs; the fake model SIGKILLs the run)}
// The run is one agent function, each tool a function that really runs (a failing search
// throws; the loop hands the model {"error": "<Type>: <message>"} and goes on), and g_handoff a
// triage agent whose transfer_to_research_agent tool runs a research agent that continues the
// conversation. The tracer wraps the agent and tool functions and records the model calls:
// - "openinference": @arizeai/openinference-instrumentation-openai (manuallyInstrument on the
//   openai module) for the model calls, @arizeai/openinference-core's traceAgent / traceTool
//   for the functions, all on one OITracer whose traceConfig hides inputs, outputs and
//   messages when content is off.
// - "langfuse": @langfuse/openai's observeOpenAI(client) for the model calls (generations),
//   @langfuse/tracing's observe(fn, {asType: "agent" | "tool"}) for the functions, exported by
//   @langfuse/otel's LangfuseSpanProcessor; content off is its mask, returning nothing for
//   every value, with captureInput / captureOutput false on the observed functions.
// - "openllmetry": @traceloop/node-server-sdk (traceloop.initialize with instrumentModules
//   {openAI}) for the model calls, its withAgent / withTool wrappers for the functions;
//   content off is traceContent: false.
// Every tracer exports OTLP/HTTP protobuf to the capture's sink (Langfuse at the path a
// Langfuse server takes, /api/public/otel/v1/traces).
// Prints one JSON line: {text, executed} (the final answer and the tools that really ran).
import { appendFileSync, readFileSync } from "node:fs";
import * as openaiModule from "openai";
import OpenAI from "openai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const TRANSFER = spec.transfer.function.name;
const rootName = spec.handoff ? "triage_agent" : spec.agent;
const resource = resourceFromAttributes({ "service.name": rootName });
const exporter = (path) => new OTLPTraceExporter({ url: `${spec.otlp}${path}` });
// A killed run (z_killed_*): each span is exported as it ends, as an agent exporting with a
// simple span processor does, and each tool is journalled as it runs (no report at the end).
const processor = (path) =>
  spec.killed ? new SimpleSpanProcessor(exporter(path)) : new BatchSpanProcessor(exporter(path));

const tracers = {
  async openinference() {
    const { OpenAIInstrumentation } = await import(
      "@arizeai/openinference-instrumentation-openai");
    const { OITracer, traceAgent, traceTool } = await import("@arizeai/openinference-core");
    const provider = new NodeTracerProvider({
      resource, spanProcessors: [processor("/v1/traces")],
    });
    provider.register();
    const hide = !spec.content;
    const traceConfig = {
      hideInputs: hide, hideOutputs: hide, hideInputMessages: hide, hideOutputMessages: hide,
    };
    new OpenAIInstrumentation({ tracerProvider: provider, traceConfig })
      .manuallyInstrument(openaiModule);
    const tracer = new OITracer({ tracer: provider.getTracer("support-app"), traceConfig });
    return {
      client: new OpenAI({ baseURL: spec.baseURL, apiKey: "capture-not-a-key" }),
      agent: (name, fn) => traceAgent(fn, { name, tracer }),
      tool: (name, fn) => traceTool(fn, { name, tracer }),
      shutdown: async () => { await provider.forceFlush(); await provider.shutdown(); },
    };
  },
  async langfuse() {
    const { LangfuseSpanProcessor } = await import("@langfuse/otel");
    const { observe } = await import("@langfuse/tracing");
    const { observeOpenAI } = await import("@langfuse/openai");
    const processor = new LangfuseSpanProcessor({
      publicKey: "pk-lf-capture", secretKey: "sk-lf-capture", baseUrl: spec.otlp,
      exporter: exporter("/api/public/otel/v1/traces"),
      ...(spec.content ? {} : { mask: () => undefined }),
    });
    const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
    provider.register();
    const capture = { captureInput: spec.content, captureOutput: spec.content };
    return {
      client: observeOpenAI(new OpenAI({ baseURL: spec.baseURL, apiKey: "capture-not-a-key" })),
      agent: (name, fn) => observe(fn, { name, asType: "agent", ...capture }),
      tool: (name, fn) => observe(fn, { name, asType: "tool", ...capture }),
      shutdown: async () => { await processor.forceFlush(); await provider.shutdown(); },
    };
  },
  async openllmetry() {
    const traceloop = await import("@traceloop/node-server-sdk");
    traceloop.initialize({
      appName: rootName, exporter: exporter("/v1/traces"), traceContent: spec.content,
      instrumentModules: { openAI: OpenAI }, traceloopSyncEnabled: false,
      silenceInitializationMessage: true, logLevel: "error",
    });
    return {
      client: new OpenAI({ baseURL: spec.baseURL, apiKey: "capture-not-a-key" }),
      agent: (name, fn) => (...args) => traceloop.withAgent({ name }, fn, ...args),
      tool: (name, fn) => (...args) => traceloop.withTool({ name }, fn, ...args),
      shutdown: async () => { await traceloop.forceFlush(); },
    };
  },
};
const tracing = await tracers[spec.tracer]();

// Calls requested in one model turn run in order, but results queue per tool name anyway.
const queues = new Map();
for (const call of spec.calls) {
  queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
}
const executed = [];
const toolFunction = (name) => tracing.tool(name, async (args) => {
  executed.push(name);
  if (spec.killed) appendFileSync(spec.journal, `${name}\n`);
  const call = queues.get(name)?.shift();
  if (!call) throw new Error(`no scripted result left for ${name}`);
  if ("raise" in call) throw new Error(call.raise);
  return call.ok;
});
const tools = Object.fromEntries(spec.tools.map((t) => [t.function.name, toolFunction(t.function.name)]));

async function loop(messages, schemas) {
  for (let i = 0; i < 10; i++) {
    const response = await tracing.client.chat.completions.create({
      model: spec.model, messages, tools: schemas, temperature: 0,
    });
    const message = response.choices[0].message;
    if (!message.tool_calls?.length) return message.content ?? "";
    messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    for (const call of message.tool_calls) {
      const name = call.function.name;
      const args = JSON.parse(call.function.arguments);
      if (name === TRANSFER) return transfer(messages, call.id);
      let result;
      try {
        result = JSON.stringify(await tools[name](args));
      } catch (error) {
        result = JSON.stringify({ error: error.message });
      }
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
  }
  throw new Error("no final answer after 10 model calls");
}

const researchAgent = tracing.agent("research_agent", (messages) => loop(messages, spec.tools));
const transferTool = tracing.tool(TRANSFER, (messages, callId) => {
  messages.push({ role: "tool", tool_call_id: callId, content: "transferred" });
  return researchAgent(messages);
});
const transfer = (messages, callId) => transferTool(messages, callId);

const start = tracing.agent(rootName, (prompt) => {
  const messages = [{ role: "system", content: spec.system }, { role: "user", content: prompt }];
  return loop(messages, spec.handoff ? [spec.transfer] : spec.tools);
});
const text = await start(spec.prompt);
await tracing.shutdown();
console.log(JSON.stringify({ text, executed }));
