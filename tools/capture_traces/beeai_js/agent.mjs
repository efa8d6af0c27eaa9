// BeeAI Framework for TypeScript (beeai-framework) traced by OpenInference's BeeAI
// instrumentation: one scenario variant, for the beeai-js-openinference capture source.
// Called by fw_beeai_js.py: node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, baseURL,
//         otlp: "http://127.0.0.1:PORT", content: true|false,
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The agent is BeeAI's ToolCallingAgent (0.1.13, the newest release the instrumentation
// declares; RequirementAgent came later) on its OpenAIChatModel (the AI SDK's OpenAI chat
// model underneath) whose baseURL is the scripted fake server, with the system prompt the
// first message of its UnconstrainedMemory; the scripted tools are DynamicTools that return
// JSON text or throw what the script says (BeeAI wraps the error in a ToolError and hands the
// model its explanation); every run ends through the agent's final_answer tool. The agent's
// retry budget (execution.totalMaxRetries, default 1: a second failed tool call ends the run
// with an AgentError) is 10, so the retry scenarios run as scripted.
// g_handoff: 0.1.13 has no HandoffTool; the triage agent's research_agent tool (a DynamicTool
// taking {task}) runs the research agent on the task and returns its answer.
// Telemetry: BeeAIInstrumentation.manuallyInstrument(beeai) on a NodeTracerProvider whose
// OTLP/HTTP protobuf exporter sends to the capture's sink; content off is its traceConfig.
// Prints one JSON line: {text, executed}.
import { readFileSync } from "node:fs";
import * as beeai from "beeai-framework";
import { BeeAIInstrumentation } from "@arizeai/openinference-instrumentation-beeai";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": spec.handoff ? "triage_agent" : spec.agent }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` }))],
});
provider.register();
const hide = !spec.content;
new BeeAIInstrumentation({
  tracerProvider: provider,
  traceConfig: { hideInputs: hide, hideOutputs: hide, hideInputMessages: hide, hideOutputMessages: hide },
}).manuallyInstrument(beeai);

const { ToolCallingAgent } = await import("beeai-framework/agents/toolCalling/agent");
const { OpenAIChatModel } = await import("beeai-framework/adapters/openai/backend/chat");
const { DynamicTool, StringToolOutput } = await import("beeai-framework/tools/base");
const { UnconstrainedMemory } = await import("beeai-framework/memory/unconstrainedMemory");
const { SystemMessage } = await import("beeai-framework/backend/message");

const queues = new Map();
for (const call of spec.calls) queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
const executed = [];
const define = (name, description, inputSchema) => new DynamicTool({
  name, description, inputSchema,
  handler: async () => {
    executed.push(name);
    const call = queues.get(name)?.shift();
    if (!call) throw new Error(`no scripted result left for ${name}`);
    if ("raise" in call) throw new Error(call.raise);
    return new StringToolOutput(JSON.stringify(call.ok));
  },
});
const tools = () => [
  define("search_docs", "Search the knowledge base and return matching documents.",
    z.object({ query: z.string().describe("What to look for.") })),
  define("delete_records", "Delete records from a database table.", z.object({
    table: z.string().describe("The table to delete from."),
    where: z.string().describe("SQL condition selecting the rows."),
  })),
  define("write_file", "Write a file in the workspace.", z.object({
    path: z.string().describe("File path relative to the workspace."),
    content: z.string().describe("The whole new file content."),
  })),
  define("run_command", "Run a shell command in the workspace.",
    z.object({ command: z.string().describe("The command line to run.") })),
];

const llm = () => new OpenAIChatModel(spec.model, {}, { baseURL: spec.baseURL, apiKey: "capture-not-a-key" });
const agent = async (name, instructions, agentTools) => {
  const memory = new UnconstrainedMemory();
  await memory.add(new SystemMessage(instructions));
  return new ToolCallingAgent({
    llm: llm(), memory, tools: agentTools, meta: { name, description: name },
    execution: { totalMaxRetries: 10, maxRetriesPerStep: 3, maxIterations: 20 },
  });
};
let root;
if (spec.handoff) {
  const research = await agent("research_agent", spec.system, tools());
  const delegate = new DynamicTool({
    name: "research_agent", description: "Answers research questions with citations.",
    inputSchema: z.object({ task: z.string().describe("The question to research.") }),
    handler: async ({ task }) => {
      const answer = await research.run({ prompt: task });
      return new StringToolOutput(answer.result.text);
    },
  });
  root = await agent("triage_agent", "Hand research questions to the research agent.", [delegate]);
} else {
  root = await agent(spec.agent, spec.system, tools());
}
const response = await root.run({ prompt: spec.prompt });
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ text: response.result.text.trim(), executed }));
