// Vercel AI SDK 7 agents traced by @ai-sdk/otel and converted to OpenInference by
// @arizeai/openinference-vercel, for the vercel-ai-sdk-openinference capture source.
// Called by fw_vercel_openinference.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, baseURL, content: true|false,
//         otlp: "http://127.0.0.1:PORT", calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The agents are AI SDK 7 ToolLoopAgents (stopWhen: stepCountIs(10)) on the
// @ai-sdk/openai-compatible chat model with its baseURL on the scripted fake OpenAI server;
// tool() tools return or throw what the script says. g_handoff: the triage agent's
// research_agent tool runs the research agent. AI SDK 7 telemetry is registered once
// (registerTelemetry(new OpenTelemetry())) and switched per call (telemetry: {isEnabled,
// functionId, recordInputs, recordOutputs}: content off sets both record flags false).
// OpenInferenceSimpleSpanProcessor adds OpenInference attributes to each AI SDK span before
// an OTLP/HTTP protobuf exporter sends it to the capture's sink.
// With spec.stream every agent runs through `await agent.stream(...)` (streamText), every part
// of its fullStream consumed as it arrives, the provider streaming each call with its defaults
// (no stream_options.include_usage): the vercel-ai-sdk-openinference-stream capture.
// Prints one JSON line: {text, author, executed}.
import { readFileSync } from "node:fs";
import { ToolLoopAgent, jsonSchema, registerTelemetry, stepCountIs, tool } from "ai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { OpenInferenceSimpleSpanProcessor } from "@arizeai/openinference-vercel";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": spec.agent }),
  spanProcessors: [new OpenInferenceSimpleSpanProcessor({
    exporter: new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }),
  })],
});
provider.register();
registerTelemetry(new OpenTelemetry());

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
const schema = (props) =>
  jsonSchema({ type: "object", properties: props, required: Object.keys(props) });
const str = { type: "string" };
const tools = {
  search_docs: tool({ description: "Search the knowledge base and return matching documents.",
    inputSchema: schema({ query: str }), execute: execute("search_docs") }),
  delete_records: tool({ description: "Delete records from a database table.",
    inputSchema: schema({ table: str, where: str }), execute: execute("delete_records") }),
  write_file: tool({ description: "Write a file in the workspace.",
    inputSchema: schema({ path: str, content: str }), execute: execute("write_file") }),
  run_command: tool({ description: "Run a shell command in the workspace.",
    inputSchema: schema({ command: str }), execute: execute("run_command") }),
};

const model = createOpenAICompatible({
  name: "openai", baseURL: spec.baseURL, apiKey: "capture-not-a-key",
}).chatModel(spec.model);
const telemetry = (functionId) => ({
  isEnabled: true, functionId, recordInputs: spec.content, recordOutputs: spec.content,
});
const agent = (name, instructions, agentTools) => new ToolLoopAgent({
  model, instructions, tools: agentTools, stopWhen: stepCountIs(10), temperature: 0,
  telemetry: telemetry(name),
});

// `generate`, or `stream` consumed part by part; a streamed error is a part, not a throw.
const answer = async (agent, prompt) => {
  if (!spec.stream) return agent.generate({ prompt });
  const streamed = await agent.stream({ prompt });
  let failed = null;
  for await (const part of streamed.fullStream) {
    if (part.type === "error") failed = part.error;
  }
  const text = await streamed.text;
  if (failed) throw failed;
  return { text };
};

let root;
let rootName = spec.agent;
if (spec.handoff) {
  const research = agent("research_agent", spec.system, tools);
  rootName = "triage_agent";
  root = agent(rootName, "Hand research questions to research_agent.", {
    research_agent: tool({
      description: "Hand a research question to the research agent; returns its answer.",
      inputSchema: schema({ question: str }),
      execute: async ({ question }) => (await answer(research, question)).text,
    }),
  });
} else {
  root = agent(spec.agent, spec.system, tools);
}

const result = await answer(root, spec.prompt);
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ text: result.text?.trim() ?? null, author: rootName, executed }));
