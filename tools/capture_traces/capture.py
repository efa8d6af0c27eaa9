"""Re-capture real-trace fixtures from the real instrumentation libraries.

A hand-written chat-completions tool loop on the ``openai`` client talks to a scripted fake
OpenAI server on 127.0.0.1 (``fake_openai.py``) while a real instrumentation records it.
Spans (and log records) are exported as the OTLP exporter would send them (``.raw/*.pb``) and
as canonical OTLP/JSON, next to an ``EXPECTED.md`` in the format ``tests/mapping`` reads.

    python tools/capture_traces/capture.py --source openai-v2 --out /tmp/captured
    python tools/capture_traces/capture.py --source openllmetry-openai --scenario a_happy

Each (scenario, content on/off) runs in its own subprocess: instrumentations read their
content-capture settings from the environment once, when instrumenting.
See README.md next to this file for the packages each source needs.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scenarios import (  # noqa: E402 - after sys.path
    DENIED_OUTCOME,
    REJECTED_OUTCOME,
    SCENARIOS,
    TOOL_SCHEMAS,
    Scenario,
    SearchBackendError,
    Tools,
    answer_type,
)

FAKE_OPENAI = "scripted fake OpenAI server on 127.0.0.1 (non-streaming)"
OPENAI_AGENTS_OUTPUT_TYPE = (
    "`Agent(output_type=SupportAnswer)` (a pydantic model): the SDK asks the chat-completions "
    "model for a `json_schema` response format and parses its JSON text"
)
"""``structured_via`` (``r_structured_*``) of the OpenAI Agents SDK sources."""
PYDANTIC_AI_OUTPUT_TOOL = (
    "`Agent(output_type=SupportAnswer)` (a pydantic model): pydantic-ai offers the model its "
    "output tool `final_result`, whose arguments are the answer, and ends the run on that call"
)
ADK_OUTPUT_SCHEMA = (
    "`LlmAgent(output_schema=SupportAnswer)` beside the agent's tools: for LiteLLM's OpenAI "
    "models, which take both, ADK sends the schema as the request's `json_schema` response "
    "format with the tools (not its `set_model_response` tool) and the model answers the JSON "
    "text"
)
LANGGRAPH_RESPONSE_FORMAT = (
    "`create_react_agent(response_format=SupportAnswer)`: after the tool loop's last answer "
    "the prebuilt agent makes one more model call asking for the output type "
    "(`with_structured_output`), whose answer is the run's `structured_response`"
)
CREATE_AGENT_TOOL_STRATEGY = (
    "`create_agent(response_format=ToolStrategy(SupportAnswer))`: LangChain offers the model an "
    "output tool named after the type, whose arguments are the run's `structured_response`; "
    "the agent answers that call with a `Returning structured response: ...` tool message and "
    "ends"
)
CREWAI_OUTPUT_PYDANTIC = (
    "`Task(output_pydantic=SupportAnswer)`: the crew's answer parsed into the type "
    "(`CrewOutput.pydantic`)"
)
LLAMAINDEX_OUTPUT_CLS = (
    "`FunctionAgent(output_cls=SupportAnswer)`: after the agent's answer LlamaIndex makes one "
    "more model call asking for the type, whose result is the run's `structured_response`"
)
AGNO_OUTPUT_SCHEMA = (
    "`Agent(output_schema=SupportAnswer)`: Agno asks the model for the type as the request's "
    "`json_schema` response format, beside the tools, and parses its JSON text"
)
STRANDS_OUTPUT_MODEL = (
    "`agent(prompt, structured_output_model=SupportAnswer)`: Strands offers the model a "
    "structured-output tool named after the type, whose arguments are the answer"
)
FAKE_ANTHROPIC = (
    "scripted fake Anthropic Messages server on 127.0.0.1 (`fake_anthropic.py`, non-streaming, "
    "`tool_use` / `tool_result` blocks)"
)
ANTHROPIC_NOTES = [
    "**Tool failures:** sent back as a `tool_result` block with `is_error: true` and the error "
    "JSON; the raw client loop makes no tool spans (tool calls live in the model spans only).",
    "**Unrecognised span:** `agent_run`, the capture app's own attribute-less root span (as in "
    "the raw OpenAI sources): no convention can know an application's span, so the checks that "
    "must see every span (`tool_not_called`, `citations_grounded`, `no_network`) report "
    "missing evidence unless a contract sets `coverage: lenient`.",
]

INSTRUCTOR_RESPONSE_MODEL = (
    "one more call through Instructor's patched client with `response_model=SupportAnswer` "
    "after the tool loop's text answer (Instructor's `TOOLS` mode: a function named after the "
    "type, forced; its arguments validated into the object)"
)
RAW_LOOP_NOTES = [
    "**Tool failures:** sent back as a `role: tool` message with the error JSON; the raw "
    "client loop makes no tool spans (tool calls live in the model spans only).",
    ANTHROPIC_NOTES[1],
]
"""Notes of a hand-written tool loop on a model client whose instrumentation records only
the model calls."""
LOGFIRE_NO_SWITCH = (
    "**Content off:** Logfire has no content switch for its model-client instrumentations "
    "(its scrubbing redacts values that look like secrets, not messages): the `.nocontent` "
    "variant is the same run."
)
FAKE_AZURE_AGENTS = (
    "scripted Azure AI Agents service on 127.0.0.1 (`fake_azure_agents.py`: the threads/runs "
    "REST API, the model loop inside it; runs polled, tool outputs posted by the client)"
)
FAKE_COHERE = (
    "scripted fake Cohere server on 127.0.0.1 (`fake_cohere.py`, `/v2/chat`, non-streaming; "
    "text as content items, a `tool_plan` beside each turn's tool calls)"
)
FAKE_OLLAMA = (
    "scripted fake Ollama server on 127.0.0.1 (`fake_ollama.py`, `/api/chat`, non-streaming; "
    "tool calls without ids, arguments as JSON objects)"
)
OLLAMA_NO_RETRY = (
    "Ollama's Python client makes one attempt (it has no retry), so `Client.chat` raises "
    "`ollama.ResponseError` (status code 503)"
)
"""``u_model_retry``: why an Ollama client run does not recover (``"model_retry_fails"``)."""
OLLAMA_NOTES = [
    RAW_LOOP_NOTES[0],
    "**Call ids:** Ollama's API gives tool calls no id: each result goes back as a `role: "
    "tool` message naming the tool (`tool_name`), so only names and order tie a result to "
    "its call.",
    ANTHROPIC_NOTES[1],
]
SPRING_AI_HANDOFF = (
    'the research agent\'s ChatClient as a tool (`research_agent {"question": ...}`)'
)


def spring_ai_notes(tool_span: str) -> list[str]:
    """EXPECTED.md's notes for the Spring AI sources (1.1 and 2.0 behave alike), which differ
    only in the name of the span Spring AI records a tool call as (``tool_span``)."""
    return [
        "**Tool failures:** the `@Tool` method throws; Spring AI's default "
        "`ToolExecutionExceptionProcessor` sends the exception's message to the model as the "
        f"tool's result, and the `{tool_span}` span ends OK: only the result attribute "
        "(content on) shows the failure.",
        "**Content off:** Spring AI's defaults. On: "
        "`spring.ai.tools.observations.include-content=true` (tool arguments and results as "
        "span attributes) and the chat model's and chat client's `log-prompt` / "
        "`log-completion`, which write messages to the application log only: no span of either "
        "variant holds the model's messages.",
    ]


OPENAI_AGENTS_MAX_TURNS = {
    "via": "`Runner.run(..., max_turns=4)` (the SDK counts one turn per model call)",
    "error": "MaxTurnsExceeded",
}
"""``turn_limit`` (``q_turn_limit``): how a source's framework is limited and how the limit
ends the run: ``error`` names the exception it raises (no answer), ``answer`` the text the run
returns instead (empty: the model's own forced answer, ``LIMIT_ANSWER``), ``how`` says why."""
PYDANTIC_AI_REQUEST_LIMIT = {
    "via": "`agent.run_sync(..., usage_limits=UsageLimits(request_limit=4))`",
    "error": "UsageLimitExceeded",
}
ADK_MAX_LLM_CALLS = {
    "via": "`runner.run_async(..., run_config=RunConfig(max_llm_calls=4))`",
    "error": "LlmCallsLimitExceededError",
}
LANGGRAPH_RECURSION_LIMIT = {
    "via": '`graph.invoke(..., {"recursion_limit": 10})` (two graph steps per model call and '
    "its tools)",
    "answer": "Sorry, need more steps to process this request.",
    "how": "the prebuilt ReAct agent's own text, put in place of the fifth model call's "
    "search request when fewer than two steps remain; that search never ran",
}
LLAMAINDEX_MAX_ITERATIONS = {
    "via": "`workflow.run(..., max_iterations=5)` (LlamaIndex counts each model output and "
    "raises on the fifth, before its search runs)",
    "error": "WorkflowRuntimeError",
}
SMOLAGENTS_MAX_STEPS = {
    "via": "`agent.run(..., max_steps=4)`",
    "answer": "",
    "how": "past its last step smolagents asks the model for a final answer itself, offering "
    "no tools, and returns that text",
}
CREWAI_MAX_ITER = {
    "via": "`Agent(..., max_iter=4)`",
    "answer": "",
    "how": "past its last iteration CrewAI asks the model for a final answer itself, offering "
    "no tools, and returns that text",
}
AGENT_EXECUTOR_MAX_ITERATIONS = {
    "via": "`AgentExecutor(..., max_iterations=4)`",
    "answer": "Agent stopped due to max iterations.",
    "how": "the executor's own text (its default early stopping method, `force`), returned "
    "after the fourth search ran; no model call read that search's result",
}
AUTOGEN_MAX_TOOL_ITERATIONS = {
    "via": "`AssistantAgent(..., max_tool_iterations=4)`",
    "answer": "{'documents': [{'id': 'doc-4', 'title': 'Enterprise contract terms', 'text': "
    "'Contract terms override the standard policy where they differ.'}]}",
    "how": "the agent's `ToolCallSummaryMessage`, the fourth search's result as text (its "
    "default summary format), returned after that search ran; no model call read it",
}
OPENINFERENCE_HIDDEN = {
    k: "true"
    for k in (
        "OPENINFERENCE_HIDE_INPUTS",
        "OPENINFERENCE_HIDE_OUTPUTS",
        "OPENINFERENCE_HIDE_INPUT_MESSAGES",
        "OPENINFERENCE_HIDE_OUTPUT_MESSAGES",
    )
}
"""OpenInference's content switch set to off: inputs, outputs and messages hidden."""

RETRIEVER_RUN: dict[str, Any] = {
    "scenarios": [
        "a_happy",
        "b_tool_retry",
        "d_forbidden_tool",
        "e_fabricated_citation",
        "f_degraded",
        "j_undisclosed_failure",
        "k_unfounded_uncertainty",
    ],
    "tool_spans": True,
    "notes": [
        "**Retriever:** `search_docs` is the framework's retriever tool; each call runs the "
        "retriever (a retriever span, where the instrumentation records one, holding the "
        "documents it returned: doc-17 and doc-42 when the search works) inside the tool "
        "call. A failing search raises in the retriever; an empty one returns no documents."
    ],
}
"""The retriever sources (``fw_retrievers.py``): the support scenarios whose search a
retriever changes (a search that works, fails once, returns what the answer misquotes,
returns nothing, fails and is hidden, or works and is not believed) and a forbidden call
beside it; their default ``--scenario`` list. One agent, one user turn."""

DEEPAGENTS_RUN = {
    "handoff_via": '`task {"description": ..., "subagent_type": "research_agent"}` '
    "(Deep Agents' sub-agent tool)",
    "notes": [
        "**Tool failures:** the tool raises; ToolErrorMiddleware sends the model an "
        "error ToolMessage (`Error: SearchBackendError(...)`).",
        "**Built-in tools:** the harness offers the model ls, read_file, "
        "edit_file, delete, glob, grep, execute and task (the application's "
        "write_file replaces the harness's); the script calls none of them but task, "
        "for g_handoff.",
    ],
}
"""What both Deep Agents sources' EXPECTED.md say about the run (the same agents, two tracers)."""

LANGSMITH_OTEL = {
    "LANGSMITH_TRACING": "true",
    "LANGSMITH_OTEL_ENABLED": "true",
    "LANGSMITH_OTEL_ONLY": "true",
    "LANGSMITH_API_KEY": "capture-not-a-key",
    "LANGSMITH_ENDPOINT": "http://127.0.0.1:9",
}
"""The LangSmith SDK's OpenTelemetry-only mode; its API endpoint is a closed local port, so
a run that tried to reach LangSmith would fail loudly instead of leaving the machine."""


def pydantic_ai_version_source(version: int, layout: str) -> dict[str, Any]:
    """A SOURCES entry for the pydantic-ai-openinference agents traced by pydantic-ai's own
    instrumentation alone with ``InstrumentationSettings(version=version)``: the data format
    is a setting users pick, so each one is graded held out like a framework of its own.
    ``layout`` says what that version writes."""
    return {
        "what": "the pydantic-ai-openinference agents (OpenAIChatModel on the fake server, "
        "tool_plain tools, ModelRetry for a failing search; a delegation tool for g_handoff) "
        "traced by pydantic-ai's own instrumentation alone with "
        f"InstrumentationSettings(version={version}): {layout}",
        "packages": ["pydantic-ai-slim", "openai"],
        "driver": "fw_pydantic_ai_settings",
        "tool_spans": True,
        "handoff_via": "a delegation tool running the research agent "
        '(`delegate_to_research_agent {"question": ...}`)',
        "notes": [
            "**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
            "a retry prompt and the tool span ends with status ERROR.",
            "**Content off:** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false`, "
            "which the driver turns into `include_content=False`.",
        ],
        "on": {"PYDANTIC_AI_INSTRUMENTATION_VERSION": str(version)},
        "off": {
            "PYDANTIC_AI_INSTRUMENTATION_VERSION": str(version),
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false",
        },
    }


def google_genai_content_mode_source(mode: str, layout: str) -> dict[str, Any]:
    """A SOURCES entry for the google-genai tool loop with content captured in another
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` mode than ``google-genai``'s
    SPAN_ONLY: the mode moves the messages between spans and log records, so each is graded
    held out. ``layout`` says where that mode writes them."""
    return {
        "what": "hand-written generate_content tool loop on the google-genai client "
        "(function_declarations, automatic function calling off), recorded by "
        "opentelemetry-instrumentation-google-genai (python-contrib) with "
        f"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT={mode}: {layout}",
        "packages": ["google-genai", "opentelemetry-instrumentation-google-genai"],
        "driver": "fw_google_genai",
        "model": "scripted fake Gemini API server on 127.0.0.1 (`fake_gemini.py`, "
        "non-streaming `:generateContent`, `functionCall` / `functionResponse` parts without "
        "call ids)",
        "notes": [
            "**Tool failures:** sent back as a `functionResponse` part whose response is "
            "the error JSON; the raw client loop makes no tool spans (tool calls live in "
            "the model calls' messages only).",
            ANTHROPIC_NOTES[1],
        ],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": mode},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    }


def google_adk_opt_in_source(schema: str, mode: str, layout: str) -> dict[str, Any]:
    """A SOURCES entry for the google-adk agents under
    ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` with content captured in
    ``mode`` (``schema`` ``"1"`` pins ADK's legacy telemetry schema, ``""`` keeps its default):
    what ADK honours of the GenAI opt-in, graded held out. ``layout`` says what it writes."""
    schema_env = {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": schema} if schema else {}
    opt_in = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental", **schema_env}
    return {
        "what": "the google-adk agent with OTEL_SEMCONV_STABILITY_OPT_IN="
        "gen_ai_latest_experimental"
        + (f" and ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN={schema}" if schema else "")
        + f", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT={mode}: {layout}",
        "packages": ["google-adk", "litellm", "openai"],
        "driver": "fw_adk",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": 'ADK\'s `transfer_to_agent {"agent_name": "research_agent"}`',
        "notes": [
            "**Tool failures:** the tool raises; the agent's on_tool_error_callback "
            'sends the model `{"error": "SearchBackendError: ..."}`.',
        ],
        "on": {**opt_in, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": mode},
        "off": {
            **opt_in,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT",
            "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false",
        },
    }


GENAI_NO_RETRY = (
    "the `google-genai` client makes one attempt unless `HttpOptions.retry_options` is set "
    "(its default), so `models.generate_content` raises `google.genai.errors.ServerError`"
)
"""``u_model_retry``: why a google-genai client run does not recover (``"model_retry_fails"``)."""
AI_SDK_RETRY = (
    "the AI SDK's own retry (`maxRetries` 2 by default, honouring `retry-after-ms`) around the "
    "provider call, each attempt an `ai.generateText.doGenerate` span: the failed one ends "
    "with status ERROR and an `exception` event, the next one answers"
)
"""``u_model_retry``: who retries the model call in the AI SDK (``"model_retry_by"``)."""


SOURCES: dict[str, dict[str, Any]] = {
    "openai-v2": {
        "what": "opentelemetry-instrumentation-openai-v2 (python-contrib) on the openai client",
        "packages": [
            "openai",
            "opentelemetry-instrumentation-openai-v2",
            "opentelemetry-util-genai",
        ],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openai-v2-events": {
        "what": "opentelemetry-instrumentation-openai-v2 (python-contrib) on the openai client "
        "with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY: messages only in "
        "gen_ai.client.inference.operation.details log records, none on the spans",
        "packages": [
            "openai",
            "opentelemetry-instrumentation-openai-v2",
            "opentelemetry-util-genai",
        ],
        "on": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "genai-openai": {
        "what": "opentelemetry-instrumentation-genai-openai (the OpenTelemetry project's GenAI "
        "instrumentation, the successor of python-contrib's opentelemetry-instrumentation-"
        "openai-v2, on opentelemetry-util-genai) on the openai client",
        "packages": ["openai", "opentelemetry-instrumentation-genai-openai",
                     "opentelemetry-util-genai"],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "openinference-openai": {
        "what": "openinference-instrumentation-openai (Arize OpenInference) on the openai client",
        "packages": ["openai", "openinference-instrumentation-openai"],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openllmetry-openai": {
        "what": "opentelemetry-instrumentation-openai (Traceloop OpenLLMetry) on the openai client",
        "packages": ["openai", "opentelemetry-instrumentation-openai"],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openllmetry-openai-legacy": {
        "what": "opentelemetry-instrumentation-openai (OpenLLMetry) before 2026-03 (e.g. 0.47.3 "
        "with openai<2 and opentelemetry-sdk 1.36): indexed gen_ai.prompt.N.* / "
        "gen_ai.completion.N.*",
        "packages": ["openai", "opentelemetry-instrumentation-openai"],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "traceloop-sdk": {
        "what": "traceloop-sdk: the tool loop in an @agent, each tool an @tool (OpenLLMetry "
        "decorators, traceloop.span.kind), with the SDK's OpenAI instrumentation",
        "packages": ["openai", "traceloop-sdk", "opentelemetry-instrumentation-openai"],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "traceloop-sdk-latest": {
        "what": "the traceloop-sdk app on traceloop-sdk 0.62 and its OpenAI instrumentation "
        "0.62 (openai 3): model calls as GenAI semantic-convention spans (gen_ai.input.messages "
        "/ gen_ai.output.messages) and gen_ai.tool.name on the @tool spans, where 0.47 wrote "
        "indexed gen_ai.prompt.N.* / gen_ai.completion.N.* and traceloop.workflow.name",
        "packages": ["openai", "traceloop-sdk", "opentelemetry-instrumentation-openai"],
        "tool_spans": True,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "vercel-ai-sdk-legacy": {
        "what": "Vercel AI SDK 4 generateText with experimental_telemetry (legacy ai.* spans), "
        "its MockLanguageModelV1 scripted in-process (node vercel_legacy.mjs)",
        "packages": [],
        "node": ["ai", "@opentelemetry/sdk-trace-base"],
        "on": {},
        "off": {},
    },
    "mastra": {
        "what": "Mastra (@mastra/core Agent with createTool tools, the AI SDK's "
        "OpenAI-compatible provider on the fake server; a supervisor agent with "
        "agents: {research_agent} for g_handoff) traced by Mastra's own observability with "
        "@mastra/otel-exporter (node mastra.mjs, driven by fw_mastra.py)",
        "packages": [],
        "node": ["@mastra/core", "@mastra/observability", "@mastra/otel-exporter",
                 "@ai-sdk/openai-compatible", "@opentelemetry/sdk-trace-base"],
        "node_runner": "fw_mastra:run_mastra",
        "tool_spans": True,
        "model_retry_fails": "Mastra's `Agent` retries a failed model call `maxRetries` times, "
        "0 unless configured (its AI SDK call gets the same 0), so `agent.generate` returns "
        "the error",
        "handoff_via": "Mastra's sub-agent tool (`agent-research_agent {\"prompt\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; Mastra sends the model the error and "
                  "sets the tool span's status to ERROR with an `exception` event.",
                  "**Content off:** Mastra's per-run `tracingOptions: {hideInput: true, "
                  "hideOutput: true}`; the `agent_step` spans still carry the provider's raw "
                  "response in `mastra.metadata.body` (not read by the mappings)."],
        "on": {},
        "off": {},
    },
    "langgraphjs-openinference": {
        "what": "LangGraph.js prebuilt ReAct agents (createReactAgent with a ToolNode, "
        "@langchain/openai ChatOpenAI on the fake server; a @langchain/langgraph-swarm handoff "
        "for g_handoff) traced by @arizeai/openinference-instrumentation-langchain on the "
        "OpenTelemetry JS SDK, its OTLP/HTTP protobuf exporter sending to the capture's sink "
        "(node langgraphjs.mjs, driven by fw_langgraphjs.py)",
        "packages": [],
        "node": ["@langchain/langgraph", "@langchain/langgraph-swarm", "@langchain/core",
                 "@langchain/openai", "@arizeai/openinference-instrumentation-langchain",
                 "@opentelemetry/sdk-trace-node", "@opentelemetry/exporter-trace-otlp-proto"],
        "node_runner": "fw_langgraphjs:run_langgraphjs",
        "tool_spans": True,
        "handoff_via": "the swarm's handoff tool (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the tool throws; the ToolNode hands the model an error "
                  "`ToolMessage` and the tool span's status is ERROR.",
                  "**Content off:** OpenInference's trace config (`hideInputs`, `hideOutputs`, "
                  "`hideInputMessages`, `hideOutputMessages`), as `OPENINFERENCE_HIDE_*=true`."],
        "on": {},
        "off": {},
    },
    "openllmetry-js": {
        "what": "the langgraphjs-openinference agents (LangGraph.js createReactAgent with a "
        "ToolNode, @langchain/openai ChatOpenAI on the fake server, a @langchain/langgraph-swarm "
        "handoff for g_handoff; node langgraphjs.mjs, driven by fw_langgraphjs.py) traced by "
        "OpenLLMetry JS (@traceloop/node-server-sdk: traceloop.initialize with its LangChain "
        "instrumentation, the run in traceloop.withAgent), its span processor given an "
        "OTLP/HTTP protobuf exporter that sends to the capture's sink",
        "packages": [],
        "node": ["@traceloop/node-server-sdk", "@traceloop/instrumentation-langchain",
                 "@langchain/langgraph", "@langchain/langgraph-swarm", "@langchain/core",
                 "@langchain/openai"],
        "node_runner": "fw_langgraphjs:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "the swarm's handoff tool (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the tool throws; the ToolNode hands the model an error "
                  "`ToolMessage` and the tool span's status is ERROR.",
                  "**Content off:** `traceloop.initialize({traceContent: false})` (as "
                  "`TRACELOOP_TRACE_CONTENT=false`)."],
        "on": {},
        "off": {},
    },
    "genkit": {
        "what": "Firebase Genkit flows (one per agent: ai.generate with ai.defineTool tools and "
        "maxTurns 10 on @genkit-ai/compat-oai's OpenAI plugin, its baseURL the fake server; the "
        "research agent's flow called from a research_agent tool for g_handoff) traced by "
        "Genkit's own OpenTelemetry instrumentation, enableTelemetry() adding an OTLP/HTTP "
        "protobuf exporter that sends to the capture's sink (node genkit.mjs, driven by "
        "fw_genkit.py)",
        "packages": [],
        "node": ["genkit", "@genkit-ai/compat-oai", "@opentelemetry/sdk-node",
                 "@opentelemetry/exporter-trace-otlp-proto"],
        "node_runner": "fw_genkit:run_genkit",
        "tool_spans": True,
        "handoff_via": "the research agent's flow as a tool (`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** a Genkit tool that throws ends the whole generate call, so "
                  "the failing tool returns `{\"error\": \"SearchBackendError: ...\"}` for the "
                  "model; its span ends OK (`genkit:state: success`).",
                  "**Content off:** Genkit has no switch: every action's input and output is "
                  "recorded (`genkit:input` / `genkit:output`), so the `.nocontent` variant is "
                  "the same run."],
        "on": {},
        "off": {},
    },
    "spring-ai": {
        "what": "Spring AI 1.1 on Spring Boot 3.5 (a ChatClient with @Tool methods on "
        "spring-ai-starter-model-openai, its base URL the fake server; the research agent's "
        "ChatClient called from a research_agent tool for g_handoff) traced by Spring AI's "
        "Micrometer observations through micrometer-tracing-bridge-otel and Spring Boot's "
        "OTLP/HTTP protobuf exporter, which sends to the capture's sink (java -jar, the "
        "spring_ai/ project built once outside the repository, driven by fw_spring_ai.py)",
        "packages": [],
        "maven": "fw_spring_ai:versions",
        "node_runner": "fw_spring_ai:run_spring_ai",
        "tool_spans": True,
        "handoff_via": SPRING_AI_HANDOFF,
        "model_retry_by": "Spring AI's `RetryTemplate` (`spring.ai.retry`: up to 10 attempts, a "
        "2 s backoff; a 5xx is transient, a 4xx final) inside the `chat` observation: the "
        "`chat` span holds both requests, the failed one an `http post` client span with status "
        "ERROR (plumbing to the mappings, no model call)",
        "notes": spring_ai_notes("tool_call"),
        "on": {},
        "off": {},
    },
    "adk-go": {
        "what": "Google's Agent Development Kit for Go (an llmagent with functiontool tools on "
        "ADK's Gemini model over google.golang.org/genai, its base URL the fake Gemini server; "
        "sub-agents and ADK's transfer_to_agent for g_handoff and n_handback) traced by ADK "
        "Go's own telemetry package, whose OTLP/HTTP protobuf span and log exporters send to "
        "the capture's sink (the adk_go/ program built once outside the repository, driven by "
        "fw_adk_go.py)",
        "model": "scripted Gemini API (`fake_gemini.py`, `gemini-2.5-flash`, answering in call "
        "order)",
        "packages": [],
        "go": "fw_adk_go:versions",
        "node_runner": "fw_adk_go:run_adk_go",
        "kills": True,  # z_killed_*: simple span and log processors of its own, a journal
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the Go tool function returns an error; ADK sends the "
                  "model `{\"error\": \"SearchBackendError: ...\"}` and the `execute_tool` "
                  "span's status is ERROR with an `exception` event.",
                  "**Content off:** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false` "
                  "(on: `true`), which ADK Go reads for its `gen_ai.*` message log records "
                  "(`<elided>` when off); the `execute_tool` spans' "
                  "`gcp.vertex.agent.tool_call_args` / `tool_response` are written either way."],
        "on": {},
        "off": {},
    },
    "adk-go-latest": {
        "what": "the adk-go agents (ADK Go v1.5.0; the Go proxy no longer lists ADK's versions) "
        "built with adk_go/go.latest.mod: google.golang.org/genai v1.77.0, the newest, and the "
        "OpenTelemetry Go modules at the newest releases ADK's log code compiles against "
        "(1.46 with the log API and SDK 0.20: 0.21 moved log.Value, which ADK v1.5.0 uses), "
        "traced by the same telemetry package (driven by fw_adk_go.py)",
        "model": "scripted Gemini API (`fake_gemini.py`, `gemini-2.5-flash`, answering in call "
        "order)",
        "packages": [],
        "go": "fw_adk_go:versions_latest",
        "node_runner": "fw_adk_go:run_adk_go_latest",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the Go tool function returns an error; ADK sends the "
                  "model `{\"error\": \"SearchBackendError: ...\"}` and the `execute_tool` "
                  "span's status is ERROR with an `exception` event.",
                  "**Content off:** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false` "
                  "(on: `true`), which ADK Go reads for its `gen_ai.*` message log records "
                  "(`<elided>` when off); the `execute_tool` spans' "
                  "`gcp.vertex.agent.tool_call_args` / `tool_response` are written either way."],
        "on": {},
        "off": {},
    },
    "spring-ai-2": {
        "what": "the spring-ai agents on Spring AI 2.0 and Spring Boot 4 (the same ChatClient "
        "with @Tool methods, built with spring_ai/pom-spring-ai-2.xml: spring-ai-bom 2.0.1, "
        "spring-boot-starter-opentelemetry) traced by Spring AI's Micrometer observations "
        "through Boot's OpenTelemetry bridge and OTLP/HTTP protobuf exporter, which sends to "
        "the capture's sink (driven by fw_spring_ai.py)",
        "packages": [],
        "maven": "fw_spring_ai:versions_2",
        "node_runner": "fw_spring_ai:run_spring_ai_2",
        "tool_spans": True,
        "handoff_via": SPRING_AI_HANDOFF,
        "notes": spring_ai_notes("execute_tool"),
        "on": {},
        "off": {},
    },
    "spring-ai-latest": {
        "what": "the spring-ai agents on Spring AI 1.1.6, the newest 1.1 release of the OpenAI "
        "starter that resolves (the same ChatClient with @Tool methods on Spring Boot 3.5.7, "
        "built with spring_ai/pom-spring-ai-latest.xml) traced by the same Micrometer "
        "observations, bridge and OTLP/HTTP protobuf exporter (driven by fw_spring_ai.py)",
        "packages": [],
        "maven": "fw_spring_ai:versions_latest",
        "node_runner": "fw_spring_ai:run_spring_ai_latest",
        "tool_spans": True,
        "handoff_via": SPRING_AI_HANDOFF,
        "notes": spring_ai_notes("tool_call"),
        "on": {},
        "off": {},
    },
    "spring-ai-2-latest": {
        "what": "the spring-ai-2 agents (Spring AI 2.0.1) on Spring Boot 4.1.2, the newest Boot "
        "release (built with spring_ai/pom-spring-ai-2-latest.xml, netty 4.2.18.Final as its "
        "OpenAI starter needs), traced through Boot's OpenTelemetry bridge and OTLP/HTTP "
        "protobuf exporter (driven by fw_spring_ai.py)",
        "packages": [],
        "maven": "fw_spring_ai:versions_2_latest",
        "node_runner": "fw_spring_ai:run_spring_ai_2_latest",
        "tool_spans": True,
        "handoff_via": SPRING_AI_HANDOFF,
        "notes": spring_ai_notes("execute_tool"),
        "on": {},
        "off": {},
    },
    "adk-java": {
        "what": "Google ADK for Java 1.8 (LlmAgents with FunctionTool tools on ADK's own "
        "chat-completions client, ApigeeLlm with an apigee/openai/ model whose proxy URL is the "
        "fake server; sub-agents and ADK's transfer_to_agent for g_handoff) traced by ADK's "
        "own OpenTelemetry spans on the "
        "global SDK, an OTLP/HTTP protobuf exporter sending to the capture's sink (java -cp, the "
        "adk_java/ project built once outside the repository, driven by fw_adk_java.py)",
        "packages": [],
        "maven": "fw_adk_java:versions",
        "node_runner": "fw_adk_java:run_adk_java",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool throws; ADK's `FunctionTool` catches it and "
                  "hands the model `{\"status\": \"error\", \"message\": \"An internal "
                  "error occurred.\"}` as the tool's response; the `execute_tool` span ends "
                  "OK.",
                  "**Content off:** `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false` (on: `true`)."],
        "on": {},
        "off": {},
    },
    "adk-java-latest": {
        "what": "the adk-java agents (ADK for Java 1.8.0, the newest) built with "
        "adk_java/pom-adk-java-latest.xml: the OpenTelemetry Java SDK and exporter 1.68.0 and "
        "google-genai 1.80.0, the newest releases (1.x for genai), in place of the 1.51 and 1.58 "
        "ADK brings, traced by ADK's own spans (driven by fw_adk_java.py)",
        "packages": [],
        "maven": "fw_adk_java:versions_latest",
        "node_runner": "fw_adk_java:run_adk_java_latest",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool throws; ADK's `FunctionTool` catches it and "
                  "hands the model `{\"status\": \"error\", \"message\": \"An internal "
                  "error occurred.\"}` as the tool's response; the `execute_tool` span ends "
                  "OK.",
                  "**Content off:** `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false` (on: `true`)."],
        "on": {},
        "off": {},
    },
    "openai-java": {
        "what": "the official OpenAI Java client (com.openai:openai-java 4.105) in a "
        "hand-written chat-completions tool loop, the openai-v2 loop in Java, inside the app's "
        "own agent_run span, wrapped by the OpenTelemetry Java instrumentation's library "
        "instrumentation (opentelemetry-openai-java-1.1 2.31.1-alpha, OpenAITelemetry.wrap, the "
        "code the Java agent applies) on an SDK whose OTLP/HTTP protobuf span and log "
        "exporters send to the capture's sink (java -cp, the openai_java/ Maven project built "
        "once outside the repository, driven by fw_openai_java.py)",
        "packages": [],
        "maven": "fw_openai_java:versions",
        "node_runner": "fw_openai_java:run_openai_java",
        "kills": True,  # z_killed_*: processors waiting for each export, a journal
        "notes": ["**Tool failures:** the loop sends the tool error back as the tool message "
                  "content `{\"error\": \"SearchBackendError: ...\"}`. The instrumentation "
                  "makes **no tool spans**; only one CLIENT `chat` span per model call.",
                  "**Handoff (g):** not applicable (no agent framework); `g_handoff` not "
                  "produced.",
                  "**Content off:** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false` "
                  "(on: `true`), the Java agent's variable, which the app hands to "
                  "`OpenAITelemetryBuilder.setCaptureMessageContent`. Messages are log records "
                  "(`gen_ai.*.message`, `gen_ai.choice` events) in "
                  "`<scenario>[.nocontent].logs.otlp.jsonl`, never on spans.",
                  "**Unrecognised span:** `agent_run`, the capture app's own attribute-less "
                  "root span (as in `openai-v2`)."],
        "on": {},
        "off": {},
    },
    "koog": {
        "what": "JetBrains Koog 1.1 in Kotlin (an AIAgent, the default single-run strategy, "
        "with ToolSet tools on Koog's OpenAILLMClient, chat completions with its base URL on "
        "the fake server; the research agent's AIAgent called from a research_agent tool for "
        "g_handoff, a trace of its own: Koog starts every agent's create_agent span as a root) "
        "traced by Koog's own OpenTelemetry feature (`install(OpenTelemetry)`, handed a Java "
        "SDK whose OTLP/HTTP protobuf exporter sends to the capture's sink; java -cp, the koog/ "
        "Maven project built once outside the repository, driven by fw_koog.py)",
        "packages": [],
        "maven": "fw_koog:versions",
        "node_runner": "fw_koog:run_koog",
        "tool_spans": True,
        "handoff_via": "the research agent's AIAgent as a tool "
        "(`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; Koog's agent environment catches it and "
                  "hands the model `Tool with name 'search_docs' failed to execute due to the "
                  "error: <message>!` as the tool's result.",
                  "**Content off:** the OpenTelemetry feature's default, `setVerbose(false)` "
                  "(on: `setVerbose(true)`)."],
        "on": {},
        "off": {},
    },
    "koog-latest": {
        "what": "the koog agents (Koog 1.1.1, the newest) built with koog/pom-koog-latest.xml: "
        "Kotlin 2.4.21 and the OpenTelemetry Java SDK and OTLP exporter 1.68.0, the newest "
        "releases (the pinned build: Kotlin 2.3.10, OpenTelemetry 1.61.0), traced by the same "
        "OpenTelemetry feature (driven by fw_koog.py)",
        "packages": [],
        "maven": "fw_koog:versions_latest",
        "node_runner": "fw_koog:run_koog_latest",
        "tool_spans": True,
        "handoff_via": "the research agent's AIAgent as a tool "
        "(`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; Koog's agent environment catches it and "
                  "hands the model `Tool with name 'search_docs' failed to execute due to the "
                  "error: <message>!` as the tool's result.",
                  "**Content off:** the OpenTelemetry feature's default, `setVerbose(false)` "
                  "(on: `setVerbose(true)`)."],
        "on": {},
        "off": {},
    },
    "quarkus-langchain4j": {
        "what": "Quarkus LangChain4j 1.10 on LangChain4j 1.14 and Quarkus 3.33 (a "
        "@RegisterAiService AI service with @Tool methods on the extension's OpenAI chat model, "
        "its base URL the fake server; the research agent's AI service called from a "
        "research_agent tool for g_handoff) traced by the extension's own OpenTelemetry support "
        "(quarkus-opentelemetry, OTLP/HTTP protobuf to the capture's sink; java -jar on the "
        "fast-jar, the quarkus_langchain4j/ project built once outside the repository, driven "
        "by fw_quarkus_langchain4j.py)",
        "packages": [],
        "maven": "fw_quarkus_langchain4j:versions",
        "node_runner": "fw_quarkus_langchain4j:run_quarkus_langchain4j",
        "tool_spans": True,
        "handoff_via": "the research agent's AI service as a tool "
        "(`research_agent {\"question\": ...}`)",
        "notes": ["**Content off:** the extension's defaults. On: "
                  "`quarkus.langchain4j.tracing.include-prompt`, `include-completion`, "
                  "`include-tool-arguments` and `include-tool-result` set to true."],
        "on": {},
        "off": {},
    },
    "quarkus-langchain4j-latest": {
        "what": "the quarkus-langchain4j agents (Quarkus LangChain4j 1.10.0, the newest) on "
        "Quarkus 3.34.1 through the platform BOM (quarkus_langchain4j/pom-quarkus-latest.xml; "
        "the pinned build: io.quarkus:quarkus-bom 3.33.2), traced by the extension's own "
        "OpenTelemetry support (driven by fw_quarkus_langchain4j.py)",
        "packages": [],
        "maven": "fw_quarkus_langchain4j:versions_latest",
        "node_runner": "fw_quarkus_langchain4j:run_quarkus_langchain4j_latest",
        "tool_spans": True,
        "handoff_via": "the research agent's AI service as a tool "
        "(`research_agent {\"question\": ...}`)",
        "notes": ["**Content off:** the extension's defaults. On: "
                  "`quarkus.langchain4j.tracing.include-prompt`, `include-completion`, "
                  "`include-tool-arguments` and `include-tool-result` set to true."],
        "on": {},
        "off": {},
    },
    "adk-js": {
        "what": "Google ADK for TypeScript 2.0 (@google/adk LlmAgents with FunctionTool tools on "
        "ADK's Gemini model class over @google/genai, its base URL the fake Gemini server; "
        "sub-agents and ADK's transfer_to_agent for g_handoff and n_handback) traced by ADK's "
        "own OpenTelemetry spans, maybeSetOtelProviders given an OTLP/HTTP protobuf exporter "
        "that sends to the capture's sink (node adk_js/agent.mjs, its npm packages installed "
        "once outside the repository from adk_js/package-lock.json, driven by fw_adk_js.py)",
        "model": "scripted Gemini API (`fake_gemini.py`, `gemini-2.5-flash`, answering in call "
        "order)",
        "packages": [],
        "npm": "fw_adk_js:versions",
        "node_runner": "fw_adk_js:run_adk_js",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agentName\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool throws; ADK sends the model `{\"error\": "
                  "\"Error in tool 'search_docs': SearchBackendError: ...\"}`; the "
                  "`execute_tool` span ends with no attribute and an unset status (ADK JS "
                  "writes a tool span's attributes only after the tool returned).",
                  "**Content off:** `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false` (on: `true`, "
                  "also ADK's default): the `gcp.vertex.agent.*` payloads become `{}`."],
        "on": {},
        "off": {},
    },
    "openai-agents-js": {
        "what": "OpenAI Agents SDK for JavaScript 0.20 (@openai/agents Agents with tool() tools "
        "on the SDK's OpenAIChatCompletionsModel, an openai client whose base URL is the fake "
        "server; the SDK's native handoffs for g_handoff and n_handback) traced by "
        "@arizeai/openinference-instrumentation-openai-agents (its trace processor registered "
        "on the SDK with manuallyInstrument, replacing the SDK's own; a tracer provider whose "
        "OTLP/HTTP protobuf exporter sends to the capture's sink; node openai_agents_js/"
        "agent.mjs, its npm packages installed once outside the repository from "
        "openai_agents_js/package-lock.json, driven by fw_openai_agents_js.py)",
        "packages": [],
        "npm": "fw_openai_agents_js:versions",
        "node_runner": "fw_openai_agents_js:run_openai_agents_js",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "the SDK's native handoff tool (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the tool throws; the SDK's default error function hands "
                  "the model `An error occurred while running the tool. Please try again.` "
                  "(no error detail) as the tool's result; the `search_docs` span ends with "
                  "status error and an `exception` event.",
                  "**Content off:** OpenInference's `traceConfig` with `hideInputs`, "
                  "`hideOutputs`, `hideInputMessages` and `hideOutputMessages` (the Python "
                  "source's `OPENINFERENCE_HIDE_*`)."],
        "on": {},
        "off": {},
    },
    "openinference-openai-js": {
        "what": "the raw sources' hand-written tool loop on the openai client for JavaScript 7 "
        "(the run an agent function, each tool a function that really runs; g_handoff: a "
        "triage agent whose transfer_to_research_agent tool runs a research agent) traced by "
        "@arizeai/openinference-instrumentation-openai (manuallyInstrument) for the model "
        "calls and @arizeai/openinference-core's traceAgent / traceTool wrappers for the "
        "functions, on a NodeTracerProvider whose OTLP/HTTP protobuf exporter sends to the "
        "capture's sink (node openai_js/loop.mjs, its npm packages installed once outside the "
        "repository from openai_js/package-lock.json, driven by fw_openai_js.py)",
        "packages": [],
        "npm": "fw_openai_js:versions_openinference",
        "node_runner": "fw_openai_js:run_openinference",
        "kills": True,  # z_killed_*: SimpleSpanProcessor, a journal (external_program)
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool throws; `traceTool` records an `exception` "
                  "event and status error on its span, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** OpenInference's `traceConfig` with `hideInputs`, "
                  "`hideOutputs`, `hideInputMessages` and `hideOutputMessages` on the "
                  "instrumentation and on the wrappers' `OITracer`."],
        "on": {},
        "off": {},
    },
    "langfuse-openai-js": {
        "what": "the raw sources' hand-written tool loop on the openai client for JavaScript 7 "
        "traced by Langfuse's JavaScript SDK: @langfuse/openai's observeOpenAI(client) for the "
        "model calls (generations), @langfuse/tracing's observe(fn, {asType: \"agent\"}) / "
        "{asType: \"tool\"} for the functions, exported by @langfuse/otel's "
        "LangfuseSpanProcessor (handed an OTLP/HTTP protobuf exporter to the capture's sink "
        "at /api/public/otel/v1/traces) on a NodeTracerProvider (node openai_js/loop.mjs, "
        "driven by fw_openai_js.py)",
        "packages": [],
        "npm": "fw_openai_js:versions_langfuse",
        "node_runner": "fw_openai_js:run_langfuse",
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose observation holds the "
        "research agent's",
        "notes": ["**Tool failures:** the tool throws; `observe` sets the tool observation's "
                  "level to ERROR, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** the `LangfuseSpanProcessor`'s `mask` returning nothing for "
                  "every value, and `captureInput` / `captureOutput` false on the observed "
                  "functions (the OpenAI integration has no switch of its own)."],
        "on": {},
        "off": {},
    },
    "openllmetry-openai-js": {
        "what": "the raw sources' hand-written tool loop on the openai client for JavaScript 7 "
        "traced by OpenLLMetry JS: @traceloop/node-server-sdk's traceloop.initialize with "
        "instrumentModules {openAI} (its @traceloop/instrumentation-openai) for the model calls "
        "and its withAgent / withTool wrappers for the functions, its exporter an OTLP/HTTP "
        "protobuf one to the capture's sink (node openai_js/loop.mjs, driven by "
        "fw_openai_js.py)",
        "packages": [],
        "npm": "fw_openai_js:versions_openllmetry",
        "node_runner": "fw_openai_js:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool throws, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`; `withTool` (OpenLLMetry JS "
                  "0.27's `withEntity`) ends a span only when the function returns or its "
                  "promise resolves, so a call that threw has no span at all.",
                  "**Content off:** `traceContent: false` in `traceloop.initialize`."],
        "on": {},
        "off": {},
    },
    "openinference-anthropic-js": {
        "what": "the raw Anthropic sources' hand-written Messages API tool loop on the Anthropic "
        "TypeScript SDK 1 (@anthropic-ai/sdk; the run an agent function, each tool a function "
        "that really runs, a failure sent back as an is_error tool_result; g_handoff: a triage "
        "agent whose transfer_to_research_agent tool runs a research agent) traced by "
        "@arizeai/openinference-instrumentation-anthropic (manuallyInstrument) for the model "
        "calls and @arizeai/openinference-core's traceAgent / traceTool wrappers for the "
        "functions, on a NodeTracerProvider whose OTLP/HTTP protobuf exporter sends to the "
        "capture's sink (node anthropic_js/loop.mjs, its npm packages installed once outside "
        "the repository from anthropic_js/package-lock.json, driven by fw_anthropic_js.py)",
        "packages": [],
        "npm": "fw_anthropic_js:versions_openinference",
        "node_runner": "fw_anthropic_js:run_openinference",
        "model": FAKE_ANTHROPIC,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool throws; `traceTool` records an `exception` "
                  "event and status error on its span, and the loop sends the model a "
                  "`tool_result` block with `is_error: true` and "
                  "`{\"error\": \"SearchBackendError: ...\"}` as its content.",
                  "**Content off:** OpenInference's `traceConfig` with `hideInputs`, "
                  "`hideOutputs`, `hideInputMessages` and `hideOutputMessages` on the "
                  "instrumentation and on the wrappers' `OITracer`."],
        "on": {},
        "off": {},
    },
    "openllmetry-anthropic-js": {
        "what": "the openinference-anthropic-js tool loop on the Anthropic TypeScript SDK "
        "0.137 (the last 0.x: OpenLLMetry JS 0.27's Anthropic instrumentation wraps "
        "Anthropic.Completions, which the 1.x releases dropped, and throws on 1.16) "
        "traced by OpenLLMetry JS: @traceloop/node-server-sdk's traceloop.initialize with "
        "instrumentModules {anthropic} (its @traceloop/instrumentation-anthropic) for the model "
        "calls and its withAgent / withTool wrappers for the functions, its exporter an "
        "OTLP/HTTP protobuf one to the capture's sink (node anthropic_js/loop.mjs, driven by "
        "fw_anthropic_js.py)",
        "packages": [],
        "npm": "fw_anthropic_js:versions_openllmetry",
        "node_runner": "fw_anthropic_js:run_openllmetry",
        "model": FAKE_ANTHROPIC,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool throws, and the loop sends the model a "
                  "`tool_result` block with `is_error: true`; `withTool` ends a span only when "
                  "the function returns or its promise resolves, so a call that threw has no "
                  "span at all.",
                  "**Content off:** `traceContent: false` in `traceloop.initialize`."],
        "on": {},
        "off": {},
    },
    "beeai-js-openinference": {
        "what": "BeeAI Framework for TypeScript 0.1.13 (beeai-framework ToolCallingAgent on its "
        "OpenAIChatModel, the AI SDK's OpenAI chat model underneath, its base URL the fake "
        "server; DynamicTool tools; the agent's final_answer tool; the research agent run from "
        "the triage agent's research_agent tool for g_handoff) traced by "
        "@arizeai/openinference-instrumentation-beeai "
        "(manuallyInstrument) on a NodeTracerProvider whose OTLP/HTTP protobuf exporter sends "
        "to the capture's sink (node beeai_js/agent.mjs, its npm packages installed once "
        "outside the repository from beeai_js/package-lock.json, driven by fw_beeai_js.py)",
        "packages": [],
        "npm": "fw_beeai_js:versions",
        "node_runner": "fw_beeai_js:run_beeai_js",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool running the research agent "
        "(`research_agent {\"task\": ...}`)",
        "notes": ["**Final answer delivery:** as the `response` argument of BeeAI's built-in "
                  "`final_answer` tool.",
                  "**Tool failures:** the tool throws; BeeAI hands the model the error.",
                  "**Content off:** OpenInference's `traceConfig` with `hideInputs`, "
                  "`hideOutputs`, `hideInputMessages` and `hideOutputMessages`."],
        "on": {},
        "off": {},
    },
    "llamaindex-js-openllmetry": {
        "what": "LlamaIndex.TS agents (@llamaindex/workflow agent(), an AgentWorkflow of one "
        "FunctionAgent streaming every model call, on @llamaindex/openai's OpenAI model, its "
        "baseURL the fake server; llamaindex tool()s; multiAgent() with the workflow's own "
        "handOff tool for g_handoff) traced by OpenLLMetry JS (@traceloop/node-server-sdk: "
        "traceloop.initialize with instrumentModules {llamaIndex, llamaIndexOpenAI}, the run in "
        "traceloop.withAgent) whose OTLP/HTTP protobuf exporter sends to the capture's sink "
        "(node llamaindex_js/agent.mjs, its npm packages installed once outside the repository "
        "from llamaindex_js/package-lock.json, driven by fw_llamaindex_js.py)",
        "model": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming "
        "(`chat.completion.chunk` server-sent events: the FunctionAgent always streams)",
        "packages": [],
        "npm": "fw_llamaindex_js:versions",
        "node_runner": "fw_llamaindex_js:run_llamaindex_js",
        "handoff_via": "the workflow's own `handOff` tool "
        "(`handOff {\"toAgent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; the agent workflow hands the model "
                  "`Error: <the error>` as the tool result.",
                  "**Spans:** OpenLLMetry's LlamaIndex instrumentation wraps the model's "
                  "`chat` only (a `chat gpt-4o-mini` span per model call, inside the "
                  "application's `withAgent` span); the workflow's steps and tool calls have "
                  "no span.",
                  "**Content off:** `traceloop.initialize({traceContent: false})` (as "
                  "`TRACELOOP_TRACE_CONTENT=false`)."],
        "on": {},
        "off": {},
    },
    "llamaindex-js-openllmetry-openai": {
        "what": "the llamaindex-js-openllmetry agents (node llamaindex_js/agent.mjs with "
        "`openai`, driven by fw_llamaindex_js.py) traced by OpenLLMetry JS given the openai "
        "client module under @llamaindex/openai too (instrumentModules {llamaIndex, "
        "llamaIndexOpenAI, openAI}): each model call is LlamaIndex's `chat` span holding the "
        "OpenAI instrumentation's `openai.chat` span",
        "model": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming "
        "(`chat.completion.chunk` server-sent events: the FunctionAgent always streams)",
        "packages": [],
        "npm": "fw_llamaindex_js:versions",
        "node_runner": "fw_llamaindex_js:run_llamaindex_js_openai",
        "handoff_via": "the workflow's own `handOff` tool "
        "(`handOff {\"toAgent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; the agent workflow hands the model "
                  "`Error: <the error>` as the tool result.",
                  "**Spans:** per model call LlamaIndex's `chat gpt-4o-mini` span and, inside "
                  "it, the OpenAI instrumentation's `openai.chat` span, in the application's "
                  "`withAgent` span; the workflow's steps and tool calls have no span.",
                  "**Content off:** `traceloop.initialize({traceContent: false})` (as "
                  "`TRACELOOP_TRACE_CONTENT=false`)."],
        "on": {},
        "off": {},
    },
    "claude-agent-sdk-js": {
        "what": "the Claude Agent SDK for TypeScript (@anthropic-ai/claude-agent-sdk `query()` "
        "driving the Claude Code executable of its platform package, the scenario's tools as "
        "in-process SDK MCP tools (`tool()` + `createSdkMcpServer`), an `AgentDefinition` "
        "sub-agent run through Claude Code's `Agent` tool for g_handoff) traced by "
        "@arizeai/openinference-instrumentation-claude-agent-sdk (manuallyInstrument) on a "
        "NodeTracerProvider whose OTLP/HTTP protobuf exporter sends to the capture's sink (node "
        "claude_agent_sdk_js/agent.mjs, its npm packages installed once outside the repository "
        "from claude_agent_sdk_js/package-lock.json, driven by fw_claude_agent_sdk_js.py)",
        "packages": [],
        "npm": "fw_claude_agent_sdk_js:versions",
        "node_runner": "fw_claude_agent_sdk_js:run_claude_agent_sdk_js",
        "model": "scripted fake Anthropic Messages server on 127.0.0.1 (`fw_claude_agent_sdk.py` "
        "over `fake_anthropic.py`, streamed; Claude Code reaches it through "
        "`ANTHROPIC_BASE_URL`)",
        "tool_prefix": "mcp__scenario__",
        "tool_spans": True,
        "handoff_via": "Claude Code's `Agent` tool (`subagent_type: research_agent`, an "
        "`AgentDefinition` sub-agent run in the foreground)",
        "notes": ["**Tool failures:** the MCP tool answers `isError: true` with the error JSON.",
                  "**Content off:** OpenInference's `traceConfig` with `hideInputs`, "
                  "`hideOutputs`, `hideInputMessages` and `hideOutputMessages`."],
        "on": {},
        "off": {},
    },
    "voltagent": {
        "what": "VoltAgent 2.10 (@voltagent/core Agents with createTool tools on the AI SDK's "
        "@ai-sdk/openai-compatible chat model, its base URL the fake server; a supervisor's "
        "subAgents and VoltAgent's delegate_task tool for g_handoff) traced by VoltAgent's own "
        "observability (VoltAgentObservability handed an OTLP/HTTP protobuf exporter to the "
        "capture's sink as a span processor; node voltagent/agent.mjs, its npm packages "
        "installed once outside the repository from voltagent/package-lock.json, driven by "
        "fw_voltagent.py)",
        "packages": [],
        "npm": "fw_voltagent:versions",
        "node_runner": "fw_voltagent:run_voltagent",
        "tool_spans": True,
        "handoff_via": "VoltAgent's `delegate_task {\"task\": ..., \"targetAgents\": "
        "[\"research_agent\"]}`",
        "notes": ["**Tool failures:** the tool throws; its `tool.execution:<tool>` span ends "
                  "with status error and an `exception` event (`VoltAgentError`).",
                  "**Content off:** VoltAgent has no switch for its spans' content: the "
                  "`.nocontent` variant is the same run."],
        "on": {},
        "off": {},
    },
    "vercel-ai-sdk-openinference": {
        "what": "Vercel AI SDK 7 agents (ai 7 ToolLoopAgents, stopWhen stepCountIs(10), tool() "
        "tools on @ai-sdk/openai-compatible, its base URL the fake server; the research agent "
        "as the triage agent's research_agent tool for g_handoff) traced by AI SDK 7's "
        "@ai-sdk/otel (registerTelemetry(new OpenTelemetry())) and converted to OpenInference "
        "by @arizeai/openinference-vercel's OpenInferenceSimpleSpanProcessor, whose OTLP/HTTP "
        "protobuf exporter sends to the capture's sink (node vercel_openinference/agent.mjs, "
        "its npm packages installed once outside the repository from "
        "vercel_openinference/package-lock.json, driven by fw_vercel_openinference.py)",
        "packages": [],
        "npm": "fw_vercel_openinference:versions",
        "node_runner": "fw_vercel_openinference:run_vercel_openinference",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; the AI SDK hands the model the error "
                  "and goes on.",
                  "**Content off:** `recordInputs` / `recordOutputs: false` in each call's "
                  "`telemetry` option."],
        "on": {},
        "off": {},
    },
    "strands-js": {
        "what": "Strands Agents for TypeScript 1.19 (@strands-agents/sdk Agents with tool() "
        "tools on Strands' OpenAIModel on its default OpenAI Responses API, streamed, an "
        "openai client whose base URL is the fake Responses server; the research agent as a "
        "tool through Agent.asTool for "
        "g_handoff) traced by Strands' own OpenTelemetry tracing, default conventions "
        "(per-message span events), on a registered NodeTracerProvider whose OTLP/HTTP "
        "protobuf exporter sends to the capture's sink (node strands_js/agent.mjs, its npm "
        "packages installed once outside the repository from strands_js/package-lock.json, "
        "driven by fw_strands_js.py)",
        "packages": [],
        "npm": "fw_strands_js:versions",
        "node_runner": "fw_strands_js:run_strands_js",
        "model": "scripted OpenAI Responses API (`fake_openai_responses.py`, streamed, "
        "answering in call order)",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.asTool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; Strands sends the model an error tool "
                  "result and sets the tool span's status to ERROR.",
                  "**Content off:** Strands for TypeScript has no switch for its spans' "
                  "content: the `.nocontent` variant is the same run."],
        "on": {},
        "off": {},
    },
    "strands-js-latest": {
        "what": "the strands-js agents with OTEL_SEMCONV_STABILITY_OPT_IN="
        "gen_ai_latest_experimental: gen_ai.input.messages / gen_ai.output.messages in "
        "gen_ai.client.inference.operation.details events (fw_strands_js.py)",
        "packages": [],
        "npm": "fw_strands_js:versions",
        "node_runner": "fw_strands_js:run_strands_js_latest",
        "model": "scripted OpenAI Responses API (`fake_openai_responses.py`, streamed, "
        "answering in call order)",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.asTool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool throws; Strands sends the model an error tool "
                  "result and sets the tool span's status to ERROR.",
                  "**Content off:** Strands for TypeScript has no switch for its spans' "
                  "content: the `.nocontent` variant is the same run."],
        "on": {},
        "off": {},
    },
    "genkit-go": {
        "what": "Firebase Genkit for Go flows (one per agent: genkit.Generate with "
        "genkit.DefineTool tools and WithMaxTurns(10) on compat_oai's OpenAI plugin, its base "
        "URL the fake server; the research agent's flow called from a research_agent tool for "
        "g_handoff) traced by Genkit's own tracing on the global OpenTelemetry tracer "
        "provider, an OTLP/HTTP protobuf exporter sending to the capture's sink (the genkit_go/ "
        "program built once outside the repository, driven by fw_genkit_go.py)",
        "packages": [],
        "go": "fw_genkit_go:versions",
        "node_runner": "fw_genkit_go:run_genkit_go",
        "kills": True,  # z_killed_*: the SDK's syncer exports each span as it ends, a journal
        "tool_spans": True,
        "handoff_via": "the research agent's flow as a tool (`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** a Genkit tool that returns an error ends the whole "
                  "Generate call, so the failing tool returns `{\"error\": "
                  "\"SearchBackendError: ...\"}` for the model; its span ends OK.",
                  "**Content off:** Genkit has no switch: every action's input and output is "
                  "recorded (`genkit:input` / `genkit:output`), so the `.nocontent` variant is "
                  "the same run."],
        "on": {},
        "off": {},
    },
    "genkit-go-latest": {
        "what": "the genkit-go flows built with genkit_go/go.latest.mod: openai-go v1.12.0, the "
        "newest v1, under compat_oai (Genkit for Go v1.4.0 and OpenTelemetry Go 1.47 are the "
        "newest already; every module upgraded breaks Genkit's dotprompt), traced by Genkit's "
        "own tracing (driven by fw_genkit_go.py)",
        "packages": [],
        "go": "fw_genkit_go:versions_latest",
        "node_runner": "fw_genkit_go:run_genkit_go_latest",
        "tool_spans": True,
        "handoff_via": "the research agent's flow as a tool (`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** a Genkit tool that returns an error ends the whole "
                  "Generate call, so the failing tool returns `{\"error\": "
                  "\"SearchBackendError: ...\"}` for the model; its span ends OK.",
                  "**Content off:** Genkit has no switch: every action's input and output is "
                  "recorded (`genkit:input` / `genkit:output`), so the `.nocontent` variant is "
                  "the same run."],
        "on": {},
        "off": {},
    },
    "eino-apmplus": {
        "what": "CloudWeGo Eino agents (adk.ChatModelAgent run by adk.Runner on eino-ext's "
        "OpenAI chat model, its base URL the fake server; the research agent called through "
        "adk.NewAgentTool for g_handoff) traced by eino-ext's APMPlus callback handler "
        "(callbacks/apmplus) registered as a global Eino callback handler, its own "
        "OpenTelemetry providers exporting OTLP over gRPC to the capture's gRPC sink (the "
        "eino_go/ program built once outside the repository, driven by fw_eino_go.py)",
        "packages": [],
        "go": "fw_eino_go:versions",
        "node_runner": "fw_eino_go:run_eino_go",
        "tool_spans": True,
        "handoff_via": "the research agent as Eino's agent tool (`research_agent {\"request\": "
        "...}`)",
        "notes": ["**Tool failures:** a failing tool returns a Go error (its span ERROR); a "
                  "ToolCallMiddleware hands the model `{\"error\": \"<the error>\"}` as the "
                  "call's result, since Eino otherwise ends the agent run on a tool error.",
                  "**Content off:** the APMPlus handler has no switch: every span carries its "
                  "component's input and output, so the `.nocontent` variant is the same run."],
        "on": {},
        "off": {},
    },
    "eino-react-apmplus": {
        "what": "the eino-apmplus agents on Eino's older flow/agent/react runtime (react.NewAgent "
        "with its default graph name and a message modifier putting the instruction first; the "
        "research agent, a ReAct agent of its own, run by a research_agent tool of the "
        "application's own for g_handoff) traced by eino-ext's APMPlus callback handler as "
        "eino-apmplus is (driven by fw_eino_go.py)",
        "packages": [],
        "go": "fw_eino_go:versions",
        "node_runner": "fw_eino_go:run_eino_react",
        "tool_spans": True,
        "handoff_via": "a research_agent tool whose function runs the research agent "
        "(`research_agent {\"request\": ...}`)",
        "notes": ["**Tool failures:** as `eino-apmplus` (a Go error, its span ERROR; the "
                  "ToolCallMiddleware hands the model `{\"error\": \"<the error>\"}`).",
                  "**Content off:** no switch: the `.nocontent` variant is the same run."],
        "on": {},
        "off": {},
    },
    "openai-go-otelhttp": {
        "what": "the raw sources' chat-completions tool loop written in Go on the official "
        "OpenAI Go SDK (github.com/openai/openai-go/v3, base URL the fake server), traced by "
        "OpenTelemetry's generic HTTP instrumentation only: otelhttp.NewTransport as the SDK's "
        "HTTP client transport, inside the application's own agent_run span, exported over "
        "OTLP/HTTP protobuf (the openai_go/ program built once outside the repository, driven "
        "by fw_openai_go.py)",
        "packages": [],
        "go": "fw_openai_go:versions",
        "node_runner": "fw_openai_go:run_openai_go",
        "kills": True,  # z_killed_*: the SDK's syncer exports each span as it ends, a journal
        "model_spans": False,
        "notes": ["**Tracing:** one HTTP client span per request to the model API (method, "
                  "URL, status, sizes: the HTTP semantic conventions only) and the app's "
                  "`agent_run` span; no span records a message, a tool call or a tool.",
                  "**Content off:** nothing to switch: the `.nocontent` variant is the same "
                  "run."],
        "on": {},
        "off": {},
    },
    "langchain4j-javaagent": {
        "what": "plain LangChain4j 1.19.0 (an AiServices agent with @Tool methods on "
        "langchain4j-open-ai's OpenAiChatModel, its base URL the fake server) traced by the "
        "OpenTelemetry Java agent 2.31.1 alone (-javaagent, OTLP/HTTP protobuf to the "
        "capture's sink): the agent has no LangChain4j instrumentation and none for it is "
        "served, so it records LangChain4j's JDK HttpClient requests only (java -cp, the "
        "langchain4j_javaagent/ Maven project built once outside the repository, driven by "
        "fw_langchain4j_javaagent.py)",
        "packages": [],
        "maven": "fw_langchain4j_javaagent:versions",
        "node_runner": "fw_langchain4j_javaagent:run_langchain4j_javaagent",
        "model_spans": False,
        "notes": ["**Tracing:** one `java-http-client` span per request to the model API "
                  "(method, URL, status: the HTTP semantic conventions only), each its own "
                  "trace; no span records a message, a tool call, a tool or the run.",
                  "**Tool failures:** the `@Tool` method returns `{\"error\": "
                  "\"SearchBackendError: ...\"}` for the model.",
                  "**Content off:** nothing to switch: the `.nocontent` variant is the same "
                  "run."],
        "on": {},
        "off": {},
    },
    "rig": {
        "what": "rig agents in Rust (rig-agent's AgentBuilder with typed Tool impls on rig-core's "
        "OpenAI provider, its Chat Completions model with the base URL on the fake server, rig "
        "running the multi-turn tool loop; the research agent converted into a tool "
        "(Agent::into_tool) for g_handoff) traced by rig's own tracing spans with GenAI "
        "attributes, turned into OpenTelemetry spans by tracing-opentelemetry and sent by "
        "opentelemetry-otlp over HTTP protobuf to the capture's sink (the rig_agent/ Cargo "
        "project built once outside the repository, driven by fw_rig.py)",
        "packages": [],
        "cargo": "fw_rig:versions",
        "node_runner": "fw_rig:run_rig",
        "tool_spans": True,
        "handoff_via": "rig's agent tool `research_agent {\"prompt\": ...}` "
        "(`Agent::into_tool`)",
        "notes": ["**Tool failures:** the tool returns an error; rig hands the model its "
                  "message as the tool result and records `gen_ai.tool.call.outcome` `error` "
                  "and `gen_ai.tool.error.type` on the `execute_tool` span, whose status stays "
                  "unset.",
                  "**Content off:** rig's default (`record_content_telemetry(false)`; on: "
                  "`true`), which leaves out messages, system instructions, tool arguments "
                  "and results."],
        "on": {},
        "off": {},
    },
    "rig-latest": {
        "what": "the rig agents on rig 0.46 (rig-core and rig-agent 0.46.0, the newest) with "
        "the newest OpenTelemetry crates (opentelemetry 0.33, tracing-opentelemetry 0.34): the "
        "rig_agent/ program built from rig_agent_latest/'s manifest and lockfile on the nightly "
        "toolchain (rig 0.46 declares Rust 1.97.1; driven by fw_rig.py)",
        "packages": [],
        "cargo": "fw_rig:versions_latest",
        "node_runner": "fw_rig:run_rig_latest",
        "tool_spans": True,
        "handoff_via": "rig's agent tool `research_agent {\"prompt\": ...}` "
        "(`Agent::into_tool`)",
        "notes": ["**Tool failures:** the tool returns an error; rig hands the model its "
                  "message as the tool result and records `gen_ai.tool.call.outcome` `error` "
                  "and `gen_ai.tool.error.type` on the `execute_tool` span, whose status stays "
                  "unset.",
                  "**Content off:** rig's default (`record_content_telemetry(false)`; on: "
                  "`true`), which leaves out messages, system instructions, tool arguments "
                  "and results."],
        "on": {},
        "off": {},
    },
    "swiftide": {
        "what": "a Swiftide 0.32 agent in Rust (swiftide-agents' Agent with one Tool per "
        "scripted tool and Swiftide's default stop tool, on swiftide-integrations' OpenAI chat "
        "completions client, an async-openai client whose API base is the fake server; Swiftide "
        "running the loop) traced by Swiftide's own tracing spans, turned into OpenTelemetry "
        "spans by tracing-opentelemetry (INFO and above) and sent by opentelemetry-otlp over "
        "HTTP protobuf to the capture's sink (the swiftide_agent/ Cargo project built once "
        "outside the repository, driven by fw_swiftide.py)",
        "packages": [],
        "cargo": "fw_swiftide:versions",
        "node_runner": "fw_swiftide:run_swiftide",
        # Swiftide's model call is its OpenAI client's `complete` span, with no attributes
        # (a name too common to be a model call for every source: MODEL_CALL_SPAN_NAMES).
        "model_span_names": ["complete"],
        "tool_spans": True,
        "notes": ["**Tool failures:** the tool returns an error; Swiftide hands the model "
                  "the error's text as a failed tool output and logs a WARN event \"Tool "
                  "call failed, retrying\" on the step's span; the `tool.<name>` span has no "
                  "status and no attribute but tracing-opentelemetry's code location.",
                  "**Handoff (g):** not produced (Swiftide has no agent-as-tool or transfer "
                  "between agents).",
                  "**Content off:** none: Swiftide's spans have no content switch; every "
                  "message's text is the `message` field of an `add_message` span (INFO), so "
                  "both variants hold the same content."],
        "on": {},
        "off": {},
    },
    "langfuse-openai": {
        "what": "the hand-written tool loop on Langfuse's OpenAI client (`from langfuse.openai "
        "import OpenAI`), the run an `@observe(as_type=\"agent\")` function, each tool an "
        "`@observe(as_type=\"tool\")` function; g_handoff: a triage agent whose "
        "`transfer_to_research_agent` tool runs a research agent (decorated_loop.py); recorded "
        "by the Langfuse SDK's own OTLP exporter pointed at the capture's sink",
        "packages": ["langfuse", "openai"],
        "driver": "fw_langfuse",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's observation",
        "notes": ["**Tool failures:** the tool raises; Langfuse sets the tool observation's "
                  "level to ERROR with the exception text as its status message, and the loop "
                  "sends the model `{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** `LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED=false` "
                  "(decorated functions) plus the client's `mask` returning nothing (the OpenAI "
                  "integration has no switch of its own)."],
        "on": {},
        "off": {"LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED": "false"},
    },
    "langfuse-openai-untyped": {
        "what": "the langfuse-openai app with every function decorated by a bare @observe() "
        "(Langfuse's default span type, as before observation types existed): only the OpenAI "
        "integration's generations say what they are",
        "packages": ["langfuse", "openai"],
        "driver": "fw_langfuse:run_untyped",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's observation",
        "notes": ["**Not in the matrix's expectations:** the tool and agent spans carry no type, "
                  "so no convention can tell a tool from any other span; "
                  "`tests/oracles/test_coverage_cli.py` checks that they fail closed."],
        "on": {},
        "off": {"LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED": "false"},
    },
    "langfuse-langgraph": {
        "what": "LangGraph prebuilt ReAct agent (create_react_agent, ChatOpenAI on the fake "
        "server, @tool functions in a ToolNode with handle_tool_errors; a langgraph-swarm for "
        "g_handoff) traced by Langfuse's LangChain integration (langfuse.langchain."
        "CallbackHandler in the run's callbacks), the Langfuse SDK's own OTLP exporter pointed "
        "at the capture's sink",
        "packages": ["langfuse", "langgraph", "langgraph-prebuilt", "langgraph-swarm",
                     "langchain-core", "langchain-openai"],
        "driver": "fw_langfuse:run_langgraph",
        "transfers_back": True,
        "sink": True,
        "tool_spans": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`).",
                  "**Content off:** the Langfuse client's `mask` returning nothing (the "
                  "callback handler has no switch of its own)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {},
        "off": {"LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED": "false"},
    },
    "mlflow-openai": {
        "what": "the hand-written tool loop on the openai client recorded by MLflow tracing "
        "(`mlflow.openai.autolog()`), the run an `@mlflow.trace(span_type=\"AGENT\")` "
        "function, each tool an `@mlflow.trace(span_type=\"TOOL\")` function; g_handoff: a "
        "triage agent whose `transfer_to_research_agent` tool runs a research agent "
        "(decorated_loop.py); exported by MLflow's OTLP exporter "
        "(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) to the capture's sink, MLflow's native "
        "`mlflow.*` attributes",
        "packages": ["mlflow-tracing", "openai"],
        "driver": "fw_mlflow",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool raises; MLflow ends the tool span with status "
                  "ERROR and an `exception` event, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** MLflow has no switch; a span processor given to "
                  "`mlflow.tracing.configure` sets every span's inputs and outputs to "
                  "`[REDACTED]`."],
        "on": {},
        "off": {},
    },
    "mlflow-openai-semconv": {
        "what": "the mlflow-openai app with MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true: MLflow "
        "translates its spans to OpenTelemetry GenAI semantic-convention attributes before the "
        "OTLP export",
        "packages": ["mlflow-tracing", "openai"],
        "driver": "fw_mlflow",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool raises; MLflow ends the tool span with status "
                  "ERROR and an `exception` event, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor, before the translation)."],
        "on": {"MLFLOW_ENABLE_OTEL_GENAI_SEMCONV": "true"},
        "off": {"MLFLOW_ENABLE_OTEL_GENAI_SEMCONV": "true"},
    },
    "mlflow-langgraph": {
        "turn_limit": LANGGRAPH_RECURSION_LIMIT,
        "what": "LangGraph prebuilt ReAct agent (create_react_agent, ChatOpenAI on the fake "
        "server, @tool functions in a ToolNode with handle_tool_errors; a langgraph-swarm for "
        "g_handoff) traced by MLflow's LangChain autolog (mlflow.langchain.autolog()), "
        "exported by MLflow's OTLP exporter to the capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "langgraph", "langgraph-prebuilt", "langgraph-swarm",
                     "langchain-core", "langchain-openai"],
        "driver": "fw_mlflow:run_langgraph",
        "transfers_back": True,
        "sink": True,
        "tool_spans": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`).",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {},
        "off": {},
    },
    "mlflow-openai-agents": {
        "what": "OpenAI Agents SDK (OpenAIChatCompletionsModel on the fake server, "
        "@function_tool tools, a native handoff for g_handoff) traced by MLflow's autolog "
        "(mlflow.openai.autolog(): its processor for the SDK's spans, plus the openai client's "
        "calls), exported by MLflow's OTLP exporter to the capture's sink, native mlflow.* "
        "attributes",
        "packages": ["mlflow-tracing", "openai-agents", "openai"],
        "driver": "fw_mlflow:run_openai_agents",
        "followups": True,
        "turns_note": ["**Turns:** as `openllmetry-openai-agents`: one `Runner.run` per user "
                       "turn, the follow-up given `result.to_input_list()`, no enclosing "
                       "`trace()`."],
        "transfers_back": True,
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the SDK's native `transfer_to_research_agent {}` handoff",
        "notes": ["**Tool failures:** the tool raises; the SDK sends the model its generic "
                  "error text.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "structured_via": OPENAI_AGENTS_OUTPUT_TYPE,
        "on": {},
        "off": {},
    },
    "openai-agents-responses": {
        "what": "OpenAI Agents SDK on its default Responses API model (OpenAIResponsesModel on "
        "the scripted Responses server; @function_tool tools; a native handoff for g_handoff) "
        "traced by python-contrib's opentelemetry-instrumentation-openai-agents-v2",
        "packages": ["openai-agents", "openai", "opentelemetry-instrumentation-openai-agents-v2",
                     "opentelemetry-util-genai"],
        "driver": "fw_openai_agents_responses",
        "model": "scripted fake OpenAI Responses API server on 127.0.0.1 "
        "(`fake_openai_responses.py`, non-streaming, `function_call` / "
        "`function_call_output` items)",
        "tool_spans": True,
        "cut_raises": dict.fromkeys(("length", "content_filter"), "ModelBehaviorError"),
        "transfers_back": True,
        "handoff_via": "the SDK's native `transfer_to_research_agent {}` handoff tool",
        "notes": ["**Tool failures:** the tool raises; the SDK sends the model its generic "
                  "error text and the `execute_tool` span ends with status ERROR."],
        "on": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "no_content"},
    },
    "logfire-openai-agents": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "what": "OpenAI Agents SDK (OpenAIChatCompletionsModel on the fake server, "
        "@function_tool tools, a native handoff for g_handoff) traced by Logfire's own "
        "integration (logfire.instrument_openai_agents(), send_to_logfire=False)",
        "packages": ["logfire", "openai-agents", "openai"],
        "driver": "fw_logfire_openai_agents",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "the SDK's native `transfer_to_research_agent {}` handoff tool",
        "notes": ["**Tool failures:** the tool raises; the SDK sends the model its generic "
                  "error text and Logfire's `Function:` span gets level error with the SDK's "
                  "`error` attribute.",
                  "**Content off:** Logfire has no content switch for this integration; the "
                  "SDK's `OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=false`."],
        "on": {},
        "off": {"OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA": "false"},
    },
    "logfire-openai": {
        "what": "the hand-written chat-completions tool loop on the openai client, recorded by "
        "Logfire's own OpenAI instrumentation (`logfire.instrument_openai()`, its default span "
        "format, version 2: GenAI semantic-convention attributes beside a minimal "
        "`request_data`; send_to_logfire=False)",
        "packages": ["logfire", "openai"],
        "notes": [RAW_LOOP_NOTES[0], RAW_LOOP_NOTES[1], LOGFIRE_NO_SWITCH],
        "on": {},
        "off": {},
    },
    "logfire-openai-v1": {
        "what": "the logfire-openai loop with `logfire.instrument_openai(version=1)`: the "
        "legacy span format, the whole request as `request_data` JSON and the reply as "
        "`response_data` JSON",
        "packages": ["logfire", "openai"],
        "notes": [RAW_LOOP_NOTES[0], RAW_LOOP_NOTES[1], LOGFIRE_NO_SWITCH],
        "on": {},
        "off": {},
    },
    "logfire-anthropic": {
        "what": "hand-written Messages API tool loop on the anthropic client, recorded by "
        "Logfire's own Anthropic instrumentation (`logfire.instrument_anthropic()`, its default "
        "span format, version 2; send_to_logfire=False)",
        "packages": ["logfire", "anthropic"],
        "driver": "fw_logfire:run_anthropic",
        "model": FAKE_ANTHROPIC,
        "notes": [*ANTHROPIC_NOTES, LOGFIRE_NO_SWITCH],
        "on": {},
        "off": {},
    },
    "logfire-anthropic-v1": {
        "what": "the logfire-anthropic loop with `logfire.instrument_anthropic(version=1)`: "
        "`request_data` / `response_data` JSON",
        "packages": ["logfire", "anthropic"],
        "driver": "fw_logfire:run_anthropic_v1",
        "model": FAKE_ANTHROPIC,
        "notes": [*ANTHROPIC_NOTES, LOGFIRE_NO_SWITCH],
        "on": {},
        "off": {},
    },
    "openinference-openai-agents": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": OPENAI_AGENTS_MAX_TURNS,
        "what": "OpenAI Agents SDK (chat-completions model on the fake server) traced by "
        "openinference-instrumentation-openai-agents; handoffs are native (transfer_to_*)",
        "packages": ["openai", "openai-agents", "openinference-instrumentation-openai-agents"],
        "agents": True,
        "transfers_back": True,
        "followups": True,
        "turns_note": ["**Turns:** each user turn is one `Runner.run`, the follow-up given "
                       "`result.to_input_list()` plus the new message, both inside one "
                       "`trace(\"Conversation\", group_id=\"conversation-1\")` as the SDK "
                       "documents: one trace."],
        "structured_via": OPENAI_AGENTS_OUTPUT_TYPE,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "agentops-crewai": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by AgentOps (agentops.init(): its CrewAI instrumentation under its "
        "session span), sent to the capture's sink by the SDK's OTLP/HTTP exporter added to "
        "AgentOps' tracer provider (AgentOps' own exporter fails with this OpenTelemetry SDK), "
        "no API key",
        "packages": ["agentops", "crewai", "litellm"],
        "driver": "fw_agentops:run_crewai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**Tool failures:** the tool raises; CrewAI hands the model the error text "
                  "(`Error executing tool ...`).",
                  "**Content off:** AgentOps has no switch for these spans: the `.nocontent` "
                  "variant is the same run."],
        "on": {},
        "off": {},
    },
    "agentops-openai-agents": {
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, @function_tool "
        "tools, a native handoff for g_handoff) traced by AgentOps (agentops.init(): its "
        "processor for the SDK's spans under its session span), sent to the capture's sink by "
        "the SDK's OTLP/HTTP exporter added to AgentOps' tracer provider, no API key",
        "packages": ["agentops", "openai-agents", "openai"],
        "driver": "fw_agentops:run_openai_agents",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the search raises; the SDK sends the model its generic "
                  "error text.",
                  "**Content off:** AgentOps has no switch for these spans: the `.nocontent` "
                  "variant is the same run."],
        "on": {},
        "off": {},
    },
    "agentops-openai": {
        "what": "the hand-written chat-completions tool loop on the openai client written as "
        "AgentOps' decorators ask (the run an `@agent` function, each tool a `@tool` function; "
        "g_handoff: a triage agent whose `transfer_to_research_agent` tool runs a research "
        "agent, decorated_loop.py), the model calls recorded by AgentOps' OpenAI provider "
        "instrumentation (agentops.init(), under its session span), sent to the capture's "
        "sink as agentops-openai-agents",
        "packages": ["agentops", "openai"],
        "driver": "fw_agentops:run_openai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool raises; AgentOps ends the tool span with status "
                  "ERROR, and the loop sends the model `{\"error\": \"SearchBackendError: "
                  "...\"}`.",
                  "**Content off:** `TRACELOOP_TRACE_CONTENT=false`, which AgentOps' OpenAI "
                  "provider instrumentation reads (its decorators have no switch)."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openinference-mcp": {
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, a native handoff "
        "for g_handoff) whose tools live on a real MCP server subprocess over stdio "
        "(mcp_tools_server.py, the mcp package's MCPServer); the agent traced by "
        "openinference-instrumentation-openai-agents, the context carried to the server by "
        "openinference-instrumentation-mcp, both processes exporting to the capture's sink "
        "(the mcp SDK's own client and server spans included)",
        "packages": ["openai", "openai-agents", "mcp",
                     "openinference-instrumentation-openai-agents",
                     "openinference-instrumentation-mcp"],
        "driver": "fw_mcp",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result (`Error executing tool search_docs: ...`); the SDK "
                  "hands that text to the model as the tool's output."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    # Frameworks' own MCP clients on mcp_tools_server.py (fw_mcp_clients.py): a failing
    # search is an isError result, not an exception on the agent's side.
    "strands-mcp": {
        "what": "Strands Agents (OpenAIModel on the fake server, stream=False) whose tools come "
        "from a real MCP server subprocess over stdio (mcp_tools_server.py) through Strands' "
        "MCPClient with prefix \"docs\" (tools offered as docs_<tool>), traced by Strands' "
        "built-in OpenTelemetry tracing (default conventions), the mcp SDK's client spans on "
        "the same global provider and its server spans in the server process, both exporting "
        "to the capture's sink",
        "packages": ["strands-agents", "mcp", "openai"],
        "driver": "fw_mcp_clients:run_strands",
        "sink": True,
        "tool_spans": True,
        "tool_prefix": "docs_",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; Strands hands the model that result as an error "
                  "`toolResult`."],
        "on": {},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_unredacted_attributes="},
    },
    "pydantic-ai-mcp": {
        "what": "pydantic-ai (OpenAIChatModel on the fake server) whose tools come from a real "
        "MCP server subprocess over stdio (mcp_tools_server.py) through pydantic-ai's "
        "MCPToolset (a FastMCP client) prefixed \"docs\" (tools offered as docs_<tool>), "
        "traced by Logfire's integration (logfire.instrument_pydantic_ai(), "
        "send_to_logfire=False) with the capture's OTLP exporter as an additional processor, "
        "the mcp SDK's client spans on Logfire's global provider and its server spans in the "
        "server process, both exporting to the capture's sink",
        "packages": ["pydantic-ai-slim", "logfire", "fastmcp-slim", "mcp", "openai"],
        "driver": "fw_mcp_clients:run_pydantic_ai_logfire",
        "sink": True,
        "tool_spans": True,
        "tool_prefix": "docs_",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; the toolset raises `ModelRetry` with its text "
                  "(`tool_error_behavior='retry'`, the default) and pydantic-ai sends the model "
                  "a retry prompt.",
                  "**Content off:** `logfire.instrument_pydantic_ai(include_content=False)`, "
                  "which the driver sets for the `.nocontent` variant."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "google-adk-mcp": {
        "what": "Google ADK (LlmAgent with ADK's LiteLlm model class on the fake server) whose "
        "tools come from a real MCP server subprocess over stdio (mcp_tools_server.py) "
        "through ADK's McpToolset with tool_name_prefix \"docs\" (tools offered as "
        "docs_<tool>), traced by ADK's own tracing (telemetry schema 2) on the global "
        "provider, the mcp SDK's client spans beside it and its server spans in the server "
        "process, both exporting to the capture's sink",
        "packages": ["google-adk", "litellm", "mcp", "openai"],
        "driver": "fw_mcp_clients:run_google_adk",
        "sink": True,
        "tool_spans": True,
        "tool_prefix": "docs_",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; ADK hands the model that result as the tool's "
                  "response (nothing raises on the agent's side)."],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT",
                "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"},
    },
    "langgraph-mcp-openinference": {
        "what": "LangGraph's prebuilt ReAct agent (ChatOpenAI on the fake server) whose tools "
        "come from a real MCP server subprocess over stdio (mcp_tools_server.py, on mcp 1.x's "
        "FastMCP) through langchain-mcp-adapters' MultiServerMCPClient (server \"docs\", "
        "tool_name_prefix=True: tools offered as docs_<tool>), traced by "
        "openinference-instrumentation-langchain; mcp 1.x writes no spans of its own",
        "packages": ["langgraph", "langchain-core", "langchain-openai", "langchain-mcp-adapters",
                     "mcp", "openinference-instrumentation-langchain", "openai"],
        "driver": "fw_mcp_clients:run_langgraph_openinference",
        "sink": True,
        "tool_spans": True,
        "tool_prefix": "docs_",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; the adapters turn it into a `ToolMessage` with "
                  "`status=\"error\"` holding the server's text (`handle_tool_errors`, their "
                  "default), so nothing raises and the tool span ends OK."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "agno-mcp-openinference": {
        "what": "Agno Agent (OpenAIChat on the fake server) whose tools come from a real MCP "
        "server subprocess over stdio (mcp_tools_server.py) through Agno's MCPTools with "
        "tool_name_prefix \"docs\" (tools offered as docs_<tool>), traced by "
        "openinference-instrumentation-agno on the global provider, the mcp SDK's client spans "
        "beside it and its server spans in the server process, both exporting to the "
        "capture's sink",
        "packages": ["agno", "mcp", "openinference-instrumentation-agno", "openai"],
        "driver": "fw_mcp_clients:run_agno_openinference",
        "sink": True,
        "tool_spans": True,
        "tool_prefix": "docs_",
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; Agno hands the model its text as the tool's "
                  "result (`Error from MCP tool 'search_docs': [TextContent(...)]`), with no "
                  "error flag, so its tool span ends OK."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "llamaindex-mcp-openinference": {
        "what": "LlamaIndex FunctionAgent (llama-index-llms-openai on the fake server, "
        "streaming=False) whose tools come from a real MCP server subprocess over stdio "
        "(mcp_tools_server.py) through llama-index-tools-mcp's McpToolSpec on a "
        "BasicMCPClient (tool names unqualified), traced by "
        "openinference-instrumentation-llama-index on the global provider, the mcp SDK's "
        "client spans beside it and its server spans in the server process, both exporting "
        "to the capture's sink",
        "packages": ["llama-index-core", "llama-index-llms-openai", "llama-index-tools-mcp",
                     "mcp", "openinference-instrumentation-llama-index", "openai"],
        "driver": "fw_mcp_clients:run_llamaindex_openinference",
        "sink": True,
        "tool_spans": True,
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; the tool spec returns that `CallToolResult` "
                  "(`isError=True`) as the tool's output, so nothing raises and the tool span "
                  "ends OK."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "smolagents-mcp-openinference": {
        "what": "smolagents ToolCallingAgent (OpenAIServerModel on the fake server, answers "
        "through its built-in final_answer tool) whose tools come from a real MCP server "
        "subprocess over stdio (mcp_tools_server.py) through ToolCollection.from_mcp "
        "(mcpadapt; tool names unqualified), traced by "
        "openinference-instrumentation-smolagents on the global provider, the mcp SDK's "
        "client spans beside it and its server spans in the server process, both exporting "
        "to the capture's sink",
        "packages": ["smolagents", "mcpadapt", "mcp", "openinference-instrumentation-smolagents",
                     "openai"],
        "driver": "fw_mcp_clients:run_smolagents_openinference",
        "sink": True,
        "tool_spans": True,
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; mcpadapt hands the model its text "
                  "(`Error executing tool search_docs`) as the tool's output, with no error "
                  "flag, so the tool span ends OK.",
                  "**Final answer delivery:** as the `answer` argument of smolagents' built-in "
                  "`final_answer` tool (a TOOL span), also the agent span's `output.value`."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "autogen-mcp-openinference": {
        "what": "AutoGen AssistantAgent (OpenAIChatCompletionClient on the fake server) whose "
        "tools come from a real MCP server subprocess over stdio (mcp_tools_server.py, on mcp "
        "1.x's FastMCP) through autogen-ext's McpWorkbench (tool names unqualified), traced by "
        "autogen-core's own spans with openinference-instrumentation-autogen-agentchat and "
        "openinference-instrumentation-openai; mcp 1.x writes no spans of its own",
        "packages": ["autogen-agentchat", "autogen-ext", "mcp",
                     "openinference-instrumentation-autogen-agentchat",
                     "openinference-instrumentation-openai", "openai"],
        "driver": "fw_mcp_clients:run_autogen_openinference",
        "sink": True,
        "tool_spans": True,
        "notes": ["**Tool failures:** the search raises inside the MCP server, which answers "
                  "with an `isError` result; the workbench hands the model its text with "
                  "`is_error` set on the tool result."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "smolagents-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "hands_up": True,  # s_nested_rewritten: its agents answer after their agent tool
        "turn_limit": SMOLAGENTS_MAX_STEPS,
        "what": "smolagents ToolCallingAgent (OpenAIServerModel on the fake server, @tool "
        "functions, answers through its built-in final_answer tool; managed agents for "
        "g_handoff) traced by openinference-instrumentation-smolagents",
        "packages": ["smolagents", "openai", "openinference-instrumentation-smolagents"],
        "driver": "fw_smolagents",
        "followups": True,
        "turns_note": ["**Turns:** the same `ToolCallingAgent` run once per user message, the "
                       "follow-up with `reset=False` (the agent's memory is the history)."],
        "tool_spans": True,
        "handoff_via": "the `research_agent` managed agent, called like a tool "
        "(`research_agent {\"task\": ...}`)",
        "notes": ["**Final answer delivery:** as the `answer` argument of smolagents' built-in "
                  "`final_answer` tool (a TOOL span), also the agent span's `output.value`."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openlit-smolagents": {
        "what": "the smolagents-openinference ToolCallingAgent (OpenAIServerModel on the fake "
        "server, @tool functions, answers through its built-in final_answer tool; managed "
        "agents for g_handoff) traced by OpenLIT (openlit.init(): its smolagents and openai "
        "instrumentors, and the httpx instrumentation it also enables)",
        "packages": ["openlit", "smolagents", "openai"],
        "driver": "fw_openlit:run_smolagents",
        "tool_spans": True,
        "handoff_via": "the `research_agent` managed agent, called like a tool "
        "(`research_agent {\"task\": ...}`)",
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "smolagents-otel-genai": {
        "what": "the smolagents-openinference ToolCallingAgent (OpenAIServerModel on the fake "
        "server, @tool functions, answers through its built-in final_answer tool; managed "
        "agents for g_handoff) traced by the OpenTelemetry project's "
        "opentelemetry-instrumentation-genai-smolagents with its "
        "opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["smolagents", "openai", "opentelemetry-instrumentation-genai-smolagents",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_smolagents:run_otel_genai",
        "tool_spans": True,
        "handoff_via": "the `research_agent` managed agent, called like a tool "
        "(`research_agent {\"task\": ...}`)",
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "openlit-agno": {
        "what": "the agno-openinference agents (an Agent with function tools, the OpenAIChat "
        "model on the fake server; a Team whose leader delegates to a research_agent member "
        "for g_handoff) traced by OpenLIT (openlit.init(): its agno and openai instrumentors, "
        "and the httpx instrumentation it also enables)",
        "packages": ["openlit", "agno", "openai"],
        "driver": "fw_openlit:run_agno",
        "tool_spans": True,
        "handoff_via": "Agno's built-in team tool (`delegate_task_to_member "
        "{\"member_id\": \"research-agent\", \"task\": ...}`)",
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-strands": {
        "what": "the strands agent (OpenAIModel on the fake server, stream=False; @tool "
        "functions; an agent as a tool for g_handoff) with Strands' own tracing (default "
        "conventions) under OpenLIT (openlit.init(): its strands instrumentor, a span processor "
        "it puts first on the provider to enrich Strands' spans in place, its openai one, and "
        "the httpx instrumentation it also enables)",
        "packages": ["openlit", "strands-agents", "openai"],
        "driver": "fw_openlit:run_strands",
        "followups": True,
        "turns_note": ["**Turns:** the same `Agent` object called once per user message (it "
                       "keeps the conversation's messages)."],
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.as_tool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Strands sends the model an error "
                  "`toolResult` (`Error: ...`) and sets the tool span's status to ERROR.",
                  "**Content off:** OpenLIT's switch only; Strands' own tracing has none "
                  "(its redaction allow-list is not set), as a user switching OpenLIT's "
                  "content capture off would run it."],
        "structured_via": STRANDS_OUTPUT_MODEL,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-agent-framework": {
        "what": "the agent-framework agents (Agent on OpenAIChatCompletionClient against the "
        "fake server, plain function tools, include_detailed_errors; Agent.as_tool delegation "
        "for g_handoff) under OpenLIT (openlit.init(): its agent_framework instrumentor, which "
        "turns the framework's own telemetry off and writes its own spans, its openai one, and "
        "the httpx instrumentation it also enables)",
        "packages": ["openlit", "agent-framework-core", "agent-framework-openai", "openai"],
        "driver": "fw_openlit:run_agent_framework",
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`Agent.as_tool`, "
        "`research_agent {\"task\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the framework sends the model "
                  "`Error: Function failed. Exception: ...` (`include_detailed_errors`)."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-pydantic-ai": {
        "what": "the pydantic-ai-openinference agents (OpenAIChatModel on the fake server, "
        "tool_plain tools, ModelRetry for a failing search; a delegation tool for g_handoff) "
        "traced by OpenLIT (openlit.init(): its pydantic_ai and openai instrumentors, and the "
        "httpx instrumentation it also enables; Pydantic AI's own instrumentation off)",
        "packages": ["openlit", "pydantic-ai", "pydantic-ai-slim", "openai"],
        "driver": "fw_openlit:run_pydantic_ai",
        "handoff_via": "a delegation tool running the research agent "
        "(`delegate_to_research_agent {\"question\": ...}`); OpenLIT records the research "
        "agent's run nested in the triage agent's, no span for the tool",
        "notes": ["**No tool spans:** OpenLIT's pydantic_ai instrumentor writes one "
                  "`execute_tool` span per tool-calls node of the agent graph, with no tool "
                  "name, arguments or result, ending OK whatever the tools did; the tool calls "
                  "are the model's requests, their results the next call's tool messages, so "
                  "content off hides which tools ran.",
                  "**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt (the error text, then `Fix the errors and try again.`)."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-ag2": {
        "what": "the ag2-native agents on AG2 Classic (the autogen package of AG2 0.x: an LLM "
        "ConversableAgent with an OpenAI config on the fake server and a tool executor agent "
        "running its register_function tools; the research agent's chat run from the triage "
        "agent's task_research_agent tool for g_handoff) traced by OpenLIT (openlit.init(): "
        "its ag2 and openai instrumentors, and the httpx instrumentation it also enables)",
        "packages": ["openlit", "ag2", "openai"],
        "driver": "fw_openlit:run_ag2",
        "handoff_via": "a tool running the research agent's chat (`task_research_agent "
        "{\"objective\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; AG2 hands the model `Error: ...` as the "
                  "tool result."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "ag2-openinference": {
        "what": "the openlit-ag2 agents on AG2 Classic (the autogen package of AG2 0.x: an LLM "
        "ConversableAgent with an OpenAI config on the fake server and a tool executor agent "
        "running its register_function tools; the research agent's chat run from the triage "
        "agent's task_research_agent tool for g_handoff) traced by "
        "openinference-instrumentation-ag2 (AGENT spans per initiate_chat and generate_reply, "
        "TOOL spans per execute_function) with openinference-instrumentation-openai for the "
        "model calls, which the AG2 instrumentor does not record",
        "packages": ["ag2", "openai", "openinference-instrumentation-ag2",
                     "openinference-instrumentation-openai"],
        "driver": "fw_ag2:run_openinference",
        "tool_spans": True,
        "handoff_via": "a tool running the research agent's chat (`task_research_agent "
        "{\"objective\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; AG2 catches it, hands the model "
                  "`Error: ...` as the tool result and reports the call failed, so the TOOL "
                  "span ends with status ERROR.",
                  "**Content off:** `OPENINFERENCE_HIDE_*=true` (both instrumentors' "
                  "`TraceConfig`)."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "any-agent": {
        "what": "any-agent agents (Mozilla AI's any-agent on its own tinyagent framework: "
        "AgentConfig(model_id=\"openai:gpt-4o-mini\", api_base=...) through any-llm on the fake "
        "server, plain function tools; the research agent run by the triage agent's "
        "research_agent tool for g_handoff) traced by any-agent's own spans on the global "
        "tracer provider: invoke_agent, call_llm and execute_tool spans (scope any_agent)",
        "packages": ["any-agent", "any-llm-sdk", "openai"],
        "driver": "fw_anyagent",
        "tool_spans": True,
        "handoff_via": "a tool running the research agent (`research_agent "
        "{\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; tinyagent hands the model `Error calling "
                  "tool: <message>` and any-agent ends the `execute_tool` span with status "
                  "ERROR.",
                  "**Content off:** none: any-agent has no content switch; both variants hold "
                  "the same attributes."],
        "on": {},
        "off": {},
    },
    "openlit-haystack": {
        "what": "the haystack-openinference agents (Agent component, OpenAIChatGenerator on the "
        "fake server, @tool tools; the research agent as a ComponentTool for g_handoff) inside "
        "the application's agent_run span, traced by OpenLIT (openlit.init(): its haystack and "
        "openai instrumentors, and the httpx instrumentation it also enables)",
        "packages": ["openlit", "haystack-ai", "openai"],
        "driver": "fw_openlit:run_haystack",
        "handoff_via": "the research agent as a Haystack `ComponentTool` "
        "(`research_agent {\"messages\": [...]}`)",
        "notes": ["**Tool failures:** the tool raises; Haystack's ToolInvoker sends the model "
                  "the error text as a tool result flagged `error`."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-dspy": {
        "what": "the dspy-openinference ReAct programs (dspy.ReAct with dspy.Tool tools, "
        "dspy.LM('openai/gpt-4o-mini', api_base=...) on the fake server, ChatAdapter text "
        "protocol; no g_handoff) on dspy.LM(engine='litellm') inside the application's "
        "agent_run span, traced by OpenLIT (openlit.init(): it has no DSPy instrumentor, so "
        "its litellm instrumentor records the model calls, plus the httpx instrumentation it "
        "also enables; DSPy's default engine uses a client no OpenLIT instrumentor sees)",
        "packages": ["openlit", "dspy", "litellm"],
        "driver": "fw_openlit:run_dspy",
        "notes": ["**Tool calls:** not native tool calls: the model names the tool in its "
                  "text (`[[ ## next_tool_name ## ]]`) and DSPy runs it; no span records the "
                  "tools.",
                  "**Tool failures:** the tool raises; ReAct hands the model the observation "
                  "`Execution error in search_docs: ...`."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-google-adk": {
        "what": "the google-adk agents (LlmAgent, LiteLlm on the fake server, function tools, "
        "on_tool_error_callback; sub_agents and transfer_to_agent for g_handoff) traced by "
        "OpenLIT (openlit.init(): its google_adk and litellm instrumentors, and the httpx "
        "instrumentation it also enables) beside ADK's own tracing on the same provider",
        "packages": ["openlit", "google-adk", "litellm", "openai"],
        "driver": "fw_openlit:run_google_adk",
        "tool_spans": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool raises; the agent's on_tool_error_callback "
                  "sends the model `{\"error\": \"SearchBackendError: ...\"}`."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "mlflow-smolagents": {
        "turn_limit": SMOLAGENTS_MAX_STEPS,
        "what": "the smolagents-openinference ToolCallingAgent (OpenAIServerModel on the fake "
        "server, @tool functions, answers through its built-in final_answer tool; managed "
        "agents for g_handoff) traced by MLflow's smolagents autolog alone "
        "(mlflow.smolagents.autolog()), exported by MLflow's OTLP exporter to the capture's "
        "sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "smolagents", "openai"],
        "driver": "fw_mlflow:run_smolagents",
        "sink": True,
        "model_spans": False,
        "followups": True,
        "turns_note": ["**Turns:** as `smolagents-openinference`: the same `ToolCallingAgent` "
                       "run once per user message, the follow-up with `reset=False`."],
        "tool_spans": True,
        "handoff_via": "the `research_agent` managed agent, called like a tool "
        "(`research_agent {\"task\": ...}`)",
        "notes": ["**Final answer delivery:** as the `answer` argument of smolagents' built-in "
                  "`final_answer` tool.",
                  "**Model calls:** none recorded. MLflow 3.17.2's autolog (which declares "
                  "smolagents up to 1.26.0) wraps `Model.__call__` and the agents' `step`; "
                  "smolagents 1.26 agents call `model.generate` and `_step_stream` instead, so "
                  "only the agent's `run` and each tool's `__call__` are spans.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "mlflow-autogen": {
        "turn_limit": AUTOGEN_MAX_TOOL_ITERATIONS,
        "what": "the autogen-openinference agents (AutoGen AgentChat AssistantAgent with "
        "function tools, OpenAIChatCompletionClient on the fake server; a Swarm with a handoff "
        "for g_handoff) traced by MLflow's AutoGen autolog alone (mlflow.autogen.autolog(): "
        "agent runs, model-client calls, tools logged as attributes), exported by MLflow's "
        "OTLP exporter to the capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "autogen-agentchat", "autogen-core", "autogen-ext",
                     "openai"],
        "driver": "fw_mlflow:run_autogen",
        "sink": True,
        "transfers_back": True,
        "handoff_via": "AutoGen's Swarm handoff tool (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the tool raises; AutoGen sends the model the error text.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "mlflow-gemini": {
        "what": "the google-genai tool loop (generate_content, function_declarations, "
        "automatic function calling off) traced by MLflow's Gemini autolog alone "
        "(mlflow.gemini.autolog()), the loop inside the application's "
        "mlflow.start_span(\"agent_run\"), exported by MLflow's OTLP exporter to the "
        "capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "google-genai"],
        "driver": "fw_mlflow:run_gemini",
        "sink": True,
        "model": "scripted fake Gemini API server on 127.0.0.1 (`fake_gemini.py`, "
        "non-streaming `:generateContent`, `functionCall` / `functionResponse` parts without "
        "call ids)",
        "notes": ["**Tool failures:** sent back as a `functionResponse` part whose response is "
                  "the error JSON; the raw client loop makes no tool spans.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "mlflow-bedrock": {
        "what": "the boto3 Bedrock Runtime Converse tool loop traced by MLflow's Bedrock "
        "autolog alone (mlflow.bedrock.autolog()), the loop inside the application's "
        "mlflow.start_span(\"agent_run\"), exported by MLflow's OTLP exporter to the "
        "capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "boto3", "botocore"],
        "driver": "fw_mlflow:run_bedrock",
        "sink": True,
        "model": "scripted fake Bedrock Runtime Converse server on 127.0.0.1 "
        "(`fake_bedrock.py`, non-streaming, `toolUse` / `toolResult` blocks, `stopReason`)",
        "notes": ["**Tool failures:** sent back as a `toolResult` block with `status: error` "
                  "and the error JSON; the raw client loop makes no tool spans.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "openinference-google-genai": {
        "what": "the google-genai tool loop (generate_content, function_declarations, "
        "automatic function calling off) inside the application's agent_run span, recorded by "
        "openinference-instrumentation-google-genai",
        "packages": ["google-genai", "openinference-instrumentation-google-genai"],
        "driver": "fw_google_genai:run_openinference",
        "model": "scripted fake Gemini API server on 127.0.0.1 (`fake_gemini.py`, "
        "non-streaming `:generateContent`, `functionCall` / `functionResponse` parts without "
        "call ids)",
        "notes": ["**Tool failures:** sent back as a `functionResponse` part whose response is "
                  "the error JSON; the raw client loop makes no tool spans.",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openinference-bedrock": {
        "what": "the boto3 Bedrock Runtime Converse tool loop inside the application's "
        "agent_run span, recorded by openinference-instrumentation-bedrock",
        "packages": ["boto3", "botocore", "openinference-instrumentation-bedrock"],
        "driver": "fw_bedrock:run_openinference",
        "model": "scripted fake Bedrock Runtime Converse server on 127.0.0.1 "
        "(`fake_bedrock.py`, non-streaming, `toolUse` / `toolResult` blocks, `stopReason`)",
        "notes": ["**Tool failures:** sent back as a `toolResult` block with `status: error` "
                  "and the error JSON; the raw client loop makes no tool spans.",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openinference-litellm": {
        "what": "litellm.completion (openai/gpt-4o-mini with api_base on the fake server) in "
        "the litellm-otel tool loop inside the application's agent_run span, recorded by "
        "openinference-instrumentation-litellm (LiteLLM's own callbacks off)",
        "packages": ["litellm", "openai", "openinference-instrumentation-litellm"],
        "driver": "fw_litellm:run_openinference",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the loop makes no tool spans.",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openlit-litellm": {
        "what": "the litellm-otel tool loop (litellm.completion, openai/gpt-4o-mini with "
        "api_base on the fake server) inside the application's agent_run span, traced by "
        "OpenLIT (openlit.init(): its litellm instrumentor, and the openai and httpx ones it "
        "also enables; LiteLLM's own callbacks off)",
        "packages": ["openlit", "litellm", "openai"],
        "driver": "fw_litellm:run_openlit",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the loop makes no tool spans.",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-bedrock": {
        "what": "the boto3 Bedrock Runtime Converse tool loop inside the application's "
        "agent_run span, traced by OpenLIT (openlit.init(): its bedrock instrumentor, and the "
        "httpx one it also enables)",
        "packages": ["openlit", "boto3", "botocore"],
        "driver": "fw_bedrock:run_openlit",
        "model": "scripted fake Bedrock Runtime Converse server on 127.0.0.1 "
        "(`fake_bedrock.py`, non-streaming, `toolUse` / `toolResult` blocks, `stopReason`)",
        "notes": ["**Tool failures:** sent back as a `toolResult` block with `status: error` "
                  "and the error JSON; the raw client loop makes no tool spans.",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-create-agent": {
        "what": "the langchain-create-agent-openllmetry agents (LangChain 1.x create_agent: "
        "ChatOpenAI on the fake server, @tool functions, ToolErrorMiddleware; the research "
        "agent invoked from the triage agent's research_agent tool for g_handoff) traced by "
        "OpenLIT (openlit.init(): its langchain and langgraph instrumentors, and the httpx one "
        "it also enables)",
        "packages": ["openlit", "langchain", "langchain-core", "langchain-openai",
                     "langgraph"],
        "driver": "fw_openlit:run_create_agent",
        "tool_spans": True,
        "handoff_via": "the `research_agent {\"question\": ...}` tool, which runs the research "
        "agent's own graph",
        "notes": ["**Tool failures:** the tool raises; ToolErrorMiddleware sends the model an "
                  "error ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": CREATE_AGENT_TOOL_STRATEGY,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "strands": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "hands_up": True,  # s_nested_rewritten: its agents answer after their agent tool
        "what": "Strands Agents (OpenAIModel on the fake server, stream=False; @tool functions; "
        "an agent as a tool for g_handoff) with its built-in OpenTelemetry tracing, default "
        "(legacy) conventions: messages as gen_ai.*.message / gen_ai.choice span events",
        "packages": ["strands-agents", "openai"],
        "driver": "fw_strands",
        "followups": True,
        "turns_note": ["**Turns:** the same `Agent` object called once per user message (it "
                       "keeps the conversation's messages)."],
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.as_tool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Strands sends the model an error "
                  "`toolResult` (`Error: ...`) and sets the tool span's status to ERROR."],
        "structured_via": STRANDS_OUTPUT_MODEL,
        "cut_raises": {"length": "MaxTokensReachedException"},
        "on": {},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_unredacted_attributes="},
    },
    "strands-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "what": "the strands agent (OpenAIModel on the fake server, stream=False; @tool "
        "functions; an agent as a tool for g_handoff) with its built-in tracing (default "
        "conventions), each span rewritten in place by OpenInference's "
        "StrandsAgentsToOpenInferenceProcessor (openinference-instrumentation-strands-agents) "
        "first among the provider's processors: OpenInference span kinds and llm.* / tool.* "
        "attributes, the gen_ai.* message events stripped",
        "packages": ["strands-agents", "openai", "openinference-instrumentation-strands-agents"],
        "driver": "fw_strands:run_openinference",
        "followups": True,
        "turns_note": ["**Turns:** the same `Agent` object called once per user message (it "
                       "keeps the conversation's messages)."],
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.as_tool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Strands sends the model an error "
                  "`toolResult` (`Error: ...`) and sets the tool span's status to ERROR."],
        "structured_via": STRANDS_OUTPUT_MODEL,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "strands-latest": {
        "what": "the strands agent with OTEL_SEMCONV_STABILITY_OPT_IN="
        "gen_ai_latest_experimental: gen_ai.input.messages / gen_ai.output.messages in "
        "gen_ai.client.inference.operation.details events, gen_ai.tool.call.* on tool spans",
        "packages": ["strands-agents", "openai"],
        "driver": "fw_strands",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.as_tool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Strands sends the model an error "
                  "`toolResult` (`Error: ...`) and sets the tool span's status to ERROR."],
        "on": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN":
                "gen_ai_latest_experimental,gen_ai_unredacted_attributes="},
    },
    "langtrace-langgraph": {
        "what": "the langgraph-openinference agents (LangGraph prebuilt ReAct agent, ChatOpenAI "
        "on the fake server, @tool functions in a ToolNode with handle_tool_errors; a "
        "langgraph-swarm for g_handoff) traced by Langtrace's Python SDK (langtrace.init(): "
        "its langchain, langchain-core, langgraph and openai instrumentations), exported by "
        "the SDK's OTLP/HTTP exporter (api_host on the capture's sink)",
        "packages": ["langtrace-python-sdk", "langgraph", "langgraph-prebuilt",
                     "langgraph-swarm", "langchain-core", "langchain-openai", "openai"],
        "driver": "fw_langtrace:run_langgraph",
        "sink": True,
        "tool_spans": False,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`).",
                  "**Content off:** `TRACE_PROMPT_COMPLETION_DATA=false`."],
        "on": {},
        "off": {"TRACE_PROMPT_COMPLETION_DATA": "false"},
    },
    "langtrace-crewai": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by Langtrace's Python SDK (langtrace.init(): its crewai, litellm "
        "and openai instrumentations), exported by the SDK's OTLP/HTTP exporter (api_host on "
        "the capture's sink)",
        "packages": ["langtrace-python-sdk", "crewai", "litellm", "openai"],
        "driver": "fw_langtrace:run_crewai",
        "sink": True,
        "tool_spans": False,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**Tool failures:** the tool raises; CrewAI hands the model the error text "
                  "(`Error executing tool ...`).",
                  "**Content off:** `TRACE_PROMPT_COMPLETION_DATA=false`."],
        "on": {},
        "off": {"TRACE_PROMPT_COMPLETION_DATA": "false"},
    },
    "langtrace-dspy": {
        "what": "the dspy-openinference ReAct program (dspy.Tool tools, dspy.LM on the fake "
        "server through LiteLLM, ChatAdapter; no g_handoff) traced by Langtrace's Python SDK "
        "(langtrace.init(): its dspy and litellm instrumentations), exported by the SDK's "
        "OTLP/HTTP exporter (api_host on the capture's sink)",
        "packages": ["langtrace-python-sdk", "dspy", "litellm"],
        "driver": "fw_langtrace:run_dspy",
        "sink": True,
        "notes": ["**Tool failures:** the tool raises; ReAct hands the model the error text "
                  "(`Execution error in search_docs: ...`).",
                  "**Content off:** `TRACE_PROMPT_COMPLETION_DATA=false`."],
        "on": {},
        "off": {"TRACE_PROMPT_COMPLETION_DATA": "false"},
    },
    "laminar-openai": {
        "what": "the hand-written chat-completions tool loop on the openai client written as "
        "Laminar's documentation shows (the run an `@observe()` function, each tool an "
        "`@observe(span_type=\"TOOL\")` function; g_handoff: a triage agent whose "
        "`transfer_to_research_agent` tool runs a research agent, decorated_loop.py), the "
        "model calls recorded by Laminar's OpenAI client instrumentation (`lmnr`: "
        "Laminar.initialize, its OTLP/HTTP exporter pointed at the capture's sink)",
        "packages": ["lmnr", "openai"],
        "driver": "fw_laminar:run_openai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `transfer_to_research_agent {}` tool, whose span holds the research "
        "agent's span",
        "notes": ["**Tool failures:** the tool raises; Laminar ends the tool span with status "
                  "ERROR and an `exception` event, and the loop sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Content off:** `LMNR_TRACE_CONTENT=false`."],
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "langtrace-openai": {
        "what": "the hand-written chat-completions tool loop on the openai client inside "
        "Langtrace's root span (`with_langtrace_root_span()`; Langtrace has no agent or tool "
        "decorator), the model calls recorded by Langtrace's OpenAI instrumentation "
        "(langtrace.init(), the SDK's OTLP/HTTP exporter on the capture's sink)",
        "packages": ["langtrace-python-sdk", "openai"],
        "driver": "fw_langtrace:run_openai",
        "sink": True,
        "notes": [RAW_LOOP_NOTES[0],
                  "**Content off:** `TRACE_PROMPT_COMPLETION_DATA=false`."],
        "on": {},
        "off": {"TRACE_PROMPT_COMPLETION_DATA": "false"},
    },
    "crewai-openinference": {
        "turn_limit": CREWAI_MAX_ITER,
        "what": "CrewAI (an Agent with @tool tools, a Task, a Crew; CrewAI's LLM through "
        "LiteLLM to the fake server; delegation to a coworker for g_handoff) traced by "
        "openinference-instrumentation-crewai, model calls by "
        "openinference-instrumentation-litellm",
        "packages": ["crewai", "litellm", "openinference-instrumentation-crewai",
                     "openinference-instrumentation-litellm"],
        "driver": "fw_crewai",
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "structured_via": CREWAI_OUTPUT_PYDANTIC,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "crewai-openllmetry": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by OpenLLMetry's opentelemetry-instrumentation-crewai, with its "
        "opentelemetry-instrumentation-openai enabled as Traceloop.init() would (it recorded "
        "no span in these runs)",
        "packages": ["crewai", "litellm", "opentelemetry-instrumentation-crewai",
                     "opentelemetry-instrumentation-openai"],
        "driver": "fw_crewai:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**Content off:** `TRACELOOP_TRACE_CONTENT=false` is ignored by this "
                  "instrumentation: both variants hold every message, argument and result."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openinference-anthropic": {
        "what": "hand-written Messages API tool loop on the anthropic client, recorded by "
        "openinference-instrumentation-anthropic",
        "packages": ["anthropic", "openinference-instrumentation-anthropic"],
        "driver": "fw_anthropic:run_openinference",
        "model": FAKE_ANTHROPIC,
        "notes": ANTHROPIC_NOTES,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "claude-agent-sdk": {
        "what": "the Claude Agent SDK's `query()` driving the Claude Code CLI its wheel bundles, "
        "the scenario's tools as in-process SDK MCP tools (`@tool` + `create_sdk_mcp_server`), "
        "recorded by openinference-instrumentation-claude-agent-sdk",
        "packages": ["claude-agent-sdk", "openinference-instrumentation-claude-agent-sdk"],
        "driver": "fw_claude_agent_sdk:run",
        "model": "scripted fake Anthropic Messages server on 127.0.0.1 (`fw_claude_agent_sdk.py` "
        "over `fake_anthropic.py`, streamed; Claude Code reaches it through "
        "`ANTHROPIC_BASE_URL`)",
        "tool_prefix": "mcp__scenario__",
        "tool_spans": True,
        "handoff_via": "Claude Code's `Agent` tool (`subagent_type: research_agent`, an "
        "`AgentDefinition` sub-agent run in the foreground)",
        "notes": [
            "**Spans:** one `ClaudeAgentSDK.query` AGENT span per run (model name, token totals "
            "and every assistant message as `llm.output_messages.*`), a TOOL span per tool call "
            "from the CLI's hooks, and a `ClaudeAgentSDK.Agent` AGENT span under the `Agent` "
            "tool span for a sub-agent; no span per model call.",
            "**Tool failures:** the MCP tool answers `is_error: true` with the error JSON; that "
            "tool span ends with status ERROR and an `exception` event (from the CLI's "
            "`PostToolUseFailure` hook or the `tool_result` block's `is_error`), no result.",
        ],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "claude-agent-sdk-mcp": {
        "what": "the claude-agent-sdk runs (`query()` driving the Claude Code CLI its wheel "
        "bundles, the scenario's tools as in-process SDK MCP tools) recorded by "
        "openinference-instrumentation-claude-agent-sdk, with the capture's provider also the "
        "global one, so the `mcp` SDK (2.x) records its own server spans too",
        "packages": [
            "claude-agent-sdk",
            "openinference-instrumentation-claude-agent-sdk",
            "mcp",
        ],
        "driver": "fw_claude_agent_sdk:run_mcp",
        "model": "scripted fake Anthropic Messages server on 127.0.0.1 (`fw_claude_agent_sdk.py` "
        "over `fake_anthropic.py`, streamed; Claude Code reaches it through "
        "`ANTHROPIC_BASE_URL`)",
        "tool_prefix": "mcp__scenario__",
        "tool_spans": True,
        "handoff_via": "Claude Code's `Agent` tool (`subagent_type: research_agent`, an "
        "`AgentDefinition` sub-agent run in the foreground)",
        "notes": [
            "**Spans:** as `claude-agent-sdk`, plus the `mcp` SDK's server spans of the "
            "in-process SDK MCP server (`initialize`, `tools/list`, `tools/call <tool>`): each "
            "tool call is OpenInference's TOOL span and, beside it (not inside it: the CLI's "
            "control channel carries no trace context), the `tools/call` span, which ends ERROR "
            "when the tool answered `is_error`.",
            "**Tool failures:** the MCP tool answers `is_error: true` with the error JSON.",
        ],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openlit-claude-agent-sdk": {
        "what": "the claude-agent-sdk runs (the Claude Agent SDK's `query()` driving the Claude "
        "Code CLI its wheel bundles, the scenario's tools as in-process SDK MCP tools) traced by "
        "OpenLIT (openlit.init(): its claude_agent_sdk instrumentor, which wraps `query()`, and "
        "the httpx instrumentation it also enables)",
        "packages": ["openlit", "claude-agent-sdk"],
        "driver": "fw_openlit:run_claude_agent_sdk",
        "model": "scripted fake Anthropic Messages server on 127.0.0.1 (`fw_claude_agent_sdk.py` "
        "over `fake_anthropic.py`, streamed; Claude Code reaches it through "
        "`ANTHROPIC_BASE_URL`)",
        "tool_prefix": "mcp__scenario__",
        "tool_spans": True,
        "handoff_via": "Claude Code's `Agent` tool (`subagent_type: research_agent`, an "
        "`AgentDefinition` sub-agent run in the foreground)",
        "notes": ["**Tool failures:** the MCP tool answers `is_error: true` with the error JSON.",
                  "**Held out** (a..m, s; `o_run_error` not run: the CLI ends without an "
                  "exception on HTTP 500): 36 of 36 verdicts wrong, no false pass: OpenLIT's mcp "
                  "instrumentor's `mcp session/init` / `mcp server/run` spans were unrecognised, "
                  "and each call is both OpenLIT's `execute_tool` span and the `mcp` SDK's "
                  "sibling `tools/call` server span, joined as one call since (side by side)."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "bedrock-openllmetry": {
        "what": "hand-written Bedrock Runtime Converse tool loop on boto3 "
        "(`client.converse(..., toolConfig=...)`), recorded by "
        "opentelemetry-instrumentation-bedrock (Traceloop OpenLLMetry)",
        "packages": ["boto3", "botocore", "opentelemetry-instrumentation-bedrock"],
        "driver": "fw_bedrock",
        "model": "scripted fake Bedrock Runtime Converse server on 127.0.0.1 "
        "(`fake_bedrock.py`, non-streaming, `toolUse` / `toolResult` blocks, `stopReason`)",
        "notes": ["**Tool failures:** sent back as a `toolResult` block with `status: error` "
                  "and the error JSON; the raw client loop makes no tool spans (tool calls "
                  "live in the model spans only).",
                  "**Unrecognised span:** `agent_run`, the capture app's own attribute-less "
                  "root span (as in the raw OpenAI and Anthropic sources)."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openllmetry-anthropic": {
        "what": "hand-written Messages API tool loop on the anthropic client, recorded by "
        "opentelemetry-instrumentation-anthropic (Traceloop OpenLLMetry)",
        "packages": ["anthropic", "opentelemetry-instrumentation-anthropic"],
        "driver": "fw_anthropic:run_openllmetry",
        "model": FAKE_ANTHROPIC,
        "notes": ANTHROPIC_NOTES,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openllmetry-anthropic-events": {
        "what": "hand-written Messages API tool loop on the anthropic client, recorded by "
        "opentelemetry-instrumentation-anthropic (OpenLLMetry) with use_attributes=False: "
        "message content as log-based events",
        "packages": ["anthropic", "opentelemetry-instrumentation-anthropic"],
        "driver": "fw_anthropic:run_openllmetry_events",
        "model": FAKE_ANTHROPIC,
        "notes": ANTHROPIC_NOTES,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "genai-anthropic": {
        "what": "hand-written Messages API tool loop on the anthropic client, recorded by "
        "opentelemetry-instrumentation-genai-anthropic (python-contrib, on "
        "opentelemetry-util-genai)",
        "packages": ["anthropic", "opentelemetry-instrumentation-genai-anthropic",
                     "opentelemetry-util-genai"],
        "driver": "fw_anthropic:run_contrib",
        "model": FAKE_ANTHROPIC,
        "notes": ANTHROPIC_NOTES,
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "google-genai": {
        "what": "hand-written generate_content tool loop on the google-genai client "
        "(function_declarations, automatic function calling off), recorded by "
        "opentelemetry-instrumentation-google-genai (python-contrib)",
        "packages": ["google-genai", "opentelemetry-instrumentation-google-genai"],
        "driver": "fw_google_genai",
        "model": "scripted fake Gemini API server on 127.0.0.1 (`fake_gemini.py`, "
        "non-streaming `:generateContent`, `functionCall` / `functionResponse` parts without "
        "call ids)",
        "notes": ["**Tool failures:** sent back as a `functionResponse` part whose response is "
                  "the error JSON; the raw client loop makes no tool spans (tool calls live in "
                  "the model spans only).",
                  ANTHROPIC_NOTES[1]],
        "model_retry_fails": GENAI_NO_RETRY,
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "google-genai-events": google_genai_content_mode_source(
        "EVENT_ONLY", "messages only in gen_ai.client.inference.operation.details log records, "
        "none on the spans"),
    "google-genai-span-and-event": google_genai_content_mode_source(
        "SPAN_AND_EVENT", "messages both on the spans and in "
        "gen_ai.client.inference.operation.details log records"),
    "smolagents-codeagent-openinference": {
        "what": "smolagents CodeAgent (OpenAIServerModel on the fake server; the scripted model "
        "writes <code> blocks that call the @tool functions and final_answer in smolagents' "
        "local Python executor) traced by openinference-instrumentation-smolagents",
        "packages": ["smolagents", "openai", "openinference-instrumentation-smolagents"],
        "driver": "fw_smolagents:run_code_agent",
        "tool_spans": True,
        "notes": ["**Tool calls:** written by the model as Python in a `<code>` block (the "
                  "model's text), executed by smolagents' local executor; each tool call is a "
                  "TOOL span; the answer is `final_answer(...)` called in code."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "google-adk": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": ADK_MAX_LLM_CALLS,
        "what": "Google ADK LlmAgent (LiteLlm openai/gpt-4o-mini on the fake server, Python "
        "function tools, on_tool_error_callback; sub_agents and transfer_to_agent for "
        "g_handoff) with ADK's own tracing, telemetry schema 2 (the default: GenAI semconv "
        "1.44 aligned)",
        "packages": ["google-adk", "litellm", "openai"],
        "driver": "fw_adk",
        "followups": True,
        "turns_note": ["**Turns:** one `runner.run_async` per user message on the same "
                       "`InMemoryRunner` session (ADK's session holds the history)."],
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool raises; the agent's on_tool_error_callback "
                  "sends the model `{\"error\": \"SearchBackendError: ...\"}`."],
        "structured_via": ADK_OUTPUT_SCHEMA,
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT",
                "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"},
    },
    "google-adk-legacy": {
        "what": "the google-adk agent with ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 (the legacy "
        "schema: invocation / call_llm spans, gcp.vertex.agent.* payload attributes)",
        "packages": ["google-adk", "litellm", "openai"],
        "driver": "fw_adk",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool raises; the agent's on_tool_error_callback "
                  "sends the model `{\"error\": \"SearchBackendError: ...\"}`."],
        "on": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
        "off": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1",
                "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": "false"},
    },
    "google-adk-events": google_adk_opt_in_source(
        "", "EVENT_ONLY", "messages only in gen_ai.client.inference.operation.details log "
        "records, none on the spans"),
    "google-adk-legacy-latest": google_adk_opt_in_source(
        "1", "SPAN_ONLY", "the legacy schema's invocation / call_llm spans with the GenAI "
        "semconv's generate_content spans and their messages beside them"),
    "openinference-google-adk": {
        "what": "the google-adk agents traced by openinference-instrumentation-google-adk (its "
        "instrumentor wraps ADK's runner and agents and takes over ADK's own tracer, so the "
        "export holds OpenInference spans)",
        "packages": ["google-adk", "litellm", "openai", "openinference-instrumentation-google-adk"],
        "driver": "fw_adk:run_openinference",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool raises; the agent's on_tool_error_callback "
                  "sends the model `{\"error\": \"SearchBackendError: ...\"}`."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "semantic-kernel": {
        "what": "Semantic Kernel ChatCompletionAgent (OpenAIChatCompletion connector on the fake "
        "server, auto function calling, tools as @kernel_function methods of the SupportTools "
        "plugin) traced by its native GenAI diagnostics; message logs bridged to OTLP logs",
        "packages": ["semantic-kernel", "openai"],
        "driver": "fw_semantic_kernel",
        "tool_spans": True,
        "tool_prefix": "SupportTools-",
        "handoff_via": "a `ResearchAgent` plugin function that calls the research agent, "
        "called like a tool (`ResearchAgent-research_agent {\"messages\": ...}`)",
        "notes": ["**Tool names:** as Semantic Kernel advertises and records them, qualified by "
                  "the plugin (`SupportTools-search_docs`); a failing tool raises and Semantic "
                  "Kernel sends the error text back to the model."],
        "on": {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
               "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"},
        "off": {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
                "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "false"},
    },
    "crewai-openinference-events": {
        "what": "the crewai-openinference crew traced by openinference-instrumentation-crewai "
        "in its event-listener mode (use_event_listener=True: spans from CrewAI's event bus, "
        "model calls included; no LiteLLM instrumentation)",
        "packages": ["crewai", "litellm", "openinference-instrumentation-crewai"],
        "driver": "fw_crewai:run_event_listener",
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "openllmetry-openai-events": {
        "what": "opentelemetry-instrumentation-openai (OpenLLMetry) with use_attributes=False: "
        "message content as log-based events",
        "packages": ["openai", "opentelemetry-instrumentation-openai"],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "edot-openai": {
        "what": "Elastic's EDOT OpenAI instrumentation (elastic-opentelemetry-instrumentation-"
        "openai, module opentelemetry.instrumentation.openai: its own wrappers, not "
        "python-contrib's openai-v2 nor OpenLLMetry's) on the openai client: GenAI spans, "
        "message content as gen_ai.* log-record events",
        "packages": ["openai", "elastic-opentelemetry-instrumentation-openai"],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "langgraph-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": LANGGRAPH_RECURSION_LIMIT,
        "what": "LangGraph prebuilt ReAct agent (create_react_agent, ChatOpenAI on the fake "
        "server, @tool functions in a ToolNode with handle_tool_errors; a langgraph-swarm for "
        "g_handoff) traced by openinference-instrumentation-langchain",
        "packages": ["langgraph", "langgraph-prebuilt", "langgraph-swarm", "langchain-core",
                     "langchain-openai", "openinference-instrumentation-langchain"],
        "driver": "fw_langgraph:run_openinference",
        "followups": True,
        "turns_note": ["**Turns:** each user turn is one `graph.invoke` with the new message "
                       "on a thread of an `InMemorySaver` checkpointer (`thread_id` "
                       "`conversation-1`), LangGraph's documented conversation memory."],
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "langgraph-graph-openinference": {
        "scenarios": ["a_happy", "b_tool_retry", "d_forbidden_tool", "q_turn_limit"],
        "turn_limit": {
            "via": '`graph.invoke(..., {"recursion_limit": 8})` (two graph steps per model call '
            "and its tools)",
            "error": "GraphRecursionError",
        },
        "what": "a hand-built LangGraph ReAct graph (StateGraph(MessagesState): a ChatOpenAI "
        "model node `agent` on the fake server, the prebuilt ToolNode with handle_tool_errors "
        "as `tools`, tools_condition between them; no create_react_agent, so nothing guards "
        "the graph's recursion_limit) traced by openinference-instrumentation-langchain",
        "packages": ["langgraph", "langgraph-prebuilt", "langchain-core", "langchain-openai",
                     "openinference-instrumentation-langchain"],
        "driver": "fw_langgraph_graph:run_openinference",
        "tool_spans": True,
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "langgraph-openllmetry": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "what": "the langgraph-openinference agent traced by OpenLLMetry's "
        "opentelemetry-instrumentation-langchain",
        "packages": ["langgraph", "langgraph-prebuilt", "langgraph-swarm", "langchain-core",
                     "langchain-openai", "opentelemetry-instrumentation-langchain"],
        "driver": "fw_langgraph:run_openllmetry",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "langgraph-otel-genai": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "what": "the langgraph-openinference agent traced by the OpenTelemetry project's "
        "opentelemetry-instrumentation-genai-langchain",
        "packages": ["langgraph", "langgraph-prebuilt", "langgraph-swarm", "langchain-core",
                     "langchain-openai", "opentelemetry-instrumentation-genai-langchain",
                     "opentelemetry-util-genai"],
        "driver": "fw_langgraph:run_otel_genai",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "langchain-create-agent-openllmetry": {
        "what": "LangChain 1.x agents (langchain.agents.create_agent: ChatOpenAI on the fake "
        "server, @tool functions, ToolErrorMiddleware turning a raised tool error into an error "
        "ToolMessage; g_handoff: the research agent invoked from the triage agent's "
        "research_agent tool) traced by OpenLLMetry's opentelemetry-instrumentation-langchain",
        "packages": ["langchain", "langchain-core", "langchain-openai", "langgraph",
                     "opentelemetry-instrumentation-langchain"],
        "driver": "fw_langchain_create_agent:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "the `research_agent {\"question\": ...}` tool, which runs the research "
        "agent's own graph",
        "notes": ["**Tool failures:** the tool raises; ToolErrorMiddleware sends the model an "
                  "error ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": CREATE_AGENT_TOOL_STRATEGY,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "langsmith-otel-create-agent": {
        "what": "the langchain-create-agent-openllmetry agents (LangChain 1.x create_agent) "
        "traced by the LangSmith SDK's OpenTelemetry mode (as langsmith-otel-langgraph)",
        "packages": ["langsmith", "langchain", "langchain-core", "langchain-openai",
                     "langgraph"],
        "driver": "fw_langchain_create_agent:run_langsmith",
        "tool_spans": True,
        "handoff_via": "the `research_agent {\"question\": ...}` tool, which runs the research "
        "agent's own graph",
        "notes": ["**Tool failures:** the tool raises; ToolErrorMiddleware sends the model an "
                  "error ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": CREATE_AGENT_TOOL_STRATEGY,
        "on": LANGSMITH_OTEL,
        "off": {**LANGSMITH_OTEL, "LANGSMITH_HIDE_INPUTS": "true",
                "LANGSMITH_HIDE_OUTPUTS": "true"},
    },
    "langsmith-otel-langgraph": {
        "what": "the langgraph-openinference agent traced by the LangSmith SDK's OpenTelemetry "
        "mode (LangChain's LangSmith tracer with LANGSMITH_OTEL_ENABLED and LANGSMITH_OTEL_ONLY: "
        "each LangChain run an OTel span on the application's tracer provider, nothing sent to "
        "LangSmith)",
        "packages": ["langsmith", "langgraph", "langgraph-prebuilt", "langgraph-swarm",
                     "langchain-core", "langchain-openai"],
        "driver": "fw_langgraph:run_langsmith",
        "transfers_back": True,
        "tool_spans": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": LANGSMITH_OTEL,
        "off": {**LANGSMITH_OTEL, "LANGSMITH_HIDE_INPUTS": "true",
                "LANGSMITH_HIDE_OUTPUTS": "true"},
    },
    "deepagents-openinference": {
        "what": "LangChain Deep Agents (deepagents' create_deep_agent: ChatOpenAI on the fake "
        "server, @tool functions beside the harness's built-in tools, ToolErrorMiddleware "
        "turning a raised tool error into an error ToolMessage; g_handoff: the research_agent "
        "sub-agent run through the harness's task tool) traced by "
        "openinference-instrumentation-langchain",
        "packages": ["deepagents", "langchain", "langchain-core", "langchain-openai",
                     "langgraph", "openinference-instrumentation-langchain"],
        "driver": "fw_deepagents:run_openinference",
        "tool_spans": True,
        **DEEPAGENTS_RUN,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "deepagents-langsmith-otel": {
        "what": "the deepagents-openinference agents traced by the LangSmith SDK's OpenTelemetry "
        "mode (as langsmith-otel-langgraph)",
        "packages": ["deepagents", "langsmith", "langchain", "langchain-core",
                     "langchain-openai", "langgraph"],
        "driver": "fw_deepagents:run_langsmith",
        "tool_spans": True,
        **DEEPAGENTS_RUN,
        "on": LANGSMITH_OTEL,
        "off": {**LANGSMITH_OTEL, "LANGSMITH_HIDE_INPUTS": "true",
                "LANGSMITH_HIDE_OUTPUTS": "true"},
    },
    "llamaindex-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": LLAMAINDEX_MAX_ITERATIONS,
        "what": "LlamaIndex FunctionAgent (llama-index-core agent workflows, the "
        "llama-index-llms-openai model on the fake server, FunctionTool tools; an AgentWorkflow "
        "for g_handoff) traced by openinference-instrumentation-llama-index",
        "packages": ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows",
                     "openinference-instrumentation-llama-index"],
        "driver": "fw_llamaindex",
        "followups": True,
        "turns_note": ["**Turns:** one `FunctionAgent.run(user_msg=..., ctx=ctx)` per user "
                       "message on the same `Context` (its memory is the history)."],
        "transfers_back": True,
        "tool_spans": True,
        "handoff_via": "AgentWorkflow's own `handoff` tool "
        "(`handoff {\"to_agent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the agent workflow sends the model the "
                  "exception text as an error tool output."],
        "structured_via": LLAMAINDEX_OUTPUT_CLS,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "agno-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "hands_up": True,  # s_nested_rewritten: its agents answer after their agent tool
        "what": "Agno (an Agent with function tools, the OpenAIChat model on the fake server; a "
        "Team whose leader delegates to a research_agent member for g_handoff) traced by "
        "openinference-instrumentation-agno",
        "packages": ["agno", "openai", "openinference-instrumentation-agno"],
        "driver": "fw_agno",
        "tool_spans": True,
        "handoff_via": "Agno's built-in team tool (`delegate_task_to_member "
        "{\"member_id\": \"research-agent\", \"task\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Agno sends the model the exception text "
                  "and the TOOL span ends with status ERROR (the text as status message).",
                  "**Tool results:** recorded with str(): a Python-repr dict in `output.value` "
                  "(`{'documents': [...]}`).",
                  "**Delegation:** the member's AGENT span runs beside the "
                  "`delegate_task_to_member` TOOL span (both under the team's span), not in it."],
        "structured_via": AGNO_OUTPUT_SCHEMA,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "haystack-openinference": {
        "what": "Haystack 2 Agent component (OpenAIChatGenerator on the fake server via "
        "api_base_url, @tool tools, raise_on_tool_invocation_failure=False; the research "
        "agent as a ComponentTool for g_handoff) traced by "
        "openinference-instrumentation-haystack",
        "packages": ["haystack-ai", "openai", "openinference-instrumentation-haystack"],
        "driver": "fw_haystack",
        "handoff_via": "the research agent as a Haystack `ComponentTool` "
        "(`research_agent {\"messages\": [...]}`)",
        "notes": ["**Tool failures:** the tool raises; Haystack's ToolInvoker sends the model "
                  "the error text as a tool result flagged `error`.",
                  "**No tool spans:** the Agent runs its tools inside one `ToolInvoker.run` "
                  "CHAIN span per step; tool calls, arguments and results are in the model "
                  "spans' messages (`input.value` / `output.value`: Haystack `ChatMessage` "
                  "reprs), so content off hides which tools ran."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "haystack-openinference-latest": {
        "what": "the haystack-openinference agents on haystack-ai 3.4.1, the top agent the one "
        "component of a Pipeline (a standalone Agent.run exports no span on Haystack 3), traced "
        "by openinference-instrumentation-haystack 0.1.46: a Pipeline.run span and the agent's "
        "Agent.run span, nothing of its model or tool calls",
        "packages": ["haystack-ai", "openai", "openinference-instrumentation-haystack"],
        "driver": "fw_haystack:run_in_pipeline",
        "model_spans": False,
        "handoff_via": "the research agent as a Haystack `ComponentTool` "
        "(`research_agent {\"messages\": [...]}`)",
        "notes": ["**Tool failures:** the tool raises; Haystack's ToolInvoker sends the model "
                  "the error text as a tool result flagged `error`.",
                  "**Nothing of the run's steps:** Haystack 3's Agent runs its chat generator "
                  "and ToolInvoker directly, outside the pipeline the instrumentation wraps: no "
                  "model-call or tool span in either variant; with content on the `Agent.run` "
                  "span's `output.value` holds the last message (the answer)."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "dspy-openinference": {
        "what": "DSPy ReAct (dspy.ReAct('question -> answer') with dspy.Tool tools; "
        "dspy.LM('openai/gpt-4o-mini', api_base=...) on the fake server; "
        "ChatAdapter text protocol, the built-in finish tool, then an extraction call) traced "
        "by openinference-instrumentation-dspy; no handoffs in DSPy, so no g_handoff",
        "packages": ["dspy", "litellm", "openinference-instrumentation-dspy"],
        "driver": "fw_dspy",
        "tool_spans": True,
        "notes": ["**Tool calls:** not native tool calls: the model names the tool in its "
                  "text (`[[ ## next_tool_name ## ]]`) and DSPy runs it; the run ends with "
                  "DSPy's `finish` tool and an extraction call whose `answer` field is the "
                  "final answer.",
                  "**Tool failures:** the tool raises; ReAct hands the model the observation "
                  "`Execution error in search_docs: ...`."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "mlflow-dspy": {
        "what": "the dspy-openinference ReAct program (dspy.ReAct('question -> answer') with "
        "dspy.Tool tools; dspy.LM('openai/gpt-4o-mini', api_base=...) on the fake server; "
        "ChatAdapter text protocol, the built-in finish tool, then an extraction call) traced "
        "by MLflow's DSPy autolog (mlflow.dspy.autolog() alone), exported by MLflow's OTLP "
        "exporter to the capture's sink, native mlflow.* attributes; no g_handoff",
        "packages": ["mlflow-tracing", "dspy", "litellm"],
        "driver": "fw_mlflow:run_dspy",
        "sink": True,
        "tool_spans": True,
        "notes": ["**Tool calls:** not native tool calls: the model names the tool in its "
                  "text (`[[ ## next_tool_name ## ]]`) and DSPy runs it; the run ends with "
                  "DSPy's `finish` tool and an extraction call whose `answer` field is the "
                  "final answer.",
                  "**Tool failures:** the tool raises; ReAct hands the model the observation "
                  "`Execution error in search_docs: ...`.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "openllmetry-agno": {
        "what": "the agno-openinference agents (an Agent with function tools, the OpenAIChat "
        "model on the fake server; a Team whose leader delegates to a research_agent member "
        "for g_handoff) traced by OpenLLMetry's opentelemetry-instrumentation-agno, with its "
        "opentelemetry-instrumentation-openai enabled as Traceloop.init() would",
        "packages": ["agno", "openai", "opentelemetry-instrumentation-agno",
                     "opentelemetry-instrumentation-openai"],
        "driver": "fw_agno:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "Agno's built-in team tool (`delegate_task_to_member "
        "{\"member_id\": \"research-agent\", \"task\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Agno sends the model the exception text, "
                  "and the tool span ends with status OK: the failure is only in the "
                  "`FunctionExecutionResult` OpenLLMetry records with str() in "
                  "`traceloop.entity.output` (`status='failure' ... error='...'`).",
                  "**Delegation:** the member's agent span runs beside the "
                  "`delegate_task_to_member` tool span (both under the team's "
                  "`triage_agent.team` span), not in it."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "agno-otel-genai": {
        "what": "the agno-openinference agents (an Agent with function tools, the OpenAIChat "
        "model on the fake server; a Team whose leader delegates to a research_agent member "
        "for g_handoff) traced by the OpenTelemetry project's opentelemetry-instrumentation-"
        "genai-agno with its opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["agno", "openai", "opentelemetry-instrumentation-genai-agno",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_agno:run_otel_genai",
        "tool_spans": True,
        "structured_via": AGNO_OUTPUT_SCHEMA,
        "handoff_via": "Agno's built-in team tool (`delegate_task_to_member "
        "{\"member_id\": \"research-agent\", \"task\": ...}`)",
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "dspy-otel-genai": {
        "what": "the dspy-openinference ReAct programs (fw_dspy.py: the ChatAdapter text "
        "protocol, the built-in finish tool, then an extraction call) traced by the "
        "OpenTelemetry project's opentelemetry-instrumentation-genai-dspy (invoke_agent, chat "
        "and execute_tool spans); no handoffs in DSPy, so no g_handoff",
        "packages": ["dspy", "opentelemetry-instrumentation-genai-dspy",
                     "opentelemetry-util-genai"],
        "driver": "fw_dspy:run_otel_genai",
        # ReAct asks for one tool per step, so no turn requests two calls (no i_parallel_tools,
        # l_parallel_failures: fw_dspy.script would split them into steps the script does not
        # describe), and fw_dspy.run_react turns DSPy's retries off (no u_model_retry).
        "scenarios": ["a_happy", "b_tool_retry", "c_retry_exhausted", "d_forbidden_tool",
                      "e_fabricated_citation", "f_degraded", "h_coding_agent",
                      "j_undisclosed_failure", "k_unfounded_uncertainty", "m_excess_calls",
                      "o_run_error"],
        "tool_spans": True,
        "notes": ["**Tool calls:** not native tool calls: the model names the tool in its "
                  "text (`[[ ## next_tool_name ## ]]`) and DSPy runs it; the run ends with "
                  "DSPy's `finish` tool and an extraction call whose `answer` field is the "
                  "final answer.",
                  "**Tool failures:** the tool raises; ReAct hands the model the observation "
                  "`Execution error in search_docs: ...`."],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "qwen-agent-otel-genai": {
        "what": "Qwen-Agent Assistants (fw_qwen_agent.py: the oai backend on the fake server, "
        "BaseTool tools, Qwen-Agent's default nous function-call prompt: tool calls are "
        "<tool_call> blocks in the reply text; the research agent as a tool for g_handoff) "
        "traced by the OpenTelemetry project's opentelemetry-instrumentation-genai-qwen-agent "
        "with its opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["qwen-agent", "openai", "opentelemetry-instrumentation-genai-qwen-agent",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_qwen_agent",
        "scenarios": ["a_happy", "b_tool_retry", "c_retry_exhausted", "d_forbidden_tool",
                      "e_fabricated_citation", "f_degraded", "h_coding_agent", "i_parallel_tools",
                      "j_undisclosed_failure", "k_unfounded_uncertainty", "l_parallel_failures",
                      "m_excess_calls", "o_run_error", "g_handoff",
                      "s_delegated_forbidden", "s_delegated_failure", "u_model_retry"],
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`research_agent {\"question\": ...}`)",
        "notes": ["**Tool calls:** not the API's tool calls: Qwen-Agent puts the tool schemas "
                  "in the system prompt and parses `<tool_call>` blocks from the reply text.",
                  "**Tool failures:** the tool raises; Qwen-Agent catches it and hands the "
                  "model `An error occurred when calling tool ...` as the tool's result (the "
                  "`execute_tool` span ends without an error)."],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "autogen-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": AUTOGEN_MAX_TOOL_ITERATIONS,
        "what": "Microsoft AutoGen AgentChat (AssistantAgent with function tools, "
        "OpenAIChatCompletionClient on the fake server; a Swarm with a handoff for g_handoff) "
        "with autogen-core's built-in GenAI spans, openinference-instrumentation-autogen-agentchat "
        "and openinference-instrumentation-openai",
        "packages": ["autogen-agentchat", "autogen-core", "autogen-ext", "openai",
                     "openinference-instrumentation-autogen-agentchat",
                     "openinference-instrumentation-openai"],
        "driver": "fw_autogen",
        "tool_spans": True,
        "transfers_back": True,
        "handoff_via": "AutoGen's Swarm handoff tool (`transfer_to_research_agent {}`)",
        "notes": ["**Tool failures:** the tool raises; AutoGen sends the model the error text; "
                  "autogen-core's `execute_tool` span ends with status ERROR (`error.type`), "
                  "the OpenInference TOOL span around it with status OK.",
                  "**Agent definitions:** each agent's construction is a `create_agent <name>` "
                  "span in a trace of its own (no run: not graded)."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "litellm-otel": {
        "what": "litellm.completion (openai/gpt-4o-mini with api_base on the fake server) in a "
        "hand-written tool loop, recorded by LiteLLM's own OpenTelemetry callback "
        "(litellm.callbacks = [\"otel\"]) on the application's tracer provider",
        "packages": ["litellm", "openai"],
        "driver": "fw_litellm",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the loop makes no tool spans (tool calls live in the model spans only).",
                  "**Unrecognised span:** none; the app's own `agent_run` root is the run's "
                  "wrapper."],
        "on": {"USE_OTEL_LITELLM_REQUEST_SPAN": "true"},
        "off": {"USE_OTEL_LITELLM_REQUEST_SPAN": "true",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "openlit-openai": {
        "what": "OpenLIT (openlit.init() on the application's tracer and logger providers) on "
        "the openai client in the hand-written tool loop",
        "packages": ["openlit", "openai"],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-openai-agents": {
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, @function_tool "
        "tools, a native handoff for g_handoff) traced by OpenLIT (openlit.init(): its "
        "openai_agents and openai instrumentors)",
        "packages": ["openlit", "openai-agents", "openai"],
        "driver": "fw_openai_agents:run_openlit",
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-langgraph": {
        "turn_limit": LANGGRAPH_RECURSION_LIMIT,
        "what": "the langgraph-openinference agent (LangGraph prebuilt ReAct agent, ChatOpenAI "
        "on the fake server; a langgraph-swarm handoff for g_handoff) traced by OpenLIT "
        "(openlit.init(): its langchain and langgraph instrumentors, and the httpx "
        "instrumentation it also enables; its openai one records nothing under ChatOpenAI)",
        "packages": ["openlit", "langgraph", "langgraph-prebuilt", "langgraph-swarm",
                     "langchain-core", "langchain-openai", "openai"],
        "driver": "fw_openlit:run_langgraph",
        "followups": True,
        "turns_note": ["**Turns:** as `langgraph-openinference`: one `graph.invoke` per user "
                       "turn on a checkpointer thread (`thread_id` `conversation-1`)."],
        "transfers_back": True,
        "tool_spans": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`)."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "openlit-crewai": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by OpenLIT (openlit.init(): its crewai and litellm instrumentors, "
        "and the httpx instrumentation it also enables)",
        "packages": ["openlit", "crewai", "litellm"],
        "driver": "fw_openlit:run_crewai",
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**No tool spans:** OpenLIT's CrewAI instrumentor records only the built-in "
                  "coworker tools (an `execute_tool` span); the agent's own tool calls are the "
                  "model's requests, their results the next call's tool messages, so content "
                  "off hides which tools ran."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "mlflow-create-agent": {
        "what": "the langchain-create-agent-openllmetry agents (LangChain 1.x create_agent: "
        "ChatOpenAI on the fake server, @tool functions, ToolErrorMiddleware; the research "
        "agent's own graph run from the triage agent's research_agent tool for g_handoff) "
        "traced by MLflow's LangChain autolog alone (mlflow.langchain.autolog()), exported by "
        "MLflow's OTLP exporter to the capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "langchain", "langchain-core", "langchain-openai",
                     "langgraph"],
        "driver": "fw_mlflow:run_create_agent",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `research_agent {\"question\": ...}` tool, which runs the research "
        "agent's own graph",
        "notes": ["**Tool failures:** the tool raises; ToolErrorMiddleware sends the model an "
                  "error ToolMessage (`Error: SearchBackendError(...)`).",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "structured_via": CREATE_AGENT_TOOL_STRATEGY,
        "on": {},
        "off": {},
    },
    "langchain-retriever-openinference": {
        "what": "a LangChain 1.x create_agent support agent (ChatOpenAI on the fake server, "
        "ToolErrorMiddleware) whose search_docs tool is create_retriever_tool over an "
        "InMemoryVectorStore retriever (DeterministicFakeEmbedding; its backend fails or finds "
        "nothing as the scenario's search does: fw_retrievers.py), traced by "
        "openinference-instrumentation-langchain",
        "packages": ["langchain", "langchain-core", "langchain-openai", "langgraph",
                     "openinference-instrumentation-langchain"],
        "driver": "fw_retrievers:run_langchain_openinference",
        **RETRIEVER_RUN,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "langchain-retriever-openllmetry": {
        "what": "the langchain-retriever-openinference agent (create_agent, a retriever tool "
        "over an InMemoryVectorStore) traced by OpenLLMetry's "
        "opentelemetry-instrumentation-langchain",
        "packages": ["langchain", "langchain-core", "langchain-openai", "langgraph",
                     "opentelemetry-instrumentation-langchain"],
        "driver": "fw_retrievers:run_langchain_openllmetry",
        **RETRIEVER_RUN,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openlit-langchain-retriever": {
        "what": "the langchain-retriever-openinference agent (create_agent, a retriever tool "
        "over an InMemoryVectorStore) traced by OpenLIT (openlit.init(): its langchain and "
        "langgraph instrumentors)",
        "packages": ["openlit", "langchain", "langchain-core", "langchain-openai", "langgraph"],
        "driver": "fw_retrievers:run_langchain_openlit",
        **RETRIEVER_RUN,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "mlflow-langchain-retriever": {
        "what": "the langchain-retriever-openinference agent (create_agent, a retriever tool "
        "over an InMemoryVectorStore) traced by MLflow's LangChain autolog alone "
        "(mlflow.langchain.autolog()), exported by MLflow's OTLP exporter to the capture's "
        "sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "langchain", "langchain-core", "langchain-openai",
                     "langgraph"],
        "driver": "fw_retrievers:run_langchain_mlflow",
        "sink": True,
        **RETRIEVER_RUN,
        "on": {},
        "off": {},
    },
    "llamaindex-retriever-openinference": {
        "what": "a LlamaIndex FunctionAgent support agent (llama-index-llms-openai on the fake "
        "server) whose search_docs tool is a RetrieverTool over a VectorStoreIndex retriever "
        "(in-memory SimpleVectorStore, a deterministic local hash embedding; its backend fails "
        "or finds nothing as the scenario's search does: fw_retrievers.py), traced by "
        "openinference-instrumentation-llama-index",
        "packages": ["llama-index-core", "llama-index-llms-openai",
                     "openinference-instrumentation-llama-index"],
        "driver": "fw_retrievers:run_llamaindex_openinference",
        **RETRIEVER_RUN,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "mlflow-llamaindex-retriever": {
        "what": "the llamaindex-retriever-openinference agent (FunctionAgent, a RetrieverTool "
        "over a VectorStoreIndex) traced by mlflow.llama_index.autolog() alone, exported by "
        "MLflow's OTLP exporter to the capture's sink",
        "packages": ["mlflow-tracing", "llama-index-core", "llama-index-llms-openai"],
        "driver": "fw_retrievers:run_llamaindex_mlflow",
        "sink": True,
        **RETRIEVER_RUN,
        "on": {},
        "off": {},
    },
    "mlflow-pydantic-ai": {
        "what": "the pydantic-ai-openinference agents (OpenAIChatModel on the fake server, "
        "tool_plain tools, ModelRetry for a failing search; a delegation tool for g_handoff) "
        "traced by MLflow's pydantic-ai autolog alone (mlflow.pydantic_ai.autolog(); "
        "pydantic-ai's own instrumentation off), exported by MLflow's OTLP exporter to the "
        "capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "pydantic-ai-slim", "openai"],
        "driver": "fw_mlflow:run_pydantic_ai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "a delegation tool running the research agent "
        "(`delegate_to_research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt (the error text, then `Fix the errors and try again.`).",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "mlflow-agno": {
        "what": "the agno-openinference agents (an Agent with function tools, the OpenAIChat "
        "model on the fake server; a Team whose leader delegates to a research_agent member "
        "for g_handoff) traced by MLflow's Agno autolog alone (mlflow.agno.autolog(), which runs "
        "openinference-instrumentation-agno on MLflow's tracer provider), exported by "
        "MLflow's OTLP exporter to the capture's sink",
        "packages": ["mlflow-tracing", "agno", "openai", "openinference-instrumentation-agno"],
        "driver": "fw_mlflow:run_agno",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "Agno's built-in team tool (`delegate_task_to_member "
        "{\"member_id\": \"research-agent\", \"task\": ...}`)",
        "notes": ["**Content off:** the OpenInference instrumentor's own switches "
                  "(`OPENINFERENCE_HIDE_*=true`); MLflow's masking span processor (set as for "
                  "mlflow-openai) does not reach these spans."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "mlflow-strands": {
        "what": "the strands agents (OpenAIModel on the fake server, stream=False; @tool "
        "functions; an agent as a tool for g_handoff) traced by MLflow's Strands autolog "
        "alone (mlflow.strands.autolog(): its span processor turns Strands' own OpenTelemetry "
        "spans into MLflow spans), exported by MLflow's OTLP exporter to the capture's sink",
        "packages": ["mlflow-tracing", "strands-agents", "openai"],
        "driver": "fw_mlflow:run_strands",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`Agent.as_tool`, "
        "`research_agent {\"input\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; Strands sends the model an error "
                  "`toolResult` (`Error: ...`) and sets the tool span's status to ERROR.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor) plus Strands' own redaction "
                  "(`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_unredacted_attributes=`)."],
        "on": {},
        "off": {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_unredacted_attributes="},
    },
    "mlflow-crewai": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by MLflow's CrewAI autolog (mlflow.crewai.autolog() alone), "
        "exported by MLflow's OTLP exporter to the capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "crewai", "litellm"],
        "driver": "fw_mlflow:run_crewai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**Tool failures:** the tool raises; CrewAI hands the model the error text "
                  "(`Error executing tool ...`).",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "mlflow-llamaindex": {
        "what": "the llamaindex-openinference agents (a FunctionAgent with FunctionTool tools, "
        "the llama-index-llms-openai model on the fake server; an AgentWorkflow with its "
        "handoff tool for g_handoff) traced by MLflow's LlamaIndex autolog "
        "(mlflow.llama_index.autolog() alone), exported by MLflow's OTLP exporter to the "
        "capture's sink, native mlflow.* attributes",
        "packages": ["mlflow-tracing", "llama-index-core", "llama-index-llms-openai",
                     "llama-index-workflows", "openai"],
        "driver": "fw_mlflow:run_llamaindex",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "AgentWorkflow's own `handoff` tool "
        "(`handoff {\"to_agent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the agent workflow sends the model the "
                  "exception text as an error tool output.",
                  "**Content off:** as mlflow-openai (inputs and outputs set to `[REDACTED]` "
                  "by a span processor)."],
        "on": {},
        "off": {},
    },
    "openllmetry-openai-agents": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": OPENAI_AGENTS_MAX_TURNS,
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, @function_tool "
        "tools, a native handoff for g_handoff) traced by OpenLLMetry's "
        "opentelemetry-instrumentation-openai-agents",
        "packages": ["openai-agents", "openai", "opentelemetry-instrumentation-openai-agents"],
        "driver": "fw_openai_agents:run_openllmetry",
        "transfers_back": True,
        "followups": True,
        "turns_note": ["**Turns:** each user turn is one `Runner.run`, the follow-up given "
                       "`result.to_input_list()` plus the new message, with no enclosing "
                       "`trace()`: one trace per turn, nothing tying them."],
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "structured_via": OPENAI_AGENTS_OUTPUT_TYPE,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openai-agents-otel-genai": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": OPENAI_AGENTS_MAX_TURNS,
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, @function_tool "
        "tools, a native handoff for g_handoff) traced by the OpenTelemetry project's "
        "opentelemetry-instrumentation-genai-openai-agents (the successor of "
        "opentelemetry-instrumentation-openai-agents-v2) with its "
        "opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["openai-agents", "openai", "opentelemetry-instrumentation-genai-openai-agents",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_openai_agents:run_otel_genai",
        "transfers_back": True,
        "followups": True,
        "turns_note": ["**Turns:** each user turn is one `Runner.run`, the follow-up given "
                       "`result.to_input_list()` plus the new message, with no enclosing "
                       "`trace()`: one trace per turn, nothing tying them."],
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "structured_via": OPENAI_AGENTS_OUTPUT_TYPE,
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "laminar-langgraph": {
        "what": "LangGraph prebuilt ReAct agent (create_react_agent, ChatOpenAI on the fake "
        "server, @tool functions in a ToolNode with handle_tool_errors; a langgraph-swarm for "
        "g_handoff) traced by Laminar (`lmnr`: Laminar.initialize with its default "
        "instruments, its OTLP/HTTP exporter pointed at the capture's sink by base_url, "
        "http_port and force_http)",
        "packages": ["lmnr", "langgraph", "langgraph-prebuilt", "langgraph-swarm",
                     "langchain-core", "langchain-openai", "openai"],
        "driver": "fw_laminar:run_langgraph",
        "transfers_back": True,
        "sink": True,
        "tool_spans": True,
        "handoff_via": "`transfer_to_research_agent {}` (langgraph-swarm handoff tool)",
        "notes": ["**Tool failures:** the tool raises; the ToolNode sends the model an error "
                  "ToolMessage (`Error: SearchBackendError(...)`).",
                  "**Content off:** `LMNR_TRACE_CONTENT=false`."],
        "structured_via": LANGGRAPH_RESPONSE_FORMAT,
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "laminar-openai-agents": {
        "what": "OpenAI Agents SDK (chat-completions model on the fake server, @function_tool "
        "tools, a native handoff for g_handoff) traced by Laminar (`lmnr`: Laminar.initialize "
        "with its default instruments, its OTLP/HTTP exporter pointed at the capture's sink; "
        "the SDK's own export off)",
        "packages": ["lmnr", "openai-agents", "openai"],
        "driver": "fw_laminar:run_openai_agents",
        "transfers_back": True,
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the SDK's native handoff (`transfer_to_research_agent {}`)",
        "notes": ["**Content off:** `LMNR_TRACE_CONTENT=false`."],
        "structured_via": OPENAI_AGENTS_OUTPUT_TYPE,
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "laminar-pydantic-ai": {
        "what": "pydantic-ai agents (OpenAIChatModel on the fake server, tool_plain tools, a "
        "failing search raising ModelRetry; the research agent run from the triage agent's "
        "delegate_to_research_agent tool for g_handoff) traced by Laminar (`lmnr`: "
        "Laminar.initialize with its default instruments, which turn on pydantic-ai's own "
        "instrumentation on Laminar's tracer provider beside its OpenAI client "
        "instrumentation), exported as laminar-langgraph",
        "packages": ["lmnr", "pydantic-ai-slim", "openai"],
        "driver": "fw_laminar:run_pydantic_ai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `delegate_to_research_agent {\"question\": ...}` tool, whose "
        "span holds the research agent's run",
        "notes": ["**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt and the `execute_tool` span ends with status ERROR.",
                  "**Content off:** `LMNR_TRACE_CONTENT=false`."],
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "laminar-google-adk": {
        "what": "Google ADK LlmAgents (ADK's LiteLlm model class, openai/gpt-4o-mini with "
        "api_base on the fake server; plain function tools, on_tool_error_callback; sub_agents "
        "and transfer_to_agent for g_handoff) with ADK's own tracing on Laminar's tracer "
        "provider, traced by Laminar (`lmnr`: Laminar.initialize with its default instruments, "
        "its ADK and LiteLLM instrumentations), exported as laminar-langgraph",
        "packages": ["lmnr", "google-adk", "litellm", "openai"],
        "driver": "fw_laminar:run_google_adk",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "ADK's `transfer_to_agent {\"agent_name\": \"research_agent\"}`",
        "notes": ["**Tool failures:** the tool raises; `on_tool_error_callback` sends the model "
                  "`{\"error\": \"SearchBackendError: ...\"}`.",
                  "**Traces:** ADK's spans are one trace holding the run (no content: ADK's "
                  "default); Laminar's LiteLLM instrumentation starts each model call as a root "
                  "span, a trace of its own with the call's messages.",
                  "**Content off:** `LMNR_TRACE_CONTENT=false`, which neither Laminar's LiteLLM "
                  "nor its ADK instrumentation reads: both variants hold the same content."],
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "laminar-crewai": {
        "what": "the crewai-openinference crew (an Agent with @tool tools, a Task, a Crew; "
        "CrewAI's LLM through LiteLLM to the fake server; delegation to a coworker for "
        "g_handoff) traced by Laminar (`lmnr`: Laminar.initialize with its default "
        "instruments: OpenLLMetry's opentelemetry-instrumentation-crewai on Laminar's tracer "
        "provider, and Laminar's own LiteLLM instrumentation), exported as laminar-langgraph",
        "packages": ["lmnr", "crewai", "litellm", "opentelemetry-instrumentation-crewai"],
        "driver": "fw_laminar:run_crewai",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "CrewAI's built-in `Delegate work to coworker` tool "
        "(`delegate_work_to_coworker {\"coworker\": \"research_agent\", ...}`)",
        "notes": ["**Tool failures:** the tool raises; CrewAI hands the model the error text "
                  "(`Error executing tool ...`).",
                  "**Traces:** the crew's spans (OpenLLMetry's CrewAI instrumentation) are one "
                  "trace holding the run; Laminar's LiteLLM instrumentation starts each model "
                  "call as a root span, a trace of its own with the call's messages.",
                  "**Content off:** `LMNR_TRACE_CONTENT=false`, which neither the CrewAI nor "
                  "Laminar's LiteLLM instrumentation reads: both variants hold the same content."],
        "on": {"LMNR_TRACE_CONTENT": "true"},
        "off": {"LMNR_TRACE_CONTENT": "false"},
    },
    "agent-framework": {
        "what": "Microsoft Agent Framework (Agent on OpenAIChatCompletionClient against the fake "
        "server, plain function tools, include_detailed_errors; Agent.as_tool delegation for "
        "g_handoff) traced by the framework's own OpenTelemetry instrumentation (its default: "
        "the latest GenAI conventions)",
        "packages": ["agent-framework-core", "agent-framework-openai", "openai"],
        "driver": "fw_agent_framework",
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`Agent.as_tool`, "
        "`research_agent {\"task\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the framework sends the model "
                  "`Error: Function failed. Exception: ...` (`include_detailed_errors`) and "
                  "the `execute_tool` span ends with status ERROR."],
        "on": {"ENABLE_SENSITIVE_DATA": "true"},
        "off": {"ENABLE_SENSITIVE_DATA": "false"},
    },
    "agent-framework-openinference": {
        "what": "the agent-framework agents (Agent on OpenAIChatCompletionClient against the "
        "fake server, plain function tools, include_detailed_errors; Agent.as_tool delegation "
        "for g_handoff) traced by the framework's own instrumentation with OpenInference's "
        "AgentFrameworkToOpenInferenceProcessor (openinference-instrumentation-agent-framework) "
        "first among the provider's processors: OpenInference attributes beside the GenAI ones",
        "packages": ["agent-framework-core", "agent-framework-openai", "openai",
                     "openinference-instrumentation-agent-framework"],
        "driver": "fw_agent_framework:run_openinference",
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`Agent.as_tool`, "
        "`research_agent {\"task\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the framework sends the model "
                  "`Error: Function failed. Exception: ...` (`include_detailed_errors`) and "
                  "the `execute_tool` span ends with status ERROR.",
                  "**Content off:** the framework's `ENABLE_SENSITIVE_DATA=false`; the processor "
                  "has no switch of its own."],
        "on": {"ENABLE_SENSITIVE_DATA": "true"},
        "off": {"ENABLE_SENSITIVE_DATA": "false"},
    },
    "beeai-openinference": {
        "what": "BeeAI Framework RequirementAgent (OpenAIChatModel through LiteLLM on the fake "
        "server, @tool functions, the built-in final_answer tool; a HandoffTool for g_handoff) "
        "traced by openinference-instrumentation-beeai",
        "packages": ["beeai-framework", "litellm", "openinference-instrumentation-beeai"],
        "driver": "fw_beeai",
        "tool_spans": True,
        "handoff_via": "BeeAI's `HandoffTool` (`research_agent {\"task\": ...}`)",
        "notes": ["**Final answer delivery:** as the `response` argument of BeeAI's built-in "
                  "`final_answer` tool.",
                  "**Tool failures:** the tool raises; BeeAI hands the model the error."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "langchain-agents-openinference": {
        "turn_limit": AGENT_EXECUTOR_MAX_ITERATIONS,
        "what": "LangChain classic AgentExecutor (create_tool_calling_agent over ChatOpenAI on "
        "the fake server, @tool functions with handle_tool_error; the research agent's "
        "executor as a tool for g_handoff) traced by openinference-instrumentation-langchain",
        "packages": ["langchain-classic", "langchain-core", "langchain-openai",
                     "openinference-instrumentation-langchain"],
        "driver": "fw_langchain_agents",
        "tool_spans": True,
        "handoff_via": "the research agent's executor as a tool "
        "(`research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises `ToolException`; with "
                  "`handle_tool_error=True` the executor hands the model the error text "
                  "(`SearchBackendError: ...`) as the observation, and the TOOL span ends OK."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "pydantic-ai-openinference": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "hands_up": True,  # s_nested_rewritten: its agents answer after their agent tool
        "what": "pydantic-ai Agent (OpenAIChatModel on the fake server, tool_plain tools, "
        "ModelRetry for a failing search; agent delegation through a tool for g_handoff) with "
        "pydantic-ai's own instrumentation and OpenInference's span processor on top "
        "(openinference-instrumentation-pydantic-ai)",
        "packages": ["pydantic-ai-slim", "openai", "openinference-instrumentation-pydantic-ai"],
        "driver": "fw_pydantic_ai",
        "tool_spans": True,
        "handoff_via": "a delegation tool running the research agent "
        "(`delegate_to_research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt and the `execute_tool` span ends with status ERROR.",
                  "**Content off:** pydantic-ai's `include_content=False`, with "
                  "`OPENINFERENCE_HIDE_*=true`."],
        "structured_via": PYDANTIC_AI_OUTPUT_TOOL,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "pydantic-ai-v2": {
        "what": "the pydantic-ai-openinference agents (OpenAIChatModel on the fake server, "
        "tool_plain tools, ModelRetry for a failing search; a delegation tool for g_handoff) "
        "traced by pydantic-ai's own instrumentation alone with "
        "InstrumentationSettings(version=2), the oldest data format it still accepts "
        "(agent run / running tool spans)",
        "packages": ["pydantic-ai-slim", "openai"],
        "driver": "fw_pydantic_ai_settings",
        "tool_spans": True,
        "handoff_via": "a delegation tool running the research agent "
        "(`delegate_to_research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt and the tool span ends with status ERROR.",
                  "**Content off:** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false`, "
                  "which the driver turns into `include_content=False`."],
        "on": {"PYDANTIC_AI_INSTRUMENTATION_VERSION": "2"},
        "off": {"PYDANTIC_AI_INSTRUMENTATION_VERSION": "2",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "pydantic-ai-v3": pydantic_ai_version_source(
        3, "the same span names and attributes as the default (5); thinking tokens added"),
    "pydantic-ai-v4": pydantic_ai_version_source(
        4, "version 3 with the GenAI conventions' uri / blob parts for multimodal content"),
    "pydantic-ai-v6": pydantic_ai_version_source(
        6, "the default (5) with tool results in role=tool messages and retry feedback that "
        "answers no tool call in role=system ones (opt-in)"),
    "llamaindex-openllmetry": {
        "what": "the llamaindex-openinference agents (FunctionAgent, FunctionTool tools; an "
        "AgentWorkflow for g_handoff) traced by OpenLLMetry's "
        "opentelemetry-instrumentation-llamaindex, with its opentelemetry-instrumentation-openai "
        "for the model calls (the LlamaIndex instrumentation leaves an OpenAI model to it)",
        "packages": ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows",
                     "opentelemetry-instrumentation-llamaindex",
                     "opentelemetry-instrumentation-openai"],
        "driver": "fw_llamaindex:run_openllmetry",
        "tool_spans": True,
        "handoff_via": "AgentWorkflow's own `handoff` tool "
        "(`handoff {\"to_agent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the agent workflow sends the model the "
                  "exception text as an error tool output."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "llamaindex-otel-genai": {
        "what": "the llamaindex-openinference agents (FunctionAgent, FunctionTool tools; an "
        "AgentWorkflow for g_handoff) traced by the OpenTelemetry project's "
        "opentelemetry-instrumentation-genai-llama-index with its "
        "opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows",
                     "opentelemetry-instrumentation-genai-llama-index",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_llamaindex:run_otel_genai",
        "tool_spans": True,
        "handoff_via": "AgentWorkflow's own `handoff` tool "
        "(`handoff {\"to_agent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the agent workflow sends the model the "
                  "exception text as an error tool output."],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "openlit-llamaindex": {
        "what": "the llamaindex-openinference agents (FunctionAgent, FunctionTool tools; an "
        "AgentWorkflow for g_handoff) traced by OpenLIT (openlit.init(): its llama_index and "
        "openai instrumentors, and the httpx instrumentation it also enables)",
        "packages": ["openlit", "llama-index-core", "llama-index-llms-openai",
                     "llama-index-workflows", "openai"],
        "driver": "fw_openlit:run_llamaindex",
        "handoff_via": "AgentWorkflow's own `handoff` tool "
        "(`handoff {\"to_agent\": \"research_agent\", \"reason\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; the agent workflow sends the model the "
                  "exception text as an error tool output.",
                  "**No agent or tool spans:** OpenLIT records nothing of the agent workflow: "
                  "each model call is a root `chat` span (its openai instrumentor) in a trace "
                  "of its own, so a run arrives as one fragment per model call."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "haystack-openllmetry": {
        "what": "the haystack-openinference agents (Agent component, OpenAIChatGenerator on the "
        "fake server, @tool tools; the research agent as a ComponentTool for g_handoff) traced "
        "by OpenLLMetry's opentelemetry-instrumentation-haystack with its "
        "opentelemetry-instrumentation-openai (as Traceloop.init() enables both)",
        "packages": ["haystack-ai", "openai", "opentelemetry-instrumentation-haystack",
                     "opentelemetry-instrumentation-openai"],
        "driver": "fw_haystack:run_openllmetry",
        "handoff_via": "the research agent as a Haystack `ComponentTool` "
        "(`research_agent {\"messages\": [...]}`)",
        "notes": ["**Tool failures:** the tool raises; Haystack's ToolInvoker sends the model "
                  "the error text as a tool result flagged `error`."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "haystack-native": {
        "what": "the haystack-openinference agents (Agent component, OpenAIChatGenerator on the "
        "fake server, @tool tools; the research agent as a ComponentTool for g_handoff) traced "
        "by Haystack's own OpenTelemetryTracer (the opentelemetry-haystack integration, "
        "tracing.enable_tracing on the capture's tracer provider)",
        "packages": ["haystack-ai", "openai", "opentelemetry-haystack"],
        "driver": "fw_haystack:run_native",
        "tool_spans": True,
        "handoff_via": "the research agent as a Haystack `ComponentTool` "
        "(`research_agent {\"messages\": [...]}`)",
        "notes": ["**Tool failures:** the tool raises; Haystack's ToolInvoker sends the model "
                  "the error text as a tool result flagged `error`.",
                  "**Content off:** `HAYSTACK_CONTENT_TRACING_ENABLED` unset (on: `true`)."],
        "on": {"HAYSTACK_CONTENT_TRACING_ENABLED": "true"},
        "off": {},
    },
    "autogen-native": {
        "nested": True,  # s_nested_*: its driver has a records agent
        "turn_limit": AUTOGEN_MAX_TOOL_ITERATIONS,
        "what": "AutoGen AgentChat AssistantAgent (OpenAIChatCompletionClient on the fake server, "
        "function tools; a Swarm with handoffs for g_handoff) traced by autogen-core's own GenAI "
        "spans alone (create_agent, invoke_agent, execute_tool; the global tracer provider, no "
        "instrumentation library)",
        "packages": ["autogen-agentchat", "autogen-core", "autogen-ext", "openai"],
        "driver": "fw_autogen:run_native",
        "tool_spans": True,
        "transfers_back": True,
        "model_spans": False,
        "handoff_via": "the Swarm's `transfer_to_research_agent {}` handoff tool",
        "notes": ["**Tool failures:** the tool raises; AutoGen sends the model the error text and "
                  "the `execute_tool` span ends with status ERROR and `error.type`.",
                  "**Model calls:** autogen-core records none (no span for the model client's "
                  "requests), so the capture has no model-call span by design.",
                  "**Content off:** autogen-core's spans carry no content either way; both "
                  "variants hold the same attributes."],
        "on": {},
        "off": {},
    },
    "ag2-native": {
        "what": "AG2 1.x agents (ag2.Agent with OpenAIConfig on the fake server, plain function "
        "tools; the research agent as a sub-task tool, Agent.as_tool, for g_handoff) traced by "
        "AG2's own TelemetryMiddleware (one per agent, with its name) on the capture's tracer "
        "provider: invoke_agent / chat / execute_tool GenAI spans and record_usage spans",
        "packages": ["ag2", "openai"],
        "driver": "fw_ag2",
        "tool_spans": True,
        "handoff_via": "AG2's agent-as-tool delegation (`task_research_agent "
        "{\"objective\": ...}`)",
        "notes": ["**Tool failures:** the tool raises; AG2 hands the model the traceback as the "
                  "tool result and the `execute_tool` span ends with status ERROR.",
                  "**Content off:** `TelemetryMiddleware(capture_content=False)`, which the "
                  "driver sets from `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false`."],
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "logfire-pydantic-ai": {
        "turn_limit": PYDANTIC_AI_REQUEST_LIMIT,
        "what": "the pydantic-ai-openinference agents (OpenAIChatModel on the fake server, "
        "tool_plain tools, ModelRetry for a failing search; a delegation tool for g_handoff) "
        "traced by Logfire's own integration (logfire.instrument_pydantic_ai(), "
        "send_to_logfire=False)",
        "packages": ["logfire", "pydantic-ai-slim", "openai"],
        "driver": "fw_pydantic_ai:run_logfire",
        "followups": True,
        "turns_note": ["**Turns:** one `Agent.run_sync` per user message, the follow-up "
                       "given `message_history=result.all_messages()`."],
        "tool_spans": True,
        "handoff_via": "a delegation tool running the research agent "
        "(`delegate_to_research_agent {\"question\": ...}`)",
        "notes": ["**Tool failures:** the tool raises `ModelRetry`; pydantic-ai sends the model "
                  "a retry prompt and the `execute_tool` span ends with status ERROR.",
                  "**Content off:** `logfire.instrument_pydantic_ai(include_content=False)`, "
                  "which the driver sets from "
                  "`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false`."],
        "structured_via": PYDANTIC_AI_OUTPUT_TOOL,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "groq-openinference": {
        "what": "hand-written chat-completions tool loop on the groq client (Groq's SDK; its "
        "OpenAI-compatible API under /openai/v1 on the fake server), recorded by "
        "openinference-instrumentation-groq",
        "packages": ["groq", "openinference-instrumentation-groq"],
        "driver": "fw_groq",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the raw client loop makes no tool spans (tool calls live in the model spans "
                  "only).",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "portkey-openinference": {
        "what": "hand-written chat-completions tool loop on the portkey-ai client (Portkey's "
        "AI gateway SDK, Portkey(base_url=..., provider=\"openai\"), the fake server standing "
        "in for the gateway), recorded by openinference-instrumentation-portkey",
        "packages": ["portkey-ai", "openinference-instrumentation-portkey"],
        "driver": "fw_portkey",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the raw client loop makes no tool spans (tool calls live in the model spans "
                  "only).",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "together-openinference": {
        "what": "hand-written chat-completions tool loop on the together client (Together AI's "
        "SDK, its OpenAI-compatible API with base_url on the fake server), recorded by "
        "openinference-instrumentation-together",
        "packages": ["together", "openinference-instrumentation-together"],
        "driver": "fw_together",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the raw client loop makes no tool spans (tool calls live in the model spans "
                  "only).",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "mistral-openinference": {
        "what": "hand-written chat-completions tool loop on the mistralai client (Mistral's "
        "SDK, client.chat.complete with server_url on the fake server), recorded by "
        "openinference-instrumentation-mistralai",
        "packages": ["mistralai", "openinference-instrumentation-mistralai"],
        "driver": "fw_mistral",
        "notes": ["**Tool failures:** sent back as a `role: tool` message with the error JSON; "
                  "the raw client loop makes no tool spans (tool calls live in the model spans "
                  "only).",
                  ANTHROPIC_NOTES[1]],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "groq-openllmetry": {
        "what": "hand-written chat-completions tool loop on the groq client (Groq's SDK; its "
        "OpenAI-compatible API under /openai/v1 on the fake server), recorded by OpenLLMetry's "
        "opentelemetry-instrumentation-groq",
        "packages": ["groq", "opentelemetry-instrumentation-groq"],
        "driver": "fw_groq:run_openllmetry",
        "notes": RAW_LOOP_NOTES,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "mistral-openllmetry": {
        "what": "hand-written chat-completions tool loop on the mistralai 1.x client (Mistral's "
        "SDK, client.chat.complete with server_url on the fake server), recorded by "
        "OpenLLMetry's opentelemetry-instrumentation-mistralai",
        "packages": ["mistralai", "opentelemetry-instrumentation-mistralai"],
        "driver": "fw_mistral:run_openllmetry",
        "notes": RAW_LOOP_NOTES,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "cohere-openllmetry": {
        "what": "hand-written tool loop on the cohere client's v2 chat API (ClientV2.chat with "
        "base_url on the scripted fake_cohere.py server: Cohere's own wire format), recorded "
        "by OpenLLMetry's opentelemetry-instrumentation-cohere",
        "packages": ["cohere", "opentelemetry-instrumentation-cohere"],
        "driver": "fw_cohere:run_openllmetry",
        "model": FAKE_COHERE,
        "notes": RAW_LOOP_NOTES,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "openlit-cohere": {
        "what": "the cohere-openllmetry loop (cohere client's v2 chat API, ClientV2.chat on "
        "the scripted fake_cohere.py server) under OpenLIT (openlit.init() on the "
        "application's tracer and logger providers: its cohere instrumentor)",
        "packages": ["openlit", "cohere"],
        "driver": "fw_cohere:run_openlit",
        "model": FAKE_COHERE,
        "notes": RAW_LOOP_NOTES,
        "on": {},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"},
    },
    "instructor-openinference": {
        "what": "hand-written chat-completions tool loop on Instructor's patched openai client "
        "(instructor.from_openai; tool turns with response_model=None, a structured answer "
        "with response_model=SupportAnswer), recorded by openinference-instrumentation-"
        "instructor with openinference-instrumentation-openai",
        "packages": ["instructor", "openai", "openinference-instrumentation-instructor",
                     "openinference-instrumentation-openai"],
        "driver": "fw_instructor",
        "notes": RAW_LOOP_NOTES,
        "structured_via": INSTRUCTOR_RESPONSE_MODEL,
        # The answer's object is on the `instructor.create` span, which no convention reads
        # yet: `r_structured_*` are captured on request (--scenario) and kept out of the
        # matrix (tools/capture_traces/README.md).
        "scenarios": [n for n in SCENARIOS if not n.startswith("r_structured")],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "azure-ai-inference": {
        "what": "hand-written chat-completions tool loop on the Azure AI Inference SDK "
        "(ChatCompletionsClient.complete, its endpoint the fake server), recorded by the "
        "SDK's own tracing (AIInferenceInstrumentor over azure-core-tracing-opentelemetry)",
        "packages": ["azure-ai-inference", "azure-core", "azure-core-tracing-opentelemetry"],
        "driver": "fw_azure_ai_inference",
        "notes": RAW_LOOP_NOTES,
        "on": {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": "true"},
        "off": {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": "false"},
    },
    "azure-ai-agents": {
        "what": "the Azure AI Agents SDK's documented toolset sample (AgentsClient with "
        "enable_auto_function_calls, create_agent, threads/messages.create, "
        "runs.create_and_process, messages.list; @trace_function tools in a FunctionTool) "
        "against a scripted agents service (fake_azure_agents.py: the threads/runs REST API, "
        "the model loop server-side), recorded by the SDK's own AIAgentsInstrumentor over "
        "azure-core-tracing-opentelemetry",
        "packages": ["azure-ai-agents", "azure-core", "azure-core-tracing-opentelemetry"],
        "driver": "fw_azure_ai_agents",
        "model": FAKE_AZURE_AGENTS,
        "scenarios": ["a_happy", "b_tool_retry", "c_retry_exhausted", "d_forbidden_tool",
                      "e_fabricated_citation", "f_degraded", "h_coding_agent",
                      "i_parallel_tools", "j_undisclosed_failure", "k_unfounded_uncertainty",
                      "l_parallel_failures", "m_excess_calls", "o_run_error", "t_invalid_args",
                      "y_unknown_tool"],
        # x_answer_*: not capturable as an application runs them. azure-ai-agents 1.1.0's
        # tracing raises `TypeError: Object of type MessageIncompleteDetails is not JSON
        # serializable` inside `messages.list` when the thread holds an incomplete message
        # (the service's cut-off answer), so the traced application fails reading the answer.
        # The model runs in the service: no span is a model call; the run (create_and_process,
        # a `start_thread_run` span around its polls) is where the service's calls happened.
        "model_span_names": ["start_thread_run"],
        "tool_spans": True,
        "notes": ["**Tool failures:** the function raises; the SDK's auto function calls "
                  "post `{\"error\": \"Error executing function '<name>': <exception>\"}` as "
                  "the call's output, and the `@trace_function` span records the exception.",
                  "**Model calls:** made by the agents service, not the client: no span of "
                  "their own; the run's `start_thread_run` span (`create_and_process`) holds "
                  "its polls (`get_thread_run`) and tool-output posts (`submit_tool_outputs`), "
                  "and the answer is in the `list_messages` span's `gen_ai.assistant.message` "
                  "event."],
        "on": {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": "true"},
        "off": {"AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED": "false"},
    },
    "agency-swarm-openinference": {
        "what": "Agency Swarm 1.x agents (agency_swarm.Agent on the OpenAI Agents SDK's "
        "OpenAIChatCompletionsModel against the fake server, @function_tool tools, run as "
        "Agency(agent).get_response_sync) traced by openinference-instrumentation-openai-agents",
        "packages": ["agency-swarm", "openai-agents", "openai",
                     "openinference-instrumentation-openai-agents"],
        "driver": "fw_agency_swarm",
        "handoff_via": "Agency Swarm's `send_message` tool (a communication flow "
        "`triage_agent > research_agent`: `send_message {\"recipient_agent\": "
        "\"research_agent\", \"message\": ...}`)",
        "tool_spans": True,
        "scenarios": ["a_happy", "b_tool_retry", "c_retry_exhausted", "d_forbidden_tool",
                      "e_fabricated_citation", "f_degraded", "g_handoff", "h_coding_agent",
                      "i_parallel_tools", "j_undisclosed_failure", "k_unfounded_uncertainty",
                      "l_parallel_failures", "m_excess_calls", "s_delegated_forbidden",
                      "s_delegated_failure"],
        "notes": ["**Tool failures:** the tool raises; the OpenAI Agents SDK hands the model "
                  "its generic error text."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "agency-swarm-otel-genai": {
        "what": "Agency Swarm 1.x agents (agency_swarm.Agent on the OpenAI Agents SDK's "
        "OpenAIChatCompletionsModel against the fake server, @function_tool tools, run as "
        "Agency(...).get_response_sync; the delegation a communication flow "
        "(triage_agent, research_agent, Handoff), Agency Swarm's own SDK handoff) traced by "
        "the OpenTelemetry project's opentelemetry-instrumentation-genai-openai-agents with "
        "opentelemetry-instrumentation-genai-openai for the model calls",
        "packages": ["agency-swarm", "openai-agents", "openai",
                     "opentelemetry-instrumentation-genai-openai-agents",
                     "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai"],
        "driver": "fw_agency_swarm_otel_genai",
        "handoff_via": "Agency Swarm's `Handoff` flow (the SDK handoff it builds: "
        "`transfer_to_research_agent`, answered by the research agent)",
        "tool_spans": True,
        "scenarios": ["a_happy", "b_tool_retry", "d_forbidden_tool", "g_handoff",
                      "s_delegated_forbidden", "s_delegated_failure"],
        "notes": ["**Tool failures:** the tool raises; the OpenAI Agents SDK hands the model "
                  "its generic error text."],
        "on": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        "off": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    },
    "ollama-openllmetry": {
        "what": "hand-written tool loop on Ollama's Python client (ollama.Client.chat against "
        "the scripted fake_ollama.py /api/chat), recorded by OpenLLMetry's "
        "opentelemetry-instrumentation-ollama",
        "packages": ["ollama", "opentelemetry-instrumentation-ollama"],
        "driver": "fw_ollama:run_openllmetry",
        "model": FAKE_OLLAMA,
        "notes": OLLAMA_NOTES,
        "model_retry_fails": OLLAMA_NO_RETRY,
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "ollama-openinference": {
        "what": "hand-written tool loop on Ollama's Python client (ollama.Client.chat against "
        "the scripted fake_ollama.py /api/chat), recorded by "
        "openinference-instrumentation-ollama",
        "packages": ["ollama", "openinference-instrumentation-ollama"],
        "driver": "fw_ollama:run_openinference",
        "model": FAKE_OLLAMA,
        "notes": OLLAMA_NOTES,
        "model_retry_fails": OLLAMA_NO_RETRY,
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "vercel-ai-sdk-5": {
        "what": "Vercel AI SDK 5 agents (Experimental_Agent with stopWhen: stepCountIs(10) and "
        "tool() tools on @ai-sdk/openai-compatible against the fake server; an agent used as a "
        "tool for g_handoff) traced by the SDK's experimental_telemetry (ai.* spans; node "
        "vercel5.mjs, driven by fw_vercel5.py)",
        "packages": [],
        "node": ["ai", "@ai-sdk/openai-compatible", "@opentelemetry/sdk-trace-base"],
        "node_runner": "fw_vercel5:run_vercel5",
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`research_agent {\"question\": ...}`)",
        "model_retry_by": AI_SDK_RETRY,
        "notes": ["**Tool failures:** the tool throws; AI SDK 5 hands the model the error as a "
                  "tool-error result and the run goes on.",
                  "**Content off:** `experimental_telemetry` with `recordInputs` / "
                  "`recordOutputs: false`."],
        "on": {},
        "off": {},
    },
    "vercel-ai-sdk-5-latest": {
        "what": "the vercel-ai-sdk-5 agents on AI SDK 6, the newest major of `ai` (its "
        "ToolLoopAgent, which AI SDK 5 named Experimental_Agent, the system prompt given as "
        "instructions; @ai-sdk/openai-compatible 2) traced by the same experimental_telemetry, "
        "whose ai.* spans now write ai.usage.inputTokens / outputTokens (AI SDK 5: promptTokens "
        "/ completionTokens) and give the ai.generateText span the run's total usage (AI SDK 5: "
        "its last step's); node vercel5.mjs from tools/capture_traces/vercel5_latest/, driven "
        "by fw_vercel5.py",
        "packages": [],
        "node": ["ai", "@ai-sdk/openai-compatible", "@opentelemetry/sdk-trace-base"],
        "node_runner": "fw_vercel5:run_vercel5",
        "tool_spans": True,
        "handoff_via": "the research agent as a tool (`research_agent {\"question\": ...}`)",
        "model_retry_by": AI_SDK_RETRY,
        "notes": ["**Tool failures:** the tool throws; AI SDK 6 hands the model the error as a "
                  "tool-error result and the run goes on.",
                  "**Content off:** `experimental_telemetry` with `recordInputs` / "
                  "`recordOutputs: false`."],
        "on": {},
        "off": {},
    },
    "mirascope": {
        "what": "Mirascope v2 agents (the documented mirascope.llm loop: an @llm.call prompt "
        "with @llm.tool tools, resumed with response.execute_tools() until the model answers, "
        "the run an @ops.trace function; openai/gpt-4o-mini on Mirascope's OpenAI provider, "
        "which uses the Responses API, on the fake server; the research agent's loop called "
        "from a `research_agent` tool for g_handoff) traced by Mirascope's own ops "
        "instrumentation (ops.configure + ops.instrument_llm: GenAI 1.38 chat spans with "
        "gen_ai.input.messages / gen_ai.output.messages, no tool spans)",
        "model": "scripted fake OpenAI Responses API server on 127.0.0.1 "
        "(`fake_openai_responses.py`), non-streaming, answering in call order",
        "packages": ["mirascope", "openai"],
        "driver": "fw_mirascope",
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent's loop",
        "notes": ["**Tool failures:** the tool raises; Mirascope's `Tool.execute` catches it "
                  "and sends the model the exception's text as the tool's output; no span "
                  "records the tool run.",
                  "**Content off:** `ops.instrument_llm` has no content switch and always "
                  "writes the messages: both variants hold the same content."],
        "on": {},
        "off": {},
    },
    "griptape": {
        "what": "Griptape agents (Agent with OpenAiChatPromptDriver on the fake server, native "
        "tool calling; each scenario tool a BaseTool whose name and single activity make the "
        "model's tool name, e.g. tool `search` + activity `docs` = `search_docs`; a "
        "StructureRunTool over a LocalStructureRunDriver running the research agent for "
        "g_handoff) traced by Griptape's own OpenTelemetryObservabilityDriver (spans named "
        "`<class>.<method>()`, only a `tags` attribute), exported over OTLP/HTTP to the sink",
        "packages": ["griptape", "openai", "opentelemetry-exporter-otlp-proto-http"],
        "driver": "fw_griptape",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `research` StructureRunTool (`research_run_structure "
        "{\"args\": [...]}`)",
        "notes": ["**Tool failures:** the activity raises; the tool's `try_run()` span gets "
                  "status ERROR with an exception event and Griptape hands the model an "
                  "ErrorArtifact.",
                  "**Content off:** Griptape's tracing has no content switch and records no "
                  "content (no messages, arguments, results or tool names beyond the span's "
                  "class name): both variants hold the same attributes."],
        "on": {},
        "off": {},
    },
    "agentscope": {
        "what": "AgentScope 2 agents (agentscope.agent.Agent, its reasoning-acting loop, with "
        "OpenAIChatModel on the fake server through an OpenAICredential base_url, non-"
        "streaming, and a Toolkit of FunctionTools allowed without confirmation; the research "
        "agent's reply run by the triage agent's `research_agent` tool for g_handoff) traced "
        "by AgentScope's own TracingMiddleware on the global tracer provider (GenAI "
        "invoke_agent / chat / execute_tool spans with messages, tool arguments and results)",
        "packages": ["agentscope", "openai"],
        "driver": "fw_agentscope",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent's reply",
        "notes": ["**Tool failures:** the tool raises; AgentScope's toolkit hands the model the "
                  "exception's message as a tool result with `\"state\": \"error\"` "
                  "(`gen_ai.tool.call.result`); the `execute_tool` span ends OK.",
                  "**Content off:** the TracingMiddleware has no content switch and always "
                  "writes messages, tool arguments and results: both variants hold the same "
                  "content."],
        "on": {},
        "off": {},
    },
    "agentscope-1": {
        "what": "AgentScope 1.x agents (a ReActAgent with OpenAIChatModel on the fake server "
        "through its client's base_url, non-streaming, OpenAIChatFormatter, InMemoryMemory, "
        "parallel tool calls, and a Toolkit of functions returning ToolResponse objects; the "
        "research agent called from the triage agent's `research_agent` tool for g_handoff) "
        "traced the 1.x way, agentscope.init(tracing_url=...): AgentScope's own OTLP/HTTP "
        "exporter on the sink",
        "packages": ["agentscope", "openai", "opentelemetry-exporter-otlp-proto-http"],
        "driver": "fw_agentscope:run_v1",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent",
        "notes": ["**Tool failures:** the tool raises; AgentScope's toolkit hands the model "
                  "`Error: <message>` as the tool's response.",
                  "**Content off:** AgentScope 1.x's tracing has no content switch: both "
                  "variants hold the same content."],
        "on": {},
        "off": {},
    },
    "upsonic": {
        "what": "Upsonic agents (Agent.do on a Task, OpenAIChatModel with an OpenAIProvider "
        "base_url on the fake server, @tool(max_retries=0) function tools, so a failure reaches "
        "the model instead of Upsonic's own retries; the research agent's task run by the triage "
        "agent's `research_agent` tool for g_handoff) traced by Upsonic's own "
        "DefaultTracingProvider (instrument=), its OTLP/HTTP exporter on the sink: agent.run, "
        "pipeline.execute and pipeline.step.* spans with upsonic.* attributes, GenAI chat spans, "
        "tool.execute spans",
        "packages": ["upsonic", "openai", "opentelemetry-exporter-otlp-proto-http"],
        "driver": "fw_upsonic",
        "sink": True,
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent's task",
        "notes": ["**Tool failures:** the tool raises; Upsonic's tool manager hands the model "
                  "the exception's bare message, and the `tool.execute` span ends OK with "
                  "`upsonic.tool.success: true` (0.77.3 flags every returned result a success, "
                  "the caught failure's too).",
                  "**Content off:** `DefaultTracingProvider(include_content=False)`."],
        "on": {},
        "off": {},
    },
    "praisonai-openinference": {
        "what": "PraisonAI agents (praisonaiagents Agent with llm=\"gpt-4o-mini\" on PraisonAI's "
        "own OpenAI client, pointed at the fake server by OPENAI_BASE_URL, function tools that "
        "return a backend failure as an error object, approval=True, PraisonAI's auto-approving "
        "backend, for the tools it would ask a person about; the triage agent's native handoff, "
        "handoffs=[research_agent], for g_handoff: "
        "a transfer_to_research_agent tool that runs the research agent and returns its answer) "
        "recorded by openinference-instrumentation-openai, the run an application `agent_run` "
        "span",
        "packages": ["praisonaiagents", "openai", "openinference-instrumentation-openai"],
        "driver": "fw_praisonai",
        "handoff_via": "PraisonAI's native handoff tool (`transfer_to_research_agent {}`), "
        "which runs the research agent and returns `Handoff successful. research_agent "
        "response: <answer>`",
        "notes": ["**Tool failures:** the tool returns `{\"error\": \"SearchBackendError: ...\"}` "
                  "(PraisonAI 1.7.17 retries a raised timeout itself, then ends the run with "
                  "`ToolExecutionError`), sent to the model as the `tool` message; no span records "
                  "a tool run (tool calls live in the model spans only).",
                  "**Content off:** OpenInference's `OPENINFERENCE_HIDE_*` switches."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "atomic-agents": {
        "what": "Atomic Agents' documented orchestration loop (an AtomicAgent on Instructor's "
        "patched openai client, instructor.from_openai, on the fake server; its output schema "
        "AgentStep a list of the tools' input schemas and an answer, Instructor's TOOLS mode "
        "forcing the AgentStep function; the application runs each chosen BaseTool, hands the "
        "result back with add_tool_result and runs the agent again; the research agent's loop "
        "run by the triage agent's `research_agent` BaseTool for g_handoff) traced by Atomic "
        "Agents' own AtomicAgentsInstrumentor (the observability extra, GenAI attributes only): "
        "invoke_agent, chat and execute_tool spans, the run an application `agent_run` span",
        "packages": ["atomic-agents", "instructor", "openai", "opentelemetry-sdk"],
        "driver": "fw_atomic_agents",
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), a "
        "BaseTool that runs the research agent's loop",
        "tool_spans": True,
        "notes": ["**Tool failures:** the tool raises; its `execute_tool` span ends ERROR "
                  "(`error.type`), and the application hands the agent `ToolError` "
                  "(`{\"tool\": ..., \"error\": \"SearchBackendError: ...\"}`) with "
                  "`add_tool_result`.",
                  "**Model turns:** every model turn is a call of the forced `AgentStep` "
                  "function (Instructor's TOOLS mode): its arguments are the tools the agent "
                  "chose and its answer; the `chat` spans record no messages.",
                  "**Content off:** `ATOMIC_AGENTS_TRACE_HIDE_INPUTS` / `_OUTPUTS`."],
        # A cut answer (x_answer_*) is a cut function call, which Instructor rejects: the run
        # would end in an error the script does not describe.
        "scenarios": [n for n in SCENARIOS if not n.startswith("x_answer")],
        "on": {},
        "off": {"ATOMIC_AGENTS_TRACE_HIDE_INPUTS": "true",
                "ATOMIC_AGENTS_TRACE_HIDE_OUTPUTS": "true"},
    },
    "atomic-agents-openinference": {
        "what": "the `atomic-agents` orchestration loop with Atomic Agents' own "
        "AtomicAgentsInstrumentor writing its OpenInference attributes too, as it does with "
        "OpenInference installed (the phoenix extra): openinference.span.kind AGENT / LLM / "
        "TOOL and input.value / output.value beside the GenAI attributes",
        "packages": ["atomic-agents", "instructor", "openai", "openinference-instrumentation",
                     "opentelemetry-sdk"],
        "driver": "fw_atomic_agents:run_openinference",
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), a "
        "BaseTool that runs the research agent's loop",
        "tool_spans": True,
        "notes": ["**Tool failures:** the tool raises; its `execute_tool` span ends ERROR "
                  "(`error.type`), and the application hands the agent `ToolError` with "
                  "`add_tool_result`.",
                  "**Content off:** `ATOMIC_AGENTS_TRACE_HIDE_INPUTS` / `_OUTPUTS`."],
        "scenarios": [n for n in SCENARIOS if not n.startswith("x_answer")],
        "on": {},
        "off": {"ATOMIC_AGENTS_TRACE_HIDE_INPUTS": "true",
                "ATOMIC_AGENTS_TRACE_HIDE_OUTPUTS": "true"},
    },
    "langroid-openinference": {
        "what": "Langroid agents (a ChatAgent with OpenAI's tools API, use_functions_api=True, "
        "use_tools=False, on OpenAIGPTConfig(api_base=...) on the fake server, streamed as "
        "Langroid streams by default; ToolMessage tools whose handlers return a backend failure "
        "as an error object; a non-interactive Task per run; the research agent's task run by "
        "the triage agent's `research_agent` tool for g_handoff) recorded by openinference-"
        "instrumentation-openai on the openai client Langroid calls, the run an application "
        "`agent_run` span",
        "packages": ["langroid", "openai", "openinference-instrumentation-openai", "litellm"],
        "driver": "fw_langroid",
        "model": "scripted fake OpenAI server on 127.0.0.1 (streamed: Langroid's default)",
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent's task",
        "notes": ["**Tool failures:** the handler returns `{\"error\": \"SearchBackendError: "
                  "...\"}` (a handler that raises ends Langroid 0.69's task with the "
                  "exception), sent to the model as the call's `tool` message; no span records "
                  "a tool run (tool calls live in the model spans only).",
                  "**Content off:** OpenInference's `OPENINFERENCE_HIDE_*` switches."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "langroid-text-tools-openinference": {
        "what": "the `langroid-openinference` agents in Langroid's default tool mode "
        "(use_tools=True, use_functions_api=False): the tools described in the system message, "
        "each request a JSON object in the model's reply text (`{\"request\": \"search_docs\", "
        "...}`), parsed and run by Langroid, its result handed back as a user message; recorded "
        "by openinference-instrumentation-openai, the run an application `agent_run` span",
        "packages": ["langroid", "openai", "openinference-instrumentation-openai", "litellm"],
        "driver": "fw_langroid:run_text_tools",
        "model": "scripted fake OpenAI server on 127.0.0.1 (streamed: Langroid's default); each "
        "tool turn a text reply of JSON tool requests, one a line, finish reason `stop`",
        "handoff_via": "the `research_agent` tool (`{\"request\": \"research_agent\", "
        "\"question\": ...}` in the reply text), which runs the research agent's task",
        "notes": ["**Tool calls:** text only: no span, no `tool_calls`, no `tools` in the "
                  "request; the results come back as user messages.",
                  "**Content off:** OpenInference's `OPENINFERENCE_HIDE_*` switches."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "camel-openinference": {
        "what": "CAMEL-AI agents (camel-ai ChatAgent.step on ModelFactory.create("
        "OPENAI_COMPATIBLE_MODEL, \"gpt-4o-mini\", url=...) on the fake server, with CAMEL's "
        "StubTokenCounter, and FunctionTool tools; the research agent's step run by the triage "
        "agent's `research_agent` tool for g_handoff) recorded by openinference-instrumentation-"
        "openai on the model client CAMEL calls, the run an application `agent_run` span",
        "packages": ["camel-ai", "openai", "openinference-instrumentation-openai"],
        "driver": "fw_camel",
        "handoff_via": "the `research_agent` tool (`research_agent {\"question\": ...}`), "
        "which runs the research agent's step",
        "notes": ["**Tool failures:** the tool raises; CAMEL's ChatAgent catches it and sends "
                  "the model the text `Tool execution failed: Error executing tool "
                  "'<name>': ...` as the tool's result, with no error flag; no span records a "
                  "tool run (tool calls live in the model spans only).",
                  "**Content off:** OpenInference's `OPENINFERENCE_HIDE_*` switches."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "burr": {
        "what": "Apache Burr agents (apache-burr, imported as burr: an ApplicationBuilder "
        "state machine as Burr's tool-calling example writes it, a call_model action asking "
        "the OpenAI client on the fake server and one action per tool, named after it, "
        "routed by when(next_tool=...) transitions until the model answers; the research "
        "agent as a Burr sub-application run by the triage agent's research_agent tool "
        "action for g_handoff) traced by Burr's OpenTelemetryBridge hook (a span for the "
        "run call and one per action, no attributes) with OpenLLMetry's "
        "opentelemetry-instrumentation-openai for the model calls",
        "packages": ["apache-burr", "openai", "opentelemetry-instrumentation-openai"],
        "driver": "fw_burr",
        "tool_spans": True,
        "handoff_via": "the `research_agent` tool action (`research_agent {\"question\": "
        "...}`), which runs the research agent as a Burr sub-application",
        "notes": ["**Tool failures:** the search raises; the tool action catches it and "
                  "returns `{\"error\": \"SearchBackendError: ...\"}` as the tool message "
                  "(an exception leaving a Burr action ends the application); no span records "
                  "the failure.",
                  "**Content off:** `TRACELOOP_TRACE_CONTENT=false` (the OpenAI "
                  "instrumentation's switch; Burr's bridge writes no content)."],
        "on": {"TRACELOOP_TRACE_CONTENT": "true"},
        "off": {"TRACELOOP_TRACE_CONTENT": "false"},
    },
    "livekit-agents": {
        "what": "LiveKit Agents sessions driven as text, without a room or audio "
        "(fw_livekit.py: an AgentSession started without a room, each user turn a "
        "session.run(user_input=...), the livekit-plugins-openai LLM on the fake server, the "
        "scenario tools as function_tool functions, max_tool_steps raised to 10; g_handoff and "
        "n_handback through LiveKit's native handoff, a function tool returning the other "
        "Agent with the conversation so far) traced by LiveKit's own OpenTelemetry tracing "
        "(livekit.agents.telemetry.set_tracer_provider: agent_session, agent_turn, llm_node, "
        "llm_request, function_tool spans with lk.* and gen_ai.* attributes)",
        "model_retry_by": "LiveKit's own retry of the model request (the plugin's client makes "
        "no retry of its own; `APIConnectOptions.max_retry` 3 by default), each attempt an "
        "`llm_request_run` span with `lk.retry_count`: the failed one ends with status ERROR "
        "and `error.type` 503, the next one answers",
        "model": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming: the "
        "livekit-plugins-openai LLM always asks for `chat.completion.chunk` server-sent events",
        "packages": ["livekit-agents", "livekit-plugins-openai", "openai"],
        "driver": "fw_livekit",
        "turn_limit": {
            "via": "`AgentSession(..., max_tool_steps=3)` (tool steps after the first)",
            "answer": "",
            "how": "past its last tool step LiveKit asks the model for a final answer itself "
            "(`tool_choice` `none`) and speaks that text",
        },
        "tool_spans": True,
        "transfers_back": True,
        "followups": True,
        "handoff_via": "LiveKit's native handoff: a `transfer_to_<agent>` function tool that "
        "returns the other `Agent`",
        "structured_via": "an `AgentTask[SupportAnswer]` as the session's agent, whose "
        "`submit_answer` function tool completes the task with the object, and "
        "`session.run(..., output_type=SupportAnswer)` (the run's `final_output`)",
        "turns_note": ["**Turns:** `session.run` once per user message on the same "
                       "`AgentSession`, whose chat context carries the first turn: both turns "
                       "are `agent_turn` spans of one `agent_session` span (one trace)."],
        "notes": ["**Tool failures:** the search raises `ToolError(\"SearchBackendError: "
                  "...\")`, LiveKit's documented way to hand the model an error: the model "
                  "gets the message and the `function_tool` span records "
                  "`lk.function_tool.is_error: true`, status unset.",
                  "**Content off:** `LIVEKIT_TELEMETRY_ALLOW_PII=false` (LiveKit drops every "
                  "`lk.pii.*` attribute and the GenAI content attributes before export)."],
        "on": {"LIVEKIT_TELEMETRY_ALLOW_PII": "true"},
        "off": {"LIVEKIT_TELEMETRY_ALLOW_PII": "false"},
    },
    "pipecat-openinference": {
        "what": "the pipecat pipelines driven as text (fw_pipecat.py: a user context "
        "aggregator, the OpenAILLMService on the fake server and an assistant context "
        "aggregator, started with an LLMRunFrame; the scenario tools registered with "
        "llm.register_function, a failing search's handler returning {\"error\": ...}), "
        "Pipecat's own tracing off, traced by openinference-instrumentation-pipecat's "
        "PipecatInstrumentor (an observer on every PipelineWorker writing OpenInference spans "
        "from the frames: turns, LLM calls, tool results)",
        "model": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming: "
        "Pipecat's OpenAILLMService always asks for `chat.completion.chunk` server-sent events",
        "packages": ["pipecat-ai", "openai", "openinference-instrumentation-pipecat"],
        "driver": "fw_pipecat:run_openinference",
        "notes": ["**Tool failures:** the search raises; its Pipecat function handler catches "
                  "it and reports `{\"error\": \"SearchBackendError: ...\"}` through "
                  "`params.result_callback`."],
        "on": {},
        "off": OPENINFERENCE_HIDDEN,
    },
    "pipecat": {
        "what": "Pipecat pipelines driven as text, without a transport or audio (fw_pipecat.py: "
        "a user context aggregator, the OpenAILLMService on the fake server and an assistant "
        "context aggregator in a PipelineWorker with enable_tracing=True, started with an "
        "LLMRunFrame; the scenario tools registered with llm.register_function, a failing "
        "search's handler returning {\"error\": ...}) traced by Pipecat's own OpenTelemetry "
        "tracing (conversation, turn and llm spans; no tool span)",
        "model": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming: "
        "Pipecat's OpenAILLMService always asks for `chat.completion.chunk` server-sent events",
        "packages": ["pipecat-ai", "openai"],
        "driver": "fw_pipecat",
        "notes": ["**Tool failures:** the search raises; its Pipecat function handler catches "
                  "it and reports `{\"error\": \"SearchBackendError: ...\"}` through "
                  "`params.result_callback`; no span records a tool call.",
                  "**Content off:** none: Pipecat's tracing has no content switch; both "
                  "variants hold the same attributes."],
        "on": {},
        "off": {},
    },
}  # fmt: skip

STREAMED_MODELS = {
    "openai": "scripted fake OpenAI server on 127.0.0.1 (`fake_openai.py`), streaming: "
    "`chat.completion.chunk` server-sent events, text and each tool call's arguments in "
    "16-character deltas, the finish reason in the last choice chunk, usage in a closing chunk "
    "without choices (`stream_options.include_usage`)",
    "anthropic": "scripted fake Anthropic Messages server on 127.0.0.1 (`fake_anthropic.py`), "
    "streaming: `message_start`, text as `text_delta` and `tool_use` input as "
    "`input_json_delta` pieces of 16 characters, the stop reason and output tokens in "
    "`message_delta`",
    "responses": "scripted fake OpenAI Responses API server on 127.0.0.1 "
    "(`fake_openai_responses.py`), streaming: `response.created`, each output item opened, its "
    "text as `response.output_text.delta` or its call's arguments as "
    "`response.function_call_arguments.delta` pieces of 16 characters, closed whole, then "
    "`response.completed` with the usage",
}
STREAMED = {
    "openinference-openai": ("openai", "`client.chat.completions.create(stream=True, "
                             "stream_options={\"include_usage\": True})`, the loop assembling "
                             "the message from the chunks"),
    "openinference-anthropic": ("anthropic", "the SDK's `client.messages.stream(...)` helper "
                                "(text consumed as it arrives, `get_final_message()`)"),
    "openllmetry-anthropic": ("anthropic", "the SDK's `client.messages.stream(...)` helper"),
    "genai-anthropic": ("anthropic", "the SDK's `client.messages.stream(...)` helper"),
    "openai-agents-responses": ("responses", "`Runner.run_streamed` (its events consumed to "
                                "the end)"),
    "openinference-openai-agents": ("openai", "`Runner.run_streamed` on the chat-completions "
                                    "model (its events consumed to the end)"),
    "logfire-openai-agents": ("openai", "`Runner.run_streamed` on the chat-completions "
                              "model (its events consumed to the end)"),
    "openllmetry-openai-agents": ("openai", "`Runner.run_streamed` on the chat-completions "
                                  "model (its events consumed to the end)"),
    "openlit-openai-agents": ("openai", "`Runner.run_streamed` on the chat-completions "
                              "model (its events consumed to the end)"),
    "pydantic-ai-openinference": ("openai", "`Agent.run_stream` (the delegated research "
                                  "agent's too), its output consumed as it comes"),
    "smolagents-openinference": ("openai", "`ToolCallingAgent(stream_outputs=True)` (the "
                                 "managed research agent's too) and `agent.run(..., "
                                 "stream=True)`, its step events consumed as they come"),
    "strands": ("openai", "`Agent.stream_async` with `OpenAIModel`'s default `stream=True` "
                "(its events consumed as they come)"),
    "google-adk": ("openai", "`RunConfig(streaming_mode=StreamingMode.SSE)` (ADK's chat-UI "
                   "mode; partial events consumed as they come), LiteLLM streaming the calls"),
    "langgraph-openinference": ("openai", "`graph.stream(..., stream_mode=[\"messages\", "
                                "\"values\"])` (LangGraph's messages mode makes `ChatOpenAI` "
                                "stream with its default settings; tokens consumed as they come, "
                                "the last values chunk the final state)"),
    "vercel-ai-sdk-5": ("openai", "`agent.stream` (AI SDK 5's `streamText`; the provider's "
                        "default sends no `stream_options.include_usage`), every part of "
                        "`fullStream` consumed as it arrives"),
    "vercel-ai-sdk-5-latest": ("openai", "`agent.stream` (AI SDK 6's `streamText`; the "
                               "provider's default sends no `stream_options.include_usage`), "
                               "every part of `fullStream` consumed as it arrives"),
    "mastra": ("openai", "`agent.stream` (Mastra's own loop on the AI SDK provider's "
               "`doStream`; the provider's default sends no `stream_options.include_usage`), "
               "every chunk of `fullStream` consumed as it arrives"),
    "langgraphjs-openinference": ("openai", "`graph.stream(..., {streamMode: [\"messages\", "
                                  "\"values\"]})` (the messages mode makes `ChatOpenAI` stream "
                                  "with its defaults; chunks consumed as they arrive, the last "
                                  "values chunk the final state)"),
    "openllmetry-js": ("openai", "`graph.stream(..., {streamMode: [\"messages\", \"values\"]})` "
                       "inside `traceloop.withAgent`, as `langgraphjs-openinference-stream`"),
    "vercel-ai-sdk-openinference": ("openai", "`await agent.stream(...)` (AI SDK 7's "
                                    "`streamText`; no `stream_options.include_usage` by "
                                    "default), every part of `fullStream` consumed"),
}  # fmt: skip
"""Sources captured a second time with every model call streamed (``<source>-stream``): the
same instrumentation and scenarios, so the ground truth is unchanged."""
for _base, (_api, _how) in STREAMED.items():
    # A base that turned its model's streaming off (Strands' OpenAIModel) streams here.
    _what = SOURCES[_base]["what"].replace("stream=False", "stream=True")
    SOURCES[f"{_base}-stream"] = {
        **SOURCES[_base],
        "what": f"{_what}; every model call streamed through {_how}",
        "model": STREAMED_MODELS[_api],
        "stream": True,
    }

SDK_LIMITS = {
    "OTEL_ATTRIBUTE_COUNT_LIMIT": "16",
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "16",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "60",
    "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "60",
    "OTEL_SPAN_EVENT_COUNT_LIMIT": "2",
}
"""The OpenTelemetry SDK limits a ``<source>-limits`` capture runs under (the standard
environment variables every SDK reads; the defaults are 128 attributes, 128 events and no
value length limit). Small on purpose: OpenInference and OpenLLMetry flatten every message
into several attributes and go past 16 on any model call; the Python SDK then evicts the
OLDEST attribute and the JavaScript SDK drops the new one (both counting
``dropped_attributes_count``); values are cut at 60 characters with nothing marking the cut
(an answer loses its citation, a tool result's JSON ends mid-way); events past two are
dropped (``dropped_events_count``)."""
LIMITED = (
    "openinference-openai-agents",
    "langgraph-openllmetry",
    "openlit-langgraph",
    "strands",
    "openinference-openai",
    "vercel-ai-sdk-5",
)
"""Sources captured a second time under ``SDK_LIMITS`` (``<source>-limits``): the same runs,
so the same truth of what ran; what the trace lost must make a check missing evidence,
never a pass (``tests/oracles/test_sdk_limits.py``)."""
for _base in LIMITED:
    SOURCES[f"{_base}-limits"] = {
        **SOURCES[_base],
        "what": f"{SOURCES[_base]['what']}; under the OpenTelemetry SDK limits "
        + ", ".join(f"{k}={v}" for k, v in SDK_LIMITS.items()),
        "sdk_limits": SDK_LIMITS,
    }

NEWEST = {
    "logfire-openai-agents": "openai 3.60.0",
    "openllmetry-openai-agents": "openai 3.60.0",
    "pydantic-ai-openinference": "pydantic-ai-slim 2.68.0, openai 3.60.0",
}
"""Sources captured a second time on the newest releases PyPI served on 2026-12-04
(``<source>-latest``, the README's version-drift section): the same app and
instrumentation, so the same truth; kept because their pinned folders lack scenarios
(``i``-``l``, ``o_run_error``) the newer capture holds."""
for _base, _releases in NEWEST.items():
    assert f"{_base}-latest" not in SOURCES, _base  # strands-latest is another opt-in
    SOURCES[f"{_base}-latest"] = {
        **SOURCES[_base],
        "what": f"{SOURCES[_base]['what']}; on the newest releases ({_releases})",
    }


OPENAI_AGENTS_REJECTS = (
    "the SDK's strict parameter model rejects them (`ModelBehaviorError: Invalid JSON input for "
    "tool search_docs`, raised before the function runs) and its default error function hands "
    "the model `An error occurred while running the tool. Please try again.`; the tool span "
    "records the error."
)
PYDANTIC_AI_REJECTS = (
    "pydantic-ai validates the arguments against the tool's schema before calling it and sends "
    "the model a retry prompt listing the validation errors (`query` missing, `q` not "
    "permitted); the `execute_tool` span ends with status ERROR (`ValidationError`)."
)
LANGGRAPH_REJECTS = (
    "LangChain validates the input against the tool's argument schema before running it; the "
    "`ToolNode` (`handle_tool_errors=True`) catches the `ValidationError` and hands the model "
    "an error `ToolMessage` (`1 validation error for search_docs query Field required`); the "
    "tool span records the error."
)
STRANDS_REJECTS = (
    "Strands validates the input against the tool's pydantic model and sends the model an "
    "error `toolResult` (`Validation failed for input parameters: ... query Field required`); "
    "the tool span ends with status ERROR."
)
ADK_REJECTS = (
    "ADK's `FunctionTool` finds the mandatory `query` missing and, without calling the "
    "function, returns an `error` object as the tool's response (`Invoking search_docs() "
    "failed as the following mandatory input parameters are not present: query ...`); the "
    "`execute_tool` span ends with status ERROR."
)
AZURE_AGENTS_ERRORS = (
    "the Azure AI Agents SDK's `FunctionTool.execute` catches the error when {what} and posts "
    '`{{"error": "Error executing function \'<name>\': ..."}}` as the call\'s output '
    "(`submit_tool_outputs`)"
)
REJECTS_VIA: dict[str, str] = {
    "camel-openinference": "CAMEL's FunctionTool call raises Python's `TypeError` and "
    "ChatAgent sends the model `Tool execution failed: Error executing tool '<name>': ...` "
    "as the tool's result; no tool span",
    "azure-ai-agents": AZURE_AGENTS_ERRORS.format(
        what="Python refuses the arguments (`TypeError`: `got an unexpected keyword argument 'q'`)"
    )
    + "; the function's `@trace_function` span is opened and records the `TypeError` before "
    "its body runs",
    "openinference-openai-agents": OPENAI_AGENTS_REJECTS,
    "logfire-openai-agents": OPENAI_AGENTS_REJECTS,
    "pydantic-ai-openinference": PYDANTIC_AI_REJECTS,
    "logfire-pydantic-ai": PYDANTIC_AI_REJECTS,
    "langgraph-openinference": LANGGRAPH_REJECTS,
    "langgraph-openllmetry": LANGGRAPH_REJECTS,
    "langgraph-otel-genai": LANGGRAPH_REJECTS,
    "strands": STRANDS_REJECTS,
    "strands-latest": STRANDS_REJECTS,
    "smolagents-openinference": "smolagents' `validate_tool_arguments` raises "
    "`AgentToolCallError` (`Argument q is not in the tool's input schema`) before the tool "
    "is called: no tool span; the step's span ends ERROR with that exception, and the next "
    "model call's input holds a `tool-response` message `Error: ...` with no call id.",
    "agno-openinference": "Agno calls the function through pydantic's `validate_call`, which "
    "raises a `ValidationError` (`query Missing required argument`) before the body runs; Agno "
    "sends the model the error text and the tool span ends with status ERROR.",
    "agno-otel-genai": "Agno calls the function through pydantic's `validate_call`, which "
    "raises a `ValidationError` before the body runs; Agno sends the model the error text and "
    "the `execute_tool` span ends with status ERROR.",
    "llamaindex-openinference": "LlamaIndex's `FunctionTool` calls the function with the "
    "model's arguments, which Python refuses before the body runs (`TypeError: ... got an "
    "unexpected keyword argument 'q'`); the agent workflow sends the model the error and the "
    "tool span ends with status ERROR.",
    "crewai-openinference": "CrewAI validates the arguments against the tool's `args_schema` "
    "before running it and hands the model the error text (`Tool 'search_docs' arguments "
    "validation failed: ... query Field required`); the tool span ends with status ERROR "
    "(`ValueError`).",
    "google-adk": ADK_REJECTS,
    "google-adk-legacy": ADK_REJECTS,
    "google-adk-events": ADK_REJECTS,
}
"""``t_invalid_args``: how each source's framework rejects a call whose arguments fail the
tool's declared schema before the tool runs, and what it hands the model; only these sources
capture the scenario (a framework that ran the tool anyway, or raised and ended the run,
would not be the run the script describes: the capture fails on the tools executed)."""


OPENAI_AGENTS_DENIES = (
    "`@function_tool(needs_approval=True)`: the run stops with the call among "
    "`result.interruptions`, the driver rejects it (`result.to_state()`, `state.reject(item)`: "
    "no `rejection_message`, so the SDK's own) and resumes the run from that state, both runs "
    "inside one `trace()` (left alone, the resumed run re-attaches to the ended trace, which "
    "OpenInference no longer records, or starts one of its own under Logfire); the model is "
    "handed `Tool execution was not approved.` as the call's output."
)
PYDANTIC_AI_DENIES = (
    "`@agent.tool_plain(requires_approval=True)` with `output_type=[str, DeferredToolRequests]`: "
    "the run ends with a `DeferredToolRequests` output naming the call, and the driver "
    "resumes it (`message_history=result.all_messages()`, `deferred_tool_results="
    "DeferredToolResults(approvals={call_id: ToolDenied()})`); the model is handed "
    "pydantic-ai's own denial, `The tool call was denied.`, as the call's result."
)
STRANDS_DENIES = (
    "a policy's `BeforeToolCallEvent` hook (`fw_strands.Approval`) cancels the call "
    "(`cancel_tool = True`): Strands hands the model its own `tool cancelled by user` as an "
    "error tool result (a human's refusal through `event.interrupt()` cancels the same way, "
    "but splits the run into two traces nothing joins)."
)
CREATE_AGENT_DENIES = (
    'LangChain\'s `HumanInTheLoopMiddleware(interrupt_on={tool: {"allowed_decisions": '
    '["approve", "reject"]}})` with an `InMemorySaver` checkpointer: the run pauses in '
    "a LangGraph interrupt naming the call, and the driver resumes it on the same thread "
    '(`Command(resume={"decisions": [{"type": "reject"}]})`); the model is handed '
    "LangChain's own ``User rejected the tool call for `<tool>` with id <id>. The tool was "
    "not executed. ...`` as an error `ToolMessage`."
)
GOOGLE_ADK_DENIES = (
    "the tool wrapped as `FunctionTool(func, require_confirmation=True)`: ADK answers the "
    'call with `{"error": "This tool call requires confirmation, please approve or '
    'reject."}`, emits an `adk_request_confirmation` call and ends the invocation; the '
    "driver answers that call in a new invocation on the same session (a `FunctionResponse` "
    '`{"confirmed": false}`), and ADK hands the model its own '
    '`{"error": "This tool call is rejected."}` as the call\'s result.'
)
CLAUDE_AGENT_SDK_DENIES = (
    "the denied tool left out of `allowed_tools`, so Claude Code asks the application's "
    "`can_use_tool` callback, which answers `PermissionResultDeny()` (the SDK's default, no "
    "message of the application's own); the CLI hands the model that message, empty, in an "
    "error `tool_result`."
)
CREWAI_DENIES = (
    "a `@before_tool_call(tools=[<tool>])` hook (CrewAI's tool hooks) returns `False`, which "
    "blocks the call; CrewAI hands the model its own `Tool execution blocked by hook. Tool: "
    "<tool>` as the call's result."
)
LANGGRAPH_UNKNOWN = (
    "LangGraph's `ToolNode` answers with an error `ToolMessage` (`Error: <name> is not a valid "
    "tool, try one of [...]`); no tool span"
)
UNKNOWN_VIA: dict[str, str] = {
    "camel-openinference": "CAMEL's ChatAgent answers `Tool execution failed: Tool '<name>' "
    "not found in registered tools`; no tool span",
    "praisonai-openinference": "PraisonAI answers with an error object (`Tool '<name>' not "
    "found. Available tools: [...]`); no tool span",
    "pydantic-ai-openinference": "pydantic-ai answers with a retry prompt (`Unknown tool name: "
    "'<name>'. Available tools: ...`); no tool span",
    "logfire-pydantic-ai": "pydantic-ai answers with a retry prompt (`Unknown tool name: "
    "'<name>'. Available tools: ...`); no tool span",
    "langgraph-openinference": LANGGRAPH_UNKNOWN,
    "langchain-create-agent-openllmetry": LANGGRAPH_UNKNOWN,
    "openlit-create-agent": LANGGRAPH_UNKNOWN,
    "strands": "Strands records an `execute_tool` span for it, status ERROR, and answers "
    "`Unknown tool: <name>`",
    "llamaindex-openinference": "LlamaIndex's agent workflow answers `Tool <name> not found. "
    "Please select a tool that is available.`; no tool span",
    "crewai-openinference": "CrewAI answers `Tool not found`; no tool span",
    "google-adk": "ADK records the call's tool span, status ERROR (`ValueError`), and answers "
    '`{"error": "Invoking `<name>()` failed as no tool with that name is available. ..."}`',
    "agno-openinference": "Agno answers `Error: The requested tool does not exist or is not "
    "available.`; no tool span",
    "azure-ai-agents": AZURE_AGENTS_ERRORS.format(
        what="the toolset has no function of that name (`Function '<name>' not found. ...`)"
    )
    + "; no span: the function never starts",
}
"""How each source's framework answers a call of a tool the agent does not have
(``y_unknown_tool``): only these sources run the scenario. Not here: the OpenAI Agents SDK
raises ``ModelBehaviorError`` (the run ends; not the script's run), the hand-written raw-client
loops call the scripted tools by name, and the Node runners precompute each call's result."""
DENIES_VIA: dict[str, str] = {
    "crewai-openinference": CREWAI_DENIES,
    "claude-agent-sdk": CLAUDE_AGENT_SDK_DENIES,
    "openlit-claude-agent-sdk": CLAUDE_AGENT_SDK_DENIES,
    "claude-agent-sdk-js": "the denied tool left out of `allowedTools`, so Claude Code asks the "
    'application\'s `canUseTool` callback, which answers `{behavior: "deny", message: ""}` '
    "(as the Python SDK's default denial); the CLI hands the model that message, empty, in an "
    "error `tool_result`.",
    "google-adk": GOOGLE_ADK_DENIES,
    "google-adk-legacy": GOOGLE_ADK_DENIES,
    "langchain-create-agent-openllmetry": CREATE_AGENT_DENIES,
    "openlit-create-agent": CREATE_AGENT_DENIES,
    "strands": STRANDS_DENIES,
    "strands-openinference": STRANDS_DENIES,
    "openlit-strands": STRANDS_DENIES,
    "pydantic-ai-openinference": PYDANTIC_AI_DENIES,
    "logfire-pydantic-ai": PYDANTIC_AI_DENIES,
    "openinference-openai-agents": OPENAI_AGENTS_DENIES,
    "logfire-openai-agents": OPENAI_AGENTS_DENIES,
}
"""``w_tool_denied`` / ``w_search_denied``: how each source's driver denies a call with its
framework's own human-in-the-loop or policy mechanism, and what the model is handed instead of
a result; only these sources capture the scenarios (a framework that ran the tool anyway
would not be the run the script describes: the capture fails on the tools executed)."""


def instrument(source: str, tracer_provider: Any, logger_provider: Any) -> None:
    source = source.removesuffix("-stream")  # a streaming variant, same instrumentation
    source = source.removesuffix("-limits")  # under SDK limits (SDK_LIMITS), the same too
    if source == "openlit-openai":
        from fw_openai_agents import init_openlit

        init_openlit(tracer_provider, logger_provider)
    elif source in ("openai-v2", "openai-v2-events"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif source == "edot-openai":
        # Elastic's package installs under the same module name as OpenLLMetry's: its own
        # capture virtualenv tells them apart. Its events go to the global logger provider,
        # as the EDOT distribution sets one up (1.2.0 hands a logger_provider argument to
        # get_logger as the scope's version, which the log encoder then rejects).
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as EdotInstrumentor

        set_logger_provider(logger_provider)
        EdotInstrumentor().instrument(tracer_provider=tracer_provider)
    elif source == "genai-openai":
        from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor as GenAIOpenAI

        GenAIOpenAI().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    elif source == "openinference-openai":
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        OIInstrumentor().instrument(tracer_provider=tracer_provider)
    elif source in ("openllmetry-openai", "openllmetry-openai-legacy"):
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as TLInstrumentor

        TLInstrumentor().instrument(tracer_provider=tracer_provider)
    elif source == "openllmetry-openai-events":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as TLInstrumentor

        TLInstrumentor(use_attributes=False).instrument(
            tracer_provider=tracer_provider, logger_provider=logger_provider
        )
    elif source in ("logfire-openai", "logfire-openai-v1"):
        from fw_logfire import instrument_openai

        instrument_openai(tracer_provider, source)
    else:
        raise SystemExit(f"unknown source {source!r}; known: {sorted(SOURCES)}")


def hex_ids(node: Any) -> Any:
    """protobuf's JSON mapping writes ids as base64; OTLP/JSON wants lowercase hex."""
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [hex_ids(v) for v in node]
    return node


def run_one(source: str, scenario: Scenario, variant: str, out: Path) -> list[str]:
    """One instrumented run; returns the tools executed, in order."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    try:
        from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
    except ImportError:  # opentelemetry-sdk < 1.39 names it InMemoryLogExporter
        from opentelemetry.sdk._logs.export import (  # type: ignore[attr-defined, no-redef]
            InMemoryLogExporter as InMemoryLogRecordExporter,
        )
    from fake_openai import FakeOpenAI
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": f"capture-{source}"})
    spans_out, logs_out = InMemorySpanExporter(), InMemoryLogRecordExporter()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs_out))
    tools = Tools(scenario)
    if SOURCES[source].get("sink"):
        return run_sink_driver(source, scenario, variant, out, tools)
    executed: list[str] = []
    if scenario.killed_at is not None:
        executed = ExecutedJournal(Path(os.environ[KILL_JOURNAL]))
    call_tool: Callable[[str, dict[str, Any]], str] = tools.call
    wrap_run: Callable[[Callable[[], None]], Callable[[], None]]
    if source in ("traceloop-sdk", "traceloop-sdk-latest"):
        # The SDK owns the tracer provider; its @agent / @tool decorators make the spans.
        from opentelemetry import trace
        from traceloop.sdk import Traceloop
        from traceloop.sdk.decorators import agent, tool
        from traceloop.sdk.instruments import Instruments

        Traceloop.init(
            app_name=f"capture-{source}", exporter=spans_out, disable_batch=True,
            telemetry_enabled=False, should_enrich_metrics=False,
            instruments={Instruments.OPENAI},
            resource_attributes={"service.name": f"capture-{source}"},
        )  # fmt: skip
        tracer_provider: Any = trace.get_tracer_provider()
        decorated = {
            name: tool(name=name)(getattr(tools, name))
            for name in ("search_docs", "delete_records", "write_file", "run_command")
        }

        def call_decorated(name: str, arguments: dict[str, Any]) -> str:
            try:
                return json.dumps(decorated[name](**arguments))
            except SearchBackendError as exc:
                return json.dumps({"error": f"SearchBackendError: {exc}"})

        call_tool = call_decorated
        agent_name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
        wrap_run = agent(name=agent_name)
    else:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(SimpleSpanProcessor(spans_out))
        if scenario.killed_at is not None:
            export_while_running(tracer_provider, logger_provider, os.environ[KILL_SINK])
        if not SOURCES[source].get("agents") and not SOURCES[source].get("driver"):
            instrument(source, tracer_provider, logger_provider)
        tracer = tracer_provider.get_tracer("capture.app")

        def wrap_run(fn: Callable[[], None]) -> Callable[[], None]:
            def run() -> None:
                with tracer.start_as_current_span("agent_run"):
                    fn()

            return run

    driver = SOURCES[source].get("driver")
    if driver:
        # A framework module (fw_<framework>.py) instruments and runs the scenario itself.
        module, _, function = driver.partition(":")  # "fw_x" or "fw_x:run_variant"
        stream = {"stream": True} if SOURCES[source].get("stream") else {}
        ends_as_scripted(
            scenario,
            lambda: getattr(importlib.import_module(module), function or "run")(
                scenario, tracer_provider, logger_provider, tools, executed, **stream
            ),
            SOURCES[source].get("turn_limit"),
            recovers=recovers_model(source),
            cut_raises=cut_raises(source, scenario),
        )
        write_outputs(source, spans_out, logs_out, tracer_provider, logger_provider, variant, out)
        return executed
    if SOURCES[source].get("agents"):
        ends_as_scripted(
            scenario,
            lambda: run_agents(
                scenario, tracer_provider, tools, executed, bool(SOURCES[source].get("stream"))
            ),
            SOURCES[source].get("turn_limit"),
            recovers=recovers_model(source),
            cut_raises=cut_raises(source, scenario),
        )
        write_outputs(source, spans_out, logs_out, tracer_provider, logger_provider, variant, out)
        return executed
    import openai  # here: driver sources need not install it

    with FakeOpenAI(scenario) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="capture-not-a-key")

        def loop() -> None:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": scenario.system},
                {"role": "user", "content": scenario.prompt},
            ]
            for _ in range(10):
                request: dict[str, Any] = {
                    "model": "gpt-4o-mini",
                    "messages": messages,
                    "tools": TOOL_SCHEMAS,
                    "temperature": 0.0,
                }
                if SOURCES[source].get("stream"):
                    chunks = client.chat.completions.create(
                        **request, stream=True, stream_options={"include_usage": True}
                    )
                    message = assembled_message(chunks)
                else:
                    response = client.chat.completions.create(**request)
                    message = response.choices[0].message.model_dump(exclude_none=True)
                if not message.get("tool_calls"):
                    break
                messages.append(message)
                for call in message["tool_calls"]:
                    name, arguments = call["function"]["name"], call["function"]["arguments"]
                    executed.append(name)
                    result = call_tool(name, json.loads(arguments))
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

        ends_as_scripted(scenario, wrap_run(loop), recovers=recovers_model(source))
    write_outputs(source, spans_out, logs_out, tracer_provider, logger_provider, variant, out)
    return executed


KILL_SINK = "CAPTURE_KILL_SINK"
"""The environment variable naming the OTLP/HTTP sink a killed run (``Scenario.killed_at``)
exports to while it runs."""
KILL_JOURNAL = "CAPTURE_KILL_JOURNAL"
"""The environment variable naming the file a killed run writes each executed tool to."""


class ExecutedJournal(list[str]):
    """The tools a run executed, each also written to a file as it runs (a killed run cannot
    report them at its end)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        path.write_text("")

    def append(self, name: str) -> None:
        super().append(name)
        with self.path.open("a") as f:
            f.write(name + "\n")


def export_while_running(tracer_provider: Any, logger_provider: Any, endpoint: str) -> None:
    """Export every span and log record the moment it ends, with the SDK's OTLP/HTTP
    exporters behind simple (synchronous) processors, to ``endpoint`` (an ``OtlpSink`` in
    the capturing process): what a killed run (``Scenario.killed_at``) sent before it died
    is its capture, as an agent exporting with a ``SimpleSpanProcessor`` leaves it."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces"))
    )
    logger_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{endpoint}/v1/logs"))
    )


def run_killed(source: str, name: str, content: str, out: Path) -> list[str]:
    """Run a ``z_killed_*`` scenario in its own process, exporting to a sink here, and
    write what reached the sink: the OTLP bodies exactly as sent
    (``<variant>.raw/traces-N.pb``, ``logs-N.pb``) and their spans merged into one OTLP/JSON
    file. The capture fails unless the process died of SIGKILL (a run that ended otherwise
    is not the one the script describes). Returns the tools executed before it died."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from otlp_sink import OtlpSink

    variant = name if content == "on" else f"{name}.nocontent"
    journal = out / f"{variant}.executed.tmp"
    sink = OtlpSink()
    with sink as endpoint:
        env = {**os.environ, **SOURCES[source][content], KILL_SINK: endpoint,
               KILL_JOURNAL: str(journal)}  # fmt: skip
        proc = subprocess.run(
            [sys.executable, __file__, "--source", source, "--out", str(out), "--one", name,
             content],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if proc.returncode != -signal.SIGKILL:
        sys.exit(f"{name} ({content}): the run was not killed (exit {proc.returncode}):\n"
                 f"{proc.stderr}")  # fmt: skip
    executed = journal.read_text().split() if journal.exists() else []
    journal.unlink(missing_ok=True)
    if any("json" in item.content_type for item in sink.received):
        sys.exit(f"{source} {variant}: expected OTLP protobuf bodies")
    traces = [item.body for item in sink.received if item.signal == "traces"]
    logs = [item.body for item in sink.received if item.signal == "logs"]
    merged = ExportTraceServiceRequest()
    for body in traces:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        merged.resource_spans.extend(request.resource_spans)
    spans = [
        _SentSpan(span.name, {kv.key: _any_value(kv.value) for kv in span.attributes})
        for rs in merged.resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
    ]
    require_model_spans(source, variant, spans)
    raw = out / f"{variant}.raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    for i, body in enumerate(traces, 1):
        (raw / f"traces-{i}.pb").write_bytes(body)
    doc = hex_ids(MessageToDict(merged, use_integers_for_enums=True))
    (out / f"{variant}.otlp.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / f"{variant}.logs.otlp.jsonl").unlink(missing_ok=True)
    if logs:
        merged_logs = ExportLogsServiceRequest()
        for i, body in enumerate(logs, 1):
            (raw / f"logs-{i}.pb").write_bytes(body)
            request_logs = ExportLogsServiceRequest()
            request_logs.ParseFromString(body)
            merged_logs.resource_logs.extend(request_logs.resource_logs)
        log_doc = hex_ids(MessageToDict(merged_logs, use_integers_for_enums=True))
        (out / f"{variant}.logs.otlp.jsonl").write_text(json.dumps(log_doc) + "\n")
    return executed


def cut_raises(source: str, scenario: Scenario) -> str | None:
    """The exception the source's framework raises when the model's answer is cut off the
    scenario's way (``Scenario.cut``; the entry's ``"cut_raises"``: cut -> exception name,
    Strands' ``MaxTokensReachedException``), or ``None`` where it returns the fragment."""
    if scenario.cut is None:
        return None
    raised: str | None = SOURCES.get(source, {}).get("cut_raises", {}).get(scenario.cut)
    return raised


def recovers_model(source: str) -> bool:
    """Whether the source's framework or client retries a model request that failed
    transiently (``u_model_retry``) with its default settings; a source that does not names
    why in ``"model_retry_fails"`` (``google-genai``'s client makes one attempt unless
    ``HttpOptions.retry_options`` is set), and its run ends in the failure's exception."""
    return "model_retry_fails" not in SOURCES.get(source, {})


def ends_as_scripted(
    scenario: Scenario,
    run: Callable[[], Any],
    limit: dict[str, str] | None = None,
    *,
    recovers: bool = True,
    cut_raises: str | None = None,
) -> None:
    """Run one scenario. Where the model API fails (``Scenario.model_fails_from``) the run
    must end in the framework's exception after the fake server answered with the scripted
    error: the exception is reported on stderr and the capture goes on, so the spans the run
    ended are written like any other run's. A run that ends without an exception (a framework
    that swallowed the failure) or with one the script did not cause fails the capture: no
    trace becomes ground truth for a run the script did not describe. A turn-limit scenario
    ends as the source's ``limit`` entry says (``ends_at_limit``); a cut-off answer
    (``Scenario.cut``) that the framework raises on (``cut_raises``: the exception's name)
    must end in that exception."""
    if scenario.turn_limit is not None:
        ends_at_limit(scenario, run, limit)
        return
    if scenario.cut is not None and cut_raises is not None:
        ends_at_limit(scenario, run, {"error": cut_raises})  # must end in that exception
        return
    if scenario.model_retry and recovers:
        recovered(scenario, run)
        return
    if scenario.model_fails_from is None and not scenario.model_retry:
        run()
        return
    from scripted_server import ScriptedServer

    try:
        run()
    except Exception as exc:
        if not ScriptedServer.failures_served:
            raise
        print(f"{scenario.name}: the run ended in {type(exc).__name__}: {exc}"[:400],
              file=sys.stderr)  # fmt: skip
        return
    status = 503 if scenario.model_retry else 500
    raise SystemExit(
        f"{scenario.name}: the model API answered HTTP {status} "
        f"{ScriptedServer.failures_served} time(s), but the run ended without an exception"
    )


def recovered(scenario: Scenario, run: Callable[[], Any]) -> None:
    """Run a scenario whose first model requests fail transiently (``u_model_retry``): the run
    must end as scripted, with no exception, after the fake server really served the failures
    (a client that never sent the request the failure was meant for, or a server that never
    failed, would make the capture an ``a_happy`` one). A framework that does not retry ends
    the run in the failure's exception, which fails the capture: its run is not the one the
    script describes."""
    from scripted_server import ScriptedServer

    before = ScriptedServer.failures_served
    try:
        run()
    except Exception as exc:
        raise SystemExit(
            f"{scenario.name}: the run did not recover from the scripted HTTP 503: "
            f"{type(exc).__name__}: {exc}"[:600]
        ) from exc
    served = ScriptedServer.failures_served - before
    if served != scenario.model_transient_failures:
        raise SystemExit(
            f"{scenario.name}: the model API answered HTTP 503 {served} time(s), the script "
            f"says {scenario.model_transient_failures}"
        )


def failed_model_calls(path: Path) -> int:
    """How many model-call spans of an OTLP/JSON capture ended with status ERROR, or with the
    finish reason ``error`` on an OK span (Mastra's way): whether the transient failure of
    ``u_model_retry`` shows in the trace (a framework that retries above its instrumentation,
    or none that retries) or not (a client that retried inside the recorded call)."""
    doc = json.loads(path.read_text())
    failed = 0
    for resource in doc.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                attributes = {
                    kv["key"]: next(iter(kv.get("value", {}).values()), None)
                    for kv in span.get("attributes", [])
                }
                model = span.get("name") in MODEL_CALL_SPAN_NAMES or is_model_call(attributes)
                reasons = json.dumps(attributes.get("gen_ai.response.finish_reasons"))
                errored = span.get("status", {}).get("code") == 2 or '"error' in reasons
                failed += model and errored
    return failed


def ends_at_limit(scenario: Scenario, run: Callable[[], Any], limit: dict[str, str] | None) -> None:
    """Run a ``turn_limit`` scenario. A source whose framework raises at its limit names the
    exception (``limit["error"]``): the run must end in it, which is reported on stderr, and
    the spans it ended are written. A source whose framework ends the run with an answer of
    its own (``limit["answer"]``) must end without one; its driver checks the answer. Any
    other ending fails the capture (no source without a limit runs the scenario)."""
    if limit is None:
        raise SystemExit(f"{scenario.name}: the source sets no turn limit")
    try:
        run()
    except Exception as exc:
        names = {cls.__name__ for cls in type(exc).__mro__}
        if limit.get("error") not in names:
            raise
        print(f"{scenario.name}: the run ended in {type(exc).__name__}: {exc}"[:400],
              file=sys.stderr)  # fmt: skip
        return
    if "error" in limit:
        raise SystemExit(f"{scenario.name}: the run ended without {limit['error']}")


MODEL_CALL_KEYS = frozenset(
    {"gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "llm.request.model_name"}
)
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
MODEL_CALL_SPAN_NAMES = frozenset({"haystack.agent.step.llm"})
"""Span names that are a model call whatever their attributes: Haystack's own tracer writes
nothing on its agent's model-call span when content tracing is off."""


def is_model_call(attributes: Any) -> bool:
    """Whether a span records a model call in any convention the captures meet: a model name
    (GenAI or OpenInference), a GenAI inference operation, an OpenInference LLM span, a
    Langfuse generation, an MLflow LLM / CHAT_MODEL span (its type JSON-encoded), a Genkit
    model action, a Griptape prompt driver's run (its ``tags``) or a VoltAgent ``llm`` span."""
    return bool(
        MODEL_CALL_KEYS & set(attributes)
        or attributes.get("gen_ai.operation.name") in MODEL_OPERATIONS
        or attributes.get("openinference.span.kind") == "LLM"
        or attributes.get("langfuse.observation.type") == "generation"
        or str(attributes.get("mlflow.spanType", "")).strip('"') in ("LLM", "CHAT_MODEL")
        or attributes.get("genkit:metadata:subtype") == "model"
        or "PromptDriver.run()" in _strings(attributes.get("tags"))
        or (attributes.get("span.type") == "llm" and "llm.model" in attributes)  # VoltAgent
    )


def _strings(value: Any) -> list[Any]:
    """A list attribute's items, whether the SDK's tuple or a decoded OTLP ``ArrayValue``."""
    items = getattr(value, "values", value) or ()
    return [getattr(item, "string_value", item) for item in items]


def require_model_spans(source: str, variant: str, spans: Any) -> None:
    """Fail the capture, naming the source and scenario, when the instrumentation exported
    nothing or no model-call span: a broken or silently inactive instrumentation (a version
    it does not patch, a client it does not see) must never yield an empty capture that the
    matrix then grades as if the run had happened."""
    if not spans:
        raise SystemExit(f"{source} {variant}: the instrumentation exported no spans")
    if SOURCES.get(source, {}).get("model_spans") is False:
        return  # a tracer that records no model call by design (its agent and tool spans stay)
    named = MODEL_CALL_SPAN_NAMES | set(SOURCES.get(source, {}).get("model_span_names", ()))
    if not any(span.name in named or is_model_call(span.attributes or {}) for span in spans):
        names = sorted({span.name for span in spans})
        raise SystemExit(
            f"{source} {variant}: no model-call span among the {len(spans)} exported "
            f"({', '.join(names)}); is the instrumentation active for this client version?"
        )


def run_sink_driver(
    source: str, scenario: Scenario, variant: str, out: Path, tools: Tools
) -> list[str]:
    """A source whose SDK exports with its own OTLP exporter (its own tracer provider): the
    driver points that exporter at ``otlp_sink.py`` and the bodies are kept exactly as sent
    (``<variant>.raw/traces-N.pb``), with their spans merged into one OTLP/JSON file."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from otlp_sink import OtlpSink

    executed: list[str] = []
    module, _, function = SOURCES[source]["driver"].partition(":")
    sink = OtlpSink()
    with sink as endpoint:
        ends_as_scripted(
            scenario,
            lambda: getattr(importlib.import_module(module), function or "run")(
                scenario, endpoint, tools, executed, content=not variant.endswith(".nocontent")
            ),
            SOURCES[source].get("turn_limit"),
            recovers=recovers_model(source),
            cut_raises=cut_raises(source, scenario),
        )
    bodies = [item.body for item in sink.received if item.signal == "traces"]
    if any("json" in item.content_type for item in sink.received):
        raise SystemExit(f"{source} {variant}: expected OTLP protobuf bodies")
    merged = ExportTraceServiceRequest()
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        merged.resource_spans.extend(request.resource_spans)
    spans = [
        _SentSpan(span.name, {kv.key: _any_value(kv.value) for kv in span.attributes})
        for rs in merged.resource_spans
        for ss in rs.scope_spans
        for span in ss.spans
    ]
    require_model_spans(source, variant, spans)
    raw = out / f"{variant}.raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    for i, body in enumerate(bodies, 1):
        (raw / f"traces-{i}.pb").write_bytes(body)
    from google.protobuf.json_format import MessageToDict

    doc = hex_ids(MessageToDict(merged, use_integers_for_enums=True))
    (out / f"{variant}.otlp.json").write_text(json.dumps(doc, indent=1) + "\n")
    return executed


class _SentSpan(NamedTuple):
    """A span decoded from a sent body, as ``require_model_spans`` reads one."""

    name: str
    attributes: dict[str, Any]


def _any_value(value: Any) -> Any:
    """The scalar an OTLP ``AnyValue`` holds (lists and maps as their protobuf text)."""
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def assembled_message(chunks: Any) -> dict[str, Any]:
    """The assistant message a streamed chat completion adds up to, as an application
    assembles it: text deltas joined, each tool call's id and name from its first delta and
    its arguments from the pieces that follow (keyed by the call's ``index``)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.choices:  # the closing usage chunk has none
            delta = choice.delta
            text.append(delta.content or "")
            for part in delta.tool_calls or []:
                call = calls.setdefault(
                    part.index, {"id": "", "type": "function",
                                 "function": {"name": "", "arguments": ""}}
                )  # fmt: skip
                call["id"] = part.id or call["id"]
                if part.function:
                    call["function"]["name"] += part.function.name or ""
                    call["function"]["arguments"] += part.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def write_outputs(
    source: str,
    spans_out: Any,
    logs_out: Any,
    tracer_provider: Any,
    logger_provider: Any,
    variant: str,
    out: Path,
) -> list[str]:
    """Flush, check the run produced model-call spans, then write the protobuf bodies and
    their OTLP/JSON form."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    tracer_provider.force_flush()
    logger_provider.force_flush()
    require_model_spans(source, variant, spans_out.get_finished_spans())
    raw = out / f"{variant}.raw"
    raw.mkdir(parents=True, exist_ok=True)
    request = encode_spans(spans_out.get_finished_spans())
    (raw / "1.pb").write_bytes(request.SerializeToString())
    doc = hex_ids(MessageToDict(request, use_integers_for_enums=True))
    (out / f"{variant}.otlp.json").write_text(json.dumps(doc, indent=1) + "\n")
    logs = logs_out.get_finished_logs()
    if logs:
        log_request = encode_logs(logs)
        (raw / "logs-1.pb").write_bytes(log_request.SerializeToString())
        log_doc = hex_ids(MessageToDict(log_request, use_integers_for_enums=True))
        (out / f"{variant}.logs.otlp.jsonl").write_text(json.dumps(log_doc) + "\n")
    return []


def run_agents(
    scenario: Scenario,
    tracer_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """The OpenAI Agents SDK on a chat-completions model pointed at the fake server; g_handoff
    hands off from a triage agent to a research agent with the SDK's native handoff. With
    ``stream`` every run is ``Runner.run_streamed`` (``run_turns``)."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        function_tool,
        set_trace_processors,
    )  # fmt: skip
    from fake_openai import FakeOpenAI
    from fw_openai_agents import run_turns
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # no export to OpenAI's tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)

    def make(name: str, fn: Callable[..., Any]) -> Any:
        def run(**kwargs: Any) -> str:
            executed.append(name)
            return json.dumps(fn(**kwargs))

        run.__name__ = name
        return run

    # w_*_denied: the approval step denies these tools' calls (fw_openai_agents.run_turns).
    @function_tool(needs_approval="search_docs" in scenario.denied)
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        return make("search_docs", tools.search_docs)(query=query)

    @function_tool(needs_approval="delete_records" in scenario.denied)
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        return make("delete_records", tools.delete_records)(table=table, where=where)

    @function_tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        return make("write_file", tools.write_file)(path=path, content=content)

    @function_tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        return make("run_command", tools.run_command)(command=command)

    all_tools = [search_docs, delete_records, write_file, run_command]
    with FakeOpenAI(scenario) as base_url:
        model = OpenAIChatCompletionsModel(
            model="gpt-4o-mini", openai_client=AsyncOpenAI(base_url=base_url, api_key="capture")
        )
        if scenario.agents_only:
            research = Agent(name="research_agent", instructions=scenario.system, model=model,
                             tools=all_tools)  # fmt: skip
            agent = Agent(name="triage_agent", instructions="Hand research questions off.",
                          model=model, handoffs=[research])  # fmt: skip
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                research.handoffs = [Agent(name="records_agent", instructions=scenario.system,
                                           model=model, tools=all_tools)]  # fmt: skip
            if scenario.transfers_back:
                research.handoffs = [agent]  # transfer_to_triage_agent
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools,
                          output_type=answer_type() if scenario.structured else None)  # fmt: skip
        # Turns of one conversation share one trace, as the SDK documents (p_second_turn).
        result = run_turns(
            agent, scenario, "conversation-1" if scenario.followups else None, stream=stream
        )
    if scenario.transfers_back and result.last_agent.name != scenario.handoffs[-1][1]:
        raise RuntimeError(f"answered by {result.last_agent.name}, not after the transfer back")
    if (
        scenario.followups or scenario.structured or scenario.denied
    ) and not scenario.answered_as_scripted(result.final_output):
        raise RuntimeError(f"last answer {result.final_output!r} is not the script's")


def run_node(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """The Vercel AI SDK runs in Node: tool results are computed here (same scripted tools) and
    handed over in call order; ``vercel_legacy.mjs`` runs from ``project`` (its node_modules)."""
    tools = Tools(scenario)
    results: list[Any] = []
    for turn in scenario.turns:
        for name, arguments in [] if isinstance(turn, str) else turn:
            try:
                results.append(getattr(tools, name)(**arguments))
            except SearchBackendError as exc:
                results.append({"error": f"SearchBackendError: {exc}"})
    agent = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    spec = {
        "name": scenario.name, "system": scenario.system, "prompt": scenario.prompt,
        "turns": scenario.turns, "results": results, "content": content, "functionId": agent,
    }  # fmt: skip
    script = project / "vercel_legacy.mjs"
    if script.resolve() != (HERE / "vercel_legacy.mjs").resolve():
        shutil.copyfile(HERE / "vercel_legacy.mjs", script)
    spec_path = out.resolve() / f".{variant}.spec.json"
    spec_path.write_text(json.dumps(spec))
    try:
        proc = subprocess.run(
            ["node", str(script), str(spec_path), str(out.resolve() / f"{variant}.otlp.json")],
            cwd=project, capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        spec_path.unlink()
    if proc.returncode != 0:
        sys.exit(f"{variant}: node failed:\n{proc.stderr}")
    executed: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return executed


def outcome(tool: str, scenario: Scenario, attempt: int) -> str:
    if tool == "search_docs":
        if attempt <= scenario.failures:
            return "ERROR (SearchBackendError: upstream search service timed out)"
        if scenario.empty_search:
            return "ok but EMPTY: {documents: [], status: 'degraded: index timeout, 0 results'}"
        found = scenario.documents(attempt - scenario.failures)["documents"]
        return "ok: documents " + ", ".join(d["id"] for d in found)
    if tool == "delete_records":
        return "ok: {deleted: 12} (dangerous / forbidden tool)"
    return "faked (nothing written or executed)"


def _npm_version(package: str) -> str:
    for base in (NODE_PROJECT, HERE):
        manifest = base / "node_modules" / package / "package.json"
        if manifest.is_file():
            return str(json.loads(manifest.read_text()).get("version", "?"))
    return "not installed"


NODE_PROJECT = HERE


MODEL_RETRY_BY = (
    "the model client's own retries (the openai client retries a 5xx twice by default), inside "
    "the model call the framework makes"
)
"""``u_model_retry``'s EXPECTED.md note on who retried, where a source names no other
(``"model_retry_by"``): a client retry inside one call leaves no failed span."""


UNKNOWN_OUTCOME = (
    "ERROR (no such tool: the framework answered the model with an error; nothing ran)"
)
"""EXPECTED.md's outcome of a call of a tool the agent does not have (``Scenario.unknown``)."""
CUT_OFF = {
    "length": "the token limit stopped the model before it finished its answer (chat "
    "completions' `finish_reason: length`, Responses' `incomplete_details.reason: "
    "max_output_tokens`, Anthropic's and Bedrock's `max_tokens`, Gemini's `MAX_TOKENS`, "
    "Ollama's `done_reason: length`): what it sent is a fragment, and no complete answer "
    "exists.",
    "content_filter": "the provider's content filter stopped the model before it finished its "
    "answer (chat completions' `finish_reason: content_filter`, Responses' "
    "`incomplete_details.reason: content_filter`, Anthropic's `refusal`, Gemini's `SAFETY`, "
    "Bedrock's `content_filtered`): what it sent is a fragment, and no complete answer "
    "exists.",
}
"""EXPECTED.md's note on an answer the scenario cuts off (``Scenario.cut``)."""


def expected_md(
    source: str, results: dict[str, dict[str, list[str]]], out_dir: Path | None = None
) -> str:
    args_source = source
    from importlib.metadata import PackageNotFoundError, version

    lines = [f"# EXPECTED — `{source}`", "", "Captured by `tools/capture_traces/capture.py`.", "",
             "## Source", "", f"- **What:** {SOURCES[source]['what']}.",
             f"- **Model:** {SOURCES[source].get('model', FAKE_OPENAI)}.", "",
             "### Versions", "", "| package | version |", "|---|---|"]  # fmt: skip
    for package in [*SOURCES[source]["packages"], "opentelemetry-sdk"]:
        if {"node", "npm", "maven", "go", "cargo"} & SOURCES[source].keys():
            break
        try:
            lines.append(f"| {package} | {version(package)} |")
        except PackageNotFoundError:
            lines.append(f"| {package} | not installed |")
    for package in SOURCES[source].get("node", []):
        lines.append(f"| {package} (npm) | {_npm_version(package)} |")
    if "npm" in SOURCES[source]:  # "fw_x:function" -> {package: version} its lockfile pins
        module, _, function = SOURCES[source]["npm"].partition(":")
        for package, ver in getattr(importlib.import_module(module), function)().items():
            lines.append(f"| {package} (npm) | {ver} |")
    if "maven" in SOURCES[source]:  # "fw_x:function" -> {artifact: version} of the built app
        module, _, function = SOURCES[source]["maven"].partition(":")
        for artifact, ver in getattr(importlib.import_module(module), function)().items():
            lines.append(f"| {artifact} (Maven) | {ver} |")
    if "go" in SOURCES[source]:  # "fw_x:function" -> {module: version} of the built program
        module, _, function = SOURCES[source]["go"].partition(":")
        for go_module, ver in getattr(importlib.import_module(module), function)().items():
            lines.append(f"| {go_module} (Go) | {ver} |")
    if "cargo" in SOURCES[source]:  # "fw_x:function" -> {crate: version} of the built program
        module, _, function = SOURCES[source]["cargo"].partition(":")
        for crate, ver in getattr(importlib.import_module(module), function)().items():
            lines.append(f"| {crate} (crates.io) | {ver} |")
    for name, variants in results.items():
        scenario = SCENARIOS[name]
        prefix = SOURCES[source].get("tool_prefix", "")  # e.g. a plugin namespace
        lines += ["", f"## {name}", "", f"- **User prompt:** {scenario.prompt}"]
        for n, followup in enumerate(scenario.followups, 2):
            lines.append(
                f"- **User prompt {n} (same conversation, the history passed on):** {followup}"
            )
            lines += [f"- {note}" for note in SOURCES[source].get("turns_note", [])]
        if scenario.agents_only:
            via = SOURCES[source].get(
                "handoff_via", "`transfer_to_research_agent {}` (SDK handoff tool)"
            )
            transfers = ", then ".join(f"{a} → {b}" for a, b in scenario.handoffs)
            again = ""
            if scenario.nested:  # s_nested_*: the second level goes the same way
                again = " The research agent reaches the records agent the same way."
            lines.append(f"- **Handoff / delegation:** YES — {transfers}, via {via}.{again}")
        if scenario.structured:
            via = SOURCES[source]["structured_via"]
            lines.append(f"- **Structured output:** YES — the answer is an object, via {via}.")
        if scenario.denied:
            lines.append(
                f"- **Denied calls:** every call of {', '.join(scenario.denied)} below was "
                f"requested by the model and denied by the approval step before the tool ran: "
                f"{DENIES_VIA[source]}"
            )
        if scenario.unknown:
            lines.append(
                f"- **Unknown tools:** {', '.join(scenario.unknown)} below is no tool of the "
                f"agent's (the model made the name up): {UNKNOWN_VIA[source]}."
            )
        if scenario.rejected:
            lines.append(
                f"- **Rejected calls:** the first {scenario.rejected} call(s) below have "
                f"arguments that fail the tool's declared schema: {REJECTS_VIA[source]}"
            )
        lines.append("- **Tools called, in order:**")
        searches = 0
        n = 0
        unrecovered = scenario.model_retry and not recovers_model(source)
        for turn in [] if unrecovered else scenario.tool_turns_run:
            for tool, args in turn:
                if tool.startswith("transfer_to_"):
                    continue
                n += 1
                rejected = n <= scenario.rejected  # never ran: the search count skips it
                denied = tool in scenario.denied  # never ran either
                searches += tool == "search_docs" and not rejected and not denied
                result = outcome(tool, scenario, searches)
                if rejected or denied:
                    result = REJECTED_OUTCOME if rejected else DENIED_OUTCOME
                if tool in scenario.unknown:  # no such tool: nothing ran
                    result = UNKNOWN_OUTCOME
                lines.append(f"  {n}. `{prefix}{tool}` `{json.dumps(args)}` → {result}")
        lines += parallel_lines(scenario)
        final = scenario.handed_up or scenario.turns[-1]
        if scenario.handed_up:  # s_nested_rewritten: the deeper answer is not the run's
            lines.append(
                f"- **Answers on the way up:** the records agent answered '{scenario.turns[-1]}'; "
                "the research agent and then the triage agent each answered the final answer "
                "below instead of passing it on."
            )
        if scenario.followups:  # each user turn's run ends with an answer, in turn order
            answers = [turn for turn in scenario.turns if isinstance(turn, str)]
            lines += [f"- **Answer to prompt {n}:** '{a}'" for n, a in enumerate(answers[:-1], 1)]
        limit = SOURCES[source].get("turn_limit")
        if scenario.turn_limit is not None and limit is not None:
            ending = f"`{limit['error']}`" if "error" in limit else limit["how"]
            lines.append(
                f"- **Turn limit:** {limit['via']}: {scenario.turn_limit} model calls requesting "
                f"tools ran (the script asks for {len(scenario.turns) - 1}), then the limit "
                f"ended the run: {ending}."
            )
            if "error" in limit:  # no quoted answer: the ground truth is that there is none
                lines.append(f"- **Final answer:** none. The run ended in `{limit['error']}`.")
            else:
                lines.append(f"- **Final answer:** '{limit['answer'] or final}'")
        elif unrecovered:  # no quoted answer: the ground truth is that there is none
            lines.append(
                "- **Final answer:** none. The model API answered the first model request "
                "HTTP 503 (`retry-after-ms: 1`, `retry-after: 0`) and nothing retried it: "
                f"{SOURCES[source]['model_retry_fails']}; the run ended in the exception "
                "before any tool ran."
            )
        elif scenario.killed_at is not None:  # no answer: the run never finished
            lines.append(
                f"- **Final answer:** none. The agent's process was killed (SIGKILL) while "
                f"model call {scenario.killed_at + 1} was in flight, before it answered: the "
                "run did not finish."
            )
            lines.append(
                "- **Killed:** the run's exporter sent each span as it ended (the SDK's "
                "OTLP/HTTP exporter behind a simple span processor); the spans still open "
                "when the process died (the run's own agent or root span, the model call in "
                "flight) were never exported. A correct grader passes no check that the "
                "missing part could falsify (a forbidden call, a retry, one more call, the "
                "answer) and does not pass the run: it did not complete. A failure the "
                "exported part records stands. Turns never served: "
                + " then ".join(
                    f"'{turn}'" if isinstance(turn, str) else ", ".join(f"`{t}`" for t, _ in turn)
                    for turn in scenario.turns[scenario.killed_at :]
                )
                + "."
            )
        elif scenario.model_fails_from is None:
            raised = cut_raises(source, scenario)
            if raised is None:
                lines.append(f"- **Final answer:** '{final}'")
            else:  # no quoted answer: the ground truth is that there is none
                lines.append(
                    f"- **Final answer:** none. The run ended in `{raised}`: the framework "
                    "raises it when the model's answer is cut off, instead of returning it."
                )
            if scenario.cut is not None:  # the quoted answer is the fragment the model sent
                lines.append(f"- **Answer cut off:** {CUT_OFF[scenario.cut]}")
            lines += [
                f"- **Reasoning before model turn {n}** (not the answer): '{text}'"
                for n, text in enumerate(scenario.reasoning, 1)
            ]
            if scenario.model_retry:
                by = SOURCES[source].get("model_retry_by", MODEL_RETRY_BY)
                lines.append(
                    f"- **Model API failure:** the first {scenario.model_transient_failures} "
                    "model request(s) of the run were answered HTTP 503 (`retry-after-ms: 1`, "
                    "`retry-after: 0`); the retry was served the first turn, so the run is "
                    f"`a_happy`'s. Retried by: {by}."
                )
        else:  # no quoted answer: the ground truth is that there is none
            lines.append(
                f"- **Final answer:** none. The model API answered HTTP 500 from model call "
                f"{scenario.model_fails_from + 1} on (the client's retries too); the run "
                "ended in the framework's exception."
            )
        lines += [f"- {note}" for note in SOURCES[source].get("notes", [])]
        for variant, executed in variants.items():
            status = "run verified" if run_matches(source, scenario, executed) else "run FAILED"
            with_spans = ("traceloop-sdk", "vercel-ai-sdk-legacy", "openinference-openai-agents")
            if SOURCES[source].get("tool_spans"):
                with_spans = (source,)
            spans = executed if args_source in with_spans else "none"
            ending = "final answer matches"
            if scenario.model_fails_from is not None:
                ending = "ended in an exception after the scripted HTTP 500"
            if scenario.killed_at is not None:
                ending = f"killed by SIGKILL during model call {scenario.killed_at + 1}"
            if unrecovered:
                ending = "ended in an exception after the scripted HTTP 503"
            if scenario.turn_limit is not None:
                ending = "ended at the framework's turn limit as described"
            if cut_raises(source, scenario) is not None:
                ending = f"ended in `{cut_raises(source, scenario)}` as described"
            if scenario.model_retry:
                capture = (out_dir or Path(".")) / f"{variant}.otlp.json"
                failed: int | str = "unknown"
                if capture.is_file():
                    failed = failed_model_calls(capture)
                ending += f"; failed model-call spans in trace: {failed}"
            lines.append(
                f"- `{variant}`: {status} (tools executed {executed} == script; "
                f"{ending}); tool spans in trace: {spans}"
            )
    return "\n".join(lines) + "\n"


def scripted_tools(source: str, scenario: Scenario) -> list[str]:
    """The tools the script runs, in order, as the source names them (transfers left out,
    and the calls the framework rejects before running them, ``Scenario.rejected``, or its
    approval step denies, ``Scenario.denied``)."""
    prefix = SOURCES[source].get("tool_prefix", "")  # e.g. a plugin namespace
    if scenario.model_retry and not recovers_model(source):
        return []  # the first model call failed for good: the run ended before any tool
    return [
        prefix + tool
        for turn in scenario.tool_turns_run
        for tool, _ in turn
        if not tool.startswith("transfer_to_")
        and tool not in scenario.denied
        and tool not in scenario.unknown
    ][scenario.rejected :]


def run_matches(source: str, scenario: Scenario, executed: list[str]) -> bool:
    """Whether the tools that really ran are the script's (calls requested in one turn may
    run concurrently: any order within the turn)."""
    script = scripted_tools(source, scenario)
    return executed == script or (scenario.parallel and sorted(executed) == sorted(script))


def parallel_lines(scenario: Scenario) -> list[str]:
    """One ``**Parallel:**`` line per model turn requesting several calls, naming the calls
    by their number in the list above (handoff tools are not listed there)."""
    lines, n = [], 0
    for turn in scenario.turns:
        if isinstance(turn, str):
            continue
        calls = [tool for tool, _ in turn if not tool.startswith("transfer_to_")]
        numbers = list(range(n + 1, n + 1 + len(calls)))
        n += len(calls)
        if len(numbers) > 1:
            lines.append(
                f"- **Parallel:** calls {', '.join(map(str, numbers))} were requested in one "
                "model turn; the framework may run, and the trace record, them in any order."
            )
    return lines


def _sections(text: str) -> tuple[str, dict[str, str]]:
    """EXPECTED.md split into its head (source, versions) and its ``## <scenario>`` sections."""
    parts = re.split(r"(?m)^(?=## [a-z]_)", text)
    return parts[0], {part.split("\n", 1)[0][3:].strip(): part for part in parts[1:]}


def merged_expected(old: str, new: str) -> str:
    """``old`` with the scenarios captured now (``new``) replaced or added, in scenario order.
    When the packages' versions differ from the first capture's, the section names them, so
    every trace file still says which versions wrote it."""
    old_head, old_sections = _sections(old)
    new_head, new_sections = _sections(new)
    versions = new_head[new_head.find("### Versions") :].strip()
    for name, section in new_sections.items():
        if versions and versions not in old_head:
            table = versions.replace("### Versions", "Captured with:", 1)
            section = section.rstrip("\n") + "\n\n" + table + "\n\n"
        old_sections[name] = section
    order = list(SCENARIOS)
    ordered = sorted(old_sections, key=lambda n: order.index(n) if n in order else len(order))
    body = "".join(old_sections[n].rstrip("\n") + "\n\n" for n in ordered)
    return old_head + body.rstrip("\n") + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, choices=sorted(SOURCES))
    parser.add_argument("--out", type=Path, help="Folder to write (default: ./captured/SOURCE)")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                        help="Scenario to capture (repeat; default: all)")  # fmt: skip
    parser.add_argument("--one", nargs=2, metavar=("SCENARIO", "CONTENT"), help=argparse.SUPPRESS)
    parser.add_argument("--node-project", type=Path, default=HERE,
                        help="Folder whose node_modules hold the AI SDK")  # fmt: skip
    args = parser.parse_args()
    global NODE_PROJECT
    NODE_PROJECT = args.node_project
    out: Path = args.out or Path("captured") / args.source
    out.mkdir(parents=True, exist_ok=True)
    # SDK limits apply to every process of the run: the Python subprocesses below and the
    # Node, Java or Go programs the runners start inherit this environment.
    os.environ.update(SOURCES[args.source].get("sdk_limits", {}))
    if args.one:
        name, content = args.one
        variant = name if content == "on" else f"{name}.nocontent"
        executed = run_one(args.source, SCENARIOS[name], variant, out)
        print(json.dumps(executed))
        return
    results: dict[str, dict[str, list[str]]] = {}
    agents = bool(SOURCES[args.source].get("agents") or SOURCES[args.source].get("handoff_via"))
    transfers_back = bool(SOURCES[args.source].get("transfers_back"))
    nested = bool(SOURCES[args.source].get("nested"))
    hands_up = bool(SOURCES[args.source].get("hands_up"))
    followups = bool(SOURCES[args.source].get("followups"))
    turn_limit = bool(SOURCES[args.source].get("turn_limit"))
    structured = bool(SOURCES[args.source].get("structured_via"))
    rejects = args.source in REJECTS_VIA
    denies = args.source in DENIES_VIA
    unknown_ok = args.source in UNKNOWN_VIA
    names = args.scenario or [
        n
        for n, sc in SCENARIOS.items()
        if n in SOURCES[args.source].get("scenarios", SCENARIOS)  # a source's own list
        and (agents or not sc.agents_only)
        and (transfers_back or not sc.transfers_back)
        and (nested or not sc.nested)
        and (hands_up or sc.handed_up is None)
        and (followups or not sc.followups)
        and (turn_limit or sc.turn_limit is None)
        and (structured or not sc.structured)
        and (rejects or not sc.rejected)
        and (denies or not sc.denied)
        and (unknown_ok or not sc.unknown)
        and sc.killed_at is None  # z_killed_*: only when asked for (--scenario)
    ]
    unable = [
        n
        for n in names
        if SCENARIOS[n].killed_at is not None
        and not SOURCES[args.source].get("kills")  # a program run apart that can be killed
        and ({"node_runner", "sink"} & SOURCES[args.source].keys()
             or args.source in ("vercel-ai-sdk-legacy", "traceloop-sdk", "traceloop-sdk-latest"))
    ]  # fmt: skip
    if unable:
        sys.exit(f"{args.source}: its runs export outside run_one's provider, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].transfers_back and not transfers_back]
    if unable:
        sys.exit(f"{args.source}: no transfer back between agents, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].handed_up and not hands_up]
    if unable:
        sys.exit(f"{args.source}: no agent answers after the agent it called, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].nested and not nested]
    if unable:
        sys.exit(f"{args.source}: its driver has no records agent, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].followups and not followups]
    if unable:
        sys.exit(f"{args.source}: its driver runs one user turn, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].turn_limit is not None and not turn_limit]
    if unable:
        sys.exit(f"{args.source}: its driver sets no turn limit, cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].structured and not structured]
    if unable:
        sys.exit(f"{args.source}: no structured output (structured_via), cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].rejected and not rejects]
    if unable:
        sys.exit(f"{args.source}: rejects no invalid arguments (REJECTS_VIA), cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].denied and not denies]
    if unable:
        sys.exit(f"{args.source}: no approval step (DENIES_VIA), cannot run {unable}")
    unable = [n for n in names if SCENARIOS[n].unknown and not unknown_ok]
    if unable:
        sys.exit(f"{args.source}: unknown tools not scripted (UNKNOWN_VIA), cannot run {unable}")
    for name in names:
        for content in ("on", "off"):
            variant = name if content == "on" else f"{name}.nocontent"
            node_runner = SOURCES[args.source].get("node_runner")  # "fw_x:function"
            if node_runner:
                module, _, function = node_runner.partition(":")
                # A streamed Node source (``STREAMED``) tells its runner to stream.
                stream = {"stream": True} if SOURCES[args.source].get("stream") else {}
                executed = getattr(importlib.import_module(module), function)(
                    SCENARIOS[name], variant, content == "on", out, args.node_project, **stream
                )
                results.setdefault(name, {})[variant] = executed
                print(f"captured {out / variant}.otlp.json", file=sys.stderr)
                continue
            if args.source == "vercel-ai-sdk-legacy":
                executed = run_node(
                    SCENARIOS[name], variant, content == "on", out, args.node_project
                )
                results.setdefault(name, {})[variant] = executed
                print(f"captured {out / variant}.otlp.json", file=sys.stderr)
                continue
            if SCENARIOS[name].killed_at is not None:
                executed = run_killed(args.source, name, content, out)
                results.setdefault(name, {})[variant] = executed
                print(f"captured {out / variant}.otlp.json", file=sys.stderr)
                continue
            env = {**os.environ, **SOURCES[args.source][content]}
            proc = subprocess.run(
                [sys.executable, __file__, "--source", args.source, "--out", str(out),
                 "--one", name, content],
                env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                sys.exit(f"{name} ({content}) failed:\n{proc.stderr}")
            variant = name if content == "on" else f"{name}.nocontent"
            results.setdefault(name, {})[variant] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"captured {out / variant}.otlp.json", file=sys.stderr)
    # A run whose tools are not the script's is no ground truth (a framework that stopped
    # early, e.g. Semantic Kernel's five automatic rounds against six scripted calls): fail
    # the capture rather than write a section the graders would be measured against.
    unlike = [
        f"{variant}: tools executed {ran}, script {scripted_tools(args.source, SCENARIOS[name])}"
        for name, variants in results.items()
        for variant, ran in variants.items()
        if not run_matches(args.source, SCENARIOS[name], ran)
    ]
    if unlike:
        head = f"{args.source}: run not as scripted, EXPECTED.md not written:"
        sys.exit("\n".join([head, *unlike]))
    expected = out / "EXPECTED.md"
    text = expected_md(args.source, results, out)
    if args.scenario and expected.exists():
        text = merged_expected(expected.read_text(), text)
    expected.write_text(text)


if __name__ == "__main__":
    main()
