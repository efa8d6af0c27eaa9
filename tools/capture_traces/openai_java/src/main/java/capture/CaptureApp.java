package capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessage;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageParam;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionSystemMessageParam;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.chat.completions.ChatCompletionUserMessageParam;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.instrumentation.openai.v1_1.OpenAITelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.LogRecordProcessor;
import io.opentelemetry.sdk.logs.export.BatchLogRecordProcessor;
import io.opentelemetry.sdk.logs.export.SimpleLogRecordProcessor;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A hand-written chat-completions tool loop on the official OpenAI Java client, wrapped by the
 * OpenTelemetry Java instrumentation's library instrumentation ({@code OpenAITelemetry.wrap}),
 * as the Python {@code openai-v2} source's loop on the {@code openai} client: the model's tool
 * calls run in this program (no tool spans; the instrumentation records model calls only) and
 * their results, given in call order by the spec, go back as tool messages.
 *
 * <p>Spec (JSON file, argument 1): {system, prompt, baseURL, otlp, report, tools: [chat
 * completions tool schemas], results: [tool message content, in call order], killed, journal}
 * (killed, z_killed_*: each span and log record exported as it ends, each tool appended to the
 * journal file as it runs; the scripted model server SIGKILLs this process). Content capture
 * is {@code OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT} (the variable the Java agent
 * reads), handed to the builder's {@code setCaptureMessageContent}, since the library
 * instrumentation reads no environment itself. The loop runs inside the app's own
 * attribute-less {@code agent_run} span (scope {@code capture.app}), as the Python loop does,
 * so the model calls share one trace. Both providers are shut down (flushing their batches)
 * before the report {text, executed} is written: a report means the export is complete.
 */
public final class CaptureApp {
  private CaptureApp() {}

  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    JsonNode spec = mapper.readTree(new File(args[0]));
    boolean content =
        "true"
            .equalsIgnoreCase(
                System.getenv().getOrDefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", ""));
    String otlp = spec.get("otlp").asText();
    Resource resource =
        Resource.getDefault()
            .merge(
                Resource.create(
                    Attributes.of(AttributeKey.stringKey("service.name"), "capture-openai-java")));
    // A killed run (z_killed_*): each span and log record exported as it ends, waiting for the
    // export (as the Python SDK's simple processors do), and each tool journalled as it runs.
    boolean killed = spec.path("killed").asBoolean(false);
    OtlpHttpSpanExporter spanExporter =
        OtlpHttpSpanExporter.builder().setEndpoint(otlp + "/v1/traces").build();
    OtlpHttpLogRecordExporter logExporter =
        OtlpHttpLogRecordExporter.builder().setEndpoint(otlp + "/v1/logs").build();
    SpanProcessor spans =
        killed ? exportedOnEnd(spanExporter) : BatchSpanProcessor.builder(spanExporter).build();
    LogRecordProcessor logs =
        killed
            ? exportedOnEmit(logExporter)
            : BatchLogRecordProcessor.builder(logExporter).build();
    SdkTracerProvider tracerProvider =
        SdkTracerProvider.builder().setResource(resource).addSpanProcessor(spans).build();
    SdkLoggerProvider loggerProvider =
        SdkLoggerProvider.builder().setResource(resource).addLogRecordProcessor(logs).build();
    OpenTelemetrySdk sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(tracerProvider)
            .setLoggerProvider(loggerProvider)
            .build();
    OpenAIClient client =
        OpenAITelemetry.builder(sdk)
            .setCaptureMessageContent(content)
            .build()
            .wrap(
                OpenAIOkHttpClient.builder()
                    .baseUrl(spec.get("baseURL").asText())
                    .apiKey("capture-not-a-key")
                    .build());

    List<ChatCompletionFunctionTool> tools = new ArrayList<>();
    for (JsonNode tool : spec.get("tools")) {
      JsonNode function = tool.get("function");
      FunctionParameters.Builder parameters = FunctionParameters.builder();
      Iterator<Map.Entry<String, JsonNode>> fields = function.get("parameters").fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        parameters.putAdditionalProperty(field.getKey(), JsonValue.fromJsonNode(field.getValue()));
      }
      tools.add(
          ChatCompletionFunctionTool.builder()
              .function(
                  FunctionDefinition.builder()
                      .name(function.get("name").asText())
                      .description(function.get("description").asText())
                      .parameters(parameters.build())
                      .build())
              .build());
    }
    Iterator<JsonNode> results = spec.get("results").iterator();

    List<ChatCompletionMessageParam> messages = new ArrayList<>();
    messages.add(
        ChatCompletionMessageParam.ofSystem(
            ChatCompletionSystemMessageParam.builder().content(spec.get("system").asText()).build()));
    messages.add(
        ChatCompletionMessageParam.ofUser(
            ChatCompletionUserMessageParam.builder().content(spec.get("prompt").asText()).build()));
    List<String> executed = new ArrayList<>();
    String text = null;
    Tracer tracer = sdk.getTracer("capture.app");
    Span run = tracer.spanBuilder("agent_run").startSpan();
    try (Scope ignored = run.makeCurrent()) {
      for (int turn = 0; turn < 10; turn++) {
        ChatCompletionCreateParams.Builder request =
            ChatCompletionCreateParams.builder()
                .model("gpt-4o-mini")
                .messages(messages)
                .temperature(0.0);
        tools.forEach(request::addTool);
        ChatCompletionMessage message =
            client.chat().completions().create(request.build()).choices().get(0).message();
        List<ChatCompletionMessageToolCall> calls = message.toolCalls().orElse(List.of());
        if (calls.isEmpty()) {
          text = message.content().orElse(null);
          break;
        }
        messages.add(ChatCompletionMessageParam.ofAssistant(message.toParam()));
        for (ChatCompletionMessageToolCall call : calls) {
          ChatCompletionMessageFunctionToolCall function = call.asFunction();
          executed.add(function.function().name());
          if (killed) {
            Files.writeString(
                Path.of(spec.get("journal").asText()),
                function.function().name() + "\n",
                StandardCharsets.UTF_8,
                StandardOpenOption.APPEND);
          }
          messages.add(
              ChatCompletionMessageParam.ofTool(
                  ChatCompletionToolMessageParam.builder()
                      .toolCallId(function.id())
                      .content(results.next().asText())
                      .build()));
        }
      }
    } finally {
      run.end();
    }
    tracerProvider.shutdown().join(30, TimeUnit.SECONDS);
    loggerProvider.shutdown().join(30, TimeUnit.SECONDS);
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("text", text);
    report.put("executed", executed);
    mapper.writeValue(new File(spec.get("report").asText()), report);
  }

  /** A simple span processor that waits for each span's export before the run goes on. */
  private static SpanProcessor exportedOnEnd(OtlpHttpSpanExporter exporter) {
    SpanProcessor simple = SimpleSpanProcessor.create(exporter);
    return new SpanProcessor() {
      @Override
      public void onStart(io.opentelemetry.context.Context parent, io.opentelemetry.sdk.trace.ReadWriteSpan span) {}

      @Override
      public boolean isStartRequired() {
        return false;
      }

      @Override
      public void onEnd(ReadableSpan span) {
        simple.onEnd(span);
        simple.forceFlush().join(30, TimeUnit.SECONDS);
      }

      @Override
      public boolean isEndRequired() {
        return true;
      }

      @Override
      public io.opentelemetry.sdk.common.CompletableResultCode shutdown() {
        return simple.shutdown();
      }
    };
  }

  /** A simple log record processor that waits for each record's export. */
  private static LogRecordProcessor exportedOnEmit(OtlpHttpLogRecordExporter exporter) {
    LogRecordProcessor simple = SimpleLogRecordProcessor.create(exporter);
    return new LogRecordProcessor() {
      @Override
      public void onEmit(io.opentelemetry.context.Context context, io.opentelemetry.sdk.logs.ReadWriteLogRecord record) {
        simple.onEmit(context, record);
        simple.forceFlush().join(30, TimeUnit.SECONDS);
      }

      @Override
      public io.opentelemetry.sdk.common.CompletableResultCode shutdown() {
        return simple.shutdown();
      }
    };
  }
}
