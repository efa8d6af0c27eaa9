// The hand-written Messages API tool loop of the raw Anthropic sources (fw_anthropic.py), on the
// Anthropic TypeScript SDK (@anthropic-ai/sdk), traced by a JavaScript tracing SDK in the way it
// documents for an application of its own: for the *-anthropic-js capture sources.
// Called by fw_anthropic_js.py: node loop.mjs SPEC.json
// SPEC = {tracer: "openinference" | "openllmetry", system, prompt, agent, handoff: true|false,
//         model, baseURL, otlp: "http://127.0.0.1:PORT", content: true|false,
//         tools: [chat-completions tool schemas], transfer: schema,
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The run is one agent function, each tool a function that really runs (a failing search
// throws; the loop hands the model a tool_result block with is_error: true and
// {"error": "<Type>: <message>"} as its text, and goes on), and g_handoff a triage agent whose
// transfer_to_research_agent tool runs a research agent that continues the conversation.
// The tracer wraps the agent and tool functions and records the model calls:
// - "openinference": @arizeai/openinference-instrumentation-anthropic (manuallyInstrument on
//   the SDK's module) for the model calls, @arizeai/openinference-core's traceAgent /
//   traceTool for the functions, all on one OITracer whose traceConfig hides inputs, outputs
//   and messages when content is off.
// - "openllmetry": @traceloop/node-server-sdk (traceloop.initialize with instrumentModules
//   {anthropic}) for the model calls, its withAgent / withTool wrappers for the functions;
//   content off is traceContent: false. Its Anthropic instrumentation (0.27) wraps
//   Anthropic.Completions, which the SDK's 1.x releases no longer have (initialize throws on
//   1.16), so this tracer runs the last 0.x SDK, installed under the alias anthropic-sdk-0.
// Both export OTLP/HTTP protobuf to the capture's sink.
// Prints one JSON line: {text, executed} (the final answer and the tools that really ran).
import { readFileSync } from "node:fs";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const TRANSFER = spec.transfer.function.name;
const rootName = spec.handoff ? "triage_agent" : spec.agent;
const resource = resourceFromAttributes({ "service.name": rootName });
const exporter = () => new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` });
const anthropicModule = await import(
  spec.tracer === "openllmetry" ? "anthropic-sdk-0" : "@anthropic-ai/sdk");
const Anthropic = anthropicModule.default;
const newClient = () =>
  new Anthropic({ baseURL: spec.baseURL, apiKey: "capture-not-a-key", maxRetries: 0 });

const tracers = {
  async openinference() {
    const { AnthropicInstrumentation } = await import(
      "@arizeai/openinference-instrumentation-anthropic");
    const { OITracer, traceAgent, traceTool } = await import("@arizeai/openinference-core");
    const provider = new NodeTracerProvider({
      resource, spanProcessors: [new BatchSpanProcessor(exporter())],
    });
    provider.register();
    const hide = !spec.content;
    const traceConfig = {
      hideInputs: hide, hideOutputs: hide, hideInputMessages: hide, hideOutputMessages: hide,
    };
    new AnthropicInstrumentation({ tracerProvider: provider, traceConfig })
      .manuallyInstrument(anthropicModule);
    const tracer = new OITracer({ tracer: provider.getTracer("support-app"), traceConfig });
    return {
      client: newClient(),
      agent: (name, fn) => traceAgent(fn, { name, tracer }),
      tool: (name, fn) => traceTool(fn, { name, tracer }),
      shutdown: async () => { await provider.forceFlush(); await provider.shutdown(); },
    };
  },
  async openllmetry() {
    const traceloop = await import("@traceloop/node-server-sdk");
    traceloop.initialize({
      appName: rootName, exporter: exporter(), traceContent: spec.content,
      instrumentModules: { anthropic: anthropicModule }, traceloopSyncEnabled: false,
      silenceInitializationMessage: true, logLevel: "error",
    });
    return {
      client: newClient(),
      agent: (name, fn) => (...args) => traceloop.withAgent({ name }, fn, ...args),
      tool: (name, fn) => (...args) => traceloop.withTool({ name }, fn, ...args),
      shutdown: async () => { await traceloop.forceFlush(); },
    };
  },
};
const tracing = await tracers[spec.tracer]();

// The scenarios' tools in the Messages API's own tool format.
const asTool = (schema) => ({
  name: schema.function.name, description: schema.function.description,
  input_schema: schema.function.parameters,
});

const queues = new Map();
for (const call of spec.calls) {
  queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
}
const executed = [];
const toolFunction = (name) => tracing.tool(name, async (args) => {
  executed.push(name);
  const call = queues.get(name)?.shift();
  if (!call) throw new Error(`no scripted result left for ${name}`);
  if ("raise" in call) throw new Error(call.raise);
  return call.ok;
});
const tools = Object.fromEntries(spec.tools.map((t) => [t.function.name, toolFunction(t.function.name)]));

async function loop(messages, schemas) {
  for (let i = 0; i < 10; i++) {
    const response = await tracing.client.messages.create({
      model: spec.model, max_tokens: 1024, system: spec.system, messages,
      tools: schemas.map(asTool),
    });
    const uses = response.content.filter((block) => block.type === "tool_use");
    if (response.stop_reason !== "tool_use" || !uses.length) {
      return response.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    }
    messages.push({ role: "assistant", content: response.content });
    const results = [];
    for (const use of uses) {
      if (use.name === TRANSFER) return transfer(messages, results, use.id);
      const block = { type: "tool_result", tool_use_id: use.id };
      try {
        block.content = JSON.stringify(await tools[use.name](use.input));
      } catch (error) {
        block.content = JSON.stringify({ error: error.message });
        block.is_error = true;
      }
      results.push(block);
    }
    messages.push({ role: "user", content: results });
  }
  throw new Error("no final answer after 10 model calls");
}

const researchAgent = tracing.agent("research_agent", (messages) => loop(messages, spec.tools));
const transferTool = tracing.tool(TRANSFER, (messages, results, useId) => {
  results.push({ type: "tool_result", tool_use_id: useId, content: "transferred" });
  messages.push({ role: "user", content: results });
  return researchAgent(messages);
});
const transfer = (messages, results, useId) => transferTool(messages, results, useId);

const start = tracing.agent(rootName, (prompt) => {
  const messages = [{ role: "user", content: prompt }];
  return loop(messages, spec.handoff ? [spec.transfer] : spec.tools);
});
const text = await start(spec.prompt);
await tracing.shutdown();
console.log(JSON.stringify({ text, executed }));
