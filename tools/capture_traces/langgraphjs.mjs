// LangGraph.js prebuilt ReAct agents (createReactAgent from @langchain/langgraph/prebuilt, its
// ToolNode turning a thrown tool error into an error ToolMessage) on @langchain/openai's
// ChatOpenAI, the model being the scripted fake OpenAI server that the driver runs on
// 127.0.0.1. g_handoff is a @langchain/langgraph-swarm: a triage agent whose only tool is the
// library's transfer_to_research_agent handoff tool, and the research agent with the real tools.
// Traced by one of two LangChain.js tracers (spec.tracer), each exporting over OTLP/HTTP
// protobuf to the capture's sink (the bodies are kept as sent) while an in-memory exporter
// beside it gives the same spans, written as OTLP/JSON:
// - "openinference" (fw_langgraphjs.py): @arizeai/openinference-instrumentation-langchain on the
//   OpenTelemetry JS SDK; content off is OpenInference's trace config (hideInputs /
//   hideOutputs / hideInputMessages / hideOutputMessages, the OPENINFERENCE_HIDE_* switches);
// - "openllmetry" (fw_langgraphjs.py:run_openllmetry): Traceloop's @traceloop/node-server-sdk
//   (OpenLLMetry JS, traceloop.initialize) with its LangChain instrumentation, its span
//   processor given an OTLP/HTTP protobuf exporter to the sink; content off is its
//   traceContent option (TRACELOOP_TRACE_CONTENT).
// Called by the driver: node langgraphjs.mjs SPEC.json OUT_PREFIX
// SPEC = {system, prompt, baseURL, results: [{ok: value} | {raise: "Type: message"}],
//         content: true|false, agent, handoff: true|false, otlp: "http://127.0.0.1:PORT",
//         tracer: "openinference" | "openllmetry", stream: true|false}
// With spec.stream the graph runs through `graph.stream(..., {streamMode: ["messages",
// "values"]})`, a chat UI's way: the messages mode makes ChatOpenAI stream every call (its
// defaults), the chunks are consumed as they arrive and the last values chunk is the state.
// The tracers are imported by name, so a node project needs only the one it runs.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { z } from "zod";

const [specPath, outPrefix] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
const memory = new InMemorySpanExporter();

// Each sets its tracer up and returns {run, flush, shutdown}: run(fn) runs the graph as the
// tracer's users do, flush and shutdown end it (shutting down clears the in-memory exporter, so
// the spans are read between the two).
const tracers = {
  async openinference() {
    const { NodeTracerProvider } = await import("@opentelemetry/sdk-trace-node");
    const { BatchSpanProcessor, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
    const { resourceFromAttributes } = await import("@opentelemetry/resources");
    const { LangChainInstrumentation } = await import("@arizeai/openinference-instrumentation-langchain");
    const CallbackManagerModule = await import("@langchain/core/callbacks/manager");
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ "service.name": "capture-langgraphjs-openinference" }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` })),
        new SimpleSpanProcessor(memory),
      ],
    });
    provider.register();
    const hide = !spec.content;
    const instrumentation = new LangChainInstrumentation({
      tracerProvider: provider,
      traceConfig: { hideInputs: hide, hideOutputs: hide, hideInputMessages: hide, hideOutputMessages: hide },
    });
    instrumentation.manuallyInstrument(CallbackManagerModule);
    return { run: (fn) => fn(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
  async openllmetry() {
    const traceloop = await import("@traceloop/node-server-sdk");
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
    const otlp = new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` });
    // One exporter handing every batch to both: the sink's bodies and the JSON hold the same
    // spans, after Traceloop's own span processor has filtered and completed them.
    const tee = {
      export(spans, done) { memory.export(spans, () => {}); otlp.export(spans, done); },
      forceFlush: () => otlp.forceFlush(),
      shutdown: () => otlp.shutdown(),
    };
    traceloop.initialize({
      appName: "capture-openllmetry-js", exporter: tee, traceContent: spec.content,
      traceloopSyncEnabled: false, silenceInitializationMessage: true, logLevel: "error",
    });
    // The SDK's documented way to name the agent running (its withAgent wrapper, as the Python
    // SDK's @agent decorator in the traceloop-sdk source): the run is one agent span, which
    // the LangChain spans, started in its context, share a trace with.
    const agent = spec.handoff ? "triage_agent" : spec.agent;
    return {
      run: (fn) => traceloop.withAgent({ name: agent }, fn),
      flush: () => traceloop.forceFlush(),
      shutdown: () => otlp.shutdown(),
    };
  },
};
const tracing = await tracers[spec.tracer ?? "openinference"]();

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
  return JSON.stringify(result?.ok);
};
const tools = [
  tool(run("search_docs"), {
    name: "search_docs", description: "Search the knowledge base and return matching documents.",
    schema: z.object({ query: z.string() }),
  }),
  tool(run("delete_records"), {
    name: "delete_records", description: "Delete records from a database table.",
    schema: z.object({ table: z.string(), where: z.string() }),
  }),
  tool(run("write_file"), {
    name: "write_file", description: "Write a file in the workspace.",
    schema: z.object({ path: z.string(), content: z.string() }),
  }),
  tool(run("run_command"), {
    name: "run_command", description: "Run a shell command in the workspace.",
    schema: z.object({ command: z.string() }),
  }),
];

const llm = new ChatOpenAI({
  model: "gpt-4o-mini", temperature: 0, apiKey: "capture-not-a-key",
  configuration: { baseURL: spec.baseURL },
});
const toolNode = new ToolNode(tools, { handleToolErrors: true });
let graph;
if (spec.handoff) {
  const handoff = createHandoffTool({
    agentName: "research_agent", description: "Hand research questions to the research agent.",
  });
  const triage = createReactAgent({
    llm, tools: [handoff], prompt: "Hand research questions off.", name: "triage_agent",
  });
  const research = createReactAgent({ llm, tools: toolNode, prompt: spec.system, name: "research_agent" });
  graph = createSwarm({ agents: [triage, research], defaultActiveAgent: "triage_agent" }).compile();
} else {
  graph = createReactAgent({ llm, tools: toolNode, prompt: spec.system, name: spec.agent });
}
const input = { messages: [{ role: "user", content: spec.prompt }] };
const streamed = async () => {
  let last = null;
  for await (const [mode, chunk] of await graph.stream(
    input, { recursionLimit: 25, streamMode: ["messages", "values"] },
  )) {
    if (mode === "values") last = chunk;
  }
  return last;
};
const state = await tracing.run(() => (spec.stream ? streamed() : graph.invoke(input, { recursionLimit: 25 })));
await tracing.flush();
const spans = memory.getFinishedSpans();
mkdirSync(`${outPrefix}.raw`, { recursive: true });
const body = JsonTraceSerializer.serializeRequest(spans);
writeFileSync(`${outPrefix}.otlp.json`, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
await tracing.shutdown();
const last = state.messages[state.messages.length - 1];
console.log(JSON.stringify({ executed, text: typeof last.content === "string" ? last.content : JSON.stringify(last.content) }));
