// Strands Agents for TypeScript (@strands-agents/sdk): one scenario variant, for the strands-js
// capture sources. Called by fw_strands_js.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, baseURL,
//         otlp: "http://127.0.0.1:PORT", calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The model is Strands' OpenAIModel on its default API, OpenAI Responses (streamed), with its
// baseURL on the scripted fake Responses server (Strands 1.19's Chat Completions adapter keeps
// only the last of several tool calls streamed in one turn, so it cannot run the parallel
// scenarios). Tools are Strands tool() tools (zod schemas)
// returning or throwing what the script says. g_handoff: the research agent handed to the
// triage agent as a tool (Agent.asTool, its single `input` argument).
// Telemetry is Strands' own: its Tracer takes the global tracer provider, here a
// NodeTracerProvider registered with a batch processor and an OTLP/HTTP protobuf exporter to
// the capture's sink. Strands reads OTEL_SEMCONV_STABILITY_OPT_IN (set by the driver) when an
// Agent is built.
// Prints one JSON line: {text, author, executed}.
import { readFileSync } from "node:fs";
import { Agent, tool } from "@strands-agents/sdk";
import { OpenAIModel } from "@strands-agents/sdk/models/openai";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { z } from "zod";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": spec.agent }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }))],
});
provider.register();

const queues = new Map();
for (const call of spec.calls) {
  queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
}
const executed = [];
const execute = (name) => async () => {
  executed.push(name);
  const call = queues.get(name)?.shift();
  if (!call) throw new Error(`no scripted result left for ${name}`);
  if ("raise" in call) throw new Error(call.raise);
  return call.ok;
};

const define = (name, description, inputSchema) =>
  tool({ name, description, inputSchema: z.object(inputSchema), callback: execute(name) });
const tools = [
  define("search_docs", "Search the knowledge base and return matching documents.",
    { query: z.string().describe("What to look for.") }),
  define("delete_records", "Delete records from a database table.", {
    table: z.string().describe("The table to delete from."),
    where: z.string().describe("SQL condition selecting the rows."),
  }),
  define("write_file", "Write a file in the workspace.", {
    path: z.string().describe("File path relative to the workspace."),
    content: z.string().describe("The whole new file content."),
  }),
  define("run_command", "Run a shell command in the workspace.",
    { command: z.string().describe("The command line to run.") }),
];

const model = () => new OpenAIModel({
  modelId: spec.model, apiKey: "capture-not-a-key",
  clientConfig: { baseURL: spec.baseURL },
});
let root;
if (spec.handoff) {
  const research = new Agent({
    name: "research_agent", description: "Answers research questions with citations.",
    systemPrompt: spec.system, model: model(), tools, printer: false,
  });
  root = new Agent({
    name: "triage_agent", systemPrompt: "Hand research questions to research_agent.",
    model: model(), tools: [research.asTool({ name: "research_agent" })], printer: false,
  });
} else {
  root = new Agent({
    name: spec.agent, systemPrompt: spec.system, model: model(), tools, printer: false,
  });
}

const result = await root.invoke(spec.prompt);
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ text: result.toString().trim(), author: root.name, executed }));
