// VoltAgent (@voltagent/core): one scenario variant, for the voltagent capture source.
// Called by fw_voltagent.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, baseURL,
//         otlp: "http://127.0.0.1:PORT", calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The model is the AI SDK's @ai-sdk/openai-compatible chat model with its baseURL on the
// scripted fake OpenAI server. Tools are createTool() tools returning or throwing what the
// script says. g_handoff: a supervisor whose subAgents hold the research agent; VoltAgent gives
// it the delegate_task tool ({task, targetAgents}).
// Telemetry is VoltAgent's own observability (VoltAgentObservability: its NodeTracerProvider),
// handed an OTLP/HTTP protobuf exporter to the capture's sink as an extra span processor.
// NODE_ENV=production (set by the driver) keeps VoltAgent from fetching the models.dev
// registry at import: the run makes no request but to 127.0.0.1.
// Prints one JSON line: {text, author, executed}.
import { readFileSync } from "node:fs";
import { Agent, VoltAgentObservability, createTool } from "@voltagent/core";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { z } from "zod";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }));
const observability = new VoltAgentObservability({
  serviceName: spec.agent, spanProcessors: [processor],
});

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

const define = (name, description, parameters) =>
  createTool({ name, description, parameters: z.object(parameters), execute: execute(name) });
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

const provider = createOpenAICompatible({
  name: "openai", baseURL: spec.baseURL, apiKey: "capture-not-a-key",
});
const model = provider.chatModel(spec.model);
let root;
if (spec.handoff) {
  const research = new Agent({
    name: "research_agent", purpose: "Answers research questions with citations.",
    instructions: spec.system, model, tools, observability, maxSteps: 10,
  });
  root = new Agent({
    name: "triage_agent", instructions: "Delegate research questions to research_agent.",
    model, subAgents: [research], observability, maxSteps: 10,
  });
} else {
  root = new Agent({
    name: spec.agent, instructions: spec.system, model, tools, observability, maxSteps: 10,
  });
}

const result = await root.generateText(spec.prompt);
await observability.forceFlush();
await observability.shutdown();
console.log(JSON.stringify({ text: result.text?.trim() ?? null, author: root.name, executed }));
// VoltAgent keeps timers of its own alive after the run; the spans are exported by now.
process.exit(0);
