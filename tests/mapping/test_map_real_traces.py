"""Every real trace in tests/testdata/traces maps to the trajectory its EXPECTED.md describes.

Read through the real decoders and assembler, mapped through the bundled conventions/.
Content-on files must reproduce the tools in order with their arguments, outcomes, results,
handoffs and final answer; content-off files must show the same structure with the content
absent (None or flagged redacted), never invented. Tokens are summed over leaf model calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from otel_oracles.grade.evidence import final_answer_calls, final_output
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.mapping._tool_results import structured
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import Trace
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.pipeline import holds_agent_run, read_traces
from tests.mapping.ground_truth import Case, ExpectedCall, Scenario, cases

CASES = cases()

FRAGMENTED = frozenset({"openlit-llamaindex"})
"""Each model call is a trace of its own (OpenLIT records nothing of LlamaIndex's agent
workflow): a run's tool calls are those its model calls requested, spread over one trace
per call, their outcomes only in the next call's input, in another trace."""

TOOL_NAMES_UNRECORDED = frozenset({"mlflow-smolagents"})
"""Tool spans that name no tool and no model call recorded (MLflow's smolagents autolog on
smolagents 1.26: every ``@tool`` is a ``SimpleTool.__call__`` span, and the patched model and
step methods are no longer called): every call is unnamed, never the class taken for a
tool; with content on its arguments and result are read, with content off neither."""

LIMIT_LAST_RESULT_UNSEEN = frozenset({"mlflow-autogen"})
"""``q_turn_limit``: AutoGen returns after its fourth search without another model call, and
no span records a tool (tools only in the model calls' messages): the fourth search is seen
only as the last call's request (content on: named, no result, outcome unknown; content off:
not at all, the last call's output being hidden), and the answer is in no span."""

TEAM_FRAGMENTED = frozenset({"mlflow-autogen"})
"""A team's run is one trace per model call (MLflow's AutoGen autolog wraps an agent's ``run``
and ``on_messages``, which a ``Swarm`` never calls, and the model client's ``create``): in
the scenarios where agents hand over, no span shows an agent or the run, each model call is
a root of its own; the single-agent scenarios are one trace."""

TURNS_APART = frozenset(
    {
        "openlit-strands",
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openai-agents-otel-genai",
        "mlflow-openai-agents",
        "strands",
        "strands-openinference",
        "smolagents-openinference",
        "llamaindex-openinference",
    }
)
"""Each user turn of ``p_second_turn`` is a trace of its own, nothing tying the traces (no
shared conversation or session id, no span link): two subjects, the first turn's run and the
second's, in time order. The other sources' turns are one trace, or traces joined by their
conversation/session id."""

LIMIT_REQUEST_PENDING = frozenset(
    {
        "langgraph-openinference",
        "openlit-langgraph",
        "mlflow-langgraph",
        "llamaindex-openinference",
    }
)
"""``q_turn_limit``: the framework's limit ended the run after the model's fifth call asked
for a fifth search, which no tool ran (LangGraph's prebuilt agent answers a text of its own
in its place; LlamaIndex raises on it). The trace holds it only as that call's request: one
synthesized call, outcome unknown, after the four searches EXPECTED.md lists."""

THOUGHTS_AS_TEXT = frozenset({"google-adk", "google-adk-stream"})
"""``v_reasoning*``: the tracer writes the model's thoughts as plain text parts (ADK's GenAI
writer drops the ``thought`` mark), so the answering message is two text parts, the reasoning
and the answer, and no answer is read (``thoughts_unmarked``): missing, never the reasoning."""

CUT_UNRECORDED = frozenset(
    {
        "openinference-openai-agents",
        "logfire-openai-agents",
        "logfire-openai-agents-latest",
        "ollama-openllmetry",
        "agno-openinference",
    }
)
"""``x_answer_*``: no span records the finish reason (the OpenAI Agents SDK's chat-completions
model writes the reply message alone into its generation span; OpenLLMetry's Ollama
instrumentation drops ``done_reason``; OpenInference's Agno instrumentation records Agno's own
message as the output), so the fragment of a cut-off answer reads as the
answer: a known limit (``test_contracts_on_real_traces.CUT_UNRECORDED``)."""

LIMIT_ANSWER_UNRECORDED = frozenset({"autogen-openinference"})
"""``q_turn_limit``: the text AutoGen returns at its limit (its ``ToolCallSummaryMessage``,
EXPECTED.md's final answer) is in no span: the mapped answer is missing, never the tool's
result or an earlier text."""

OUTPUT_TOOL_CARRIED_IN_STATE = frozenset(
    {"langsmith-otel-create-agent", "mlflow-create-agent", "langchain-create-agent-openllmetry"}
)
"""``r_structured_*``: LangChain's tool strategy (``create_agent(response_format=
ToolStrategy(T))``) delivers the answer through a tool named after the user's type T that no
span runs (the agent's model node answers the call itself). The agent's output state holds
the answer (``structured_response``, the conventions' ``structured_output``): it is the final
answer, and the requested call whose arguments it is, the answer's delivery (a final-answer
call, no work). Content off hides both: the request stays one more call, unnamed, outcome
unknown, and the answer is missing."""

OUTPUT_TOOL_CARRIED_IN_SPAN = frozenset({"instructor-openinference"})
"""``r_structured_*`` under Instructor (``TOOLS`` mode): the model was forced to call a
function named after the user's type (``SupportAnswer``), which no span runs (Instructor
validates its arguments itself), and the ``instructor.create`` span holds the validated object
(``instructor.yaml``): the requested call whose arguments it is, is the answer's delivery (a
final-answer call, no work). Content off hides both: the request stays one more call,
unnamed, outcome unknown, and the answer is missing."""

REJECTED_REQUEST_UNTIED = frozenset({"smolagents-openinference", "smolagents-openinference-stream"})
"""``t_invalid_args`` with content on: smolagents refused the first search before any tool ran
(``AgentToolCallError`` in the step), so no tool span records it, and its tool spans carry no
call id: linked by name, the one tool span is the call of the second model call (a span never
goes to a request past a later model call that asked for the tool again), and the refused
request is a synthesized call with its own arguments (``q``) and no outcome: the error it got
is only in smolagents' text history (``tool-response`` text, no call id), so grading fails
closed on it (``search-retry`` missing evidence). Before linking kept that order, the span went
to the refused request and the refused call's arguments were lost. Content off, the failed
step's span is the rejected call, unnamed (``smolagents.yaml``, ``rejected_call``), mapped as
EXPECTED.md says."""


def denied(call: ExpectedCall) -> bool:
    """Whether EXPECTED.md says the approval step refused ``call`` (``w_*_denied``)."""
    return call.outcome.startswith("DENIED")


DENIAL_TEXT = re.compile(
    r"not approved|was denied|cancelled by user|User rejected the tool call|rejected by user"
    r"|This tool call is rejected|blocked by hook"
)
"""What the frameworks hand the model for a refused call, each in its own words."""
DENIAL_UNTIED = frozenset({"openlit-create-agent"})
"""OpenLIT writes the tool message that carries the refusal with no call id: the denied call
is a request of unknown outcome whatever the content switch (never a success)."""
DENIAL_UNSEEN = frozenset({"claude-agent-sdk", "claude-agent-sdk-js", "openlit-claude-agent-sdk"})
"""No span holds the refusal (the Claude Agent SDK's default ``can_use_tool`` refusal is an
empty message: the refused call's span fails as a tool that raised, and the model is handed
``""``): the denied call reads as a failed call without a result, never a success."""


REJECTED_DETAIL = re.compile(r"query|\bq\b")
"""What a rejected call's error names (``t_invalid_args``): the missing ``query`` or the
unexpected ``q``, in the framework's own words (pydantic's, Python's, ADK's)."""


def rejected(call: ExpectedCall) -> bool:
    """Whether EXPECTED.md says the framework refused this call before the tool ran."""
    return call.outcome.startswith("ERROR (rejected before the tool ran")


UNKNOWN_DETAIL = re.compile(
    r"not a valid tool|Unknown tool|not found|does not exist|no tool with that name"
)
"""What the frameworks hand the model for a call of a tool the agent does not have
(``y_unknown_tool``), each in its own words (LangGraph's ``ToolNode``, pydantic-ai's retry
prompt, Strands, LlamaIndex, CrewAI, Agno, Google ADK)."""


UNKNOWN_TOOL_SPANNED = frozenset({"strands", "google-adk"})
"""``y_unknown_tool``: the framework records a tool span for a call of a tool the agent does not
have (Strands: an ``execute_tool drop_stale_requests`` span, status ERROR, "Unknown tool: ...";
Google ADK: the call's ``execute_tool`` span, ``ValueError``), so the failure shows with content
off too. Elsewhere the call is only the model's request."""
CALLED_AGAIN_UNSEEN = {
    "agno-openinference": ("s_nested_forbidden", "s_nested_failure", "s_nested_rewritten"),
    "beeai-js-openinference": ("g_handoff", "s_delegated_forbidden", "s_delegated_failure"),
    "dspy-openinference": (
        "a_happy",
        "b_tool_retry",
        "c_retry_exhausted",
        "d_forbidden_tool",
        "e_fabricated_citation",
        "f_degraded",
        "h_coding_agent",
    ),
    "smolagents-openinference": ("t_invalid_args",),
}
"""Content off: a model call that records no finish reason, its output hidden, answered by
another model call with no step between, in a scope that shows tools, gets one unnamed
placeholder (``test_contracts_on_real_traces.CALLED_AGAIN_UNSEEN``): DSPy's ``finish`` pick,
the model call after a delegation returned, smolagents' call with invalid arguments (refused
before any tool span: a real call the trace does not otherwise show). Not a call of the
script's list here: it is left out."""
UNKNOWN_CALL_UNSEEN = frozenset({"azure-ai-agents"})
"""``y_unknown_tool``, content on and off: the Azure AI Agents service runs the model, so no
span holds its request, and the SDK answers a call its toolset has no function for without
opening a ``@trace_function`` span: the made-up call is only an output posted by call id
(``test_contracts_on_real_traces.UNKNOWN_CALL_UNSEEN``). It is not mapped, and nothing is
invented in its place: the posts are input-only model steps whose outputs, by call id,
outnumber the tool steps, which grading reads as calls the trace does not show."""
REJECTED_ARGUMENTS_UNRECORDED = frozenset({"azure-ai-agents"})
"""``t_invalid_args``: the refused call's span is opened (the SDK's ``@trace_function``) and
records Python's ``TypeError``, but not the arguments, which the decorator binds to the
function's signature before it writes them: the call is named and failed, its arguments
unknown (never the ones a later call passed)."""
UNKNOWN_NAMED_WITHOUT_CONTENT = frozenset(
    {
        "strands",
        "google-adk",
        "pydantic-ai-openinference",
        "pydantic-ai-openinference-latest",
        "logfire-pydantic-ai",
        "openlit-create-agent",
    }
)
"""``y_unknown_tool`` content off: the made-up tool's name is kept (Strands' span; pydantic-ai's
and OpenLIT's model calls keep their requests' tool names without content). Elsewhere the
request's names are content."""
UNKNOWN_ERROR_UNTIED = frozenset({"openlit-create-agent"})
"""``y_unknown_tool``: OpenLIT writes the tool message carrying LangGraph's error with no call
id, so the made-up call's outcome is unknown whatever the content switch (never a success)."""


def unknown(call: ExpectedCall) -> bool:
    """Whether EXPECTED.md says the call named a tool the agent does not have."""
    return call.outcome.startswith("ERROR (no such tool")


RUN_ERROR_INPUT_UNRECORDED = frozenset({"openlit-litellm"})
"""``o_run_error``: the model call that raised records nothing but its name and exception
(OpenLIT's litellm instrumentor), so the search before it, whose result only that call's
input would hold (no tool spans), has no recorded result and no known outcome."""


def result_in_flight(source: str, scenario: str, calls: list[Step], step: Step) -> bool:
    """``z_killed_*`` on a source without tool spans: a call's outcome and result are only in
    the input of the model call after it, and the run's last call handed its result to the
    model call its process died in, which was never exported: nothing records them."""
    killed = scenario.startswith("z_killed_")
    return killed and source not in TOOL_SPAN_SOURCES and step is calls[-1]


OUTPUT_TOOL_UNREAD = frozenset({"openlit-create-agent"})
"""``r_structured_*`` under OpenLIT: LangChain's tool strategy delivers the answer through a
tool named after the user's type (``SupportAnswer``) that no span runs, and no span records
the agent's output state: the request is one more call (named: OpenLIT's chat spans keep
requests whatever the switch), outcome unknown, and the answer is missing, never the
request's arguments taken for it."""

STRUCTURED_CALL_LEAVES = {"openlit-langgraph": (1, 1), "langsmith-otel-langgraph": (2, 1)}
"""``r_structured_*`` on LangGraph's prebuilt agent: how many leaf spans report the usage of
its last call (the one asking for the output type) where that is not as many as for every
other call: OpenLIT's LangGraph instrumentor copies no usage onto the
``generate_structured_response`` node (once, where every other call is a leaf twice,
``USAGE_COPIED_BESIDE``); the LangSmith SDK records the structured-output parser's
``_check_refusal`` run, a leaf, with the reply's usage (twice, where every other call is once;
content off hides that run's output, usage too). Each value is (content on, content off);
the mapping reads the call once either way."""

RETRIEVER_TOOLS = frozenset(
    {
        "langchain-retriever-openinference",
        "langchain-retriever-openllmetry",
        "openlit-langchain-retriever",
        "mlflow-langchain-retriever",
        "llamaindex-retriever-openinference",
        "mlflow-llamaindex-retriever",
    }
)
"""``search_docs`` is the framework's retriever tool (``fw_retrievers.py``): the retriever's
span inside each call is the same call (its query and documents the step's, its status the
search's outcome), and a search that found nothing is a step with no documents (LangChain's
tool then returns empty text, which reads as not captured) or an empty result (LlamaIndex's).
The tool's name is on its span, content capture on or off."""

NAMES_KEPT_WITHOUT_CONTENT = frozenset(
    {
        "dspy-otel-genai",
        "qwen-agent-otel-genai",
        "agency-swarm-openinference",
        "azure-ai-agents",
        "swiftide",
        *RETRIEVER_TOOLS,
        "autogen-mcp-openinference",
        "smolagents-mcp-openinference",
        "strands-mcp",
        "pydantic-ai-mcp",
        "google-adk-mcp",
        "langgraph-mcp-openinference",
        "agno-mcp-openinference",
        "llamaindex-mcp-openinference",
        "claude-agent-sdk",
        "claude-agent-sdk-js",
        "claude-agent-sdk-mcp",
        "openlit-claude-agent-sdk",
        "upsonic",
        "atomic-agents",
        "atomic-agents-openinference",
        "rig",
        "rig-latest",
        "langfuse-langgraph",
        "langfuse-openai",
        "mlflow-openai",
        "laminar-openai",
        "agentops-openai",
        "mlflow-openai-semconv",
        "mlflow-openai-agents",
        "mlflow-langgraph",
        "mlflow-dspy",
        "mlflow-create-agent",
        "mlflow-pydantic-ai",
        "mlflow-agno",
        "mlflow-strands",
        "mlflow-llamaindex",
        "pydantic-ai",
        "openai-agents-otel-v2",
        "vercel-ai-sdk-otel",
        "vercel-ai-sdk-openinference",
        "vercel-ai-sdk-openinference-stream",
        "openai-v2",
        "openai-java",
        "edot-openai",
        "openllmetry-openai-events",
        "openllmetry-anthropic-events",
        "traceloop-sdk",
        "traceloop-sdk-latest",
        "vercel-ai-sdk-legacy",
        "crewai-openinference-events",
        "smolagents-codeagent-openinference",
        "crewai-openinference",
        "langgraph-openinference",
        "langgraph-openinference-stream",
        "langgraph-graph-openinference",
        "langgraph-openllmetry",
        "langsmith-otel-langgraph",
        "langsmith-otel-create-agent",
        "deepagents-openinference",
        "deepagents-langsmith-otel",
        "langchain-create-agent-openllmetry",
        "llamaindex-openinference",
        "smolagents-openinference",
        "smolagents-openinference-stream",
        "openinference-openai-agents",
        "openinference-openai-agents-stream",
        "openinference-mcp",
        "strands",
        "strands-stream",
        "strands-openinference",
        "strands-latest",
        "semantic-kernel",
        "google-adk",
        "google-adk-stream",
        "google-adk-events",
        "google-adk-legacy",
        "google-adk-legacy-latest",
        "openinference-google-adk",
        "mastra",
        "mastra-stream",
        "openai-agents-responses",
        "openai-agents-responses-stream",
        "agno-openinference",
        "autogen-openinference",
        "dspy-openinference",
        "logfire-openai-agents",
        "logfire-openai-agents-latest",
        "logfire-openai-agents-stream",
        "openlit-openai-agents",
        "openlit-openai-agents-stream",
        "openlit-langgraph",
        "openlit-create-agent",
        "openlit-smolagents",
        "openlit-agno",
        "openlit-strands",
        "openlit-agent-framework",
        "openlit-google-adk",
        "openllmetry-agno",
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openai-agents-otel-genai",
        "agency-swarm-otel-genai",
        "openllmetry-openai-agents-stream",
        "laminar-langgraph",
        "laminar-openai-agents",
        "laminar-pydantic-ai",
        "agent-framework",
        "agent-framework-openinference",
        "beeai-openinference",
        "langchain-agents-openinference",
        "pydantic-ai-openinference",
        "pydantic-ai-openinference-latest",
        "pydantic-ai-openinference-stream",
        "pydantic-ai-v2",
        "pydantic-ai-v6",
        "logfire-pydantic-ai",
        "llamaindex-openllmetry",
        "vercel-ai-sdk-5",
        "vercel-ai-sdk-5-stream",
        "vercel-ai-sdk-5-latest",
        "vercel-ai-sdk-5-latest-stream",
        "langgraphjs-openinference",
        "langgraphjs-openinference-stream",
        "genkit",
        "genkit-go",
        "eino-apmplus",
        "eino-react-apmplus",
        "openllmetry-js",
        "openllmetry-js-stream",
        "haystack-native",
        "ag2-native",
        "ag2-openinference",
        "any-agent",
        "autogen-native",
        "langtrace-dspy",
        "spring-ai",
        "spring-ai-2",
        "adk-java",
        "adk-go",
        "adk-js",
        "openai-agents-js",
        "openinference-openai-js",
        "langfuse-openai-js",
        "openllmetry-openai-js",
        "openinference-anthropic-js",
        "openllmetry-anthropic-js",
        "beeai-js-openinference",
        "koog",
        "quarkus-langchain4j",
        "voltagent",
        "strands-js",
        "strands-js-latest",
        "livekit-agents",
        "pipecat-openinference",
        "agno-otel-genai",
        "langgraph-otel-genai",
        "llamaindex-otel-genai",
    }
)
"""Sources whose content-off export still names the tools (README table, EXPECTED.md)."""

TOOL_SPAN_SOURCES = frozenset(
    {
        "agency-swarm-openinference",
        "atomic-agents",
        "atomic-agents-openinference",
        "azure-ai-agents",
        "swiftide",
        *RETRIEVER_TOOLS,
        "pipecat-openinference",
        "autogen-mcp-openinference",
        "smolagents-mcp-openinference",
        "strands-mcp",
        "pydantic-ai-mcp",
        "google-adk-mcp",
        "langgraph-mcp-openinference",
        "agno-mcp-openinference",
        "llamaindex-mcp-openinference",
        "claude-agent-sdk",
        "claude-agent-sdk-js",
        "claude-agent-sdk-mcp",
        "openlit-claude-agent-sdk",
        "quarkus-langchain4j",
        "voltagent",
        "strands-js",
        "strands-js-latest",
        "griptape",
        "rig",
        "rig-latest",
        "langfuse-langgraph",
        "langfuse-openai",
        "mlflow-openai",
        "laminar-openai",
        "agentops-openai",
        "mlflow-openai-semconv",
        "mlflow-openai-agents",
        "mlflow-langgraph",
        "mlflow-dspy",
        "mlflow-create-agent",
        "mlflow-pydantic-ai",
        "mlflow-agno",
        "mlflow-strands",
        "mlflow-llamaindex",
        "pydantic-ai",
        "openai-agents-otel-v2",
        "vercel-ai-sdk-otel",
        "vercel-ai-sdk-openinference",
        "vercel-ai-sdk-openinference-stream",
        "traceloop-sdk",
        "traceloop-sdk-latest",
        "langgraph-openinference",
        "langgraph-openinference-stream",
        "langgraph-graph-openinference",
        "langgraph-openllmetry",
        "langsmith-otel-langgraph",
        "langsmith-otel-create-agent",
        "deepagents-openinference",
        "deepagents-langsmith-otel",
        "langchain-create-agent-openllmetry",
        "llamaindex-openinference",
        "openinference-openai-agents",
        "openinference-openai-agents-stream",
        "openinference-mcp",
        "agentops-openai-agents",
        "smolagents-openinference",
        "smolagents-openinference-stream",
        "smolagents-codeagent-openinference",
        "crewai-openinference",
        "crewai-openinference-events",
        "strands",
        "strands-stream",
        "strands-openinference",
        "strands-latest",
        "semantic-kernel",
        "google-adk",
        "google-adk-stream",
        "google-adk-events",
        "google-adk-legacy",
        "google-adk-legacy-latest",
        "openinference-google-adk",
        "mastra",
        "mastra-stream",
        "openai-agents-responses",
        "openai-agents-responses-stream",
        "agno-openinference",
        "autogen-openinference",
        "dspy-openinference",
        "dspy-otel-genai",
        "qwen-agent-otel-genai",
        "logfire-openai-agents",
        "logfire-openai-agents-latest",
        "logfire-openai-agents-stream",
        "openlit-openai-agents",
        "openlit-openai-agents-stream",
        "openlit-langgraph",
        "openlit-create-agent",
        "openlit-smolagents",
        "openlit-agno",
        "openlit-strands",
        "openlit-agent-framework",
        "openlit-google-adk",
        "openllmetry-agno",
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openai-agents-otel-genai",
        "agency-swarm-otel-genai",
        "openllmetry-openai-agents-stream",
        "laminar-langgraph",
        "laminar-openai-agents",
        "laminar-pydantic-ai",
        "agent-framework",
        "agent-framework-openinference",
        "beeai-openinference",
        "langchain-agents-openinference",
        "pydantic-ai-openinference",
        "pydantic-ai-openinference-latest",
        "pydantic-ai-openinference-stream",
        "pydantic-ai-v2",
        "pydantic-ai-v6",
        "logfire-pydantic-ai",
        "llamaindex-openllmetry",
        "vercel-ai-sdk-5",
        "vercel-ai-sdk-5-stream",
        "vercel-ai-sdk-5-latest",
        "vercel-ai-sdk-5-latest-stream",
        "langgraphjs-openinference",
        "langgraphjs-openinference-stream",
        "genkit",
        "genkit-go",
        "eino-apmplus",
        "eino-react-apmplus",
        "openllmetry-js",
        "openllmetry-js-stream",
        "haystack-native",
        "ag2-native",
        "ag2-openinference",
        "any-agent",
        "autogen-native",
        "spring-ai",
        "spring-ai-2",
        "adk-java",
        "adk-go",
        "adk-js",
        "openai-agents-js",
        "openinference-openai-js",
        "langfuse-openai-js",
        "openllmetry-openai-js",
        "openinference-anthropic-js",
        "openllmetry-anthropic-js",
        "beeai-js-openinference",
        "koog",
        "livekit-agents",
        "agno-otel-genai",
        "langgraph-otel-genai",
        "llamaindex-otel-genai",
    }
)
"""Sources with execute_tool spans (failure status is visible without content)."""

STATUS_SPREAD = frozenset({"vercel-ai-sdk-openinference", "vercel-ai-sdk-openinference-stream"})
"""Every span that ends after the run's first failure carries that failure's ERROR status
(OpenInference's Vercel processor, @arizeai/openinference-vercel 3.2.1, gives a root span the
trace's aggregate status and tells a root by ``parentSpanId``, which spans of the OpenTelemetry
JS SDK 2 no longer have: every span is a root to it). A call that succeeded after a failure
reads as failed, and so does the last model call, so the answer is missing evidence: false
failures, never a pass."""

FAILED_SPANS_BLANK = frozenset({"adk-js"})
"""Sources whose span of a tool that threw records nothing but its name, with an unset status
(ADK for TypeScript writes a tool span's attributes only after the tool returned): with
content off such a call's outcome is unknown (``unset``), never a success; with content on it
is the error the model was handed, read from the next model call's input."""

OK_NOT_SHOWN = frozenset(
    {
        "qwen-agent-otel-genai",
        "swiftide",
        # LangChain tools beside the retriever tool (whose retriever span, where recorded,
        # shows the search's outcome: RETRIEVER_TOOLS).
        "langchain-retriever-openinference",
        "langchain-retriever-openllmetry",
        "openlit-langchain-retriever",
        "mlflow-langchain-retriever",
        "autogen-openinference",
        "autogen-native",
        "autogen-mcp-openinference",
        "smolagents-mcp-openinference",
        "langgraph-mcp-openinference",
        "griptape",  # an activity that returns an ErrorArtifact ends its span OK
        "upsonic",  # a caught failure ends its span OK, flagged a success
        "openllmetry-agno",
        "langgraph-openinference",
        "langgraph-openinference-stream",
        "langgraph-graph-openinference",
        "langgraph-openllmetry",
        "laminar-langgraph",
        "openlit-langgraph",
        "openlit-create-agent",
        "mlflow-langgraph",
        "mlflow-create-agent",
        "langsmith-otel-langgraph",
        "langsmith-otel-create-agent",
        "deepagents-openinference",
        "deepagents-langsmith-otel",
        "langchain-create-agent-openllmetry",
        "langchain-agents-openinference",
        "llamaindex-openllmetry",
        "vercel-ai-sdk-5",
        "vercel-ai-sdk-5-stream",
        "vercel-ai-sdk-5-latest",
        "vercel-ai-sdk-5-latest-stream",
        "spring-ai",
        "spring-ai-2",
        "adk-java",
    }
)
"""Tool spans end OK when the tool handled or returned its own error (LangChain's
``handle_tool_error``, an AI SDK tool returning an error object): with content off an OK span
leaves the outcome unknown (``unset``)."""

HANDLED_FAILURES = frozenset(
    {
        "qwen-agent-otel-genai",
        "swiftide",
        "autogen-mcp-openinference",
        "smolagents-mcp-openinference",
        "langgraph-mcp-openinference",
        "langchain-agents-openinference",
        "upsonic",
        "llamaindex-openllmetry",
        "openllmetry-agno",
        "spring-ai",
        "spring-ai-2",
        "adk-java",
    }
)
"""Sources whose tool spans end OK on every failure (``handle_tool_error``; OpenLLMetry's
LlamaIndex call_tool step around a tool that raised; OpenLLMetry's Agno tool spans; Spring
AI's tool observation around its exception processor; ADK for Java's FunctionTool, which
returns ``{"status": "error"}`` for a tool that threw), so only the captured output shows it."""

ARGUMENTS_WITHOUT_CONTENT = frozenset(
    {
        "azure-ai-agents",
        "llamaindex-openllmetry",
        "langtrace-dspy",
        "claude-agent-sdk",
        "claude-agent-sdk-js",
        "claude-agent-sdk-mcp",
        "edot-openai",
        "beeai-js-openinference",
        "ag2-openinference",
    }
)
"""Sources whose tracer records tool arguments whatever its content switch (OpenLLMetry's
LlamaIndex ``tool.arguments``, the Claude Agent SDK's ``tool.parameters``, the EDOT OpenAI
instrumentation's ``gen_ai.assistant.message`` / ``gen_ai.choice`` tool calls, OpenInference's AG2
``tool_call.function.arguments``):
with content off the arguments are there, results are not."""

OPENLIT_CHAT_REQUESTS = frozenset(
    {
        "openlit-langchain-retriever",
        "openlit-openai",
        "openlit-litellm",
        "openlit-openai-agents",
        "openlit-openai-agents-stream",
        "openlit-langgraph",
        "openlit-create-agent",
        "openlit-smolagents",
        "openlit-agno",
        "openlit-agent-framework",
        "openlit-google-adk",
        "openlit-crewai",
        "openlit-pydantic-ai",
        "openlit-ag2",
        "openlit-haystack",
        "openlit-llamaindex",
        "openlit-cohere",
    }
)
"""Sources whose model calls are OpenLIT's openai, litellm, langchain or cohere ``chat`` spans,
which keep the tool calls each turn requested (names, ids, argument texts, joined with ``", "``)
whatever the content switch (``openlit.yaml``'s ``chat_tool_calls``): with content off the
tools are named and their arguments seen; results are not."""
NAMES_KEPT_WITHOUT_CONTENT |= OPENLIT_CHAT_REQUESTS
ARGUMENTS_WITHOUT_CONTENT |= OPENLIT_CHAT_REQUESTS

TOOL_IO_WITHOUT_CONTENT = frozenset(
    {"adk-go", "pipecat-openinference", "laminar-openai", "azure-ai-agents"}
)
"""Sources whose tool spans record arguments and results whatever the content switch, which
governs only the model's messages (ADK for Go writes ``gcp.vertex.agent.tool_call_args`` /
``tool_response`` on every execute_tool span; its message log records say ``<elided>``;
OpenInference's Pipecat instrumentation keeps ``tool.parameters`` and its own ``tool.result``
under ``OPENINFERENCE_HIDE_*``; Laminar's ``@observe(span_type="TOOL")`` functions keep
``lmnr.span.input`` / ``output`` under ``LMNR_TRACE_CONTENT=false``)."""

TARGET_IN_ARGUMENTS = frozenset({"crewai-openinference", "openlit-crewai"})
"""Sources whose handoff is a delegation tool span: the target agent is known only from the
tool's arguments, so with content off it is missing (None), never guessed."""

GENERIC_ERROR_TEXT = frozenset(
    {
        "agency-swarm-openinference",
        "strands-mcp",
        "pydantic-ai-mcp",
        "google-adk-mcp",
        "agno-mcp-openinference",
        "llamaindex-mcp-openinference",
        "mlflow-openai-agents",
        "openai-agents-otel-v2",
        "openai-agents-responses",
        "openai-agents-responses-stream",
        "openinference-openai-agents",
        "openinference-openai-agents-stream",
        "openai-agents-js",
        "openinference-mcp",
        "logfire-openai-agents",
        "logfire-openai-agents-latest",
        "logfire-openai-agents-stream",
        "openlit-openai-agents",
        "openlit-openai-agents-stream",
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openai-agents-otel-genai",
        "agency-swarm-otel-genai",
        "openllmetry-openai-agents-stream",
        "laminar-openai-agents",
        "adk-java",
    }
)
"""Sources that report tool failures with a generic text only (no error detail; the MCP SDK
2.x answers a tool that raised with ``Error executing tool <name>``, ADK for Java with
``An internal error occurred.``)."""

UNNAMED_AGENTS = frozenset(
    {
        "llamaindex-openinference",
        "llamaindex-openllmetry",
        "mlflow-llamaindex",
        "claude-agent-sdk",
        "claude-agent-sdk-js",
        "claude-agent-sdk-mcp",
        "openlit-claude-agent-sdk",
        "eino-react-apmplus",
    }
)
"""Sources whose spans never name the running agent: a handoff is seen, its source agent is
missing evidence, and its target is known only from the handoff tool's arguments (content on)."""

NO_TOKENS = frozenset(
    {
        "qwen-agent-otel-genai",
        "swiftide",
        "pipecat-openinference",
        "griptape",
        "dspy-openinference",
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openllmetry-openai-agents-stream",
        "langchain-agents-openinference",
        "autogen-native",
        # Streamed without a usage chunk: ChatOpenAI's default (no stream_usage on a base URL
        # of one's own), the Agents SDK's chat-completions model (no include_usage), which
        # fills the call's usage with zeros (Logfire writes them: read as not recorded).
        "langgraph-openinference-stream",
        "openinference-openai-agents-stream",
        "logfire-openai-agents-stream",
        # The AI SDK's OpenAI-compatible provider streams without a usage chunk by default
        # (``includeUsage`` unset): its streamed calls write no ``ai.usage.*`` (the AI SDK's
        # spans) and no ``gen_ai.usage.*`` (Mastra's, on the same provider).
        "vercel-ai-sdk-5-stream",
        "vercel-ai-sdk-5-latest-stream",
        "mastra-stream",
        # AI SDK 7 streamed through the same provider: no usage on the OpenInference spans.
        "vercel-ai-sdk-openinference-stream",
        # LlamaIndex.TS's FunctionAgent streams every call and @llamaindex/openai asks for no
        # usage chunk (``stream_options`` unset): OpenLLMetry's LlamaIndex spans record none.
        "llamaindex-js-openllmetry",
    }
)
"""Sources whose model spans record no token counts: usage is missing, never zero."""

USAGE_IS_CONTENT = frozenset({"haystack-native", "llamaindex-js-openllmetry-openai"})
"""Sources whose model calls report usage only inside their content payload (Haystack's own
tracer: the reply's ``meta``), or only as counted from the content (OpenLLMetry JS's OpenAI
instrumentation counts a streamed text answer's tokens itself when the stream carried no usage,
and only with content on; a tool-call turn gets none): with content off usage is missing, never
zero."""

AGENT_USAGE_ONLY = frozenset(
    {
        "azure-ai-agents",
        "crewai-openllmetry",
        "mlflow-dspy",
        "claude-agent-sdk",
        "claude-agent-sdk-js",
        "claude-agent-sdk-mcp",
    }
)
"""Sources whose model-call spans record no usage while the agent spans record their totals
(MLflow's DSPy autolog: only the module spans, from their predictions): the run's model-call
usage is missing, never the agents' totals."""

LAST_CALL_ONLY = frozenset({"openinference-google-adk", "voltagent"})
"""Sources that write every model call of an agent run onto one span, each call over the last
(OpenInference's ADK instrumentor on ADK's ``invoke_agent`` span; VoltAgent's one ``llm`` span per
agent call, the last step's usage): the usage there is the last call's,
so the mapping reads none (missing, never a part taken for the whole); the final
answer, in the model's messages, is recorded whatever the content switch."""

USAGE_ESTIMATED = frozenset({"openlit-openai-agents-stream"})
"""Streamed without a usage chunk (the Agents SDK's chat-completions model asks for none),
where the tracer writes its own estimate as the usage: OpenLIT's openai instrumentor counts
tokens from the texts (the tool-call turn's output as 0) and writes them as ``gen_ai.usage.*``
without the ``gen_ai.usage.cache_read.input_tokens`` it writes with every usage the API
reported. The spans report tokens; no model call records usage (``openlit.yaml``,
``streamed_chat_usage_estimated``)."""

USAGE_COPIED_BESIDE = frozenset({"openlit-langgraph"})
"""Sources that record each model call's usage twice, on the call's span and on a copy beside
it (OpenLIT's LangGraph instrumentor: a span per model-node run next to the LangChain
instrumentor's spans, not around them): every call is a leaf twice, so the run's usage is
half the leaf total, never the whole."""

NO_MODEL_OUTPUT = frozenset(
    {
        "openllmetry-openai-agents",
        "openllmetry-openai-agents-latest",
        "openllmetry-openai-agents-stream",
        "spring-ai",
        "spring-ai-2",
    }
)
"""Sources whose model spans record the input messages only, or no message at all (Spring AI
writes them to the application log): the final answer is missing (None) even with content
on, never an earlier text."""

CONTENT_NEVER = frozenset({"autogen-native", "griptape", "swiftide"})
"""Sources whose tracer records no content and no model call whatever its switch (autogen-core's
own spans), or none a convention reads (Swiftide's `add_message` spans, messages in their
unescaped Display form): the content-on capture holds what the content-off one does."""

REQUESTS_NEVER_RECORDED = frozenset(
    {"openlit-bedrock", "mistral-openllmetry", "llamaindex-js-openllmetry"}
)
"""Sources whose model calls record the answer text but never the tool calls asked for nor the
tool results handed back, whatever the switch (OpenLIT's Bedrock instrumentor: a Converse
reply's ``toolUse`` blocks become an output message without parts, the input only the first
user text; OpenLLMetry's Mistral instrumentor: a reply's text and finish reason only, and of a
request given as dicts only ``gen_ai.prompt.0.role``; OpenLLMetry JS's LlamaIndex
instrumentation: a streamed call's output is its text alone, the next input's tool results
plain user texts): with content on the tools read as with content off (unnamed, no arguments or
results), the answer as with content on."""

CONTENT_IGNORES_SWITCH = frozenset(
    {
        "voltagent",
        "strands-js",
        "strands-js-latest",
        "agentscope",
        "agentscope-1",
        "any-agent",
        "mirascope",
        "crewai-openllmetry",
        "genkit",
        "genkit-go",
        "eino-apmplus",
        "eino-react-apmplus",
        "openllmetry-js",
        "openllmetry-js-stream",
        "openllmetry-anthropic-js",
        "laminar-openai-agents",
        "laminar-pydantic-ai",
        "agentops-crewai",
        "agentops-openai-agents",
        "agentops-openai",
        "langtrace-langgraph",
        "pipecat",
        "openlit-strands",
        "logfire-openai",
        "logfire-openai-v1",
        "logfire-anthropic",
        "logfire-anthropic-v1",
    }
)
"""Sources whose tracer records messages, arguments and results whatever its content switch
(OpenLLMetry's CrewAI instrumentation ignores ``TRACELOOP_TRACE_CONTENT``, OpenLLMetry JS's
LangChain instrumentation ``traceContent: false``, as does its Anthropic one (the
``withAgent`` / ``withTool`` spans obey it: a tool span's empty result is read from the
next model call's input), Laminar's OpenAI Agents SDK processor
``LMNR_TRACE_CONTENT=false``, as does pydantic-ai's own instrumentation, which Laminar turns on
with content; Genkit and Logfire's client instrumentations have no switch;
OpenLIT's switch governs only what OpenLIT adds to
Strands' spans, not Strands' own message events): the content-off capture holds everything the
content-on one does."""

UNNAMED_FAILED_CALLS = frozenset({"openllmetry-js", "openllmetry-js-stream"})
"""Tool spans named after the tool's class, the tool's own name only in the ToolMessage it
returned (OpenLLMetry JS's LangChain instrumentation): a call that raised has no output, so
its name is unknown (``None``), never guessed."""

FAILED_CALLS_SPANLESS = frozenset({"openllmetry-openai-js"})
"""A tool that threw leaves no span (OpenLLMetry JS 0.27's ``withTool`` ends a span only when
the function returns or its promise resolves): with content off each model turn whose
requests all failed reads as one unnamed call of unknown outcome (a turn placeholder), the
calls that succeeded as their spans; with content on the failed calls are the model's
requests, named, their error the result handed back."""

ANSWER_WITHOUT_CONTENT = frozenset(
    {
        "openlit-langgraph",
        "openlit-create-agent",
        "openlit-smolagents",
        "openlit-langchain-retriever",
        "beeai-js-openinference",
    }
)
"""Sources whose tracer records the run's final answer whatever its content switch (OpenLIT's
LangGraph instrumentor: the graph's output messages on its ``invoke_workflow`` span; OpenLIT's
chat spans: the arguments of smolagents' ``final_answer`` call, the answer's channel): with
content off the answer is the real one, never an invented one; arguments and results stay
missing."""

RAISED_WITHOUT_OUTPUT = frozenset({"laminar-openai", "azure-ai-agents"})
"""Of ``TOOL_IO_WITHOUT_CONTENT``: a tool that raised leaves no output on its span (Laminar's
``@observe`` records the exception as the span's status and message; the Azure AI Agents SDK's
``@trace_function`` an ``exception`` event and ``error.type``): the error the model was handed
is only in the next call's input (the output posted to the agents service, with content on),
which content off hides."""
AGENTS_UNSEEN = frozenset(
    {
        "haystack-openllmetry",
        "openlit-haystack",
        "openlit-ag2",
        "langtrace-langgraph",
        "mirascope",
        "laminar-openai",
        "praisonai-openinference",
        "camel-openinference",
        "langroid-openinference",
        "langroid-text-tools-openinference",
    }
)
"""Sources where no span shows any agent (OpenLLMetry and OpenLIT record Haystack's generators,
not its Agent; OpenLIT's AG2 turn spans are no agent runs; Laminar's agents are ``@observe()``
functions, spans that only group; PraisonAI and CAMEL have no tracing of their own, the model
client's instrumentation records model calls only): no handoff is seen, and an agent used as a
tool is a plain tool call."""

ANSWER_READS_AS_CALL = frozenset(
    {
        "haystack-openllmetry",
        "openlit-ag2",
        "openlit-haystack",
        "praisonai-openinference",
        "camel-openinference",
        "langroid-openinference",
        "langroid-text-tools-openinference",
    }
)
"""With content off, the research agent's answer followed by its caller's next model call
reads as one more (unnamed) call content off hid (both agents' model calls are siblings in
one run: nothing shows where one agent's turns end)."""

TOOLS_IN_TEXT = frozenset({"openlit-dspy"})
"""DSPy ReAct with no DSPy instrumentor (OpenLIT records only the LiteLLM calls): the tools
are named only in the model's reply text and no span records them, so each ReAct step is a
call of an unnamed tool (``dspy.yaml``), with no arguments, result or outcome; with content
off the ``finish`` step cannot be told from a tool step and reads as one more such call."""

TOOL_REQUESTS_IN_TEXT = frozenset({"langroid-text-tools-openinference"})
"""Tools asked for in the reply text and run by the framework with no span (Langroid's default
tool mode: ``{"request": "search_docs", ...}`` in the text, the result handed back as a user
message; no ``tools`` in the request, no ``tool_calls``, finish reason ``stop``). With content
on the mapper reads each request from the text (``mapping/_text_requests.py``): one named
synthesized call per request, with its arguments, no result and an unknown outcome (a request
written is not a call made; ``requested_in_text``). With content off there is no text: each
reply the loop answered with another model call is one unnamed placeholder call
(``tool_calls_hidden``), one per model turn however many calls it asked for, and the research
agent's answer, followed by its caller's next model call, reads as one more
(``ANSWER_READS_AS_CALL``)."""

REPR_RESULTS = frozenset({"openlit-ag2"})
"""Sources whose tool results reach the model, and so the trace, as the return value's
``str()`` (AG2 Classic's tool executor): a Python-repr text, not a JSON object."""

UNQUOTED_RESULTS = frozenset({"llamaindex-js-openllmetry-openai"})
"""Sources whose tool results reach the model with every double quote stripped (LlamaIndex.TS's
``stringifyJSONToMessageContent``: ``{\\documents\\:[],...}``): a text no parser reads as JSON."""

NAMELESS_AGENTS = frozenset(
    {"haystack-openinference", "haystack-native", "spring-ai", "spring-ai-2", "griptape", "burr"}
)
"""Sources where no span names any agent and an agent used as a tool is seen only as a nested
agent run: the delegation is seen, both of its ends are missing evidence."""

STRINGS_STRIPPED = frozenset({"langtrace-langgraph"})
"""Sources whose tracer strips every string it records (Langtrace's LangChain spans: its
``clean_empty`` drops empty values and strips the rest): arguments are compared with their
strings stripped, as recorded (a file's trailing newline is not in the trace)."""


def as_recorded(source: str, value: Any) -> Any:
    """``value`` as the source's tracer records it (``STRINGS_STRIPPED``: strings stripped)."""
    if source not in STRINGS_STRIPPED:
        return value
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return {k: as_recorded(source, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_recorded(source, v) for v in value)
    return value


NAMES_NEVER = frozenset({"griptape"})
"""Sources whose tool spans never record the tool's name, content or not (Griptape's spans are
named after the tool's Python class, not the name the model called): every call is unnamed,
with no redaction to show for it."""

OUTCOMES_UNKNOWN = frozenset({"mirascope"})
"""Sources whose tool results cannot tell a failure from a success (Mirascope hands the model a
raised exception's bare message and records no error flag): every call's outcome is unknown
(``unset``, ``attributes.outcome_unknown``) though its result is seen."""

RESULTS_UNSEEN = frozenset({"langtrace-dspy", "openlit-cohere"})
"""Sources where no span records a tool's run, only the decision to call it with its
arguments (Langtrace's DSPy instrumentation: a ReAct step's prediction, kept whatever the
content switch; OpenLIT's Cohere instrumentor, which leaves a tool message of Cohere document
blocks out of the recorded input): results are missing and outcomes unknown (``unset``) in
both modes."""

HTTP_ONLY = frozenset({"openai-go-otelhttp", "langchain4j-javaagent"})
"""The model SDK's HTTP client traced by OpenTelemetry's generic HTTP instrumentation alone
(``otelhttp`` in Go, inside the application's own span; the OpenTelemetry Java agent's
``java-http-client`` under LangChain4j, each request its own trace): one HTTP client span per
model request, no GenAI attribute, no message, no tool. Each request is an ``other`` step
(``generic-clients.yaml``, which keeps where it went) and the trace holds no agent run: it is
no subject for contracts, neither a passing nor a failing run (``grade`` reports that nothing
was graded, exit code 2)."""

USAGE_KEYS = (
    (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
        "llm.usage.prompt_tokens",
    ),
    (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
        "llm.usage.completion_tokens",
    ),
)
JSON_USAGE = {
    "langfuse.observation.usage_details": (
        ("prompt_tokens", "input"),
        ("completion_tokens", "output"),
    ),
    "mlflow.chat.tokenUsage": (("input_tokens",), ("output_tokens",)),
    "langsmith.metadata.usage_metadata": (("input_tokens",), ("output_tokens",)),
}
"""Usage recorded as one JSON object per span (Langfuse: the provider's keys, or its own
``input`` / ``output``; MLflow; the LangSmith SDK's copy of LangChain's usage metadata,
kept when its payloads are hidden): attribute -> the keys of input and output tokens."""

REPLY_USAGE = "haystack.agent.step.llm.output"
"""Haystack's own tracer: a model call's usage is only in its reply's ``meta``, in the output
payload (``{"replies": [{"meta": {"usage": {...}}}]}``)."""
GENKIT_MODEL = ("genkit:metadata:subtype", "model")
"""Genkit: a model action's usage is only in its output payload (``genkit:output``:
``{"usage": {"inputTokens", "outputTokens"}}``); the ``generate`` spans around it repeat a
turn's usage in theirs, so only model actions count."""


ACCOUNTING = ("ag2.span.type", "usage")
"""AG2's ``record_usage`` spans: accounting records that repeat the usage of a model call's own
``chat`` span (or roll up a sub-agent's), not a model call's usage."""


TURN_ESTIMATE = "gen_ai.agent.message_type"
"""OpenLIT's AG2 turn spans (generate_reply / send / receive): token counts OpenLIT estimates
from the turn's message text, no model call's usage (the model calls are its openai
instrumentor's spans)."""


def span_usage(attributes: Any) -> tuple[int, int] | None:
    """A span's own (input, output) token counts, from flat keys or a JSON usage object."""
    if attributes.get(ACCOUNTING[0]) == ACCOUNTING[1] or TURN_ESTIMATE in attributes:
        return None
    if any(k in attributes for k in USAGE_KEYS[0]):
        return (
            next(int(attributes[k]) for k in USAGE_KEYS[0] if k in attributes),
            next(int(attributes[k]) for k in USAGE_KEYS[1] if k in attributes),
        )
    if REPLY_USAGE in attributes:
        usage = json.loads(attributes[REPLY_USAGE])["replies"][0]["meta"]["usage"]
        return int(usage["prompt_tokens"]), int(usage["completion_tokens"])
    if attributes.get(GENKIT_MODEL[0]) == GENKIT_MODEL[1]:
        usage = json.loads(attributes["genkit:output"])["usage"]
        return int(usage["inputTokens"]), int(usage["outputTokens"])
    for key, (inp, out) in JSON_USAGE.items():
        if key in attributes:
            usage = json.loads(attributes[key])
            return (
                next(int(usage[k]) for k in inp if k in usage),
                next(int(usage[k]) for k in out if k in usage),
            )
    return None


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


def read(case_files: list[Any]) -> tuple[list[Trace], list[InputProblem]]:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(f) for f in case_files], problems))
    return traces, problems


def leaf_usage(traces: list[Trace]) -> tuple[int, int]:
    """Independent token count: spans reporting usage with no descendant that reports it."""
    totals = [0, 0]
    for trace in traces:
        has_usage = {s.span_id for s in trace.spans if span_usage(s.attributes) is not None}
        parents = {s.span_id: s.parent_span_id for s in trace.spans}
        covered: set[str] = set()
        for span_id in has_usage:
            parent = parents.get(span_id)
            while parent:
                covered.add(parent)
                parent = parents.get(parent)
        for span in trace.spans:
            usage = span_usage(span.attributes)
            if usage is not None and span.span_id not in covered:
                totals[0] += usage[0]
                totals[1] += usage[1]
    return totals[0], totals[1]


def tool_mismatches(
    trajs: list[Trajectory], scenario: Scenario, content: bool, source: str = ""
) -> list[str]:
    """What differs between the mapped tool calls and EXPECTED.md (empty = all good)."""
    calls = scenario_tool_calls(trajs, scenario, source, content)
    expected = scenario.calls
    problems = []
    want = scenario.model_turns_with_calls if turn_placeholders(calls, content) else len(expected)
    if len(calls) != want:
        problems.append(f"{len(calls)} tool calls mapped, {want} expected")
    names = [s.tool for s in calls]
    want = [c.tool if c.ok or source not in UNNAMED_FAILED_CALLS else None for c in expected]
    if content and names != want:
        problems.append(f"tool order {names} != {want}")
    for step, exp in zip(calls, expected, strict=False):
        want_arguments = as_recorded(source, exp.arguments)
        if content and step.arguments != want_arguments:
            problems.append(f"step {step.index} arguments {step.arguments} != {want_arguments}")
    return problems


def turn_placeholders(calls: list[Step], content: bool) -> bool:
    """Whether the mapped calls only show that model turns requested calls (a finish reason,
    content off): then one unnamed call stands for each such turn, however many calls it
    requested, and the count to expect is the scenario's model turns with calls."""
    return not content and bool(calls) and all(s.synthesized and s.tool is None for s in calls)


HANDOFF_TOOL_RUNS = frozenset({"livekit-agents"})
"""Sources whose handoff is a function tool the application writes and names (LiveKit Agents:
a tool returning another ``Agent``), run and traced like any tool, after which the framework
records the handoff in a span of its own (``update_agent``). The transfer tool is a tool call
(its name is the application's word, never read as a handoff); the handoff step comes from
the framework's span. EXPECTED.md lists no transfer among the tools: they are left out here."""


CALLER_UNSEEN = frozenset({"atomic-agents", "atomic-agents-openinference"})
"""Sources whose application runs an agent's chosen tools outside the agent's spans (Atomic
Agents: ``invoke_agent`` is one structured model turn, the tools run in the application's
loop beside it): the agent a delegation tool runs is seen, the agent that asked for it is not.
"""

ANSWER_IN_STEP_OBJECT = frozenset({"atomic-agents", "atomic-agents-openinference"})
"""Sources whose agent answers with the object its output schema defines (Atomic Agents: the
driver's ``AgentStep``, ``{"tool_calls": [], "answer": ...}``), read as the last agent step's
structured answer: the answer checks search the object's JSON text, the answer inside it."""


ANSWER_TOOL_UNDECLARED = frozenset({"livekit-agents"})
"""``r_structured_*`` where the object is delivered through a tool the application names
(LiveKit Agents: an ``AgentTask`` completed from its own function tool, here
``submit_answer``), which no mapping file declares a final-answer tool: the call is the last
tool call, a tool like any other, and no final answer is read (the answer checks are missing
evidence; a user's file declares such a tool in ``final_answer_tools``)."""


HANDOFF_REQUEST_UNNAMED = frozenset(
    {"llamaindex-js-openllmetry", "llamaindex-js-openllmetry-openai"}
)
"""Sources whose native handoff is a tool call that no span runs (LlamaIndex.TS's ``handOff``
tool, requested by the triage agent's first model call): the first call, ``handOff`` where the
model's request is seen and unnamed where it is not (``REQUESTS_NEVER_RECORDED``, content off),
is the transfer, no tool EXPECTED.md lists, and no mapping file reads it as a handoff step."""


HANDOFF_REQUESTS_ONLY = frozenset({"openai-agents-otel-genai", "agency-swarm-otel-genai"})
"""Sources whose native handoffs have no span at all (the OpenAI Agents SDK, and Agency Swarm's
``Handoff`` flow on it, under ``opentelemetry-instrumentation-genai-openai-agents`` 1.3b0,
which drops the SDK's handoff spans): each transfer is only the model's
``transfer_to_<agent>`` request, a call no span runs, and the next agent's run. With content
on the request is named, and read with the agent that starts next it is the handoff step
(``handoff_requests`` in conventions/handoffs.yaml); with content off it is an unnamed call no
span ran, no tool EXPECTED.md lists, and no handoff."""


DELEGATION_UNSEEN = frozenset({"beeai-js-openinference"})
"""The agent a tool ran has no span of its own (OpenInference's BeeAI instrumentation for
JavaScript records its events inside the tool's ``start`` span): the tool is one more call
of the run, as for ``AGENTS_UNSEEN``, the last of the calls."""


def scenario_tool_calls(
    trajs: list[Trajectory], scenario: Scenario, source: str, content: bool
) -> list[Step]:
    """The tool calls EXPECTED.md lists. Where no span shows any agent (``AGENTS_UNSEEN``) the
    research agent, called as a tool, is the first tool call, and no step of the script; with
    content off the research agent's answer, followed by its caller's next model call, reads
    as one more call content off hid (as for providers that end a tool turn like an answer):
    unnamed, it fails closed."""
    calls = all_tool_calls(trajs)
    if source in DELEGATION_UNSEEN and scenario.handoff is not None:
        # Its span is the tool's success event, which ends after the agent it ran.
        tools = [s.tool for s in calls]
        assert tools.count(scenario.handoff_tool) == 1, tools
        calls = [s for s in calls if s.tool != scenario.handoff_tool]
    if not content and scenario.name in CALLED_AGAIN_UNSEEN.get(source, ()):
        hidden = [s for s in calls if s.attributes.get("tool_calls_hidden")]
        assert len(hidden) == 1 and hidden[0].tool is None, hidden
        calls = [s for s in calls if s is not hidden[0]]
    unseen = AGENTS_UNSEEN
    if source in unseen and scenario.handoff is not None:
        assert calls and calls[0].tool in (scenario.handoff_tool, None), calls[:1]
        calls = calls[1:]
        if (not content or source in TOOL_REQUESTS_IN_TEXT) and source in ANSWER_READS_AS_CALL:
            assert calls and calls[-1].tool is None and calls[-1].synthesized
            calls = calls[:-1]
    if scenario.name == "q_turn_limit" and source in LIMIT_REQUEST_PENDING:
        pending = calls[len(scenario.calls) :]
        assert len(pending) <= 1, pending
        for step in pending:  # requested, never run: no outcome, never a result
            assert step.synthesized and step.status == "unset" and step.result is None
            assert step.tool in ("search_docs", None), step.tool
        calls = calls[: len(scenario.calls)]
    if scenario.structured and source in OUTPUT_TOOL_CARRIED_IN_STATE | OUTPUT_TOOL_CARRIED_IN_SPAN:
        extra = calls[len(scenario.calls) :]
        assert len(extra) <= (0 if content else 1), extra  # content off may hide the request
        for step in extra:  # requested by the last model call, run by no span: no outcome
            assert step.synthesized and step.status == "unset" and step.result is None
        calls = calls[: len(scenario.calls)]
    if scenario.structured and source in OUTPUT_TOOL_UNREAD:
        extra = calls[len(scenario.calls) :]
        assert [s.tool for s in extra] == ["SupportAnswer"], extra
        assert extra[0].synthesized and extra[0].status == "unset" and extra[0].result is None
        calls = calls[: len(scenario.calls)]
    if scenario.structured and source in ANSWER_TOOL_UNDECLARED:
        assert calls and calls[-1].tool == "submit_answer", calls[-1:]
        calls = calls[:-1]
    if source in HANDOFF_TOOL_RUNS and scenario.handoff is not None:
        transfers = {f"transfer_to_{agent}" for _, agent in scenario.handoffs}
        calls = [s for s in calls if s.tool not in transfers]
    if source in HANDOFF_REQUEST_UNNAMED and scenario.handoff is not None:
        assert calls and calls[0].tool in ("handOff", None) and calls[0].synthesized, calls[:1]
        calls = calls[1:]
    if source in HANDOFF_REQUESTS_ONLY and scenario.handoff is not None and not content:
        requests = [s for s in calls if s.synthesized and s.tool is None]
        assert len(requests) == len(scenario.handoffs), requests
        calls = [s for s in calls if not (s.synthesized and s.tool is None)]
    if source in FRAGMENTED and scenario.handoff is not None:
        # The transfer is only the workflow's ``handoff`` tool, requested by the first
        # model call (unnamed with content off): no step runs it in any fragment.
        assert calls and calls[0].tool in ("handoff", None) and calls[0].synthesized
        calls = calls[1:]
    return calls


def all_tool_calls(trajs: list[Trajectory]) -> list[Step]:
    """The work the agents did: final-answer tool calls (smolagents' ``final_answer``) are the
    answer's channel, checked against EXPECTED.md's final answer, not tools it lists."""
    answering = {id(s) for t in trajs for s in final_answer_calls(t)}
    return [s for t in trajs for s in t.tool_calls() if id(s) not in answering]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_real_trace_maps_to_expected_trajectory(case: Case, conventions: ConventionSet) -> None:
    traces, problems = read(case.files)
    assert problems == [], f"{case.id}: decoding problems {problems}"
    assert traces, f"{case.id}: no trace read from {case.files}"
    trajs = [map_trace(t, conventions) for t in traces]
    if case.source in HTTP_ONLY:
        steps = [s for t in trajs for s in t.steps]
        assert steps and all(s.kind == StepKind.OTHER for s in steps)
        assert all(s.attributes.get("http.request.method") == "POST" for s in steps)
        assert all(str(s.attributes.get("url.full")).endswith("/chat/completions") for s in steps)
        assert [t.unmapped_spans for t in trajs] == [{}] * len(trajs)
        assert not any(holds_agent_run(t) for t in trajs)
        return
    # A build-time trace (OpenLLMetry's create_agent when LangGraph compiles a graph) holds no
    # run: it is no subject, and the run is the other trace of the file.
    runs = [i for i, t in enumerate(trajs) if holds_agent_run(t)]
    traces, trajs = [traces[i] for i in runs], [trajs[i] for i in runs]
    # Calls requested together may be recorded in any order: compare in the order mapped.
    if case.source in TOOL_NAMES_UNRECORDED:
        calls = [s for t in trajs for s in t.steps if s.is_tool and s.tool != "final_answer"]
        assert calls and all(s.tool is None for s in calls), "no tool is named"
        assert [g for t in trajs for g in t.generations()] == [], "no model call recorded"
        if case.content:
            assert all(s.arguments is not None for s in calls)
            assert all(s.result is not None for s in calls if s.status != "error")
        else:
            assert all(s.arguments is None and s.result is None for s in calls)
        return
    if case.scenario.name == "q_turn_limit" and case.source in LIMIT_LAST_RESULT_UNSEEN:
        assert len(trajs) == 1
        calls = all_tool_calls(trajs)
        want = case.scenario.calls if case.content else case.scenario.calls[:-1]
        assert [(s.tool, s.arguments) for s in calls] == [
            (c.tool, c.arguments) if case.content else (None, None) for c in want
        ]
        assert calls[-1].status == "unset" and calls[-1].result is None
        assert _final_output(trajs) is None
        return
    if case.source in TEAM_FRAGMENTED and case.scenario.handoff is not None:
        assert len(trajs) >= 2, f"{case.id}: each model call is its own trace"
        roots = {g.source.span_id for t in trajs for g in t.generations() if g.source}
        assert all(t.root_span_id in roots for t in trajs), "every root is a model call"
        assert [h for t in trajs for h in t.handoffs()] == [], "no agent, so no handoff"
        return
    scenario = case.scenario.in_order_of([(s.tool, s.arguments) for s in all_tool_calls(trajs)])
    fragments = case.variant.endswith(".noroot") or case.source in FRAGMENTED
    if case.variant.endswith(".noroot"):
        assert len(trajs) == 2, "noroot: each chat call is its own trace"
    elif case.source in FRAGMENTED:
        assert len(trajs) >= 2, f"{case.id}: each model call is its own trace"
        order = sorted(
            range(len(trajs)), key=lambda i: min(s.start_ns or 0 for s in trajs[i].steps)
        )
        traces, trajs = [traces[i] for i in order], [trajs[i] for i in order]
        roots = {g.source.span_id for t in trajs for g in t.generations() if g.source}
        assert all(t.root_span_id in roots for t in trajs), "every root is a model call"
    elif case.source in TURNS_APART and case.scenario.name == "p_second_turn":
        assert len(trajs) == 2, f"{case.id}: one trace per user turn"
        order = sorted(
            range(len(trajs)), key=lambda i: min(s.start_ns or 0 for s in trajs[i].steps)
        )
        traces, trajs = [traces[i] for i in order], [trajs[i] for i in order]
    else:
        assert len(trajs) == 1, f"{case.id}: expected one trace, got {len(trajs)}"

    content = (case.content or case.source in CONTENT_IGNORES_SWITCH) and (
        case.source not in CONTENT_NEVER | REQUESTS_NEVER_RECORDED
    )
    if case.source in UNKNOWN_CALL_UNSEEN:
        scenario = replace(scenario, calls=[c for c in scenario.calls if not unknown(c)])
    if case.source in REJECTED_ARGUMENTS_UNRECORDED:
        scenario = replace(
            scenario,
            calls=[replace(c, arguments=None) if rejected(c) else c for c in scenario.calls],
        )
    calls = scenario_tool_calls(trajs, scenario, case.source, content)
    if case.source in TOOLS_IN_TEXT:
        assert len(calls) == len(scenario.calls) + (0 if content else 1)
        for step in calls:
            assert step.tool is None and step.synthesized and "tool" in step.redacted
            assert step.arguments is None and step.result is None and step.status == "unset"
        answer = _final_output(trajs)
        assert scenario.final_answer in (answer or "") if content else answer is None
        inp, out = (sum(x) for x in zip(*(t.token_usage() for t in trajs), strict=True))
        assert (inp, out) == leaf_usage(traces), "tokens double counted or lost"
        return
    if case.source in TOOL_REQUESTS_IN_TEXT:
        calls = scenario_tool_calls(trajs, scenario, case.source, content)
        if content:  # each request read from the text: named, never run by a span
            assert [s.tool for s in calls] == [c.tool for c in scenario.calls], calls
            for step, exp in zip(calls, scenario.calls, strict=True):
                assert step.synthesized and step.attributes.get("requested_in_text")
                assert step.arguments == exp.arguments, step.index
                assert step.status == "unset" and step.result is None, step.index
        else:
            assert len(calls) == scenario.model_turns_with_calls, calls
            for step in calls:
                assert step.tool is None and step.synthesized and "tool" in step.redacted
                assert step.attributes.get("tool_calls_hidden") and step.status == "unset"
        answer = _final_output(trajs)
        if content and not scenario.cut:
            assert answer == scenario.final_answer
        else:  # the fragment of a cut-off answer is no answer
            assert answer is None
        inp, out = (sum(x) for x in zip(*(t.token_usage() for t in trajs), strict=True))
        assert (inp, out) == leaf_usage(traces), "tokens double counted or lost"
        return
    if any(denied(c) for c in scenario.calls):
        # An approval step refused a call (w_*_denied): the tool never ran. Where the refusal
        # handed to the model is seen and tied to the call, the call is denied (failed, with
        # attributes.denied, the refusal its result); otherwise it is never read as a denial,
        # and never as a success with a result either.
        answer = _final_output(trajs)
        assert answer == (scenario.final_answer if content else answer)
        seen = [s for s in calls if s.tool is not None or content]
        by_tool = {s.tool: s for s in seen}
        for exp in scenario.calls:
            step = by_tool.get(exp.tool)
            if step is None:
                assert not content, f"{exp.tool}: not mapped"
                continue
            if not denied(exp):
                assert not step.attributes.get("denied"), step.index
                continue
            if content and case.source not in DENIAL_UNTIED | DENIAL_UNSEEN:
                assert step.status == "error" and step.attributes.get("denied"), step.index
                assert DENIAL_TEXT.search(f"{step.error_message} {step.result}"), step.index
            else:
                assert step.result is None and not step.attributes.get("denied"), step.index
        return
    if scenario.name == "t_invalid_args" and case.source in REJECTED_REQUEST_UNTIED and content:
        assert [s.tool for s in calls] == ["search_docs", "search_docs"]
        refused, ran = calls
        assert refused.synthesized and refused.status == "unset" and refused.result is None
        assert refused.arguments == scenario.calls[0].arguments  # its own request's (``q``)
        assert not ran.synthesized and ran.status == "ok" and "doc-42" in json.dumps(ran.result)
        assert ran.arguments == scenario.calls[1].arguments
        assert _final_output(trajs) == scenario.final_answer
        return
    if not content and case.source not in NAMES_KEPT_WITHOUT_CONTENT and not calls:
        # Streamed calls without content record no finish reason either (openai-v2-latest
        # h_coding_agent): nothing shows that tools ran, and nothing pretends they did not.
        gens = [g for t in trajs for g in t.generations()]
        assert all(g.output_messages is None and g.finish_reasons is None for g in gens)
        return
    if (
        not content
        and case.source in FAILED_CALLS_SPANLESS
        and not all(c.ok for c in scenario.calls)
    ):
        assert [s.tool for s in calls if not s.synthesized] == [
            c.tool for c in scenario.calls if c.ok
        ]
        holes = [s for s in calls if s.synthesized]
        assert holes and all(
            s.tool is None and s.status == "unset" and s.result is None for s in holes
        )
        assert _final_output(trajs) is None
        return
    assert tool_mismatches(trajs, scenario, content, case.source) == []

    # Outcomes: failures are visible from spans, or from the error sent back to the model.
    # An unnamed call standing for a model turn's requests (``turn_placeholders``) shows none.
    placeholders = turn_placeholders(calls, content)
    for step, exp in zip(calls, scenario.calls, strict=not placeholders):
        if placeholders:
            assert step.status == "unset", f"step {step.index}: no evidence of the outcome"
        elif case.source in RESULTS_UNSEEN:
            assert step.status == "unset" and step.result is None, f"step {step.index}"
        elif case.source in OUTCOMES_UNKNOWN:
            assert step.status == "unset" and step.attributes.get("outcome_unknown"), step.index
        elif content or case.source in TOOL_SPAN_SOURCES:
            want = "ok" if exp.ok else "error"
            if fragments:
                want = "unset"  # the result went to the model in another trace
            retrieved = case.source in RETRIEVER_TOOLS and exp.tool == "search_docs"
            if not content and case.source in OK_NOT_SHOWN and not retrieved:
                # An OK span does not show success; a handled failure ends OK too.
                failure_seen = not exp.ok and case.source not in HANDLED_FAILURES
                want = "error" if failure_seen else "unset"
            if case.source in RUN_ERROR_INPUT_UNRECORDED and scenario.name == "o_run_error":
                want = "unset"  # the only call that would carry its result recorded nothing
            if result_in_flight(case.source, scenario.name, calls, step):
                want = "unset"
            if not content and case.source in FAILED_SPANS_BLANK and not exp.ok:
                want = "unset"
            if (
                unknown(exp)
                and case.source not in UNKNOWN_TOOL_SPANNED
                and (not content or case.source in UNKNOWN_ERROR_UNTIED)
            ):
                # No span runs a tool the agent does not have: the request and the error
                # handed back are content, and OpenLIT's tool message has no call id.
                want = "unset"
            if case.source in STATUS_SPREAD and scenario.calls.index(exp) > min(
                (i for i, c in enumerate(scenario.calls) if not c.ok), default=len(calls)
            ):
                want = "error"
            assert step.status == want, f"step {step.index} {step.tool}: {exp.outcome}"
        else:
            assert step.status == "unset", f"step {step.index}: no evidence of the outcome"

    if content:
        named = [s for s, exp in zip(calls, scenario.calls, strict=True)
                 if exp.ok or case.source not in UNNAMED_FAILED_CALLS]  # fmt: skip
        assert all(s.tool for s in named), "content on: every tool call is named"
        for step, exp in zip(calls, scenario.calls, strict=True):
            if fragments or case.source in RESULTS_UNSEEN:
                continue
            if case.source in RUN_ERROR_INPUT_UNRECORDED and scenario.name == "o_run_error":
                assert step.result is None
                continue
            if result_in_flight(case.source, scenario.name, calls, step):
                assert step.result is None
                continue
            result_text = json.dumps(step.result)
            for doc in exp.document_ids:
                assert doc in result_text, f"step {step.index}: {doc} missing from result"
            if case.source in UNQUOTED_RESULTS:
                assert isinstance(step.result, str)
                if "EMPTY" in exp.outcome:
                    assert "\\documents\\:[]" in step.result
                if exp.tool == "delete_records":
                    assert "\\deleted\\:12" in step.result
            elif case.source in REPR_RESULTS:
                assert isinstance(step.result, str)
                if "EMPTY" in exp.outcome:
                    assert "'documents': []" in step.result
                if exp.tool == "delete_records":
                    assert "'deleted': 12" in step.result
            else:
                result = structured(step.result)  # an MCP tool's text block, decoded
                if "EMPTY" in exp.outcome and case.source in RETRIEVER_TOOLS:
                    # No documents: the retrieval's empty list, or the tool's empty result
                    # (LlamaIndex's RetrieverTool; OpenInference records no empty list there).
                    empty = step.documents == [] or step.attributes.get("result_empty")
                    assert empty, f"step {step.index}: no documents retrieved"
                elif "EMPTY" in exp.outcome:
                    assert isinstance(result, dict) and result.get("documents") == []
                if exp.tool == "delete_records":
                    assert isinstance(result, dict) and result.get("deleted") == 12
            if not exp.ok and case.source not in GENERIC_ERROR_TEXT:
                detail = f"{step.error_message} {step.result}"
                if rejected(exp):
                    assert REJECTED_DETAIL.search(detail), detail
                elif unknown(exp) and case.source in UNKNOWN_ERROR_UNTIED:
                    assert step.result is None and step.error_message is None, detail
                elif unknown(exp):
                    assert UNKNOWN_DETAIL.search(detail), detail
                else:
                    assert "upstream search service timed out" in detail, detail
        want_answer = None if case.source in NO_MODEL_OUTPUT else scenario.final_answer
        if scenario.structured and case.source in OUTPUT_TOOL_UNREAD:
            want_answer = None
        if scenario.name == "q_turn_limit" and case.source in LIMIT_ANSWER_UNRECORDED:
            want_answer = None
        if case.source in STATUS_SPREAD and not all(c.ok for c in scenario.calls):
            want_answer = None
        if scenario.structured and case.source in ANSWER_TOOL_UNDECLARED:
            want_answer = None
        if scenario.name.startswith("v_reasoning") and case.source in THOUGHTS_AS_TEXT:
            want_answer = None
        if scenario.cut and case.source not in CUT_UNRECORDED:
            want_answer = None  # the fragment of a cut-off answer is no answer
        if want_answer is not None and case.source in ANSWER_IN_STEP_OBJECT:
            want_answer = json.dumps({"tool_calls": [], "answer": want_answer})
        assert _final_output(trajs) == want_answer
    else:
        for step in calls:
            if case.source in ARGUMENTS_WITHOUT_CONTENT | TOOL_IO_WITHOUT_CONTENT:
                assert step.arguments == scenario.calls[calls.index(step)].arguments
            else:
                assert step.arguments is None, f"content off: step {step.index} args invented"
            if case.source in TOOL_IO_WITHOUT_CONTENT:
                if not (case.source in RAISED_WITHOUT_OUTPUT and step.status == "error"):
                    assert step.result is not None, f"content off: step {step.index} result lost"
            else:
                assert step.result is None, f"content off: step {step.index} result invented"
        if case.source in NAMES_KEPT_WITHOUT_CONTENT:
            names = [c.tool for c in scenario.calls]
            if scenario.name == "t_invalid_args" and case.source in REJECTED_REQUEST_UNTIED:
                # The refused call is the failed step's span, which names no tool.
                names = [None if rejected(c) else c.tool for c in scenario.calls]
            if case.source not in UNKNOWN_NAMED_WITHOUT_CONTENT:
                # A made-up tool's call is only the model's request, whose names are content.
                pairs = zip(scenario.calls, names, strict=True)
                names = [None if unknown(c) else name for c, name in pairs]
            assert [s.tool for s in calls] == names
        else:
            never = case.source in NAMES_NEVER  # no name to redact: none is ever recorded
            assert all(s.tool is None and ("tool" in s.redacted or never) for s in calls), (
                "tool names are not captured: they must be missing, not guessed"
            )
        leaked = case.source in ANSWER_WITHOUT_CONTENT | LAST_CALL_ONLY or (
            case.content and case.source in REQUESTS_NEVER_RECORDED
        )
        if (scenario.structured and case.source in OUTPUT_TOOL_UNREAD) or scenario.cut:
            leaked = False
        assert _final_output(trajs) == (scenario.final_answer if leaked else None)

    # Handoffs: one step per transfer EXPECTED.md lists (the triage agent to the research
    # agent, and back where the script hands back), in order; not a tool call.
    handoffs = [h for t in trajs for h in t.handoffs()]
    got = [(h.from_agent, h.to_agent) for h in handoffs]
    if case.source in (
        AGENTS_UNSEEN | FRAGMENTED | DELEGATION_UNSEEN | HANDOFF_REQUEST_UNNAMED
    ) or (case.source in HANDOFF_REQUESTS_ONLY and not case.content):
        assert handoffs == []
    elif scenario.handoff is not None and case.source in NAMELESS_AGENTS:
        assert got == [(None, None)] * len(scenario.handoffs)
    elif scenario.handoff is not None and case.source in UNNAMED_AGENTS:
        target_seen = content or case.source in ARGUMENTS_WITHOUT_CONTENT
        assert got == [(None, b if target_seen else None) for _, b in scenario.handoffs]
    elif scenario.handoff is not None and case.source in TARGET_IN_ARGUMENTS and not content:
        assert got == [(a, None) for a, _ in scenario.handoffs]
    elif scenario.handoff is not None and case.source in CALLER_UNSEEN:
        assert got == [(None, b) for _, b in scenario.handoffs]
    elif scenario.handoff is not None:
        assert got == scenario.handoffs
    else:
        assert handoffs == []

    # Tokens: leaf model calls only (agent spans repeat the totals).
    if case.source in LAST_CALL_ONLY:
        assert [t.token_usage() for t in trajs] == [(None, None)] * len(trajs)
        assert all(n > 0 for n in leaf_usage(traces)), "the merged span reports a call's usage"
    elif case.source in AGENT_USAGE_ONLY:
        # Each agent span reports its run's totals; no model call reports its own usage, and
        # an agent's total is never taken for a model call's.
        assert [t.token_usage() for t in trajs] == [(None, None)] * len(trajs)
        assert all(n > 0 for n in leaf_usage(traces)), "the agent spans report usage"
    elif (gens := [g for t in trajs for g in t.generations()]) and all(
        g.status == "error" or "error" in (g.finish_reasons or []) for g in gens
    ):
        # Every model call failed, by its status or by its finish reason on an OK span
        # (Mastra's), as in ``u_model_retry`` where nothing retried the first request: no
        # call answered, so none reports usage, and none is invented.
        assert [t.token_usage() for t in trajs] == [(None, None)] * len(trajs)
        assert leaf_usage(traces) == (0, 0), "no span reports usage"
    elif case.source in USAGE_ESTIMATED:
        assert [t.token_usage() for t in trajs] == [(None, None)] * len(trajs)
        assert leaf_usage(traces) != (0, 0), "the tracer wrote its estimate"
    elif case.source in NO_TOKENS or (case.source in USAGE_IS_CONTENT and not content):
        assert [t.token_usage() for t in trajs] == [(None, None)] * len(trajs)
        assert leaf_usage(traces) == (0, 0), "no span reports usage"
    else:
        inp, out = (sum(x) for x in zip(*(t.token_usage() for t in trajs), strict=True))
        copies = 2 if case.source in USAGE_COPIED_BESIDE else 1
        want = (inp * copies, out * copies)
        if copies == 2 and scenario.name == "q_turn_limit":
            # The model node's copy of the last call has no usage: the node returned the
            # prebuilt agent's own text in place of the model's reply, without usage.
            last = _last_model_call(trajs)
            want = (want[0] - (last.input_tokens or 0), want[1] - (last.output_tokens or 0))
        if scenario.structured and case.source in STRUCTURED_CALL_LEAVES:
            # The call asking for the output type is a leaf as often as the source records it.
            last = _last_model_call(trajs)
            extra = STRUCTURED_CALL_LEAVES[case.source][0 if case.content else 1] - copies
            want = (
                want[0] + extra * (last.input_tokens or 0),
                want[1] + extra * (last.output_tokens or 0),
            )
        assert want == leaf_usage(traces), "tokens double counted or lost"

    # Coding trajectory: AgentBench file edits and commands.
    if scenario.name == "h_coding_agent" and (content or case.source in NAMES_KEPT_WITHOUT_CONTENT):
        kinds = [s.kind for s in calls]
        assert kinds == [StepKind.FILE_EDIT, StepKind.FILE_EDIT, StepKind.COMMAND, StepKind.COMMAND]
        if content and fragments:
            edits = [(p, c) for t in trajs for _, p, c in t.file_edits()]
            assert edits == [
                (e.arguments["path"], e.arguments["content"]) for e in scenario.calls[:2]
            ]
            commands = [c for t in trajs for c in t.commands()]
            assert commands == [e.arguments["command"] for e in scenario.calls[2:]]
        elif content:
            traj = trajs[0]
            assert [(p, c) for _, p, c in traj.file_edits()] == [
                as_recorded(case.source, (e.arguments["path"], e.arguments["content"]))
                for e in scenario.calls[:2]
            ]
            assert traj.commands() == [e.arguments["command"] for e in scenario.calls[2:]]
            assert traj.touched_file("tests/test_calc.py")
            assert [v.pattern for v in traj.find_network_violations()][:2] == ["curl", "https://"]


def _last_model_call(trajs: list[Trajectory]) -> Step:
    """The run's model call that started last (the one whose usage the sources record apart)."""
    return max((g for t in trajs for g in t.generations()), key=lambda g: g.start_ns or 0)


def _final_output(trajs: list[Trajectory]) -> str | None:
    outputs = [final_output(t).text for t in trajs]
    found = [o for o in outputs if o is not None]
    return found[-1] if found else None


RAW_CASES = [c for c in CASES if c.raw_files]


@pytest.mark.parametrize("case", RAW_CASES, ids=[c.id for c in RAW_CASES])
def test_raw_export_bodies_map_like_the_canonical_json(
    case: Case, conventions: ConventionSet
) -> None:
    """The request bodies as the exporter sent them (protobuf, or the Node exporter's JSON)
    give the same trajectory as the canonical OTLP/JSON file."""
    canonical, _ = read(case.files)
    raw, problems = read(case.raw_files)
    assert problems == []

    def dump(traces: list[Trace]) -> list[list[dict[str, Any]]]:
        trajs = sorted((map_trace(t, conventions) for t in traces), key=lambda t: t.trace_id or "")
        return [[s.model_dump(mode="json") for s in t.steps] for t in trajs]

    assert dump(raw) == dump(canonical)


def _pydantic_retry_case() -> Case:
    return next(c for c in CASES if c.id == "pydantic-ai/b_tool_retry")


def test_check_detects_wrong_tool_order(conventions: ConventionSet) -> None:
    case = next(c for c in CASES if c.id == "pydantic-ai/d_forbidden_tool")
    traces, _ = read(case.files)
    traj = map_trace(traces[0], conventions)
    steps = list(traj.steps)
    i, j = (s.index for s in traj.tool_calls())
    steps[i], steps[j] = steps[j], steps[i]
    swapped = traj.model_copy(update={"steps": steps})
    assert any("tool order" in p for p in tool_mismatches([swapped], case.scenario, True))


def test_check_detects_lost_argument(conventions: ConventionSet) -> None:
    case = _pydantic_retry_case()
    traces, _ = read(case.files)
    traj = map_trace(traces[0], conventions)
    first = traj.tool_calls()[0]
    steps = [s.model_copy(update={"arguments": {}}) if s is first else s for s in traj.steps]
    lost = traj.model_copy(update={"steps": steps})
    assert any("arguments" in p for p in tool_mismatches([lost], case.scenario, True))


def test_agent_span_usage_is_not_added_to_model_call_usage(conventions: ConventionSet) -> None:
    """pydantic-ai and the Vercel AI SDK put run totals on the agent span: the trajectory
    total equals those totals (summing them too would double every token)."""
    for case_id, keys in (
        ("pydantic-ai/b_tool_retry", ("gen_ai.aggregated_usage.input_tokens",)),
        ("vercel-ai-sdk-otel/b_tool_retry", ("gen_ai.usage.input_tokens",)),
    ):
        case = next(c for c in CASES if c.id == case_id)
        traces, _ = read(case.files)
        traj = map_trace(traces[0], conventions)
        root = traces[0].root
        assert root is not None
        assert traj.token_usage()[0] == root.attributes[keys[0]], case_id
        doubled = sum(s.input_tokens or 0 for s in traj.steps) + root.attributes[keys[0]]
        assert traj.token_usage()[0] != doubled


def test_no_tool_call_is_counted_twice_when_a_tool_span_exists(
    conventions: ConventionSet,
) -> None:
    """pydantic-ai shows each call both in the model output and as an execute_tool span."""
    case = next(c for c in CASES if c.id == "pydantic-ai/c_retry_exhausted")
    traces, _ = read(case.files)
    traj = map_trace(traces[0], conventions)
    assert [s.synthesized for s in traj.tool_calls()] == [False, False, False]
    assert len({s.call_id for s in traj.tool_calls()}) == 3
