// Firebase Genkit (JS): a flow per agent whose ai.generate runs the tool loop (ai.defineTool
// tools, maxTurns 10) on @genkit-ai/compat-oai's OpenAI plugin, its baseURL the scripted fake
// OpenAI server that fw_genkit.py runs on 127.0.0.1. g_handoff: the triage agent's
// research_agent tool runs the research agent's flow (an agent used as a tool). Traced by
// Genkit's own OpenTelemetry instrumentation: enableTelemetry() from genkit/tracing starts the
// OpenTelemetry Node SDK with the span processors given (Genkit's documented way to add an
// exporter): an OTLP/HTTP protobuf exporter sending to the capture's sink (bodies kept as sent)
// and an in-memory exporter beside it, whose spans are written as OTLP/JSON.
// Called by fw_genkit.py: node genkit.mjs SPEC.json OUT_PREFIX
// SPEC = {system, prompt, baseURL, results: [{ok: value} | {raise: "Type: message"}],
//         content: true|false, agent, handoff: true|false, otlp: "http://127.0.0.1:PORT"}
// Genkit has no switch for content: its spans record every action's input and output, so the
// content-off variant is the same run (spec.content is not read).
// A Genkit tool that throws ends the whole generate call, so a failing tool returns
// {"error": "Type: message"} for the model, as a Genkit app that lets the model retry does.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { genkit, z } from "genkit";
import { enableTelemetry, flushTracing } from "genkit/tracing";
import { openAI } from "@genkit-ai/compat-oai/openai";
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { Resource } from "@opentelemetry/resources";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";

const [specPath, outPrefix] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

const memory = new InMemorySpanExporter();
await enableTelemetry({
  resource: new Resource({ "service.name": "capture-genkit" }),
  autoDetectResources: false,
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: `${spec.otlp}/v1/traces` })),
    new SimpleSpanProcessor(memory),
  ],
});

const ai = genkit({
  plugins: [openAI({ apiKey: "capture-not-a-key", baseURL: spec.baseURL })],
  model: "openai/gpt-4o-mini",
});

const executed = [];
const run = (name) => async () => {
  executed.push(name);
  const result = spec.results[executed.length - 1];
  if (result && "raise" in result) return { error: result.raise };
  return result?.ok;
};
const tools = [
  ai.defineTool({
    name: "search_docs", description: "Search the knowledge base and return matching documents.",
    inputSchema: z.object({ query: z.string() }), outputSchema: z.any(),
  }, run("search_docs")),
  ai.defineTool({
    name: "delete_records", description: "Delete records from a database table.",
    inputSchema: z.object({ table: z.string(), where: z.string() }), outputSchema: z.any(),
  }, run("delete_records")),
  ai.defineTool({
    name: "write_file", description: "Write a file in the workspace.",
    inputSchema: z.object({ path: z.string(), content: z.string() }), outputSchema: z.any(),
  }, run("write_file")),
  ai.defineTool({
    name: "run_command", description: "Run a shell command in the workspace.",
    inputSchema: z.object({ command: z.string() }), outputSchema: z.any(),
  }, run("run_command")),
];
const agentFlow = (name, system, agentTools) => ai.defineFlow(
  { name, inputSchema: z.string(), outputSchema: z.string() },
  async (prompt) => (await ai.generate({
    system, prompt, tools: agentTools, maxTurns: 10, config: { temperature: 0 },
  })).text,
);

let flow;
if (spec.handoff) {
  const research = agentFlow("research_agent", spec.system, tools);
  const researchTool = ai.defineTool({
    name: "research_agent", description: "Hand a research question to the research agent; returns its answer.",
    inputSchema: z.object({ question: z.string() }), outputSchema: z.string(),
  }, async ({ question }) => research(question));
  flow = agentFlow("triage_agent", "Hand research questions to research_agent.", [researchTool]);
} else {
  flow = agentFlow(spec.agent, spec.system, tools);
}
const text = await flow(spec.prompt);
await flushTracing();
const spans = memory.getFinishedSpans();
mkdirSync(`${outPrefix}.raw`, { recursive: true });
const body = JsonTraceSerializer.serializeRequest(spans);
writeFileSync(`${outPrefix}.otlp.json`, JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1) + "\n");
console.log(JSON.stringify({ executed, text }));
process.exit(0);
