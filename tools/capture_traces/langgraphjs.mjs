// LangGraph.js prebuilt ReAct agents (createReactAgent from @langchain/langgraph/prebuilt, its
// ToolNode turning a thrown tool error into an error ToolMessage) on @langchain/openai's
// ChatOpenAI, the model being the scripted fake OpenAI server that fw_langgraphjs.py runs on
// 127.0.0.1. g_handoff is a @langchain/langgraph-swarm: a triage agent whose only tool is the
// library's transfer_to_research_agent handoff tool, and the research agent with the real tools.
// Traced by @arizeai/openinference-instrumentation-langchain (LangChain.js callbacks ->
// OpenInference spans) on the OpenTelemetry JS SDK, whose OTLP/HTTP protobuf exporter sends the
// spans to the capture's sink (the bodies are kept as sent); the same spans, held by an in-memory
// exporter beside it, are written as OTLP/JSON.
// Called by fw_langgraphjs.py: node langgraphjs.mjs SPEC.json OUT_PREFIX
// SPEC = {system, prompt, baseURL, results: [{ok: value} | {raise: "Type: message"}],
//         content: true|false, agent, handoff: true|false, otlp: "http://127.0.0.1:PORT"}
// Content off is OpenInference's trace config (hideInputs / hideOutputs / hideInputMessages /
// hideOutputMessages), the same switches as the OPENINFERENCE_HIDE_* variables.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { z } from "zod";

const [specPath, outPrefix] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

const memory = new InMemorySpanExporter();
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
const state = await graph.invoke(
  { messages: [{ role: "user", content: spec.prompt }] }, { recursionLimit: 25 },
);
await provider.forceFlush();
const spans = memory.getFinishedSpans();
mkdirSync(`${outPrefix}.raw`, { recursive: true });
const body = JsonTraceSerializer.serializeRequest(spans);
writeFileSync(`${outPrefix}.otlp.json`, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
await provider.shutdown();
const last = state.messages[state.messages.length - 1];
console.log(JSON.stringify({ executed, text: typeof last.content === "string" ? last.content : JSON.stringify(last.content) }));
