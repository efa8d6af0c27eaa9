// Google ADK for TypeScript (@google/adk): one scenario variant, for the adk-js capture source.
// Called by fw_adk_js.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, otlp: "http://127.0.0.1:PORT",
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The model is ADK's Gemini class; @google/genai reads GOOGLE_GEMINI_BASE_URL (set by the
// driver to the scripted fake Gemini server on 127.0.0.1). Tools are FunctionTools returning or
// throwing what the script says: a failing search throws, and ADK itself hands the model
// {"error": "Error in tool 'search_docs': SearchBackendError: ..."} (no callback needed).
// g_handoff / n_handback: a triage agent with the research agent as sub-agent, the model
// calling ADK's built-in transfer_to_agent (fw_adk.script).
// Telemetry is ADK's own: its spans go to the global tracer provider, which ADK's
// maybeSetOtelProviders sets up with the span processors it is given, here an OTLP/HTTP
// protobuf exporter sending to the capture's sink. Content capture is ADK's
// ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS, read from the environment at each span.
// Prints one JSON line: {text, author, executed} (the final answer, the agent that gave it,
// and the tools that really ran, in order).
import { readFileSync } from "node:fs";
import {
  FunctionTool, Gemini, InMemoryRunner, LlmAgent, isFinalResponse, maybeSetOtelProviders,
} from "@google/adk";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }));
maybeSetOtelProviders(
  [{ spanProcessors: [processor] }],
  resourceFromAttributes({ "service.name": spec.agent }),
);

// Calls requested in one model turn may run in any order, so results queue per tool name.
const queues = new Map();
for (const call of spec.calls) {
  queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
}
const executed = [];
const run = (name) => async () => {
  executed.push(name);
  const call = queues.get(name)?.shift();
  if (!call) throw new Error(`no scripted result left for ${name}`);
  if ("raise" in call) throw new Error(call.raise);
  return call.ok;
};

const string = (description) => ({ type: "STRING", description });
const object = (properties) => ({
  type: "OBJECT", properties, required: Object.keys(properties),
});
const tools = [
  new FunctionTool({
    name: "search_docs", description: "Search the knowledge base and return matching documents.",
    parameters: object({ query: string("What to look for.") }), execute: run("search_docs"),
  }),
  new FunctionTool({
    name: "delete_records", description: "Delete records from a database table.",
    parameters: object({
      table: string("The table to delete from."), where: string("SQL condition selecting the rows."),
    }),
    execute: run("delete_records"),
  }),
  new FunctionTool({
    name: "write_file", description: "Write a file in the workspace.",
    parameters: object({
      path: string("File path relative to the workspace."), content: string("The whole new file content."),
    }),
    execute: run("write_file"),
  }),
  new FunctionTool({
    name: "run_command", description: "Run a shell command in the workspace.",
    parameters: object({ command: string("The command line to run.") }), execute: run("run_command"),
  }),
];

const model = new Gemini({ model: spec.model, apiKey: "capture-not-a-key" });
let root;
if (spec.handoff) {
  const research = new LlmAgent({
    name: "research_agent", description: "Answers research questions with citations.",
    model, instruction: spec.system, tools,
  });
  root = new LlmAgent({
    name: "triage_agent", description: "Routes questions to the right agent.",
    model, instruction: "Transfer research questions to research_agent.", subAgents: [research],
  });
} else {
  root = new LlmAgent({
    name: spec.agent, description: "Answers with the tools it has.",
    model, instruction: spec.system, tools,
  });
}

const runner = new InMemoryRunner({ agent: root, appName: "capture" });
const session = await runner.sessionService.createSession({ appName: "capture", userId: "user" });
let text = null;
let author = null;
for await (const event of runner.runAsync({
  userId: "user", sessionId: session.id,
  newMessage: { role: "user", parts: [{ text: spec.prompt }] },
})) {
  if (isFinalResponse(event) && event.content?.parts) {
    const joined = event.content.parts.map((part) => part.text ?? "").join("").trim();
    if (joined) [text, author] = [joined, event.author];
  }
}
await processor.shutdown();
console.log(JSON.stringify({ text, author, executed }));
