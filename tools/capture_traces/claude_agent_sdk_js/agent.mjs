// The Claude Agent SDK for TypeScript (@anthropic-ai/claude-agent-sdk) driving the Claude Code
// executable its platform package ships, traced by OpenInference's Claude Agent SDK
// instrumentation for JavaScript: one scenario variant, for the claude-agent-sdk-js capture
// source (the TypeScript twin of claude-agent-sdk). Called by fw_claude_agent_sdk_js.py:
//   node agent.mjs SPEC.json
// SPEC = {system, prompt, agent, handoff: true|false, baseURL, otlp: "http://127.0.0.1:PORT",
//         content: true|false, home, research: {prompt, tools} | null, denied: [tool, ...],
//         calls: [{tool, ok: value} | {tool, raise: "Type: message"}]}
// query() runs Claude Code against the scripted Anthropic Messages server (baseURL, through
// ANTHROPIC_BASE_URL) with the scenario's tools as in-process SDK MCP tools (tool() +
// createSdkMcpServer; Claude Code names them mcp__scenario__<tool>), no built-in tools, an
// empty HOME and every other connection sent to a dead proxy. A failing tool answers
// isError with {"error": "<Type>: <message>"}, as the Python driver's. g_handoff: research_agent
// is an AgentDefinition the triage turn runs through Claude Code's Agent tool. w_*_denied:
// the denied tools are not pre-approved and the application's canUseTool refuses them with
// an empty message (the Python SDK's default PermissionResultDeny()).
// Telemetry: ClaudeAgentSDKInstrumentation.manuallyInstrument (the ESM way its README
// documents) on a NodeTracerProvider whose OTLP/HTTP protobuf exporter sends to the capture's
// sink; content off is its traceConfig (hideInputs / hideOutputs, as OPENINFERENCE_HIDE_*).
// Prints one JSON line: {text, executed, error}.
import { readFileSync } from "node:fs";
import * as ClaudeAgentSDK from "@anthropic-ai/claude-agent-sdk";
import { ClaudeAgentSDKInstrumentation } from "@arizeai/openinference-instrumentation-claude-agent-sdk";
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
const sdk = new ClaudeAgentSDKInstrumentation({
  tracerProvider: provider,
  traceConfig: { hideInputs: hide, hideOutputs: hide, hideInputMessages: hide, hideOutputMessages: hide },
}).manuallyInstrument(ClaudeAgentSDK);

const SERVER = "scenario";
const PREFIX = `mcp__${SERVER}__`;
const queues = new Map();
for (const call of spec.calls) queues.set(call.tool, [...(queues.get(call.tool) ?? []), call]);
const executed = [];
const define = (name, description, shape) => ClaudeAgentSDK.tool(name, description, shape, async () => {
  executed.push(PREFIX + name);
  const call = queues.get(name)?.shift();
  if (!call) throw new Error(`no scripted result left for ${name}`);
  const failed = "raise" in call;
  const text = JSON.stringify(failed ? { error: call.raise } : call.ok);
  return { content: [{ type: "text", text }], isError: failed };
});
const server = ClaudeAgentSDK.createSdkMcpServer({
  name: SERVER, version: "1.0.0",
  tools: [
    define("search_docs", "Search the knowledge base and return matching documents.", { query: z.string() }),
    define("delete_records", "Delete records from a database table.", { table: z.string(), where: z.string() }),
    define("write_file", "Write a file in the workspace.", { path: z.string(), content: z.string() }),
    define("run_command", "Run a shell command in the workspace.", { command: z.string() }),
  ],
});
const DELEGATION = ["Agent", "Task"];
const names = ["search_docs", "delete_records", "write_file", "run_command"];
const allowed = spec.denied.length
  ? names.filter((n) => !spec.denied.includes(n)).map((n) => PREFIX + n)
  : [`${PREFIX}*`];
const options = {
  systemPrompt: spec.system, model: spec.model,
  tools: spec.research ? DELEGATION : [],
  mcpServers: { [SERVER]: server }, strictMcpConfig: true,
  allowedTools: [...allowed, ...DELEGATION],
  ...(spec.denied.length ? { canUseTool: async () => ({ behavior: "deny", message: "" }) } : {}),
  ...(spec.research ? {
    agents: {
      research_agent: {
        description: "Searches the knowledge base and answers with citations.",
        prompt: spec.research.prompt, tools: spec.research.tools, model: "inherit", background: false,
      },
    },
  } : {}),
  settingSources: [], maxTurns: 12, cwd: spec.home,
  env: {
    PATH: process.env.PATH, HOME: spec.home, ANTHROPIC_BASE_URL: spec.baseURL,
    ANTHROPIC_API_KEY: "capture-not-a-key", HTTPS_PROXY: "http://127.0.0.1:9",
    HTTP_PROXY: "http://127.0.0.1:9", NO_PROXY: "127.0.0.1,localhost", DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1", DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  },
};
let text = null;
let error = null;
try {
  for await (const message of sdk.query({ prompt: spec.prompt, options })) {
    if (message.type === "result") {
      if (message.subtype === "success" && !message.is_error) text = message.result;
      else error = `${message.subtype}: ${message.result ?? (message.errors ?? []).join("; ")}`;
    }
  }
} catch (e) {
  error = `${e?.name}: ${e?.message}`;
}
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ text, executed, error }));
