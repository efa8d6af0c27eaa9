// LlamaIndex.TS agents (@llamaindex/workflow) traced by OpenLLMetry JS: one scenario variant,
// for the llamaindex-js-openllmetry capture source. Called by fw_llamaindex_js.py:
// node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, model, baseURL,
//         otlp: "http://127.0.0.1:PORT", content: true|false, openai: true|false,
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// The agent is @llamaindex/workflow's agent() (an AgentWorkflow of one FunctionAgent, which
// streams every model call) on @llamaindex/openai's OpenAI model whose baseURL is the scripted
// fake server; the scripted tools are llamaindex tool()s (zod parameters) that return the
// scripted result or throw (the workflow hands the model "Error: <the error>").
// g_handoff / s_delegated_*: multiAgent() of a triage agent that may hand off to the research
// agent with the workflow's own handOff tool ({toAgent, reason}), a native handoff.
// Telemetry: traceloop.initialize (@traceloop/node-server-sdk) given the llamaindex and
// @llamaindex/openai modules (instrumentModules, the SDK's way for ES modules), its exporter
// OTLP/HTTP protobuf to the capture's sink; the run inside traceloop.withAgent, the SDK's way
// to name the agent running (without an application span every model call is a trace of its
// own). Content off: traceContent false. With spec.openai (llamaindex-js-openllmetry-openai) the
// openai client module @llamaindex/openai calls is given too (instrumentModules.openAI, as the
// SDK's ES-module set-up lists every library the app uses): each model call is then recorded
// twice, LlamaIndex's chat span holding the OpenAI instrumentation's.
// Prints one JSON line: {text, executed}.
import { readFileSync } from "node:fs";
import * as traceloop from "@traceloop/node-server-sdk";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import * as llamaIndex from "llamaindex";
import * as llamaIndexOpenAI from "@llamaindex/openai";
import OpenAI from "openai";
import { agent, multiAgent } from "@llamaindex/workflow";
import { z } from "zod";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const otlp = new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` });
traceloop.initialize({
  appName: "capture-llamaindex-js", exporter: otlp, traceContent: spec.content,
  traceloopSyncEnabled: false, silenceInitializationMessage: true, logLevel: "error",
  instrumentModules: { llamaIndex, llamaIndexOpenAI, ...(spec.openai ? { openAI: OpenAI } : {}) },
});

const queues = new Map();
for (const call of spec.calls) queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
const executed = [];
const define = (name, description, parameters) => llamaIndex.tool({
  name, description, parameters,
  execute: async () => {
    executed.push(name);
    const call = queues.get(name)?.shift();
    if (!call) throw new Error(`no scripted result left for ${name}`);
    if ("raise" in call) {
      const [type, ...rest] = call.raise.split(": ");
      const error = new Error(rest.join(": "));
      error.name = type;
      throw error;
    }
    return JSON.stringify(call.ok);
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

const llm = new llamaIndexOpenAI.OpenAI({
  model: spec.model, temperature: 0, apiKey: "capture-not-a-key",
  baseURL: spec.baseURL,
});
let workflow;
const name = spec.handoff ? "triage_agent" : spec.agent;
if (spec.handoff) {
  const research = agent({
    name: "research_agent", description: "Searches the documents and answers.",
    systemPrompt: spec.system, llm, tools: tools(),
  }).getAgents()[0];
  const { FunctionAgent } = await import("@llamaindex/workflow");
  const triage = new FunctionAgent({
    name: "triage_agent", description: "Routes research questions.",
    systemPrompt: "Hand research questions off.", llm, tools: [], canHandoffTo: [research],
  });
  workflow = multiAgent({ agents: [triage, research], rootAgent: triage, timeout: 120 });
} else {
  workflow = agent({
    name, description: "Answers with the tools it has.", systemPrompt: spec.system, llm,
    tools: tools(), timeout: 120,
  });
}
const result = await traceloop.withAgent({ name }, () => workflow.run(spec.prompt));
await traceloop.forceFlush();
await otlp.shutdown();
console.log(JSON.stringify({ text: String(result.data.result).trim(), executed }));
