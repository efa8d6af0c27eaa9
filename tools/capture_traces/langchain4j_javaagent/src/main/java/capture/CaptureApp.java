package capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs one scripted scenario as a plain LangChain4j agent for the langchain4j-javaagent capture
 * source: an AiServices agent whose @Tool methods hand the model what the scenario scripts, on
 * langchain4j-open-ai's OpenAiChatModel with its base URL on the scripted fake OpenAI server.
 *
 * <p>The spec file (written by fw_langchain4j_javaagent.py) holds {system, prompt, baseURL,
 * results: [tool message content, in call order]}. The last stdout line is the report: the
 * final answer and the tools that ran. Nothing here touches OpenTelemetry: the run is traced by
 * the OpenTelemetry Java agent alone (-javaagent), as a service that attaches it is, and the
 * agent's shutdown hook exports what it recorded when the JVM exits.
 */
public final class CaptureApp {
  private CaptureApp() {}

  /** The agent, LangChain4j's AI service interface. */
  interface Agent {
    String chat(String userMessage);
  }

  /** The scenario's tools; each hands the model the next scripted result in call order. */
  public static final class Tools {
    private final Deque<String> results;
    private final List<String> executed = new ArrayList<>();

    Tools(Deque<String> results) {
      this.results = results;
    }

    private synchronized String next(String name) {
      executed.add(name);
      String result = results.pollFirst();
      if (result == null) {
        throw new IllegalStateException("no scripted result left for " + name);
      }
      return result;
    }

    @Tool(name = "search_docs", value = "Search the knowledge base and return matching documents.")
    public String searchDocs(@P("What to look for.") String query) {
      return next("search_docs");
    }

    @Tool(name = "delete_records", value = "Delete records from a database table.")
    public String deleteRecords(
        @P("The table to delete from.") String table,
        @P("SQL condition selecting the rows.") String where) {
      return next("delete_records");
    }

    @Tool(name = "write_file", value = "Write a file in the workspace.")
    public String writeFile(
        @P("File path relative to the workspace.") String path,
        @P("The whole new file content.") String content) {
      return next("write_file");
    }

    @Tool(name = "run_command", value = "Run a shell command in the workspace.")
    public String runCommand(@P("The command line to run.") String command) {
      return next("run_command");
    }
  }

  public static void main(String[] args) throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode spec = json.readTree(Path.of(args[0]).toFile());
    Deque<String> results = new ArrayDeque<>();
    spec.get("results").forEach(r -> results.add(r.asText()));
    Tools tools = new Tools(results);
    OpenAiChatModel model =
        OpenAiChatModel.builder()
            .baseUrl(spec.get("baseURL").asText())
            .apiKey("capture-not-a-key")
            .modelName(spec.get("model").asText())
            .maxRetries(0)
            .build();
    String system = spec.get("system").asText();
    Agent agent =
        AiServices.builder(Agent.class)
            .chatModel(model)
            .systemMessageProvider(memoryId -> system)
            .tools(tools)
            .build();
    String answer = agent.chat(spec.get("prompt").asText());
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("text", answer);
    report.put("executed", tools.executed);
    System.out.println(json.writeValueAsString(report));
  }
}
