/*
 * One scenario of tools/capture_traces on JetBrains Koog: an AIAgent (the default single-run
 * strategy) whose ToolSet tools return (or throw) what the scenario scripts, on Koog's OpenAI
 * client pointed at the capture's scripted chat-completions server. Tracing is Koog's own
 * OpenTelemetry feature, given a Java OpenTelemetry SDK (setSdk) whose batch processor feeds an
 * OTLP/HTTP protobuf span exporter that sends to the capture's sink; this program shuts that SDK
 * down (flushing every span) before it writes its report.
 *
 * Called by fw_koog.py: java -cp ... capture.CaptureAppKt SPEC.json, SPEC = {system, prompt,
 * results: [{ok: value} | {raise: "Type: message"}], agent, handoff: true|false, baseURL, otlp,
 * verbose: true|false, report: path}. The report {executed, text} is written after every agent
 * closed, so its presence means the export was flushed.
 */
package capture

import ai.koog.agents.core.agent.AIAgent
import ai.koog.agents.core.agent.GraphAIAgent
import ai.koog.agents.core.tools.ToolRegistry
import ai.koog.agents.core.tools.annotations.LLMDescription
import ai.koog.agents.core.tools.annotations.Tool
import ai.koog.agents.core.tools.reflect.ToolSet
import ai.koog.agents.features.opentelemetry.feature.OpenTelemetry
import ai.koog.prompt.executor.clients.openai.OpenAIClientSettings
import ai.koog.prompt.executor.clients.openai.OpenAILLMClient
import ai.koog.prompt.executor.clients.openai.OpenAIModels
import ai.koog.prompt.executor.llms.MultiLLMPromptExecutor
import ai.koog.prompt.executor.model.PromptExecutor
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.kotlin.toOtelKotlinApi
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.resources.Resource
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor
import java.io.File
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/** A search backend failure as the scenario scripts it; its message reaches the model. */
class SearchBackendError(message: String) : RuntimeException(message)

/** The scripted tools: each logs that it really ran, then returns or throws its result. */
@LLMDescription("Support tools")
class SupportTools(private val results: JsonArray) : ToolSet {
    val executed = mutableListOf<String>()

    @Synchronized
    private fun run(name: String): String {
        executed.add(name)
        val result = results.getOrNull(executed.size - 1)?.jsonObject
            ?: error("no scripted result for call ${executed.size}")
        result["raise"]?.let {
            // "SearchBackendError: message": thrown as a Kotlin app would, the type as the
            // exception's class and the message alone as its message.
            val raise = it.jsonPrimitive.content
            throw SearchBackendError(raise.substringAfter(": "))
        }
        return Json.encodeToString(JsonElement.serializer(), result.getValue("ok"))
    }

    @Tool("search_docs")
    @LLMDescription("Search the knowledge base and return matching documents.")
    fun searchDocs(@LLMDescription("search query") query: String): String = run("search_docs")

    @Tool("delete_records")
    @LLMDescription("Delete records from a database table.")
    fun deleteRecords(
        @LLMDescription("table") table: String,
        @LLMDescription("row filter") where: String,
    ): String = run("delete_records")

    @Tool("write_file")
    @LLMDescription("Write a file in the workspace.")
    fun writeFile(
        @LLMDescription("file path") path: String,
        @LLMDescription("file content") content: String,
    ): String = run("write_file")

    @Tool("run_command")
    @LLMDescription("Run a shell command in the workspace.")
    fun runCommand(@LLMDescription("shell command") command: String): String = run("run_command")
}

/** g_handoff: the triage agent hands the question to the research agent through a tool. */
@LLMDescription("Research agent")
class ResearchAgentTool(private val research: () -> GraphAIAgent<String, String>) : ToolSet {
    @Tool("research_agent")
    @LLMDescription("Hand a research question to the research agent; returns its answer.")
    suspend fun researchAgent(@LLMDescription("the question") question: String): String {
        val agent = research()
        try {
            return agent.run(question)
        } finally {
            agent.close()
        }
    }
}

/**
 * What every agent of the run shares: the model client, the tracing switch and one Java
 * OpenTelemetry SDK (a batch processor in front of the OTLP/HTTP exporter), handed to each
 * agent's OpenTelemetry feature with ``setSdk``. The program shuts that SDK down itself
 * (``shutdown``): the feature's own SDK (``addSpanExporter``) drops the spans still queued in
 * its batch processor when it shuts down, which would lose the end of every run.
 */
class Setup(spec: JsonObject, serviceName: String) {
    private val baseUrl = spec.getValue("baseURL").jsonPrimitive.content.removeSuffix("/v1")
    private val otlp = spec.getValue("otlp").jsonPrimitive.content
    private val verbose = spec.getValue("verbose").jsonPrimitive.boolean
    private val executor: PromptExecutor =
        MultiLLMPromptExecutor(OpenAILLMClient("sk-capture", OpenAIClientSettings(baseUrl = baseUrl)))
    private val tracerProvider: SdkTracerProvider = SdkTracerProvider.builder()
        .setResource(
            Resource.getDefault().merge(
                Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), serviceName)),
            ),
        )
        .addSpanProcessor(
            BatchSpanProcessor.builder(
                OtlpHttpSpanExporter.builder().setEndpoint("$otlp/v1/traces").build(),
            ).build(),
        )
        .build()
    private val sdk = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).build()

    /** An agent with its own OpenTelemetry feature on the shared SDK. */
    fun agent(id: String, system: String, tools: ToolRegistry): GraphAIAgent<String, String> =
        AIAgent(
            promptExecutor = executor,
            llmModel = OpenAIModels.Chat.GPT4oMini,
            toolRegistry = tools,
            systemPrompt = system,
            id = id,
        ) {
            install(OpenTelemetry) {
                setSdk(sdk.toOtelKotlinApi())
                setVerbose(verbose)
            }
        }

    /** Export every span still queued and stop the SDK; true when both finished in time. */
    fun shutdown(): Boolean {
        val flushed = tracerProvider.forceFlush().join(30, TimeUnit.SECONDS).isSuccess
        return tracerProvider.shutdown().join(30, TimeUnit.SECONDS).isSuccess && flushed
    }
}

fun main(args: Array<String>) {
    val spec = Json.parseToJsonElement(File(args[0]).readText()).jsonObject
    val handoff = spec.getValue("handoff").jsonPrimitive.boolean
    val setup = Setup(spec, if (handoff) "triage_agent" else spec.getValue("agent").jsonPrimitive.content)
    val tools = SupportTools(spec.getValue("results").jsonArray)
    val system = spec.getValue("system").jsonPrimitive.content
    val agent = if (handoff) {
        val research = ResearchAgentTool {
            setup.agent("research_agent", system, ToolRegistry.builder().tools(tools).build())
        }
        setup.agent(
            "triage_agent",
            "Hand research questions to research_agent.",
            ToolRegistry.builder().tools(research).build(),
        )
    } else {
        setup.agent(
            spec.getValue("agent").jsonPrimitive.content,
            system,
            ToolRegistry.builder().tools(tools).build(),
        )
    }
    val text = runBlocking {
        try {
            agent.run(spec.getValue("prompt").jsonPrimitive.content)
        } finally {
            agent.close()
        }
    }
    check(setup.shutdown()) { "the OpenTelemetry SDK did not flush in time" }
    val report = JsonObject(
        mapOf(
            "executed" to JsonArray(tools.executed.map { JsonPrimitive(it) }),
            "text" to JsonPrimitive(text),
        ),
    )
    File(spec.getValue("report").jsonPrimitive.content).writeText(report.toString())
}
