package capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.service.SystemMessage;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.V;
import io.quarkiverse.langchain4j.RegisterAiService;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.control.ActivateRequestContext;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One scenario of tools/capture_traces on Quarkus LangChain4j: a {@code @RegisterAiService} AI
 * service whose {@code @Tool} methods return (or throw) what the scenario scripts, on the
 * extension's OpenAI chat model pointed at the capture's scripted server. Tracing is the
 * extension's own (AI service, tool and model spans through quarkus-opentelemetry's OTLP/HTTP
 * exporter); Quarkus shuts its tracer provider down, flushing every span, before the exit handler
 * writes the report.
 *
 * <p>Called by fw_quarkus_langchain4j.py: {@code java -Dcapture.spec=SPEC.json -D... -jar
 * quarkus-run.jar}; SPEC = {system, prompt, results: [{ok: value} | {raise: "Type: message"}],
 * agent, handoff: true|false, report: path}. The report {executed, text} (or {executed, error}
 * when the run ended in an exception) is written after shutdown, so its presence means the
 * export was flushed.
 */
@QuarkusMain
public class CaptureApp implements QuarkusApplication {

  static final ObjectMapper JSON = new ObjectMapper();
  static JsonNode spec;
  static final List<String> executed = new ArrayList<>();
  static String text;
  /** The exception the run ended in (o_run_error: the model API failing), else null. */
  static String error;

  /** A search backend failure as the scenario scripts it; its message reaches the model. */
  static class SearchBackendError extends RuntimeException {
    SearchBackendError(String message) {
      super(message);
    }
  }

  /** The scripted tools: each logs that it really ran, then returns or throws its result. */
  @ApplicationScoped
  public static class Tools {
    private synchronized String run(String name) throws Exception {
      executed.add(name);
      JsonNode result = spec.get("results").get(executed.size() - 1);
      if (result == null) {
        throw new IllegalStateException("no scripted result for call " + executed.size());
      }
      if (result.has("raise")) {
        // "SearchBackendError: message": thrown as a Java app would, the type as the
        // exception's class and the message alone as its message (what the model is handed).
        String raise = result.get("raise").asText();
        throw new SearchBackendError(raise.substring(raise.indexOf(": ") + 2));
      }
      return JSON.writeValueAsString(result.get("ok"));
    }

    @Tool(name = "search_docs", value = "Search the knowledge base and return matching documents.")
    public String searchDocs(@P("search query") String query) throws Exception {
      return run("search_docs");
    }

    @Tool(name = "delete_records", value = "Delete records from a database table.")
    public String deleteRecords(@P("table") String table, @P("row filter") String where)
        throws Exception {
      return run("delete_records");
    }

    @Tool(name = "write_file", value = "Write a file in the workspace.")
    public String writeFile(@P("file path") String path, @P("file content") String content)
        throws Exception {
      return run("write_file");
    }

    @Tool(name = "run_command", value = "Run a shell command in the workspace.")
    public String runCommand(@P("shell command") String command) throws Exception {
      return run("run_command");
    }
  }

  // The extension records an AI service under its interface's name (the span
  // langchain4j.aiservices.<binary name>.<method>) and names an agent nowhere else, so each
  // interface carries the agent name the scenario gives (support_agent, coding_agent, ...).

  /** The support agent of every scenario but h_coding_agent and g_handoff. */
  @RegisterAiService(tools = Tools.class)
  public interface support_agent {
    @SystemMessage("{system}")
    String chat(@V("system") String system, @UserMessage String prompt);
  }

  /** h_coding_agent's agent (the same tools: the script decides which it calls). */
  @RegisterAiService(tools = Tools.class)
  public interface coding_agent {
    @SystemMessage("{system}")
    String chat(@V("system") String system, @UserMessage String prompt);
  }

  /** g_handoff's research agent, run by the triage agent's research_agent tool. */
  @RegisterAiService(tools = Tools.class)
  public interface research_agent {
    @SystemMessage("{system}")
    String chat(@V("system") String system, @UserMessage String question);
  }

  /** g_handoff: the triage agent hands the question to the research agent through a tool. */
  @ApplicationScoped
  public static class HandoffTools {
    @Inject research_agent research;

    @Tool(name = "research_agent", value = "Hand a research question to the research agent; returns its answer.")
    public String researchAgent(@P("the question") String question) {
      return research.chat(spec.get("system").asText(), question);
    }
  }

  /** g_handoff's triage agent. */
  @RegisterAiService(tools = HandoffTools.class)
  public interface triage_agent {
    @SystemMessage("Hand research questions to research_agent.")
    String chat(@UserMessage String prompt);
  }

  @Inject support_agent support;
  @Inject coding_agent coding;
  @Inject triage_agent triage;

  @Override
  @ActivateRequestContext
  public int run(String... args) {
    String system = spec.get("system").asText();
    String prompt = spec.get("prompt").asText();
    try {
      if (spec.get("handoff").asBoolean()) {
        text = triage.chat(prompt);
      } else if ("coding_agent".equals(spec.get("agent").asText())) {
        text = coding.chat(system, prompt);
      } else {
        text = support.chat(system, prompt);
      }
    } catch (RuntimeException e) {
      // The run ended in the framework's exception (the script's HTTP 500): reported, so the
      // capture can tell it from a crash, after Quarkus flushed the spans the run ended.
      error = e.getClass().getName() + ": " + e.getMessage();
    }
    return 0;
  }

  public static void main(String... args) throws Exception {
    spec = JSON.readTree(Files.readString(Path.of(System.getProperty("capture.spec"))));
    Quarkus.run(
        CaptureApp.class,
        (code, failure) -> {
          try {
            if (failure == null && code == 0) {
              Files.writeString(
                  Path.of(spec.get("report").asText()),
                  JSON.writeValueAsString(
                      error == null
                          ? Map.of("executed", executed, "text", text)
                          : Map.of("executed", executed, "error", error)));
            } else if (failure != null) {
              failure.printStackTrace();
            }
          } catch (Exception e) {
            e.printStackTrace();
            code = 1;
          }
          System.exit(code);
        },
        args);
  }
}
