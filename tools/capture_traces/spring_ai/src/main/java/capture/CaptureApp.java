package capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One scenario of tools/capture_traces on Spring AI: a ChatClient whose @Tool methods return
 * (or throw) what the scenario scripts, on Spring AI's OpenAI chat model pointed at the capture's
 * scripted server. Tracing is Spring Boot's own: Micrometer Observation through
 * micrometer-tracing-bridge-otel to the OTLP/HTTP exporter, whose tracer provider Boot shuts
 * down (flushing every span) when the context closes, before this program reports and exits.
 *
 * <p>Called by fw_spring_ai.py: {@code java -Dcapture.spec=SPEC.json -jar app.jar --k=v ...};
 * SPEC = {system, prompt, results: [{ok: value} | {raise: "Type: message"}], agent,
 * handoff: true|false, report: path}. The report {executed, text} is written after the context
 * closed, so its presence means the export was flushed.
 */
@SpringBootApplication
public class CaptureApp {

  static final ObjectMapper JSON = new ObjectMapper();

  /** A search backend failure as the scenario scripts it; its message reaches the model. */
  static class SearchBackendError extends RuntimeException {
    SearchBackendError(String message) {
      super(message);
    }
  }

  /** The scripted tools: each logs that it really ran, then returns or throws its result. */
  public static class Tools {
    private final JsonNode results;
    final List<String> executed = new ArrayList<>();

    Tools(JsonNode results) {
      this.results = results;
    }

    private synchronized Object run(String name) {
      executed.add(name);
      JsonNode result = results.get(executed.size() - 1);
      if (result == null) {
        throw new IllegalStateException("no scripted result for call " + executed.size());
      }
      if (result.has("raise")) {
        // "SearchBackendError: message": thrown as a Java app would, the type as the
        // exception's class and the message alone as its message (what the model is handed).
        String raise = result.get("raise").asText();
        throw new SearchBackendError(raise.substring(raise.indexOf(": ") + 2));
      }
      return JSON.convertValue(result.get("ok"), Object.class);
    }

    @Tool(name = "search_docs", description = "Search the knowledge base and return matching documents.")
    public Object searchDocs(@ToolParam(description = "search query") String query) {
      return run("search_docs");
    }

    @Tool(name = "delete_records", description = "Delete records from a database table.")
    public Object deleteRecords(
        @ToolParam(description = "table") String table,
        @ToolParam(description = "row filter") String where) {
      return run("delete_records");
    }

    @Tool(name = "write_file", description = "Write a file in the workspace.")
    public Object writeFile(
        @ToolParam(description = "file path") String path,
        @ToolParam(description = "file content") String content) {
      return run("write_file");
    }

    @Tool(name = "run_command", description = "Run a shell command in the workspace.")
    public Object runCommand(@ToolParam(description = "shell command") String command) {
      return run("run_command");
    }
  }

  /** g_handoff: the triage agent hands the question to the research agent through a tool. */
  public static class ResearchAgentTool {
    private final ChatClient research;
    private final Tools tools;
    private final String system;

    ResearchAgentTool(ChatClient research, Tools tools, String system) {
      this.research = research;
      this.tools = tools;
      this.system = system;
    }

    @Tool(name = "research_agent", description = "Hand a research question to the research agent; returns its answer.")
    public String researchAgent(@ToolParam(description = "the question") String question) {
      return research.prompt().system(system).user(question).tools(tools).call().content();
    }
  }

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(Files.readString(Path.of(System.getProperty("capture.spec"))));
    ConfigurableApplicationContext context = SpringApplication.run(CaptureApp.class, args);
    ChatClient.Builder builder = context.getBean(ChatClient.Builder.class);
    Tools tools = new Tools(spec.get("results"));
    String text;
    if (spec.get("handoff").asBoolean()) {
      ChatClient research = builder.clone().build();
      ResearchAgentTool handoff =
          new ResearchAgentTool(research, tools, spec.get("system").asText());
      text = builder.build().prompt()
          .system("Hand research questions to research_agent.")
          .user(spec.get("prompt").asText())
          .tools(handoff)
          .call()
          .content();
    } else {
      text = builder.build().prompt()
          .system(spec.get("system").asText())
          .user(spec.get("prompt").asText())
          .tools(tools)
          .call()
          .content();
    }
    int code = SpringApplication.exit(context);
    Files.writeString(
        Path.of(spec.get("report").asText()),
        JSON.writeValueAsString(Map.of("executed", tools.executed, "text", text)));
    System.exit(code);
  }
}
