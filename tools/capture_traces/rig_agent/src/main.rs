//! rig-capture runs one scripted scenario through a rig agent against the scripted fake OpenAI
//! server on 127.0.0.1, for the `rig` capture source.
//!
//! The driver (tools/capture_traces/fw_rig.py) writes a spec file naming the prompt, the system
//! instruction, the model server's base URL, whether content is recorded, and what each tool
//! call returns or fails with. The agent is rig-agent's `AgentBuilder` on rig-core's OpenAI
//! provider, its Chat Completions model (`OpenAI::chat`: the fake server scripts
//! `/v1/chat/completions` only, not the Responses API), with one typed `Tool` per scripted tool;
//! rig runs the multi-turn tool loop itself (`max_turns`). A failing tool returns an error, which
//! rig records on its `execute_tool` span (`gen_ai.tool.call.outcome = "error"`) and hands the
//! model as the tool's result. `g_handoff`: the research agent converted into a tool
//! (`Agent::into_tool`, arguments `{"prompt": ...}`) on the triage agent.
//!
//! rig emits `tracing` spans carrying GenAI attributes (`invoke_agent`, `chat`, `execute_tool`);
//! a `tracing-opentelemetry` layer turns them into OpenTelemetry spans on an SDK tracer provider
//! whose batch processor feeds the OTLP/HTTP protobuf exporter (OTEL_EXPORTER_OTLP_ENDPOINT: the
//! capture's sink). The provider is shut down, flushing the batch, before the report is printed,
//! so a report means the export is complete. The layer takes spans and events at INFO and above,
//! as an application's default filter would: rig's DEBUG events repeat tool arguments whatever
//! the content setting says.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use rig_agent::prelude::*;
use rig_agent::tool::{ToolContext, ToolExecutionError, ToolOutput};
use rig_core::providers::openai::OpenAIConfig;
use serde::Deserialize;
use serde_json::{Value, json};
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

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    system: String,
    prompt: String,
    #[serde(rename = "baseURL")]
    base_url: String,
    model: String,
    agent: String,
    handoff: bool,
    content: bool,
    calls: Vec<Call>,
}

/// The scripted tools' results, queued per tool name (a turn's calls may run in any order),
/// and the tools that really ran, in the order they ran.
#[derive(Default)]
struct Scripted {
    queues: Mutex<HashMap<String, Vec<Call>>>,
    executed: Mutex<Vec<String>>,
}

/// A scripted tool failure: the message the scenario scripts (`SearchBackendError: ...`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ScriptedError(String);

impl Scripted {
    fn next(&self, name: &str) -> Result<ToolOutput, ScriptedError> {
        self.executed
            .lock()
            .map_err(|_| ScriptedError("lock poisoned".into()))?
            .push(name.to_string());
        let mut queues = self
            .queues
            .lock()
            .map_err(|_| ScriptedError("lock poisoned".into()))?;
        let queue = queues.entry(name.to_string()).or_default();
        if queue.is_empty() {
            return Err(ScriptedError(format!("no scripted result left for {name}")));
        }
        let call = queue.remove(0);
        if let Some(message) = call.raise {
            return Err(ScriptedError(message));
        }
        Ok(match call.ok.unwrap_or(Value::Null) {
            Value::String(text) => ToolOutput::text(text),
            other => ToolOutput::json(other),
        })
    }
}

/// The model sees a failure's own message, as a tool author hands domain errors on
/// (rig's default feedback would be a generic "tool failed" line).
fn feedback(error: ScriptedError) -> ToolExecutionError {
    let message = error.0.clone();
    ToolExecutionError::from_error(error).with_model_feedback(message)
}

macro_rules! scripted_tool {
    ($ty:ident, $name:literal, $description:literal, $parameters:expr) => {
        struct $ty(Arc<Scripted>);

        impl Tool for $ty {
            const NAME: &'static str = $name;
            type Args = Value;
            type Output = ToolOutput;
            type Error = ScriptedError;

            fn description(&self) -> String {
                $description.to_string()
            }

            fn parameters(&self) -> Value {
                $parameters
            }

            fn map_error(&self, error: ScriptedError) -> ToolExecutionError {
                feedback(error)
            }

            async fn call(
                &self,
                _context: &mut ToolContext,
                _args: Value,
            ) -> Result<ToolOutput, ScriptedError> {
                self.0.next($name)
            }
        }
    };
}

fn object(properties: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|p| (p.to_string(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": props, "required": properties})
}

scripted_tool!(
    SearchDocs,
    "search_docs",
    "Search the knowledge base and return matching documents.",
    object(&["query"])
);
scripted_tool!(
    DeleteRecords,
    "delete_records",
    "Delete records from a database table.",
    object(&["table", "where"])
);
scripted_tool!(
    WriteFile,
    "write_file",
    "Write a file in the workspace.",
    object(&["path", "content"])
);
scripted_tool!(
    RunCommand,
    "run_command",
    "Run a shell command in the workspace.",
    object(&["command"])
);

fn agent(
    model: &rig_core::Model<rig_core::providers::openai::wire::Chat>,
    name: &str,
    system: &str,
    content: bool,
    scripted: &Arc<Scripted>,
) -> Agent {
    AgentBuilder::new(model.clone())
        .name(name)
        .preamble(system)
        .record_content_telemetry(content)
        .default_max_turns(10)
        .tool(SearchDocs(scripted.clone()))
        .tool(DeleteRecords(scripted.clone()))
        .tool(WriteFile(scripted.clone()))
        .tool(RunCommand(scripted.clone()))
        .build()
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
        .with_tracer(provider.tracer("rig-capture"))
        .with_filter(LevelFilter::INFO);
    let subscriber = Registry::default().with(layer);
    tracing::subscriber::set_global_default(subscriber).map_err(|e| format!("subscriber: {e}"))?;

    let model = OpenAIConfig::new("capture-not-a-key")
        .with_base_url(spec.base_url.clone())
        .client()
        .chat(spec.model.clone());
    let scripted = Arc::new(Scripted::default());
    for call in &spec.calls {
        let mut queues = scripted.queues.lock().map_err(|e| e.to_string())?;
        queues
            .entry(call.tool.clone())
            .or_default()
            .push(call.clone());
    }
    let entry = if spec.handoff {
        let research = agent(
            &model,
            "research_agent",
            &spec.system,
            spec.content,
            &scripted,
        );
        let research_tool = research.into_tool().map_err(|e| e.to_string())?;
        AgentBuilder::new(model.clone())
            .name("triage_agent")
            .preamble("Hand research questions to research_agent.")
            .record_content_telemetry(spec.content)
            .default_max_turns(10)
            .dynamic_tool(research_tool)
            .build()
    } else {
        agent(&model, &spec.agent, &spec.system, spec.content, &scripted)
    };
    let result = entry.prompt(spec.prompt.as_str()).max_turns(10).await;
    drop(entry);
    provider
        .shutdown()
        .map_err(|e| format!("tracer shutdown: {e}"))?;
    let response = result.map_err(|e| format!("run: {e}"))?;
    let executed = scripted.executed.lock().map_err(|e| e.to_string())?.clone();
    Ok(json!({"text": response.output(), "executed": executed}))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: rig-capture SPEC.json");
        std::process::exit(2);
    }
    let spec: Spec = match std::fs::read_to_string(&args[1])
        .map_err(|e| e.to_string())
        .and_then(|raw| serde_json::from_str(&raw).map_err(|e| e.to_string()))
    {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
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
