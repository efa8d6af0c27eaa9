// OpenAI Agents SDK for JavaScript (@openai/agents) traced by OpenInference's trace processor:
// one scenario variant, for the openai-agents-js capture source.
// Called by fw_openai_agents_js.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, transfersBack: true|false, model,
//         baseURL, otlp: "http://127.0.0.1:PORT", content: true|false,
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The model is the SDK's OpenAIChatCompletionsModel on an OpenAI client whose baseURL is the
// scripted fake server on 127.0.0.1. Tools are the SDK's tool() returning or throwing what the
// script says: a failing search throws, and the SDK's default error function hands the model
// its error text. g_handoff / n_handback: the SDK's native handoffs (transfer_to_research_agent,
// and transfer_to_triage_agent back when transfersBack is set).
// Telemetry: OpenInference's OpenAIAgentsInstrumentation registers its trace processor on the
// SDK (exclusive: no export to OpenAI's tracing backend) and turns the SDK's spans into
// OpenTelemetry spans on a tracer provider whose OTLP/HTTP protobuf exporter sends to the
// capture's sink. Content off is OpenInference's traceConfig (hide inputs, outputs and
// messages), the same switch as the Python openinference-openai-agents source.
// Prints one JSON line: {text, author, executed} (the final answer, the agent that gave it,
// and the tools that really ran, in order).
import { readFileSync } from "node:fs";
import * as agents from "@openai/agents";
import { Agent, OpenAIChatCompletionsModel, run, tool } from "@openai/agents";
import { OpenAIAgentsInstrumentation } from "@arizeai/openinference-instrumentation-openai-agents";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import OpenAI from "openai";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": spec.agent }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }))],
});
const hidden = !spec.content;
new OpenAIAgentsInstrumentation({
  tracerProvider: provider,
  traceConfig: {
    hideInputs: hidden, hideOutputs: hidden, hideInputMessages: hidden, hideOutputMessages: hidden,
  },
}).manuallyInstrument(agents);

// Calls requested in one model turn may run in any order, so results queue per tool name.
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
  return JSON.stringify(call.ok);
};

const string = (description) => ({ type: "string", description });
const object = (properties) => ({
  type: "object", properties, required: Object.keys(properties), additionalProperties: false,
});
const define = (name, description, properties) =>
  tool({ name, description, parameters: object(properties), strict: true, execute: execute(name) });
const tools = [
  define("search_docs", "Search the knowledge base and return matching documents.",
    { query: string("What to look for.") }),
  define("delete_records", "Delete records from a database table.", {
    table: string("The table to delete from."), where: string("SQL condition selecting the rows."),
  }),
  define("write_file", "Write a file in the workspace.", {
    path: string("File path relative to the workspace."),
    content: string("The whole new file content."),
  }),
  define("run_command", "Run a shell command in the workspace.",
    { command: string("The command line to run.") }),
];

const client = new OpenAI({ baseURL: spec.baseURL, apiKey: "capture-not-a-key" });
const model = new OpenAIChatCompletionsModel(client, spec.model);
let root;
if (spec.handoff) {
  const research = new Agent({
    name: "research_agent", handoffDescription: "Answers research questions with citations.",
    instructions: spec.system, model, tools,
  });
  root = new Agent({
    name: "triage_agent", instructions: "Hand research questions off.", model,
    handoffs: [research],
  });
  if (spec.transfersBack) research.handoffs = [root];
} else {
  root = new Agent({ name: spec.agent, instructions: spec.system, model, tools });
}

const result = await run(root, spec.prompt, { maxTurns: 10 });
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({
  text: typeof result.finalOutput === "string" ? result.finalOutput.trim() : null,
  author: result.lastAgent?.name ?? null,
  executed,
}));
