//! The Swiftide capture program (tools/capture_traces/fw_swiftide.py): a Swiftide agent run on
//! the scripted fake OpenAI server, its `tracing` spans exported over OTLP/HTTP protobuf.
//!
//! The driver writes a spec file naming the prompt, the system prompt, the fake server's base
//! URL and what each scripted tool call returns or fails with. The agent is
//! `swiftide_agents::Agent` on swiftide-integrations' OpenAI chat completions client (an
//! `async_openai` client whose API base is the fake server), with one `Tool` per scripted tool
//! (Swiftide's default `stop` tool stays offered, as in any Swiftide agent); Swiftide runs the
//! loop itself and ends it when the model answers without tool calls. A failing tool returns an
//! error, which Swiftide hands the model as a failed tool output (its text the error's).
//!
//! Swiftide's `tracing` spans (`agent.query`, `step-N`, the client's `complete`, `tool.<name>`,
//! `add_message` with the message as a field) become OpenTelemetry spans through a
//! `tracing-opentelemetry` layer on an SDK tracer provider whose batch exporter sends to
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (the capture's sink). The layer takes spans and events at INFO
//! and above, the level an application runs at. The provider is shut down, flushing the
//! batch, before the report is printed, so a report means the export is complete.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::anyhow;
use async_trait::async_trait;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde::Deserialize;
use serde_json::{Value, json};
use swiftide_agents::Agent;
use swiftide_core::AgentContext;
use swiftide_core::chat_completion::errors::ToolError;
use swiftide_core::chat_completion::{ChatMessage, Tool, ToolCall, ToolOutput, ToolSpec};
use swiftide_integrations::openai::{OpenAI, OpenAIConfig};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

/// What one scripted tool call returns (`ok`) or fails with (`raise`), in script order.
#[derive(Debug, Clone, Deserialize)]
struct Call {
    tool: String,
    ok: Option<Value>,
    raise: Option<String>,
}

/// A tool schema as the chat completions API takes it (`scenarios.TOOL_SCHEMAS`).
#[derive(Debug, Clone, Deserialize)]
struct Schema {
    function: Function,
}

#[derive(Debug, Clone, Deserialize)]
struct Function {
    name: String,
    description: String,
    parameters: Value,
}

#[derive(Debug, Deserialize)]
struct Spec {
    system: String,
    prompt: String,
    #[serde(rename = "baseURL")]
    base_url: String,
    model: String,
    agent: String,
    tools: Vec<Schema>,
    calls: Vec<Call>,
}

/// The scripted tools' results, queued per tool name (a turn's calls may run in any order,
/// Swiftide runs them concurrently), and the tools that really ran.
#[derive(Default)]
struct Scripted {
    queues: Mutex<HashMap<String, Vec<Call>>>,
    executed: Mutex<Vec<String>>,
}

/// One scripted tool: its schema from the spec, its results from the queue of its name.
#[derive(Clone)]
struct ScriptedTool {
    schema: Function,
    scripted: Arc<Scripted>,
}

#[async_trait]
impl Tool for ScriptedTool {
    async fn invoke(
        &self,
        _agent_context: &dyn AgentContext,
        _tool_call: &ToolCall,
    ) -> Result<ToolOutput, ToolError> {
        let name = self.schema.name.clone();
        let call = {
            let mut queues = self.scripted.queues.lock().expect("queues");
            let queue = queues.entry(name.clone()).or_default();
            if queue.is_empty() {
                return Err(ToolError::Unknown(anyhow!("{name}: no scripted result left")));
            }
            queue.remove(0)
        };
        self.scripted.executed.lock().expect("executed").push(name);
        match (call.ok, call.raise) {
            (_, Some(raised)) => Err(ToolError::Unknown(anyhow!(raised))),
            (Some(value), None) => Ok(ToolOutput::text(value.to_string())),
            (None, None) => Ok(ToolOutput::text("null")),
        }
    }

    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.schema.name.as_str())
    }

    fn tool_spec(&self) -> ToolSpec {
        let schema = schemars::Schema::try_from(self.schema.parameters.clone())
            .expect("a JSON schema object");
        ToolSpec::builder()
            .name(self.schema.name.clone())
            .description(self.schema.description.clone())
            .parameters_schema(schema)
            .build()
            .expect("tool spec")
    }
}

async fn run(spec: Spec) -> Result<Value, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(|e| format!("exporter: {e}"))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder_empty()
                .with_service_name(spec.agent.clone())
                .build(),
        )
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("swiftide-capture"))
        .with_filter(LevelFilter::INFO);
    let subscriber = Registry::default().with(layer);
    tracing::subscriber::set_global_default(subscriber).map_err(|e| format!("subscriber: {e}"))?;

    let config = OpenAIConfig::new()
        .with_api_base(spec.base_url.trim_end_matches('/'))
        .with_api_key("capture-not-a-key");
    let llm = OpenAI::builder()
        .client(async_openai::Client::with_config(config))
        .default_prompt_model(spec.model.clone())
        .build()
        .map_err(|e| format!("openai: {e}"))?;
    let scripted = Arc::new(Scripted::default());
    for call in &spec.calls {
        let mut queues = scripted.queues.lock().map_err(|e| e.to_string())?;
        queues
            .entry(call.tool.clone())
            .or_default()
            .push(call.clone());
    }
    let tools: Vec<Box<dyn Tool>> = spec
        .tools
        .iter()
        .map(|schema| {
            Box::new(ScriptedTool {
                schema: schema.function.clone(),
                scripted: scripted.clone(),
            }) as Box<dyn Tool>
        })
        .collect();
    let mut agent = Agent::builder()
        .name(spec.agent.as_str())
        .llm(&llm)
        .system_prompt(spec.system.clone())
        .tools(tools)
        .limit(10)
        .build()
        .map_err(|e| format!("agent: {e}"))?;
    let result = agent.query(spec.prompt.clone()).await;
    let history = agent.history().await;
    drop(agent);
    provider
        .shutdown()
        .map_err(|e| format!("tracer shutdown: {e}"))?;
    result.map_err(|e| format!("run: {e}"))?;
    let history = history.map_err(|e| format!("history: {e}"))?;
    let text = history.iter().rev().find_map(|message| match message {
        ChatMessage::Assistant(Some(text), None) => Some(text.clone()),
        _ => None,
    });
    let executed = scripted.executed.lock().map_err(|e| e.to_string())?.clone();
    Ok(json!({"text": text, "executed": executed}))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: swiftide-capture SPEC.json");
        std::process::exit(2);
    }
    let spec: Spec = match std::fs::read_to_string(&args[1])
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    match run(spec).await {
        Ok(report) => println!("{report}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
