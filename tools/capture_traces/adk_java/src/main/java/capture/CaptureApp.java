package capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.adk.agents.BaseAgent;
import com.google.adk.agents.LlmAgent;
import com.google.adk.events.Event;
import com.google.adk.models.ApigeeLlm;
import com.google.adk.models.BaseLlm;
import com.google.adk.runner.InMemoryRunner;
import com.google.adk.sessions.Session;
import com.google.adk.tools.Annotations.Schema;
import com.google.adk.tools.FunctionTool;
import com.google.genai.types.Content;
import com.google.genai.types.Part;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One scenario of tools/capture_traces on Google ADK for Java: LlmAgents whose FunctionTool
 * tools return or throw what the scenario scripts, on ADK's own chat-completions client
 * (ApigeeLlm with an {@code apigee/openai/} model, its proxy URL the capture's scripted OpenAI
 * server). ADK traces through the global OpenTelemetry, which this program sets up with an
 * OTLP/HTTP exporter and shuts down (flushing every span) before it reports: once every span
 * ADK started has ended, since ADK ends its invocation span on its own thread after the last
 * event reached this program (a span ended after the shutdown would be lost).
 *
 * <p>Called by fw_adk_java.py: {@code java -cp ... capture.CaptureApp SPEC.json}; SPEC =
 * {system, prompt, baseURL, otlp, results: [{ok: value} | {raise: "Type: message"}], agent,
 * handoff: true|false, report: path}. A tool that throws is handled by ADK's FunctionTool,
 * which hands the model {"status": "error", "message": ...} instead of the exception.
 */
public final class CaptureApp {

  static final ObjectMapper JSON = new ObjectMapper();

  /** A search backend failure as the scenario scripts it. */
  static final class SearchBackendError extends RuntimeException {
    SearchBackendError(String message) {
      super(message);
    }
  }

  /** The scripted tools: each logs that it really ran, then returns or throws its result. */
  public static final class Tools {
    private final JsonNode results;
    final List<String> executed = new ArrayList<>();

    Tools(JsonNode results) {
      this.results = results;
    }

    private synchronized Map<String, Object> run(String name) {
      executed.add(name);
      JsonNode result = results.get(executed.size() - 1);
      if (result == null) {
        throw new IllegalStateException("no scripted result for call " + executed.size());
      }
      if (result.has("raise")) {
        String raise = result.get("raise").asText();
        throw new SearchBackendError(raise.substring(raise.indexOf(": ") + 2));
      }
      Object value = JSON.convertValue(result.get("ok"), Object.class);
      if (value instanceof Map<?, ?> map) {
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) map;
        return object;
      }
      return Map.of("result", value);
    }

    @Schema(name = "search_docs", description = "Search the knowledge base and return matching documents.")
    public Map<String, Object> searchDocs(@Schema(name = "query", description = "search query") String query) {
      return run("search_docs");
    }

    @Schema(name = "delete_records", description = "Delete records from a database table.")
    public Map<String, Object> deleteRecords(
        @Schema(name = "table", description = "table") String table,
        @Schema(name = "where", description = "row filter") String where) {
      return run("delete_records");
    }

    @Schema(name = "write_file", description = "Write a file in the workspace.")
    public Map<String, Object> writeFile(
        @Schema(name = "path", description = "file path") String path,
        @Schema(name = "content", description = "file content") String content) {
      return run("write_file");
    }

    @Schema(name = "run_command", description = "Run a shell command in the workspace.")
    public Map<String, Object> runCommand(
        @Schema(name = "command", description = "shell command") String command) {
      return run("run_command");
    }
  }

  /** Counts the spans started and not yet ended, so the program can wait for them all. */
  static final class OpenSpans implements SpanProcessor {
    private int open;

    @Override
    public synchronized void onStart(Context parentContext, ReadWriteSpan span) {
      open++;
    }

    @Override
    public boolean isStartRequired() {
      return true;
    }

    @Override
    public synchronized void onEnd(ReadableSpan span) {
      open--;
      notifyAll();
    }

    @Override
    public boolean isEndRequired() {
      return true;
    }

    /** Waits until every started span has ended (at most {@code millis}); false if not. */
    synchronized boolean awaitAllEnded(long millis) throws InterruptedException {
      long deadline = System.currentTimeMillis() + millis;
      while (open > 0) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          return false;
        }
        wait(left);
      }
      return true;
    }
  }

  static LlmAgent agent(String name, String instruction, BaseLlm model, Tools tools, List<BaseAgent> subAgents) {
    LlmAgent.Builder builder = LlmAgent.builder()
        .name(name)
        .description(name.replace('_', ' '))
        .model(model)
        .instruction(instruction);
    if (tools != null) {
      builder.tools(
          FunctionTool.create(tools, "searchDocs"),
          FunctionTool.create(tools, "deleteRecords"),
          FunctionTool.create(tools, "writeFile"),
          FunctionTool.create(tools, "runCommand"));
    }
    if (!subAgents.isEmpty()) {
      builder.subAgents(subAgents);
    }
    return builder.build();
  }

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(Files.readString(Path.of(args[0])));
    OpenSpans openSpans = new OpenSpans();
    // Processors see a span's end in the order they were added: the exporter's first, so a
    // span counted as ended is already queued for export when the program shuts down.
    SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().toBuilder()
            .put("service.name", spec.get("agent").asText()).build())
        .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder()
            .setEndpoint(spec.get("otlp").asText() + "/v1/traces").build()).build())
        .addSpanProcessor(openSpans)
        .build();
    OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).buildAndRegisterGlobal();

    BaseLlm model = ApigeeLlm.builder()
        .modelName("apigee/openai/gpt-4o-mini")
        .proxyUrl(spec.get("baseURL").asText())
        .build();
    Tools tools = new Tools(spec.get("results"));
    String system = spec.get("system").asText();
    LlmAgent root;
    if (spec.get("handoff").asBoolean()) {
      LlmAgent research = agent("research_agent", system, model, tools, List.of());
      root = agent("triage_agent", "Hand research questions to research_agent.", model, null,
          List.of(research));
    } else {
      root = agent(spec.get("agent").asText(), system, model, tools, List.of());
    }
    InMemoryRunner runner = new InMemoryRunner(root, "capture");
    Session session = runner.sessionService().createSession("capture", "user").blockingGet();
    Content message = Content.fromParts(Part.fromText(spec.get("prompt").asText()));
    List<String> answers = new ArrayList<>();
    List<String> authors = new ArrayList<>();
    for (Event event : runner.runAsync("user", session.id(), message).blockingIterable()) {
      if (event.finalResponse() && event.content().isPresent()) {
        String text = event.stringifyContent();
        if (!text.isBlank()) {
          answers.add(text);
          authors.add(event.author());
        }
      }
    }
    if (!openSpans.awaitAllEnded(30_000)) {
      throw new IllegalStateException("spans still open 30 s after the run ended");
    }
    tracerProvider.shutdown().join(30, TimeUnit.SECONDS);
    String text = answers.isEmpty() ? null : answers.get(answers.size() - 1);
    Files.writeString(
        Path.of(spec.get("report").asText()),
        JSON.writeValueAsString(Map.of(
            "executed", tools.executed, "text", text == null ? "" : text, "authors", authors)));
    System.exit(0);
  }
}
