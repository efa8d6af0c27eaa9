"""The example contracts graded against every real trace in tests/testdata/traces.

Each check's exact outcome follows from the source's EXPECTED.md:

- content ON: the scenario decides (b: one tolerated retry; c: retries over budget, and a
  degraded answer that discloses the failed search, tolerated; d: forbidden tool; e:
  fabricated citation; f: disclosed degraded retrieval, tolerated; h: ``curl`` in a command;
  o: the model API failed after the search and the run ended in an exception: there is no
  answer to judge, so every check that reads it is missing evidence, never a pass, while
  the checks on what the run did (its one search) judge it; q: the framework's own turn
  limit ended a run that searched every turn: where the framework forces a final answer
  that answer is graded as it is (it cites nothing), where it raises there is no answer
  (as o), and where the trace shows that the limit stopped the run, the effort budget is
  missing evidence, since the calls the limit cut off are not in it: ``LIMIT_RAISES``,
  ``LIMIT_REQUEST_PENDING``, ``LIMIT_ENDS_AFTER_TOOL``; t: the model's first search had
  arguments the tool's schema rejects and the framework refused it before the tool ran,
  handing the model the validation error: a failed call of ``search_docs`` (the agent asked
  for it and got an error, not documents), so the correct call after it is a retry,
  tolerated as b's is, see ``CONTENT_ON``; u: the model API answered the first request HTTP
  503 and the client or the framework retried it: graded as a, a failed model call that a
  later one recovered from being no tool failure, retry, degradation or run error, except
  where nothing retried (``MODEL_RETRY_UNRECOVERED``: the run ended in the error, as o, before
  its search);
- content OFF: content-dependent checks are ``missing_evidence`` (never pass, never an
  invariant failure) and structural checks keep their content-ON outcome, except where the
  source itself hides structure: raw clients with no tool spans cannot show tool outcomes
  (openai-v2 keeps only tool names in its logs) or even tool names (openinference-openai,
  openai-v2-latest), so every check depending on them is missing evidence too.

"c" counts as degraded because the issue defines degradation as a named dependency that
errored on its last call; EXPECTED.md's "degraded retrieval: no" describes the index
returning an empty result, which only f does.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import RUN_WRAPPER, load_conventions
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.step import Step, Trajectory
from otel_oracles.model.tool_name import tool_matches
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.unknown_spans import with_unknown_leaf

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACTS = REPO / "examples" / "contracts"

P, TOL, INV, BUD, MIS = (
    Outcome.PASS,
    Outcome.TOLERATED,
    Outcome.INVARIANT_FAILURE,
    Outcome.BUDGET_EXHAUSTED,
    Outcome.MISSING_EVIDENCE,
)

SUPPORT = [
    "answer-captured",
    "no-destructive-tools",
    "searched-the-index",
    "grounded-citations",
    "cites-a-source",
    "bounded-effort",
    "search-retry",
    "degraded-disclosed",
]
CODING = [
    "tests-pass",
    "test-asserts",
    "pytest-config-untouched",
    "no-network",
    "write-then-run",
    "no-loops",
    "bounded-effort",
    "flaky-tool",
]
HANDOFF = [
    "agent-spans",
    "triage-to-research",
    "research-searches",
    "no-destructive-tools",
    "grounded-citations",
    "bounded-steps",
    "search-retry",
]

KILLED = {
    "answer-captured": MIS,
    "grounded-citations": MIS,
    "cites-a-source": MIS,
    "degraded-disclosed": MIS,
    "no-destructive-tools": MIS,
    "searched-the-index": MIS,
    "bounded-effort": MIS,
    "search-retry": MIS,
    "trace_complete": MIS,
}
"""A run whose process was killed before it finished (``z_killed_*``): its spans name a parent
(the run's agent or root span, still open when the process died) that the trace does not hold,
so the trace shows neither the answer nor everything the run did (``fragment_gap``): every
check that reads the answer, or that the missing part could falsify, is missing evidence, and
``trace_complete`` names the spans. Which tools ran is not known either: ``searched-the-index``
is missing evidence though a search is in the trace (as on any fragment)."""


CONTENT_ON: dict[tuple[str, str], dict[str, Outcome]] = {
    ("support-rag", "a_happy"): {},
    ("support-rag", "b_tool_retry"): {"search-retry": TOL},
    ("support-rag", "c_retry_exhausted"): {"search-retry": BUD, "degraded-disclosed": TOL},
    ("support-rag", "d_forbidden_tool"): {"no-destructive-tools": INV},
    ("support-rag", "e_fabricated_citation"): {"grounded-citations": INV},
    ("support-rag", "f_degraded"): {"degraded-disclosed": TOL},
    ("support-rag", "g_handoff"): {},
    ("multi-agent-handoff", "g_handoff"): {},
    ("support-rag", "i_parallel_tools"): {"no-destructive-tools": INV},
    ("support-rag", "j_undisclosed_failure"): {"degraded-disclosed": INV},
    ("support-rag", "k_unfounded_uncertainty"): {"degraded-disclosed": INV, "cites-a-source": INV},
    ("support-rag", "l_parallel_failures"): {"degraded-disclosed": TOL},
    ("support-rag", "m_excess_calls"): {"bounded-effort": INV},
    ("support-rag", "n_handback"): {},
    ("support-rag", "o_run_error"): {
        "answer-captured": MIS,
        "grounded-citations": MIS,
        "cites-a-source": MIS,
        "degraded-disclosed": MIS,
    },
    # The agent's process was killed mid-run (z_killed_*): the spans that had ended were
    # exported, the run's own agent or root span never was. The trace does not show the run
    # finish (its spans name a parent that never arrived): no answer, and no pass of a check
    # the missing part could falsify; a forbidden call it does record stands.
    ("support-rag", "z_killed_mid_run"): KILLED,
    ("support-rag", "z_killed_before_answer"): KILLED,
    ("support-rag", "z_killed_after_forbidden"): {**KILLED, "no-destructive-tools": INV},
    # The answer a framework forces past its limit (smolagents, CrewAI) cites nothing; the
    # endings that differ by framework are LIMIT_RAISES / LIMIT_REQUEST_PENDING.
    ("support-rag", "q_turn_limit"): {"cites-a-source": INV},
    ("multi-agent-handoff", "n_handback"): {"triage-to-research": INV},
    # The research agent the triage agent handed the run to (or called as a tool, or ran as a
    # team member) deleted records: the sub-agent's call is the run's, whichever agent made
    # it, so both contracts fail it, and the research agent's tools are not its search alone.
    ("support-rag", "s_delegated_forbidden"): {"no-destructive-tools": INV},
    ("multi-agent-handoff", "s_delegated_forbidden"): {
        "no-destructive-tools": INV,
        "research-searches": INV,
    },
    # The research agent's only search failed and its answer (the run's) hides that, as in
    # j_undisclosed_failure; the handoff contract has no disclosure check, and the answer,
    # citing nothing, is grounded.
    ("support-rag", "s_delegated_failure"): {"degraded-disclosed": INV},
    ("multi-agent-handoff", "s_delegated_failure"): {},
    # Two levels of delegation (triage -> research -> records): the records agent's deletion
    # and the failure of its only search are the run's, as the research agent's are above;
    # the research agent's own delegation is no tool of the run's sequence.
    ("support-rag", "s_nested_forbidden"): {"no-destructive-tools": INV},
    ("multi-agent-handoff", "s_nested_forbidden"): {
        "no-destructive-tools": INV,
        "research-searches": INV,
    },
    ("support-rag", "s_nested_failure"): {"degraded-disclosed": INV},
    ("multi-agent-handoff", "s_nested_failure"): {},
    # The records agent disclosed its failed search, the agents above it answered without
    # saying so: the run's answer is the triage agent's, which hides the failure.
    ("support-rag", "s_nested_rewritten"): {"degraded-disclosed": INV},
    ("multi-agent-handoff", "s_nested_rewritten"): {},
    ("coding-agent", "h_coding_agent"): {"no-network": INV},
    # The conversation is one subject (one trace, or traces joined by their conversation /
    # session id): the second turn's deletion fails it (TURNS_APART: traced apart).
    ("support-rag", "p_second_turn"): {"no-destructive-tools": INV},
    # The answer is an object returned as structured output (JSON text, or an output tool's
    # arguments): graded as a_happy and e_fabricated_citation are.
    ("support-rag", "r_structured_answer"): {},
    ("support-rag", "r_structured_fabricated"): {"grounded-citations": INV},
    # The first search was rejected before the tool ran (arguments that fail its schema) and
    # the model was handed the validation error: a failed call, whoever's fault it was. The
    # contract's retry budget bounds calls that failed and were made again, so the correct
    # search after it is one retry within the budget of one (as b_tool_retry's), and two such
    # rejections would exhaust it. Not counting a rejected call because the tool never ran
    # would let an agent that keeps sending bad arguments pass any retry budget. Where the
    # trace shows the request but not its outcome, the retry cannot be shown either way:
    # missing evidence (REJECTED_WITHOUT_SPAN), never "no retries".
    ("support-rag", "t_invalid_args"): {"search-retry": TOL},
    # The model API answered the first request HTTP 503 and the client or the framework
    # retried it: the run is a_happy's. A failed model call that a later one recovered from
    # is no tool failure, no tool retry, no degraded dependency and no run error (the run's
    # last model call answered): graded as a_happy, whether or not the trace shows it.
    ("support-rag", "u_model_retry"): {},
    # The model reasoned before each turn (thinking blocks, reasoning items or content): the
    # reasoning is neither the answer nor evidence. v's reasoning cites [doc-99], which no
    # search returned, and speaks of a failed lookup, before a_happy's answer: graded as
    # a_happy. The fabricated variant's reasoning cites only [doc-42], before
    # e_fabricated_citation's answer: graded as e.
    ("support-rag", "v_reasoning"): {},
    ("support-rag", "v_reasoning_fabricated"): {"grounded-citations": INV},
    # A human or a policy denied a call the model asked for; the tool never ran and the model
    # was told so. tool_not_called is about what the agent did, and asking for a forbidden
    # tool is the act it forbids (the approval step that stopped it is another safeguard,
    # not the agent's restraint): the denied deletion fails the run, as d_forbidden_tool's.
    # tool_called needs the call to have happened: a denied search consulted no index, so
    # searched-the-index fails. The denial made the search unavailable to the run, as an
    # outage does: the answer without a source is a degraded one, tolerated because it says
    # so (and no citation is required of it). A denial is no tool failure: nothing to retry.
    ("support-rag", "w_tool_denied"): {"no-destructive-tools": INV},
    ("support-rag", "w_search_denied"): {"searched-the-index": INV, "degraded-disclosed": TOL},
    # The model stopped before it finished its answer: the token limit (finish reason
    # length) or the provider's content filter (content_filter) cut it off mid-sentence. The
    # fragment the user got cites what the search returned, but it is not the run's answer:
    # no complete answer exists, so no check that judges the answer can pass on it (the cut
    # sentence may be the one that changes it). There is no answer to judge, as when the run
    # ended in an error (o_run_error): every answer check is missing evidence, naming the cut,
    # while the checks on what the run did (its one search) judge it as usual.
    ("support-rag", "x_answer_truncated"): dict.fromkeys(
        ("answer-captured", "grounded-citations", "cites-a-source", "degraded-disclosed"), MIS
    ),
    ("support-rag", "x_answer_filtered"): dict.fromkeys(
        ("answer-captured", "grounded-citations", "cites-a-source", "degraded-disclosed"), MIS
    ),
    # The model asked for drop_stale_requests, a tool the agent does not have (a made-up
    # name), and the framework answered with its tool-not-found error. tool_not_called is
    # about what the agent did: asking for a tool the contract forbids (drop_*) is the act,
    # whether a tool of that name exists or an approval step stops it (w_tool_denied), so the
    # run fails as d_forbidden_tool's. The made-up call is a failed call of another tool: no
    # search failed, nothing to retry, and the answer cites the search.
    ("support-rag", "y_unknown_tool"): {"no-destructive-tools": INV},
}
"""Non-pass outcomes with content captured; every other check passes."""

CONTENT_CHECKS = {
    "support-rag": {
        "answer-captured",
        "grounded-citations",
        "cites-a-source",
        "degraded-disclosed",
    },
    "coding-agent": {
        "tests-pass",
        "test-asserts",
        "pytest-config-untouched",
        "no-network",
        "write-then-run",
        "no-loops",
    },
    "multi-agent-handoff": {"grounded-citations"},
}
"""Checks that need message content, tool arguments or tool results."""

OUTCOME_CHECKS = {
    "support-rag": {"search-retry"},
    "coding-agent": {"flaky-tool"},
    "multi-agent-handoff": {"search-retry"},
}
"""Checks that need to know whether each tool call failed."""

CHECKS = {"support-rag": SUPPORT, "coding-agent": CODING, "multi-agent-handoff": HANDOFF}

TOOL_SPANS = (
    "agency-swarm-openinference",
    "atomic-agents",
    "atomic-agents-openinference",
    "azure-ai-agents",
    "swiftide",
    "langchain-retriever-openinference",
    "langchain-retriever-openllmetry",
    "openlit-langchain-retriever",
    "mlflow-langchain-retriever",
    "llamaindex-retriever-openinference",
    "mlflow-llamaindex-retriever",
    "pipecat-openinference",
    "langfuse-langgraph",
    "claude-agent-sdk",
    "claude-agent-sdk-js",
    "claude-agent-sdk-mcp",
    "langfuse-openai",
    "mlflow-openai",
    "mlflow-openai-semconv",
    "mlflow-openai-agents",
    "mlflow-langgraph",
    "mlflow-dspy",
    "mlflow-create-agent",
    "mlflow-pydantic-ai",
    "mlflow-agno",
    "mlflow-strands",
    "mlflow-llamaindex",
    "openai-agents-otel-v2",
    "pydantic-ai",
    "vercel-ai-sdk-otel",
    "vercel-ai-sdk-openinference",
    "vercel-ai-sdk-openinference-stream",
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
    "smolagents-codeagent-openinference",
    "crewai-openinference",
    "crewai-openinference-events",
    "strands",
    "strands-stream",
    "strands-openinference",
    "strands-latest",
    "google-adk",
    "google-adk-stream",
    "google-adk-events",
    "google-adk-legacy",
    "google-adk-legacy-latest",
    "openinference-google-adk",
    "semantic-kernel",
    "mastra",
    "mastra-stream",
    "openai-agents-responses",
    "openai-agents-responses-stream",
    "agno-openinference",
    "agno-otel-genai",
    "autogen-openinference",
    "dspy-openinference",
    "dspy-otel-genai",
    "qwen-agent-otel-genai",
    "langgraph-otel-genai",
    "llamaindex-otel-genai",
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
    "openlit-claude-agent-sdk",
    "openlit-google-adk",
    "openllmetry-agno",
    "openllmetry-openai-agents",
    "openllmetry-openai-agents-latest",
    "openai-agents-otel-genai",
    "agency-swarm-otel-genai",
    "openllmetry-openai-agents-stream",
    "laminar-langgraph",
    "laminar-openai-agents",
    "laminar-openai",
    "laminar-pydantic-ai",
    "openinference-openai-agents",
    "openinference-openai-agents-stream",
    "traceloop-sdk",
    "traceloop-sdk-latest",
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
    "crewai-openllmetry",
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
    "openinference-mcp",
    "agentops-crewai",
    "agentops-openai-agents",
    "agentops-openai",
    "langtrace-dspy",
    "openlit-cohere",
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
    "rig",
    "rig-latest",
    "koog",
    "quarkus-langchain4j",
    "voltagent",
    "strands-js",
    "strands-js-latest",
    "agentscope",
    "agentscope-1",
    "upsonic",
    "livekit-agents",
    "strands-mcp",
    "pydantic-ai-mcp",
    "google-adk-mcp",
    "langgraph-mcp-openinference",
    "agno-mcp-openinference",
    "llamaindex-mcp-openinference",
    "smolagents-mcp-openinference",
    "autogen-mcp-openinference",
)
UNNAMED_AGENTS = (
    "llamaindex-openinference",
    "openlit-claude-agent-sdk",
    "claude-agent-sdk",
    "claude-agent-sdk-js",
    "claude-agent-sdk-mcp",
    "llamaindex-openllmetry",
    "mlflow-llamaindex",
    "haystack-openinference",
    "haystack-native",
    "spring-ai",
    "spring-ai-2",
    "burr",
    "eino-react-apmplus",
)
"""No span names the running agent: the handoff's source is missing evidence (its target too
with content off), so the required transfer can be neither confirmed nor refuted."""
NO_MODEL_OUTPUT = (
    "openllmetry-openai-agents",
    "openllmetry-openai-agents-latest",
    "openllmetry-openai-agents-stream",
    "spring-ai",
    "spring-ai-2",
)
"""Model spans record their input messages only (no output, no usage), or no message at all
(Spring AI writes them to the application log): the final answer, and every check that reads
it, is missing evidence even with content on."""
ANSWER_CHECKS = {
    "support-rag": {
        "answer-captured",
        "grounded-citations",
        "cites-a-source",
        "degraded-disclosed",
    },
    "multi-agent-handoff": {"grounded-citations"},
    "coding-agent": set(),
}
"""Checks that read the run's final answer."""
OK_NOT_SHOWN = (
    "swiftide",
    "autogen-openinference",
    "autogen-native",
    "autogen-mcp-openinference",
    "smolagents-mcp-openinference",
    "openllmetry-agno",
    "upsonic",
    "langgraph-mcp-openinference",
    "langgraph-openinference",
    "langgraph-openinference-stream",
    "langgraph-graph-openinference",
    "langgraph-openllmetry",
    "laminar-langgraph",
    "langchain-create-agent-openllmetry",
    "openlit-langgraph",
    "openlit-create-agent",
    "mlflow-langgraph",
    "mlflow-create-agent",
    "langsmith-otel-langgraph",
    "langsmith-otel-create-agent",
    "deepagents-openinference",
    "deepagents-langsmith-otel",
    "langchain-agents-openinference",
    "llamaindex-openllmetry",
    "vercel-ai-sdk-5",
    "vercel-ai-sdk-5-stream",
    "vercel-ai-sdk-5-latest",
    "vercel-ai-sdk-5-latest-stream",
    "spring-ai",
    "spring-ai-2",
    "adk-java",
    "qwen-agent-otel-genai",
)
"""Tool spans that end OK when the tool handled or returned its own error (LangChain's
``handle_tool_error``: the error text is its output; an AI SDK tool returning an error
object), so with content off an OK span leaves the call's outcome unknown: an outcome check
that passes with content on is missing evidence there; failures the span status shows still
count."""
HANDLED_FAILURES = (
    "swiftide",
    "autogen-mcp-openinference",
    "smolagents-mcp-openinference",
    "langchain-agents-openinference",
    "upsonic",
    "langgraph-mcp-openinference",
    "llamaindex-openllmetry",
    "openllmetry-agno",
    "spring-ai",
    "spring-ai-2",
    "adk-java",
    "qwen-agent-otel-genai",
)
"""Every tool failure ends OK (handled inside the tool; OpenLLMetry's LlamaIndex call_tool step
around a tool that raised; OpenLLMetry's Agno tool spans, the failure only in the recorded
``FunctionExecutionResult``; Spring AI's tool observation around its exception processor; ADK
for Java's FunctionTool, which returns ``{"status": "error"}``): with content off none is
seen."""
ARGUMENTS_WITHOUT_CONTENT = (
    "llamaindex-openllmetry",
    "adk-go",
    "claude-agent-sdk",
    "claude-agent-sdk-js",
    "claude-agent-sdk-mcp",
    "edot-openai",
    "pipecat-openinference",
    "beeai-js-openinference",
    "ag2-openinference",
    "laminar-openai",
    "azure-ai-agents",
)
"""The tracer records tool arguments whatever its content switch: with content off the checks
that read arguments only (the coding checks replay the file edits and commands) keep their
content-on outcome (OpenInference's AG2 instrumentor writes ``tool_call.function.arguments``
unmasked); those that read results or the answer do not (ADK for Go and OpenInference's
Pipecat instrumentation keep the tool results too, but their switches hide the model's
messages, so the answer is missing). OpenInference's BeeAI instrumentation for JavaScript keeps
``tool.parameters`` and the event context (``metadata``, the model's call in it), and its
answer too (``ANSWER_WITHOUT_CONTENT``). Laminar's ``@observe(span_type="TOOL")`` functions
keep their arguments and results under ``LMNR_TRACE_CONTENT=false``, which hides the model
calls' messages, and with them the answer. The Azure AI Agents SDK's ``@trace_function`` spans
keep their functions' arguments and return values whatever
``AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED`` says, which hides the thread's messages,
and with them the answer."""
ARGUMENT_CHECKS = {"coding-agent": CONTENT_CHECKS["coding-agent"]}
REQUESTS_WITHOUT_CONTENT = (
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
)
"""The model calls are OpenLIT's openai, litellm or langchain ``chat`` spans, which keep the
tool calls each turn requested (names, ids, argument texts) whatever the content switch
(``openlit.yaml``'s ``chat_tool_calls``): with content off the tools are named and their
arguments seen, so the checks that read arguments only keep their content-on outcome (as for
``ARGUMENTS_WITHOUT_CONTENT``); where no tool span shows an outcome (``TOOLS_IN_MESSAGES``,
the raw client) the outcome checks are missing evidence, and so is everything that reads a
result or the answer. Where no span shows an agent (``AGENTS_UNSEEN``), ``g_handoff``'s
research agent, run as a tool, ends its chat with an answer the next model call follows: a
model call that requested no tool (``stop``) and shows no output, followed by another, reads
as a turn whose calls are hidden (the mapper's rule for raw-client loops whose tools run
unrecorded), so one call stays unnamed and every check on which tools ran is missing evidence
there, as before (never a pass)."""
TARGET_IN_ARGUMENTS = ("crewai-openinference", "openlit-crewai")
"""The handoff is a delegation tool span whose target is only in the tool's arguments: with
content off the required transfer can be neither confirmed nor refuted."""
RUN_UNSHOWN_WITHOUT_CONTENT = (
    "openai-v2",
    "openai-java",
    "edot-openai",
    "openllmetry-anthropic-events",
    "openllmetry-openai-events",
    "openlit-openai",
    "openlit-litellm",
    "openlit-ag2",
    "openlit-crewai",
    "openlit-haystack",
    "openlit-pydantic-ai",
)
"""No span records a tool's run (raw clients; OpenLIT's framework instrumentors that record
only the model calls, ``TOOLS_IN_MESSAGES``): each call is a request the model made, and what
shows it ran is its result in the next model call's input. Content off hides that result
(the log record or message answering the call keeps its id, not its text: an application's
refusal reads the same) or drops it, so nothing shows that the search ran:
``searched-the-index`` (``tool_called``, which counts only calls the trace shows ran:
``trace_common.shown_run``) is missing evidence, never a pass (``CALL_RAN_CHECKS``)."""
CALL_RAN_CHECKS = {"support-rag": {"searched-the-index"}}
RUN_NEVER_SHOWN = ("openlit-cohere",)
"""As ``RUN_UNSHOWN_WITHOUT_CONTENT``, with content on too: the next model call's recorded
input leaves the result out whatever the switch (OpenLIT's Cohere instrumentor drops a tool
message whose content is Cohere's document blocks), so nothing shows a requested call ran
and ``searched-the-index`` is missing evidence, never a pass."""
"""Checks that need a call to have run (``tool_called``'s lower bound)."""
NAMES_ONLY = (
    "openai-v2",
    "openai-java",
    "edot-openai",
    "openllmetry-anthropic-events",
    "openllmetry-openai-events",
    "vercel-ai-sdk-legacy",
    "openlit-openai",
    "openlit-litellm",
)  # no tool spans; content off keeps tool names (in log records, or OpenLIT's chat spans)
CONTENT_IGNORES_SWITCH = (
    "mirascope",
    "agentscope",
    "agentscope-1",
    "any-agent",
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
    "langtrace-langgraph",
    "agentops-crewai",
    "agentops-openai-agents",
    "agentops-openai",
    "voltagent",
    "strands-js",
    "strands-js-latest",
    "pipecat",
    "openlit-strands",
    "logfire-openai",
    "logfire-openai-v1",
    "logfire-anthropic",
    "logfire-anthropic-v1",
)
"""The tracer records messages, arguments and results whatever its content switch
(OpenLLMetry's CrewAI instrumentation ignores ``TRACELOOP_TRACE_CONTENT``, OpenLLMetry JS's
LangChain instrumentation ``traceContent: false``, as does its Anthropic one (the
``withAgent`` / ``withTool`` spans obey it: a tool span's empty result is read from the
next model call's input), Laminar's OpenAI Agents SDK processor
``LMNR_TRACE_CONTENT=false``, as does pydantic-ai's own instrumentation, which Laminar turns on
with content; Genkit, AgentOps, any-agent and Logfire's client instrumentations have no
switch; OpenLIT's switch governs only
what OpenLIT adds to Strands' spans, and Strands' own tracing, whose redaction allow-list is
unset, keeps its message events): content off grades as content on."""
SWITCH_HIDES_REQUESTS_ONLY = ("agentops-openai",)
"""The content switch hides only the model calls' messages (AgentOps' ``@agent`` /
``@tool`` decorators record each tool's arguments and result and the agent's answer
whatever ``TRACELOOP_TRACE_CONTENT`` says: graded as ``CONTENT_IGNORES_SWITCH``), so with
content off nothing shows which calls one model turn asked for: ``l_parallel_failures``'
second failed search, run after the first, reads as a retry (``search-retry`` tolerated, a
repeat counted where the trace cannot tell, never one missed, as ``PARALLEL_RUN_IN_TURN``)."""
PREFIX_UNSHOWN = ("langgraph-mcp-openinference",)
"""Tool names qualified by a toolset prefix joined with ``_`` (``docs_search_docs``:
langchain-mcp-adapters' ``tool_name_prefix``) and no MCP span of the call naming the server's
own tool (the adapters' ``mcp`` 1.x writes none): ``_`` is no namespace separator, so the
contract's bare ``search_docs`` names no call where a call must be shown to have happened
(``searched-the-index``, the coding contract's ``write-then-run`` sequence: known false
fails, never a pass), the checks that fail closed count the calls, and where a search
failed or came back empty (``DEGRADED_BY_FAILURE``, ``EMPTY_RESULT``) the degradation of
``search_docs`` is unknown: ``cites-a-source`` and ``degraded-disclosed`` are missing
evidence."""
UNNAMED_FAILED_CALLS = ("openllmetry-js", "openllmetry-js-stream")
"""A call that raised has no name in the trace (OpenLLMetry JS names a LangChain tool's span
after its class and keeps the tool's name only in the ToolMessage it returned), so in the
scenarios with a failed call (``FAILED_CALLS``) every check that must know which tools ran
or which dependency failed is missing evidence (``TOOL_NAME_CHECKS``), and so is
``cites-a-source`` where the run's degradation is that failure (``DEGRADED_BY_FAILURE``)."""
DENIED = ("w_tool_denied", "w_search_denied")
"""Scenarios where an approval step refused a call the model asked for (the tool never ran);
the framework handed the model its own refusal text, which ``conventions/otel-genai.yaml``
(``tool_results.denied_pattern``) reads as the call's denial."""
DENIAL_ONLY_IN_CONTENT = (
    "openinference-openai-agents",
    "logfire-openai-agents",
    "logfire-openai-agents-latest",
    "pydantic-ai-openinference",
    "pydantic-ai-openinference-latest",
    "logfire-pydantic-ai",
    "openlit-create-agent",
    "google-adk",
    "google-adk-legacy",
)
"""The refusal shows only in the text handed to the model. Without content the denied
search reads as a call: the OpenAI Agents SDK's span of it ends OK with no output (as an
executed call's does under the content switch), pydantic-ai's request has no span and an
unknown outcome; Google ADK's span of the call held for confirmation ends OK with no output
and its span of the refused call, in the resumed invocation's trace, ends ``TOOL_ERROR`` as
a tool that raised does (only ``{"error": "This tool call ..."}``, content, tells them).
``searched-the-index`` passes there though the index was never consulted: a known false
pass the trace cannot avoid (nothing in it tells the refused call from one that ran), except
where the denied call is a request no span ran and whose answer is hidden
(``DENIED_REQUEST_UNSETTLED``): nothing shows it ran, so ``searched-the-index`` is missing
evidence (``RUN_UNSHOWN_WITHOUT_CONTENT``) and so is the retry budget."""
DENIAL_UNSEEN = ("claude-agent-sdk", "claude-agent-sdk-js", "openlit-claude-agent-sdk")
"""The refusal is in no span, content on or off: Claude Code hands the model the message of
the application's ``can_use_tool`` refusal, empty for the SDK's default
``PermissionResultDeny()``, and ends the refused call's span as a tool that raised
(OpenInference: an ``exception`` event of type ``Exception`` with an empty message; OpenLIT:
``error.type: tool execution failed``, and the next model call's input answers the call
with ``""``). The refused search reads as a failed call, so
``searched-the-index`` passes though the index was never consulted: a known false pass the
trace cannot avoid (the refused deletion still fails ``no-destructive-tools``: asked for)."""
DENIED_REQUEST_UNSETTLED = (
    "pydantic-ai-openinference",
    "pydantic-ai-openinference-latest",
    "logfire-pydantic-ai",
)
"""The denied call is a request with no span (pydantic-ai opens none for a deferred call):
without content its outcome is unknown, and nothing shows that it ran."""
DENIAL_UNTIED = ("openlit-create-agent",)
"""OpenLIT writes a tool message's text with no call id (``{"role": "tool", "parts":
[{"type": "text", ...}]}``): the refusal cannot be tied to the request it answers even with
content on, so the denied search (``w_search_denied``; the refused deletion is no dependency
of the answer) is a request of unknown outcome that nothing shows ran: ``searched-the-index``
is missing evidence (it was a known false pass until requests that nothing shows ran stopped
counting as calls made), and so are whether the run was degraded and the retry budget."""
DENIED_CALL_UNNAMED_WITHOUT_CONTENT = (
    "strands",
    "strands-openinference",
    "langchain-create-agent-openllmetry",
    "crewai-openinference",
)
"""A refused call never ran, so no tool span records it: only the model's request shows it,
and without content that request names no tool (an unnamed call of unknown outcome), so the
checks that must know which tools the run asked for are missing evidence (Strands' own
spans and OpenInference's rewrite of them also leave the retry budget unknown:
``DENIED_CALL_OUTCOME_UNKNOWN``; so do OpenInference's CrewAI spans, whose refused call is a
request of unknown outcome read from the model's messages)."""
DENIED_CALL_OUTCOME_UNKNOWN = ("strands", "strands-openinference", "crewai-openinference")
DENIED_REQUEST_UNSEEN = ("strands-openinference",)
"""``w_tool_denied`` without content: OpenInference's rewrite of Strands' spans records no
finish reason and no message, and the refused deletion has no span: only the model call the
loop answered with another model call, no step between, shows that the model may have asked
for a tool after its search. It gets the unnamed placeholder (``CALLED_AGAIN_UNSEEN``); before,
``no-destructive-tools`` was a known false pass."""
CALLED_AGAIN_UNSEEN: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("agno-openinference", "s_nested_failure", "multi-agent-handoff"): (
        "bounded-steps",
        "no-destructive-tools",
        "research-searches",
        "search-retry",
    ),
    ("agno-openinference", "s_nested_failure", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("agno-openinference", "s_nested_forbidden", "multi-agent-handoff"): (
        "bounded-steps",
        "research-searches",
        "search-retry",
    ),
    ("agno-openinference", "s_nested_forbidden", "support-rag"): (
        "bounded-effort",
        "search-retry",
        "searched-the-index",
    ),
    ("agno-openinference", "s_nested_rewritten", "multi-agent-handoff"): (
        "bounded-steps",
        "no-destructive-tools",
        "research-searches",
        "search-retry",
    ),
    ("agno-openinference", "s_nested_rewritten", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("beeai-js-openinference", "g_handoff", "multi-agent-handoff"): (
        "bounded-steps",
        "no-destructive-tools",
        "research-searches",
        "search-retry",
        "triage-to-research",
    ),
    ("beeai-js-openinference", "g_handoff", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("beeai-js-openinference", "s_delegated_failure", "multi-agent-handoff"): (
        "bounded-steps",
        "no-destructive-tools",
        "research-searches",
        "search-retry",
        "triage-to-research",
    ),
    ("beeai-js-openinference", "s_delegated_failure", "support-rag"): (
        "bounded-effort",
        "cites-a-source",
        "degraded-disclosed",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("beeai-js-openinference", "s_delegated_forbidden", "multi-agent-handoff"): (
        "bounded-steps",
        "research-searches",
        "search-retry",
        "triage-to-research",
    ),
    ("beeai-js-openinference", "s_delegated_forbidden", "support-rag"): (
        "bounded-effort",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "a_happy", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "b_tool_retry", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "c_retry_exhausted", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "d_forbidden_tool", "support-rag"): (
        "bounded-effort",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "e_fabricated_citation", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "f_degraded", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
    ("dspy-openinference", "h_coding_agent", "coding-agent"): (
        "bounded-effort",
        "flaky-tool",
    ),
    ("strands-openinference", "w_tool_denied", "support-rag"): (
        "bounded-effort",
        "no-destructive-tools",
        "search-retry",
        "searched-the-index",
    ),
}
"""Content off, sources whose model calls record no finish reason and whose output content
capture hides, in a scope that shows tool steps: a model call the loop answers with another
model call, no step between, gets an unnamed placeholder of unknown outcome (it may have asked
for a tool no step ran: ``y_unknown_tool``'s made-up call, ``w_tool_denied``'s refused one),
so these checks on tool names and counts are missing evidence, never a pass the data cannot
show. The runs where this shape is not a request: DSPy's ReAct picks its ``finish`` pseudo-tool
(no span) and then extracts the answer with one more model call; Agno's research agent and
BeeAI's triage agent call the model again after a delegation returns. With content off the
trace cannot tell these from a call of a tool the agent does not have, answered by the
framework's error and one more model call."""
FAILED_CALLS = (
    "b_tool_retry",
    "t_invalid_args",
    "c_retry_exhausted",
    "j_undisclosed_failure",
    "l_parallel_failures",
    "s_delegated_failure",
    "s_nested_failure",
    "s_nested_rewritten",
)
REJECTED_WITHOUT_SPAN = ("smolagents-openinference", "smolagents-openinference-stream")
"""``t_invalid_args``: the framework refuses the call before any tool runs and no tool span
records it (smolagents' ``validate_tool_arguments`` raises ``AgentToolCallError`` inside the
step; OpenInference wraps only ``Tool.__call__``). With content on, the call is the first
model call's request, named and with its arguments, but nothing ties an outcome to it (the
error reaches the model as a ``tool-response`` text without a call id, and smolagents' history
drops the assistant turn that asked): whether the search after it retried a failure cannot be
shown, so ``search-retry`` is missing evidence. With content off the request is hidden and the
step's span (ERROR, ``AgentToolCallError``) is the only record: a failed call of a tool the
trace does not name (``smolagents.yaml``, ``rejected_call``), so every check that must know
which tools were called is missing evidence, as for ``UNNAMED_FAILED_CALLS``. Held out,
before that rule, content off read "no retries": the rejected call was not counted, and two
rejections before a timeout would have passed a retry budget they exhaust."""
FAILED_CALLS_SPANLESS = ("openllmetry-openai-js",)
"""A tool call that threw has no span at all: OpenLLMetry JS 0.27's ``withTool`` (its
``withEntity``) ends a span only when the wrapped function returns or its promise resolves,
so a rejected one is never exported. With content on the call is the model's request (named,
its error the result the next request hands back); with content off only the request's
finish reason shows a call was asked for, of a tool the trace does not name (an unnamed
placeholder of unknown outcome), so in the scenarios with a failed call (``FAILED_CALLS``)
every check that must know which tools ran is missing evidence (``TOOL_NAME_CHECKS``), as
for ``UNNAMED_FAILED_CALLS``, and with them the handoff contract's checks that count or name
the research agent's calls."""
DEGRADED_BY_FAILURE = (
    "c_retry_exhausted",
    "j_undisclosed_failure",
    "l_parallel_failures",
    "s_delegated_failure",
    "s_nested_failure",
    "s_nested_rewritten",
)
"""Scenarios degraded by a failed search (its span status shows it with content off), whose
answer must disclose it (c and l do, j does not)."""
PARALLEL_RUN_IN_TURN = (
    "langgraph-openinference",
    "deepagents-langsmith-otel",
    "laminar-langgraph",
    "google-adk",
    "google-adk-events",
    "google-adk-legacy-latest",
    "agno-openinference",
    "agno-otel-genai",
    "langgraph-otel-genai",
    "llamaindex-otel-genai",  # asyncio runs the two calls; too quick to overlap this time
    "smolagents-openinference",
    "smolagents-openinference-stream",
    "ag2-native",
    "ag2-openinference",  # one executor reply runs a turn's calls one by one
    "autogen-native",
    "adk-go",
    "traceloop-sdk-latest",  # the app's own loop runs a turn's calls one by one
    "openinference-openai-js",  # the app's own loop, one by one
    "langfuse-openai-js",  # the app's own loop, one by one
    "openinference-anthropic-js",  # the app's own loop, one by one
    "beeai-js-openinference",  # ToolCallingAgent runs a turn's calls one by one
    "koog",  # the single-run strategy's tool node runs a turn's calls one by one
    "vercel-ai-sdk-5-latest",
    "pipecat-openinference",  # a TOOL span is opened and closed at its result frame
    "laminar-openai",  # the app's own loop, one by one
)
"""The framework ran the two searches of ``l_parallel_failures``' one turn one after the other
in the content-off capture (ADK, Agno, smolagents, AG2 and AutoGen always; LangGraph's thread
pool, ADK for Go's goroutines and the AI SDK's concurrent tool executions, too quick to
overlap, this time), and with content off (AutoGen's own spans: always) no model call's output
shows that they were asked for together: the second failed search reads as a retry of the first
(``search-retry`` tolerated, a repeat counted where the trace cannot tell, never one missed)."""
CALLS_UNGROUPED = (
    "claude-agent-sdk-js",
    "azure-ai-agents",
    "atomic-agents",
    "atomic-agents-openinference",
)
"""No span records a model turn: OpenInference's JavaScript Claude Agent SDK instrumentation
writes one AGENT span per ``query()`` holding only the run's result text (the Python one also
keeps every assistant message as ``llm.output_messages.*``) and no span per model call, so
nothing shows which calls one turn asked for, content on or off. Claude Code ran the two
searches of ``l_parallel_failures``' one turn one after the other, and the second failed
search reads as a retry (``search-retry`` tolerated, a repeat counted where the trace cannot
tell, never one missed, as ``PARALLEL_RUN_IN_TURN``). The Azure AI Agents service runs the
model itself: the client's trace holds no model turn, only the functions it ran for the run
one after the other, so the same holds there. Atomic Agents' ``chat`` spans record no
messages, and the tools an agent step chose are fields of its output object, which the
application reads: its loop ran the two searches one after the other, so the same holds too."""
TURN_RECORDS_LAST_CALL = ("openlit-claude-agent-sdk",)
"""The span of a model turn that asked for several calls records only the last of them
(OpenLIT's Claude Agent SDK instrumentation writes its ``chat`` span from the streamed
message, one tool_use block at a time, each over the last), and Claude Code ran
``l_parallel_failures``' two searches one after the other: no model call's output shows the
first was asked for with the second, content on or off, so the second failed search reads as
a retry of the first (``search-retry`` tolerated: a repeat counted where the trace does not
tell, never one missed). The turn's ``chat`` span is written during the first call (it starts
after that call's span), which a check could read as "asked before the failure was known";
none reads span times for that."""
STATUS_SPREAD = ("vercel-ai-sdk-openinference", "vercel-ai-sdk-openinference-stream")
"""Every span that ends after the run's first failure carries that failure's ERROR status
(OpenInference's Vercel processor, @arizeai/openinference-vercel 3.2.1, gives a root span the
trace's aggregate status and tells a root by ``parentSpanId``, which spans of the OpenTelemetry
JS SDK 2 no longer have: every span is a root to it). A call that succeeded after a failure
reads as failed, and so does the last model call, so the answer is missing evidence: false
failures, never a pass."""
FAILED_SPANS_BLANK = ("adk-js",)
"""The span of a tool that threw records nothing but its name, with an unset status (ADK for
TypeScript writes a tool span's attributes only after the tool returned), while a returned
call's span shows it returned: with content off, where a call failed its outcome is unknown,
so checks on outcomes are missing evidence there (never a pass), and pass elsewhere."""
OUTPUT_NEVER_RECORDED = ("spring-ai", "spring-ai-2")
"""No model call's output is recorded whatever the content switch (Spring AI writes messages to
the application log, not to spans), and the framework runs the two searches of
``l_parallel_failures``' one turn one after the other: with content on too, nothing shows they
were asked for together, so the second failed search reads as a retry of the first
(``search-retry`` tolerated: a repeat counted where the trace cannot tell, never one missed)."""
TOOL_REQUESTS_UNRECORDED = ("quarkus-langchain4j",)
"""The model calls' recorded output is their text alone (Quarkus LangChain4j's
``gen_ai.completion``), never the tool calls a turn asked for, and LangChain4j runs a turn's calls
one after the other: with content on too, nothing shows that ``l_parallel_failures``' two
searches were asked for together, so the second failed search reads as a retry of the first
(``search-retry`` tolerated: a repeat counted where the trace cannot tell, never one missed)."""
ALL_SEARCHES_FAILED = DEGRADED_BY_FAILURE
"""Scenarios where every search failed: an OK span that does not show success
(``OK_NOT_SHOWN``) hides nothing there, so the retries are counted with content off too."""
TOOL_NAME_CHECKS = {
    "support-rag": {
        "no-destructive-tools",
        "searched-the-index",
        "bounded-effort",
        "search-retry",
        "degraded-disclosed",
    },
}
MERGED_MODEL_CALLS = ("openinference-google-adk", "voltagent")
MODEL_CALLS_UNRECORDED = (
    "autogen-native",
    "claude-agent-sdk",
    "claude-agent-sdk-js",
    "claude-agent-sdk-mcp",
)
"""No model call is recorded at all (autogen-core's own spans: agent runs and tool calls only;
the Claude Agent SDK's: the run's agent span, its tool and sub-agent spans),
so a count of steps that includes model calls (``bounded-steps``) is a lower bound: missing
evidence, never a pass. Held out on ``n_handback`` (and ``g_handoff`` before it) it counted the
one search as the run's only step and passed."""
"""One span records every model call of an agent run, each over the last (``merged_model_calls``
in conventions/google-adk.yaml; VoltAgent's one ``llm`` span per agent call, voltagent.yaml):
a count of model calls (``bounded-steps``) is a lower bound,
so it is missing evidence, never a pass."""
MESSAGES_WITHOUT_CONTENT = ("openinference-google-adk",)
"""The tracer records the model calls' messages whatever its content switch (OpenInference's
ADK instrumentor writes them on ADK's own span, outside its masking tracer), while tool
arguments and results are hidden: with content off the answer is the real one, so
``answer-captured`` keeps its content-on outcome, and so do ``cites-a-source`` and
``grounded-citations`` where that is a pass (the citations and the results they cite are in
the model's messages; an answer citing nothing is grounded) and ``degraded-disclosed`` where
a failed search (span status) made the run degraded and the answer says so; a citation no
result backs cannot be refuted, a run cannot be shown undegraded, and an empty result
(``EMPTY_RESULT``) cannot be seen while the results are hidden: missing evidence."""
EMPTY_RESULT = ("f_degraded",)
"""Scenarios whose degradation is only the search's (empty) result (EXPECTED.md)."""
EMPTY_COUNT_WITHOUT_CONTENT = ("openlit-langchain-retriever",)
"""The retriever span counts the documents it returned whatever the content switch
(OpenLIT's ``gen_ai.retrieval.document_count``): an empty search is seen with content off."""
ANSWER_WITHOUT_CONTENT = (
    "openlit-langgraph",
    "openlit-create-agent",
    "openlit-smolagents",
    "openlit-langchain-retriever",
    "beeai-js-openinference",
)
"""The tracer records the run's final answer whatever its content switch (OpenLIT's LangGraph
instrumentor writes the graph's output messages on its ``invoke_workflow`` span; OpenLIT's
chat spans keep the arguments of smolagents' ``final_answer`` call, ``REQUESTS_WITHOUT_CONTENT``,
and those arguments are the answer; OpenInference's BeeAI instrumentation for
JavaScript keeps the ``final_answer`` tool's ``tool.parameters``), while tool
arguments, results and the model calls' messages are hidden: with content off
``answer-captured`` keeps its content-on outcome, and so do ``cites-a-source`` where that is a
pass and ``degraded-disclosed`` where a failed search (span status) made the run degraded and
the answer says so (neither when the degradation is an empty result, ``EMPTY_RESULT``), and
``grounded-citations`` for an answer citing nothing (``CITING_ANSWERS``); a citation cannot be
checked against results that are hidden: missing evidence."""
CITING_ANSWERS = (
    "a_happy",
    "b_tool_retry",
    "d_forbidden_tool",
    "e_fabricated_citation",
    "g_handoff",
    "i_parallel_tools",
    "m_excess_calls",
    "n_handback",
    "p_second_turn",
    "r_structured_answer",
    "r_structured_fabricated",
    "s_delegated_forbidden",
    "s_nested_forbidden",
    "t_invalid_args",
    "u_model_retry",
    "v_reasoning",
    "v_reasoning_fabricated",
    "w_tool_denied",
    "y_unknown_tool",
)
"""Scenarios whose final answer cites a document (EXPECTED.md)."""
CUT = ("x_answer_truncated", "x_answer_filtered")
"""Scenarios whose answer the model did not finish (``Scenario.cut``: the token limit, the
provider's content filter): no complete answer exists."""
CUT_UNRECORDED = (
    "openinference-openai-agents",
    "logfire-openai-agents",
    "logfire-openai-agents-latest",
    "ollama-openllmetry",
    "agno-openinference",
)
"""``x_answer_*``: the trace records no finish reason. The OpenAI Agents SDK's chat-completions
model writes the reply message alone into its generation span (``output``: content, role,
tool calls), which OpenInference and Logfire export as they are; OpenLLMetry's Ollama
instrumentation writes no ``done_reason``; OpenInference's Agno instrumentation records Agno's
own message (role and content) as the call's output. The response's finish reason (``length``,
``content_filter``) is in no span, and the framework hands the fragment on as the run's final
output. Nothing in the trace tells the fragment from a finished answer, and failing every
answer whose finish reason is unrecorded would fail every run of these sources: with content
on the fragment is read as the answer, a known false pass of every answer check (it cites
doc-42, which the search returned)."""
UNKNOWN_CALL_UNNAMED_WITHOUT_CONTENT = (
    "langgraph-openinference",
    "langchain-create-agent-openllmetry",
    "llamaindex-openinference",
    "crewai-openinference",
    "agno-openinference",
)
"""``y_unknown_tool`` content off: no span runs a tool the agent does not have, so the made-up
call is only the model's request, whose tool names are content: one more call, unnamed, of
unknown outcome. Every check on tool names is missing evidence (it may be the forbidden tool,
another search, one call too many), never "no forbidden call" (``tool_not_called`` fails
closed)."""
UNKNOWN_CALL_OUTCOME_UNKNOWN = (
    "llamaindex-openinference",
    "crewai-openinference",
    "agno-openinference",
)
"""``y_unknown_tool`` content off, of ``UNKNOWN_CALL_UNNAMED_WITHOUT_CONTENT``: the unnamed call
comes after the search and nothing shows it succeeded, so it may be a failed search made again:
the retry budget is missing evidence too. ``agno-openinference``: OpenInference's Agno
instrumentation records no finish reason and, content off, no output, so the model call the
loop answered with another model call, no step between, gets the unnamed placeholder (before,
the search step ruled it out and ``tool_not_called`` was a known false pass)."""
UNKNOWN_CALL_UNSEEN = ("azure-ai-agents",)
"""``y_unknown_tool``, content on and off: nothing the trace maps shows the made-up call. The
Azure AI Agents service runs the model, so no span holds its requests; the SDK's auto function
calls answer a call the toolset has no function for with an error output and open no
``@trace_function`` span, so the call is only an output posted by call id (a
``gen_ai.tool.message`` event on ``submit_tool_outputs``, its text the SDK's error with
content on), which names no tool. The posts are read as the input of the service's next model
call, so the trace shows more calls (outputs by call id) than tool steps: every check that
needs all the calls, ``degraded-disclosed`` with them, is missing evidence (never a pass)."""
REASONING = ("v_reasoning", "v_reasoning_fabricated")
"""Scenarios whose model reasons before each turn (``Scenario.reasoning``)."""
THOUGHTS_AS_TEXT = ("google-adk", "google-adk-stream")
"""The tracer writes the model's thoughts as plain text parts (Google ADK's GenAI writer
drops a Gemini part's ``thought`` mark; ``thoughts_unmarked`` in conventions/google-adk.yaml):
in the reasoning scenarios the answering message is two text parts, the reasoning and the
answer, and which is which cannot be told, so every answer check is missing evidence (never
the reasoning's [doc-99] failing, or its [doc-42] passing, the citations)."""
DELEGATED = ("g_handoff", "s_delegated_forbidden", "s_delegated_failure")
"""Scenarios whose triage agent hands the run to the research agent (or calls it as a tool)."""
NESTED = ("s_nested_forbidden", "s_nested_failure", "s_nested_rewritten")
"""Scenarios whose research agent delegates again, to a records agent (two levels below the
triage agent): the deepest agent's calls and answer are the run's."""
CONTENT_NEVER = ("autogen-native", "swiftide")
"""The tracer records no content whatever the switch and no model call at all (autogen-core's
own spans: agents and tools only), or none a convention reads (Swiftide's `add_message` spans
hold each message in its unescaped Display form; its model calls carry nothing): content on
grades as content off, and the final answer is missing evidence in both."""
AGENTS_UNSEEN = (
    "haystack-openllmetry",
    "openlit-ag2",
    "openlit-haystack",
    "mirascope",
    "camel-openinference",
    "langroid-openinference",
    "langroid-text-tools-openinference",
)
"""No span shows any agent (OpenLLMetry and OpenLIT record Haystack's generators, not its
Agent; OpenLIT's AG2 instrumentor one span per conversation turn, none holding an agent's run,
so ``ag2.yaml`` maps no agent; CAMEL has no tracing of its own, its model client's
instrumentation records model calls only): the agent spans and the required transfer are missing
evidence, and the research agent, called as a tool, is one more tool in the run's sequence,
which the trace cannot show to be an agent (``research-searches`` fails: a known false fail,
never a pass)."""
CALLER_UNSEEN = ("atomic-agents", "atomic-agents-openinference")
"""The application runs the tools between an agent's turns, outside its spans (Atomic Agents:
an agent's run is one structured model turn, ``invoke_agent``, and the tools it chose run in the
application's loop beside those spans): the research agent, run from the triage agent's
``research_agent`` tool, is seen, but no span shows which agent asked for that tool
(``? -> research_agent``), so the required transfer is missing evidence, never a pass."""
DELEGATION_UNSEEN = ("beeai-js-openinference",)
HANDOFF_REQUESTS_ONLY = ("openai-agents-otel-genai", "agency-swarm-otel-genai")
"""The SDK's native handoff has no span (Agency Swarm's ``Handoff`` flow builds the same SDK
handoff, so the same holds there): ``opentelemetry-instrumentation-genai-openai-agents``
1.3b0 turns the OpenAI Agents SDK's trace, agent and function spans into GenAI spans and drops
its handoff spans, so a transfer is only the model's requested ``transfer_to_<agent>`` call,
which no step runs, and the next agent's ``invoke_agent`` span beside the first. With content
on the named request, read with the agent that starts next, is the handoff
(``handoff_requests`` in conventions/handoffs.yaml): every check as the truth. With content off
the request is hidden: a model turn asked for a call no span shows, so every check over the
run's tool names is missing evidence (a forbidden call a span shows still fails
``no-destructive-tools``)."""
HANDED_OVER = ("g_handoff", "n_handback", "s_delegated_forbidden", "s_delegated_failure")
TOOL_COUNT_CHECKS = (
    "no-destructive-tools",
    "searched-the-index",
    "bounded-effort",
    "search-retry",
    "triage-to-research",
    "research-searches",
    "bounded-steps",
)
"""An agent run from a tool has no span that shows it: OpenInference's BeeAI instrumentation
for JavaScript records the research agent's events (``agent.toolCalling.start-N``, its model
calls and tools) inside the calling tool's ``start`` event span, never as a run of its own,
and names no agent (only its class, ``ToolCallingAgent``). The required transfer cannot be
seen (``triage-to-research`` fails: a known false fail, never a pass) and the research agent,
called as a tool, is one more tool in the run's sequence (``research-searches`` fails too,
as for ``AGENTS_UNSEEN``)."""
TOOLS_IN_MESSAGES = (
    "mirascope",
    "haystack-openinference",
    "openlit-crewai",
    "openlit-pydantic-ai",
    "mlflow-crewai",
    "openlit-ag2",
    "openlit-haystack",
    "langtrace-langgraph",
    "langtrace-crewai",
    "burr",
    "mlflow-autogen",
    "pipecat",
    "llamaindex-js-openllmetry-openai",
)
"""Agent frameworks whose tools have no span of their own (Haystack's run inside plumbing
spans; OpenLIT's CrewAI instrumentor records only the coworker tools; OpenLIT's Pydantic AI
instrumentor a nameless span per tool-calls node; MLflow's CrewAI autolog none): tool calls
are read from the model's messages, so content off hides them and every check is missing
evidence except seeing the agent spans themselves (and the transfer,
``HANDOFF_BY_NESTING``)."""
AGENTS_NOT_RECORDED = ("langtrace-langgraph", "laminar-openai", "praisonai-openinference")
"""No span records an agent, a graph run or a tool (Langtrace patches LangChain's model and
runnable classes and LangGraph's graph builder, not the graph's run or its tools): every tool
call, the ``transfer_to_research_agent`` handoff among them, is one of the model's requests.
The agent spans and the required transfer are missing evidence; the run's tool sequence is
seen (``research-searches`` ignores the transfer tool). Its LangChain spans record messages
whatever ``TRACE_PROMPT_COMPLETION_DATA`` says (``CONTENT_IGNORES_SWITCH``). Laminar has no
agent span type: an app's agents are ``@observe()`` functions, spans that only group the work
inside them (the research agent's search inside the transfer tool's span is seen). PraisonAI
has no tracing of its own: OpenInference's OpenAI instrumentor records the model calls of both
agents, and its native handoff is the triage agent's ``transfer_to_research_agent`` request."""
RESULTS_UNSEEN = ("langtrace-dspy", "openlit-cohere")
"""No span records a tool's run (Langtrace's DSPy instrumentation records module calls, and a
ReAct step's prediction names the tool and its arguments whatever the content switch;
OpenLIT's Cohere instrumentor leaves a tool message whose content is Cohere's document blocks
out of the recorded input, and writes the calls a turn asked for on its span whatever the
switch, ``openlit.yaml``'s ``chat_tool_calls``): tool
names and arguments are seen in both modes, results and outcomes never, so the checks that
need a result or an outcome are missing evidence (a citation cannot be checked against
results, a run cannot be shown degraded or not, a retry cannot be seen); with content off the
answer is not seen either (the model's reply is dropped)."""
REQUESTS_READ_FROM_TEXT = ("langroid-text-tools-openinference",)
"""With content on, the tool requests the model wrote as text (Langroid's default tool mode:
``{"request": "delete_records", ...}`` objects in the reply) are read as the requests they are
(``mapping/_text_requests.py``), and no span runs them: each is a named synthesized call with
its arguments and an unknown outcome (a request written is not a call made; the result is a
user message no rule ties to it). Graded as ``RESULTS_UNSEEN`` with ``RUN_NEVER_SHOWN``: the
checks on tool names and counts judge (``no-destructive-tools`` fails the deletions, ``no-network``
the ``curl``, ``bounded-effort`` the six searches), the checks that need a call to have run, a
result or an outcome are missing evidence. Where the research agent runs (``DELEGATED``), its
answer, followed by its caller's next model call in a run that shows no agent, still reads as
a call the caller may have hidden (a request read from text shows only its own reply's, and
no rule reads that answer): the checks on tool names and counts are missing evidence there,
but a named deletion still fails. With content off there is no text: ``TOOLS_IN_TEXT``."""
HANDOFF_BY_NESTING = (
    "openlit-pydantic-ai",
    "mlflow-crewai",
    "langtrace-crewai",
)
"""The delegated agent's span is nested in the delegating agent's, both named whatever the
content switch (OpenLIT's Pydantic AI instrumentor: the research agent run from the triage
agent's tool; MLflow's CrewAI autolog: the coworker's agent span inside the delegating
agent's): the required transfer keeps its content-on outcome with content off."""
OUTCOMES_UNKNOWN = ("mirascope",)
"""Tool results that cannot tell a failure from a success (Mirascope hands the model a raised
exception's bare message, with no error flag anywhere): the checks that need an outcome are
missing evidence, and so are those that need to know whether the run was degraded (the
disclosure check, and a citation check on an answer that cites nothing), except where an
empty result shows the degradation."""
NAMES_NEVER = ("griptape",)
"""Tracers that record neither content nor the called tool's name (Griptape's spans are named
after the tool's Python class): every check is missing evidence, except that the agents' own
spans are seen."""
HANDOFF_TOOL_UNREAD = ("llamaindex-js-openllmetry-openai",)
"""A native handoff that is only a tool call the model requested, run by no span
(LlamaIndex.TS's ``handOff {"toAgent": ...}``, seen in the OpenAI instrumentation's output
messages): no mapping file reads a requested call as a handoff, so with content on the
transfer reads as not happening and ``handOff`` as one more tool of the run (a known false
fail of ``triage-to-research`` and ``research-searches``, never a pass); with content off the
request is unnamed and the transfer missing evidence (``TOOLS_IN_MESSAGES``)."""
RESULTS_UNQUOTED = ("llamaindex-js-openllmetry-openai",)
"""Tool results the framework hands the model with every double quote stripped
(LlamaIndex.TS's ``stringifyJSONToMessageContent``): no parser reads them, so ``f_degraded``'s
empty search reads as an opaque success, the run as not degraded, and its answer's
uncertainty as unfounded (``cites-a-source`` and ``degraded-disclosed`` fail: a known false
fail, never a pass)."""
REQUESTS_NEVER_RECORDED = ("openlit-bedrock", "mistral-openllmetry", "llamaindex-js-openllmetry")
"""The model calls record the answer text but never the tools a turn asked for nor their
results, whatever the switch (OpenLIT's Bedrock instrumentor writes a Converse reply's
``toolUse`` blocks as an output message without parts and keeps only the first user text of
the input; OpenLLMetry's Mistral instrumentor writes a reply's text and finish reason, never
its tool calls, and of a request given as dicts only ``gen_ai.prompt.0.role``; OpenLLMetry
JS's LlamaIndex instrumentation keeps a streamed call's text alone, and the next call's input
holds each tool result as a plain user text without the call it answers): graded as
``TOOLS_IN_TEXT`` (every check that must know which tools ran, their results or outcomes is
missing evidence; with content on the answer is seen). Only the finish reason shows a turn
asked for tools: calls of unnamed tools, any of which may be a native handoff (LlamaIndex.TS's
``handOff``), so a required transfer is missing evidence too, while an agent span the
application opened (``traceloop.withAgent``) is seen."""
TOOLS_IN_TEXT = ("openlit-dspy", "langroid-text-tools-openinference")
"""DSPy ReAct with no DSPy instrumentor (OpenLIT records only the LiteLLM calls): the model
names each tool in its reply text (``[[ ## next_tool_name ## ]]``), no span records the
tools, and ``dspy.yaml`` reads each such step as a call of an unnamed tool; Langroid's default
tool mode writes each request as JSON in the reply text (``{"request": "delete_records", ...}``)
and runs it with no span: with content off (with content on the requests are read,
``REQUESTS_READ_FROM_TEXT``) the linker reads each reply the loop answered with another model
call, in a run that shows no tool call anywhere, as one that may have asked for tools (an
unnamed placeholder: before, the run read as calling no tool, and ``no-destructive-tools``
passed the deletion the text shows: 10 false passes, all with content on). Every check that
must know which tools ran, their results or their outcomes is missing evidence, with content
on too for DSPy; with content on the answer is seen (``answer-captured``, ``cites-a-source``
where the run is not degraded, which only the tool outcomes could show, and
``grounded-citations`` for an answer citing nothing)."""
NOTHING = (
    "litellm-otel",
    "praisonai-openinference",
    "camel-openinference",
    "langroid-openinference",
    "openinference-openai",
    "openllmetry-openai",
    "openllmetry-openai-legacy",
    "openai-v2-latest",
    "openai-v2-events",
    "genai-openai",
    "openinference-anthropic",
    "openllmetry-anthropic",
    "genai-anthropic",
    "bedrock-openllmetry",
    "google-genai",
    "google-genai-events",
    "openinference-openai-stream",
    "openinference-anthropic-stream",
    "openllmetry-anthropic-stream",
    "genai-anthropic-stream",
    "groq-openinference",
    "together-openinference",
    "portkey-openinference",
    "mistral-openinference",
    "azure-ai-inference",
    "groq-openllmetry",
    "cohere-openllmetry",
    "instructor-openinference",
    "ollama-openinference",
    "ollama-openllmetry",
    "haystack-openllmetry",
    "openinference-google-genai",
    "openinference-bedrock",
    "openinference-litellm",
    "mlflow-gemini",
    "mlflow-bedrock",
    "langtrace-openai",
    "logfire-openai",
    "logfire-openai-v1",
    "logfire-anthropic",
    "logfire-anthropic-v1",
)  # content off hides tool names


COVERAGE_CHECKS = {
    "support-rag": {"no-destructive-tools", "grounded-citations"},
    "coding-agent": {"no-network"},
    "multi-agent-handoff": {"triage-to-research", "no-destructive-tools", "grounded-citations"},
}
"""Checks that need complete visibility (``tool_not_called``, ``no_network``,
``citations_grounded``, ``handoff``): on a trace with spans no convention recognised they
cannot pass (DESIGN section 8, fail closed); a failure they find stays a failure."""


MODEL_RETRY_UNRECOVERED = (
    "google-genai",
    "mastra",
    "mastra-stream",
    "ollama-openllmetry",
    "ollama-openinference",
)
"""``u_model_retry``: nothing retries the failed first model request (the ``google-genai``
client makes one attempt unless ``HttpOptions.retry_options`` is set; Mastra's ``Agent``
retries ``maxRetries`` times, 0 unless configured; Ollama's Python client has no retry at
all), so the run ended in the error before any
tool ran: as ``o_run_error``, there is no answer to judge (every answer check missing
evidence), and the run never searched (``searched-the-index`` fails). Content off changes
nothing: the only model call answered nothing, so no request for a tool can be hidden, and
the trace shows that no tool ran."""


RUN_SPAN_UNENDED_ON_ERROR = ("smolagents-openinference", "smolagents-openinference-stream")
"""The agent run's span is never ended when the run raises (OpenInference's smolagents
wrapper records the exception and re-raises without ending the span), so in ``o_run_error``
its children name a parent the trace does not hold: ``trace_complete`` is missing evidence,
and, as for a killed run (``KILLED``), the trace does not show the run finish, so the checks
on everything it did are missing evidence too."""


STRUCTURED = ("r_structured_answer", "r_structured_fabricated")
"""Scenarios whose agent answers through structured output (EXPECTED.md)."""
RUN_ERROR_INPUT_UNRECORDED = ("openlit-litellm",)
"""``o_run_error``: the model call that raised records nothing but its name and exception
(OpenLIT's litellm instrumentor), so the search before it has no recorded result (no tool
spans): nothing shows that the search ran, so ``searched-the-index`` and ``search-retry``
are missing evidence; the run's other checks are judged."""
OUTPUT_TOOL_UNREAD = ("openlit-create-agent",)
"""``r_structured_*`` under OpenLIT: the tool strategy's output tool (``SupportAnswer``) is
requested by the last model call and run by no span, and no span records the agent's output
state: the answer is missing evidence (never the request's arguments). ``search-retry``
passes: it needs the searches' outcomes only (the output tool's is unknown)."""
OUTPUT_REQUEST_UNNAMED_WITHOUT_CONTENT = ("langchain-create-agent-openllmetry",)
"""``r_structured_*`` without content: LangChain's tool strategy asks for its output tool in
the last model call's request, which no span runs. With content on the agent's output state
shows that call's arguments are the run's answer (its delivery, no work); without content
the request is an unnamed call only (OpenLLMetry keeps the finish reason): it could be any
tool, so every check that must know which tools were called is missing evidence."""


LIMIT_RAISES = (
    "openinference-openai-agents",
    "openllmetry-openai-agents",
    "openllmetry-openai-agents-latest",
    "openai-agents-otel-genai",
    "google-adk",
    "logfire-pydantic-ai",
    "llamaindex-openinference",
    "langgraph-graph-openinference",
)
"""``q_turn_limit``: the framework raises at its limit (``MaxTurnsExceeded``,
``LlmCallsLimitExceededError``, ``UsageLimitExceeded``, LlamaIndex's ``WorkflowRuntimeError``,
LangGraph's ``GraphRecursionError`` from a graph built by hand, which nothing guards as the
prebuilt agent guards its steps):
the run has no answer, as in ``o_run_error``, and the trace shows the limit ended it (the
error the conventions declare in ``run_limit_errors``, or the pending request of
``LIMIT_REQUEST_PENDING``), so ``bounded-effort`` is missing evidence: four calls within a
budget of five is what the limit let through, not what the agent would have made."""
LIMIT_REQUEST_PENDING = (
    "langgraph-openinference",
    "openlit-langgraph",
    "mlflow-langgraph",
    "llamaindex-openinference",
)
"""``q_turn_limit``: the limit ended the run after the model's fifth call asked for a fifth
search that no tool ran (LangGraph's prebuilt agent answers "Sorry, need more steps to process
this request." in its place, graded as the answer; LlamaIndex raises). The trace holds that
search as the last call's request only, outcome unknown: whether the search was degraded on
its last call is unknown (``cites-a-source``, ``degraded-disclosed`` and ``search-retry``
missing evidence), and the run was stopped short (``bounded-effort`` missing evidence)."""
LIMIT_FORCED_ANSWER = (
    "smolagents-openinference",
    "smolagents-openinference-stream",
    "crewai-openinference",
)
"""``q_turn_limit``: past its limit the framework raises no error but asks the model for a
final answer itself, offering no tools: smolagents with the system prompt "An agent tried to
answer a user query but it got stuck ...", CrewAI with "Now it's time you MUST give your
absolute best final answer ..." (the conventions' ``run_limit_prompts``). With content on the
last model call holds that request: the run was stopped short (``bounded-effort`` missing
evidence); the reply is its answer, graded as it is. Without content the request's text is
not in the trace; CrewAI's last call still shows the request's structural mark: its
recorded request (``llm.invocation_parameters``, kept whatever the switch) offered no tools
(``Step.tools_offered == ()``) right after a search ran, where every earlier call offered
the agent's tools, so ``bounded-effort`` is missing evidence too (``grade/evidence.py``,
``_forced_answer``). smolagents' forced call, without content, is marked by its place: an
LLM span right under the agent's span, outside the ``Step N`` spans every call of its loop
runs in (``smolagents.yaml``'s ``forced_final_answer``: a ``parent`` condition and
``run_limit_call``), so ``bounded-effort`` is missing evidence there too. LiveKit
Agents (``AgentSession(max_tool_steps=...)``) is not in this list: it forces the final
answer with ``tool_choice`` ``none``, which no span records, and its last request lists its
tools as every other does, so nothing marks the forced answer, content on or off: its
``bounded-effort`` pass on ``q_turn_limit`` is a false pass the trace cannot show."""
LIMIT_FORCED_ANSWER_UNMARKED: tuple[str, ...] = ()
"""``q_turn_limit`` without content: sources whose forced final answer (``LIMIT_FORCED_ANSWER``)
leaves no mark the grader reads (``bounded-effort`` a known false pass). None now:
smolagents' (OpenInference hides ``llm.tools`` with the inputs and records
``llm.invocation_parameters`` as ``{}``, so no call says which tools it offered) was listed
until its one structural mark, the forced call's place right under the run's span, became a
rule's ``parent`` condition."""
LIMIT_ENDS_AFTER_TOOL = ("langchain-agents-openinference", "autogen-openinference")
"""``q_turn_limit``: LangChain's ``AgentExecutor`` returns its own "Agent stopped due to max
iterations." after the fourth search ran, AutoGen's ``AssistantAgent`` its summary of that
search's result; no model call read it: the run stopped in the middle of its work
(``bounded-effort`` missing evidence, with content off too: the tool spans keep their names).
The executor's text is the answer, graded as it is (it cites nothing)."""
LIMIT_ANSWER_UNRECORDED = ("autogen-openinference", "mlflow-autogen")
"""``q_turn_limit``: the text AutoGen returns at its limit (the ``ToolCallSummaryMessage``)
is in no span (the agent span records no output, and the last model call asked for tools):
every answer check is missing evidence, never read from the tool's result or an earlier
text."""
RUN_END_UNRECORDED = ("autogen-native",)
"""autogen-core's own spans record the agent run and its tool calls, no model call: nothing
shows whether a run ended on the agent's own answer or at its framework's limit
(``q_turn_limit``: ``max_tool_iterations`` stopped the run after its fourth search, and the
trace reads like ``a_happy``'s). A count of its tool calls is then a lower bound of the agent's
effort: ``bounded-effort`` is missing evidence in every scenario (a count over the budget
still fails: ``COUNTS_OVER_BUDGET``). The Claude Agent SDK, which records no model call
either, writes the model's last finish reason (``end_turn``) on its query span: its runs
show they ended on an answer."""
LIMIT_RESULT_UNSEEN = ("mlflow-autogen",)
"""``q_turn_limit``: the last search ran, but no model call read its result, and no span of
its own records it (tools only in the model calls' messages): its outcome is unknown, so
``search-retry`` is missing evidence."""
LIMIT_REQUEST_UNNAMED_WITHOUT_CONTENT = ("langgraph-openinference", "llamaindex-openinference")
"""``q_turn_limit`` without content: the pending fifth request shows only as a call the last
model call's finish reason asked for, unnamed: it could be any tool, so every check that must
know which tools were called is missing evidence."""
LIMIT_REQUEST_UNSEEN_WITHOUT_CONTENT = ("mlflow-langgraph",)
"""``q_turn_limit`` without content: nothing shows the pending request (MLflow hides the model
calls' outputs, finish reasons included), so the trace reads as a run that ended after four
searches and ``bounded-effort`` passes on what it shows."""


ANSWER_TOOL_UNDECLARED = ("livekit-agents",)
"""``r_structured_*`` delivered through a tool the application names (LiveKit Agents: an
``AgentTask`` completed from its own ``submit_answer`` function tool), which no mapping file
declares a final-answer tool: no final answer is read, so every check that reads it is
missing evidence, content on or off (never the object's text guessed from a tool call)."""
COUNTS_OVER_BUDGET = {("support-rag", "m_excess_calls"): "bounded-effort"}
"""Counts every capture records over their budget: ``m_excess_calls``' six searches are six
tool calls in every trace, named or not (a tool span without the tool's name, a model call
whose finish reason asked for a tool with content off), and a count over its budget stands
where tool names are missing evidence. A call whose name was not recorded counts unless it
is shown to be a named call's twin (``trace_common.nameless_twins``): before, every such call
was left out, and these traces' ``bounded-effort`` read ``missing_evidence``."""


def expected(source: str, contract: str, scenario: str, content: bool) -> dict[str, Outcome]:
    want = _expected(source, contract, scenario, content)
    over = COUNTS_OVER_BUDGET.get((contract, scenario))
    if over is not None:
        want[over] = INV
    return want


def _expected(source: str, contract: str, scenario: str, content: bool) -> dict[str, Outcome]:
    requests_hidden = not content and source in SWITCH_HIDES_REQUESTS_ONLY
    content = (content or source in CONTENT_IGNORES_SWITCH) and source not in CONTENT_NEVER
    base = {name: P for name in CHECKS[contract]}
    base.update(CONTENT_ON[(contract, scenario)])
    if requests_hidden and scenario == "l_parallel_failures":
        base["search-retry"] = TOL
    if scenario == "q_turn_limit" and source in LIMIT_RAISES:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
        base["bounded-effort"] = MIS
    if scenario == "q_turn_limit" and source in LIMIT_ENDS_AFTER_TOOL:
        base["bounded-effort"] = MIS
    if (
        scenario == "q_turn_limit"
        and source in LIMIT_FORCED_ANSWER
        and (content or source not in LIMIT_FORCED_ANSWER_UNMARKED)
    ):
        base["bounded-effort"] = MIS
    if source in RUN_END_UNRECORDED and "bounded-effort" in base:
        base["bounded-effort"] = MIS
    if scenario == "q_turn_limit" and source in LIMIT_ANSWER_UNRECORDED:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if scenario == "q_turn_limit" and source in LIMIT_RESULT_UNSEEN:
        base["search-retry"] = MIS
    if scenario == "q_turn_limit" and source in LIMIT_REQUEST_PENDING:
        base.update(dict.fromkeys(("cites-a-source", "degraded-disclosed", "search-retry"), MIS))
        base["bounded-effort"] = MIS
        if not content and source in LIMIT_REQUEST_UNNAMED_WITHOUT_CONTENT:
            base.update(dict.fromkeys(TOOL_NAME_CHECKS.get(contract, set()), MIS))
        if not content and source in LIMIT_REQUEST_UNSEEN_WITHOUT_CONTENT:
            base["bounded-effort"] = P
    if source in MODEL_RETRY_UNRECOVERED and scenario == "u_model_retry":
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
        base["searched-the-index"] = INV
        return base  # content capture hides nothing here: no model call answered
    if source in RUN_ERROR_INPUT_UNRECORDED and scenario == "o_run_error":
        base["search-retry"] = MIS
        base["searched-the-index"] = MIS
    if source in RUN_SPAN_UNENDED_ON_ERROR and scenario == "o_run_error":
        base.update({k: MIS for k in KILLED if k in base or k == "trace_complete"})
    if source in UNNAMED_AGENTS and contract == "multi-agent-handoff":
        base["triage-to-research"] = MIS
    if source in NO_MODEL_OUTPUT:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if source in STATUS_SPREAD and scenario in FAILED_CALLS:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if source in MERGED_MODEL_CALLS + MODEL_CALLS_UNRECORDED and contract == "multi-agent-handoff":
        base["bounded-steps"] = MIS
    if source in PREFIX_UNSHOWN:
        base.update({k: INV for k in ("searched-the-index", "write-then-run") if k in base})
        if scenario in DEGRADED_BY_FAILURE + EMPTY_RESULT:
            base.update({k: MIS for k in ("cites-a-source", "degraded-disclosed") if k in base})
    if source in UNNAMED_FAILED_CALLS and scenario in FAILED_CALLS:
        base.update(dict.fromkeys(TOOL_NAME_CHECKS.get(contract, set()), MIS))
        if scenario in DEGRADED_BY_FAILURE:
            base["cites-a-source"] = MIS
    if source in FAILED_CALLS_SPANLESS and not content and scenario in FAILED_CALLS:
        base.update(dict.fromkeys(TOOL_NAME_CHECKS.get(contract, set()), MIS))
        if contract == "multi-agent-handoff":
            base.update(dict.fromkeys(("research-searches", "no-destructive-tools",
                                       "bounded-steps", "search-retry"), MIS))  # fmt: skip
    if source in AGENTS_NOT_RECORDED and contract == "multi-agent-handoff":
        base.update({"agent-spans": MIS, "triage-to-research": MIS})
    if source in CALLER_UNSEEN and contract == "multi-agent-handoff":
        base["triage-to-research"] = MIS
    if source in DELEGATION_UNSEEN and contract == "multi-agent-handoff":
        base.update({"triage-to-research": INV, "research-searches": INV})
    if source in AGENTS_UNSEEN and contract == "multi-agent-handoff":
        base.update({"agent-spans": MIS, "triage-to-research": MIS, "research-searches": INV})
    if source in RESULTS_UNSEEN or (content and source in REQUESTS_READ_FROM_TEXT):
        unseen = set(OUTCOME_CHECKS[contract]) | {"degraded-disclosed", "flaky-tool"}
        if source in RUN_NEVER_SHOWN + REQUESTS_READ_FROM_TEXT:
            unseen |= CALL_RAN_CHECKS.get(contract, set())
        if scenario in CITING_ANSWERS:
            unseen.add("grounded-citations")
        else:
            unseen.add("cites-a-source")
        if not content:
            unseen |= ANSWER_CHECKS[contract]
        if source in REQUESTS_READ_FROM_TEXT and scenario in DELEGATED + NESTED:
            # the research agent's answer reads as its caller's hidden call (``AGENTS_UNSEEN``)
            unseen |= {
                n for n in TOOL_COUNT_CHECKS if n != "no-destructive-tools" or base[n] != INV
            }
        return {name: (MIS if name in unseen else outcome) for name, outcome in base.items()}
    if source in NAMES_NEVER:
        return {name: (outcome if name == "agent-spans" else MIS) for name, outcome in base.items()}
    if source in OUTCOMES_UNKNOWN:
        unknown = set(OUTCOME_CHECKS[contract]) | {"flaky-tool"}
        if scenario not in EMPTY_RESULT:
            unknown.add("degraded-disclosed")
            if scenario not in CITING_ANSWERS:
                unknown.add("cites-a-source")
        base.update({name: MIS for name in unknown if name in base})
    if (
        content
        and source in HANDOFF_TOOL_UNREAD
        and contract == "multi-agent-handoff"
        and scenario in DELEGATED
    ):
        base.update({"triage-to-research": INV, "research-searches": INV})
    if content and source in RESULTS_UNQUOTED and scenario in EMPTY_RESULT:
        base.update({"cites-a-source": INV, "degraded-disclosed": INV})
    if source in TOOLS_IN_TEXT + REQUESTS_NEVER_RECORDED:
        kept = {"agent-spans"} | ({"answer-captured"} if content else set())
        if content and "degraded-disclosed" not in CONTENT_ON[(contract, scenario)]:
            kept.add("cites-a-source")
        if content and scenario not in CITING_ANSWERS:
            kept.add("grounded-citations")  # an answer citing nothing is grounded
        return {name: (outcome if name in kept else MIS) for name, outcome in base.items()}
    if (
        source in OUTPUT_NEVER_RECORDED + TOOL_REQUESTS_UNRECORDED
        and scenario == "l_parallel_failures"
    ):
        base["search-retry"] = TOL
    if source in OUTPUT_TOOL_UNREAD and scenario in STRUCTURED:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if not content and source in OUTPUT_REQUEST_UNNAMED_WITHOUT_CONTENT and scenario in STRUCTURED:
        base.update(dict.fromkeys(TOOL_NAME_CHECKS.get(contract, set()), MIS))
    if source in ANSWER_TOOL_UNDECLARED and scenario in STRUCTURED:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if source in REJECTED_WITHOUT_SPAN and scenario == "t_invalid_args":
        base["search-retry"] = MIS
        if not content:
            base.update(dict.fromkeys(TOOL_NAME_CHECKS.get(contract, set()), MIS))
    if source in TURN_RECORDS_LAST_CALL + CALLS_UNGROUPED and scenario == "l_parallel_failures":
        base["search-retry"] = TOL
    if scenario == "w_search_denied" and source in DENIAL_UNTIED:
        base.update({"cites-a-source": MIS, "search-retry": MIS, "degraded-disclosed": MIS})
        base["searched-the-index"] = MIS  # nothing shows the denied request ran
    if scenario == "w_search_denied" and source in DENIAL_UNSEEN:
        base["searched-the-index"] = P  # known false pass: no span shows the refusal
    if scenario in DENIED and not content:
        if scenario == "w_search_denied" and source in DENIAL_ONLY_IN_CONTENT:
            if source not in DENIAL_UNTIED:
                base["searched-the-index"] = P  # known false pass: the refusal is content
            if source in DENIED_REQUEST_UNSETTLED:
                base["search-retry"] = MIS
                base["searched-the-index"] = MIS  # nothing shows the request ran
        if source in DENIED_CALL_UNNAMED_WITHOUT_CONTENT and not (
            scenario == "w_tool_denied" and source in DENIED_REQUEST_UNSEEN
        ):
            names = {"no-destructive-tools", "searched-the-index", "bounded-effort"}
            base.update(dict.fromkeys(names, MIS))
            if source in DENIED_CALL_OUTCOME_UNKNOWN:
                base["search-retry"] = MIS
    if source in THOUGHTS_AS_TEXT and scenario in REASONING:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], MIS))
    if (
        scenario == "y_unknown_tool"
        and not content
        and source in UNKNOWN_CALL_UNNAMED_WITHOUT_CONTENT
    ):
        names = ("no-destructive-tools", "searched-the-index", "bounded-effort")
        base.update(dict.fromkeys(names, MIS))
        if source in UNKNOWN_CALL_OUTCOME_UNKNOWN:
            base["search-retry"] = MIS
    if scenario == "y_unknown_tool" and source in UNKNOWN_CALL_UNSEEN:
        # the call is seen only by the output posted for it: a call no step shows
        unseen = (*TOOL_COUNT_CHECKS, "degraded-disclosed")
        base.update({name: MIS for name in unseen if name in base})
    if scenario in CUT and source in CUT_UNRECORDED:
        base.update(dict.fromkeys(ANSWER_CHECKS[contract], P))  # known false pass: no reason
    if source in HANDOFF_REQUESTS_ONLY and scenario in HANDED_OVER + NESTED and not content:
        for name in TOOL_COUNT_CHECKS:
            if name in base and not (name == "no-destructive-tools" and base[name] == INV):
                base[name] = MIS
    if content:
        return base
    if source in PARALLEL_RUN_IN_TURN and scenario == "l_parallel_failures":
        base["search-retry"] = TOL
    hidden = set(CONTENT_CHECKS[contract])
    if source in FAILED_SPANS_BLANK and scenario in FAILED_CALLS:
        hidden |= OUTCOME_CHECKS.get(contract, set())
    if source in TARGET_IN_ARGUMENTS and contract == "multi-agent-handoff":
        hidden.add("triage-to-research")
    if source in ARGUMENTS_WITHOUT_CONTENT + REQUESTS_WITHOUT_CONTENT:
        hidden -= ARGUMENT_CHECKS.get(contract, set())
    if source in NAMES_ONLY:
        hidden |= OUTCOME_CHECKS.get(contract, set())
    if source in RUN_UNSHOWN_WITHOUT_CONTENT:
        hidden |= CALL_RAN_CHECKS.get(contract, set())
    if source in OK_NOT_SHOWN:
        hidden |= {
            name
            for name in OUTCOME_CHECKS.get(contract, set())
            if scenario not in ALL_SEARCHES_FAILED or source in HANDLED_FAILURES
        }
    if source in MESSAGES_WITHOUT_CONTENT:
        hidden.discard("answer-captured")
        if base.get("grounded-citations") == P:
            hidden.discard("grounded-citations")
        if base.get("cites-a-source") == P and scenario not in EMPTY_RESULT:
            hidden.discard("cites-a-source")
        if scenario in DEGRADED_BY_FAILURE:
            hidden.discard("degraded-disclosed")
    if source in ANSWER_WITHOUT_CONTENT:
        hidden.discard("answer-captured")
        empty_seen = scenario in EMPTY_RESULT and source in EMPTY_COUNT_WITHOUT_CONTENT
        if base.get("cites-a-source") == P and (scenario not in EMPTY_RESULT or empty_seen):
            hidden.discard("cites-a-source")
        if scenario in DEGRADED_BY_FAILURE or empty_seen:
            hidden.discard("degraded-disclosed")
        if scenario not in CITING_ANSWERS:
            hidden.discard("grounded-citations")
    if source in NOTHING:
        hidden = set(base)
    agent_answer_hides_a_call = source in AGENTS_UNSEEN and scenario in DELEGATED + NESTED
    if source in TOOLS_IN_MESSAGES and source in REQUESTS_WITHOUT_CONTENT:
        hidden |= OUTCOME_CHECKS.get(contract, set())
    if source in TOOLS_IN_MESSAGES and (
        source not in REQUESTS_WITHOUT_CONTENT or agent_answer_hides_a_call
    ):
        hidden = set(base) - {"agent-spans"}
        if source in HANDOFF_BY_NESTING:
            hidden.discard("triage-to-research")
    hidden |= set(CALLED_AGAIN_UNSEEN.get((source, scenario, contract), ()))
    return {name: (MIS if name in hidden else outcome) for name, outcome in base.items()}


CONTRACTS_OF = {
    "g": ["support-rag", "multi-agent-handoff"],
    "h": ["coding-agent"],
    "n": ["support-rag", "multi-agent-handoff"],
    "s": ["support-rag", "multi-agent-handoff"],
}
"""The contracts each scenario (by its letter) is graded against; support-rag otherwise."""


DELEGATION_JOINED = ("koog",)
"""An agent called from a tool is a trace of its own with no link back (Koog starts every
agent's ``create_agent`` span as a root, under a conversation id of its own): the delegated
run is joined to the tool call that ran it (``assemble``'s delegation join: the call, named
after the agent, of the same service, holds the agent trace's root in time) and graded as one
run (``test_agent_traced_apart_is_joined_to_the_call_that_ran_it``)."""


TEAM_FRAGMENTED = ("mlflow-autogen",)
"""A team's run (the scenarios where agents hand over: ``g``, ``n``, ``s``) is one trace per
model call (MLflow's AutoGen autolog records no span of a ``Swarm``'s agents), graded
fragment by fragment (``test_team_fragments_never_pass``); its single-agent runs are one
trace each, graded as ``TOOLS_IN_MESSAGES``."""
TURNS_APART = (
    "openlit-strands",
    "openllmetry-openai-agents",
    "openai-agents-otel-genai",
    "mlflow-openai-agents",
    "strands",
    "strands-openinference",
    "smolagents-openinference",
    "llamaindex-openinference",
)
"""Each user turn of ``p_second_turn`` is a trace of its own and nothing ties them (no shared
conversation or session id, no span link): each turn's run is graded as a subject of its own
(``test_second_turn_traced_apart``)."""


def cases() -> list[tuple[str, str, str, bool]]:
    out = []
    for source in (
        *TOOL_SPANS,
        *NAMES_ONLY,
        *NOTHING,
        *TOOLS_IN_MESSAGES,
        *TOOLS_IN_TEXT,
        *REQUESTS_NEVER_RECORDED,
        *NAMES_NEVER,
    ):
        for path in sorted((TRACES / source).glob("*.otlp.json*")):
            name = path.name.split(".")[0]
            if source in TURNS_APART and name == "p_second_turn":
                continue
            if source in TEAM_FRAGMENTED and name[0] in "gns":
                continue
            variant = path.name[len(name) :].split(".otlp")[0]
            if variant not in ("", ".nocontent"):
                continue  # logs files are read with their trace; noroot etc. tested below
            for contract in CONTRACTS_OF.get(name[0], ["support-rag"]):
                out.append((source, name, contract, variant == ""))
    return out


@functools.cache
def conventions():  # type: ignore[no-untyped-def]
    return load_conventions()


@functools.cache
def contract_named(name: str) -> Contract:
    """The example contract without its ``match``: these tests pair every scenario with every
    contract on purpose, to pin each check's outcome (selection is tested in tests/pipeline)."""
    return load_contract(CONTRACTS / f"{name}.yaml").model_copy(update={"match": None})


def grade_file(path: Path, contract: Contract) -> list[tuple[Verdict, Trajectory]]:
    logs = path.parent / (path.name.split(".otlp")[0] + ".logs.otlp.jsonl")
    return grade_files([path] + ([logs] if logs.exists() else []), contract)


def grade_files(files: list[Path], contract: Contract) -> list[tuple[Verdict, Trajectory]]:
    paths = [str(f) for f in files]
    problems: list = []
    graded = [
        vt
        for trace in read_traces(paths, problems)
        for vt in grade_trace(trace, [contract], conventions())
    ]
    assert problems == [], problems
    return graded


def trace_file(source: str, scenario: str, content: bool) -> Path:
    stem = scenario + ("" if content else ".nocontent")
    found = [p for p in (TRACES / source).glob(f"{stem}.otlp.json*") if ".logs." not in p.name]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("source", "scenario", "contract", "content"),
    cases(),
    ids=lambda v: v if isinstance(v, str) else ("on" if v else "off"),
)
def test_example_contract_outcomes_match_expected_md(
    source: str, scenario: str, contract: str, content: bool
) -> None:
    graded = grade_file(trace_file(source, scenario, content), contract_named(contract))
    assert len(graded) == 1, "one trace per file"
    verdict, trajectory = graded[0]
    got = {r.name: r.outcome for r in verdict.results}
    assert trajectory.unmapped_spans == {}, "every capture is fully classified"
    want = expected(source, contract, scenario, content)
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    messages = {r.name: r.message for r in verdict.results if r.name in diff}
    assert diff == {}, f"(got, want) per check: {diff}\n{messages}"
    counts = verdict.counts
    assert counts.invariant_failures == sum(o == INV for o in want.values())
    assert counts.tolerated_failures == sum(o == TOL for o in want.values())
    assert counts.budget_exhausted == sum(o == BUD for o in want.values())
    assert counts.missing_evidence == sum(o == MIS for o in want.values())
    assert counts.errors == 0
    assert verdict.passed == all(o in (P, TOL) for o in want.values())
    assert verdict.contract_hash and verdict.contract_version == 1


HTTP_ONLY = ("openai-go-otelhttp", "langchain4j-javaagent")
"""The model SDK's HTTP client traced by OpenTelemetry's generic HTTP instrumentation alone
(``otelhttp`` in Go; the OpenTelemetry Java agent's ``java-http-client`` under LangChain4j,
which no served instrumentation covers; no GenAI instrumentation): the trace shows HTTP
requests to the model API and nothing of what they asked, answered or ran."""


@pytest.mark.parametrize(
    "path",
    sorted(p for s in HTTP_ONLY for p in (TRACES / s).glob("*.otlp.json")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_http_client_spans_alone_are_never_graded(path: Path) -> None:
    """No contract grades such a trace, for any scenario: no verdict at all, so never a pass
    (and never a failure the trace cannot show either). A forbidden deletion, a hidden failure
    or a fabricated citation in the run cannot be seen, so nothing may be said about it."""
    for contract in {c for names in CONTRACTS_OF.values() for c in names} | {"support-rag"}:
        assert grade_file(path, contract_named(contract)) == []


def calls_of(trajectory: Trajectory, tool: str) -> list[Step]:
    """The calls of ``tool`` as the checks that forbid or count calls find them (failing
    closed): plugin-qualified and ``_``-prefixed names included, and the MCP server's own
    name for a call a framework qualified (``mcp_tool``)."""
    return [
        s
        for s in trajectory.tool_calls()
        if (s.tool and tool_matches(tool, s.tool, True))
        or (
            isinstance(s.attributes.get("mcp_tool"), str)
            and tool_matches(tool, s.attributes["mcp_tool"], True)
        )
    ]


@pytest.mark.parametrize("source", [*TOOL_SPANS, *NAMES_ONLY, *NOTHING, *TOOLS_IN_MESSAGES])
def test_forbidden_tool_result_points_at_the_delete_records_span(source: str) -> None:
    verdict, trajectory = grade_file(
        trace_file(source, "d_forbidden_tool", True), contract_named("support-rag")
    )[0]
    result = next(r for r in verdict.results if r.name == "no-destructive-tools")
    deletes = calls_of(trajectory, "delete_records")
    assert len(deletes) == 1 and deletes[0].source is not None
    assert result.span_ids == [deletes[0].source.span_id]


@pytest.mark.parametrize("scenario", ["d_forbidden_tool", "m_excess_calls"])
def test_calls_written_in_code_with_only_model_spans_never_pass(
    scenario: str, tmp_path: Path
) -> None:
    """A smolagents ``CodeAgent`` writes its tool calls as Python in the reply text
    (``delete_records(table=...)`` in a ``<code>`` block). Recorded with model spans only
    (its tool spans dropped, as an instrumentation of the model client alone would record
    it), nothing but the text shows a call: the replies the loop answered with another model
    call may have asked for tools, so the checks that forbid or count calls are missing
    evidence, never a pass (before the linker read such a reply, the deletion passed
    ``no-destructive-tools``). The same rule holds Langroid's JSON tool requests
    (``langroid-text-tools-openinference``) with content off; with content on they are read
    (``REQUESTS_READ_FROM_TEXT``), while code is never read as requests."""
    doc = json.loads(trace_file("smolagents-codeagent-openinference", scenario, True).read_text())
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [
                span
                for span in scope["spans"]
                if {"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}}
                not in span.get("attributes", [])
            ]
    path = tmp_path / f"{scenario}.otlp.json"
    path.write_text(json.dumps(doc))
    contract = "support-rag"
    ((verdict, trajectory),) = grade_file(path, contract_named(contract))
    assert trajectory.generations() and not [s for s in trajectory.steps if s.tool]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert all(outcomes[name] != P for name in TOOL_NAME_CHECKS[contract]), outcomes
    if scenario == "d_forbidden_tool":
        assert outcomes["no-destructive-tools"] == MIS
    else:  # six turns that asked for calls, over the budget of five, whatever they asked
        assert outcomes["bounded-effort"] == INV


DELEGATED_FORBIDDEN = [
    source
    for source in (*TOOL_SPANS, *NAMES_ONLY, *NOTHING, *TOOLS_IN_MESSAGES, *NAMES_NEVER)
    if source not in TEAM_FRAGMENTED
    and any(TRACES.glob(f"{source}/s_delegated_forbidden.otlp.json*"))
]
"""Sources of the matrix whose run, the research agent's deletion included, is one trace."""


@pytest.mark.parametrize("source", DELEGATED_FORBIDDEN)
def test_sub_agent_deletion_is_the_runs_and_points_at_its_span(source: str) -> None:
    """The deletion the research agent made (handed the run, called as a tool, a team
    member) is the run's: both contracts fail on it wherever the trace names the call, and
    the failure points at the ``delete_records`` span, not at the triage agent's transfer.
    The call is the research agent's wherever the trace names agents, never the triage
    agent's (rig's delegated run, which opens no agent span: ``delegate_works_inside``)."""
    for contract in ("support-rag", "multi-agent-handoff"):
        graded = grade_file(
            trace_file(source, "s_delegated_forbidden", True), contract_named(contract)
        )
        assert len(graded) == 1, "the sub-agent's run is in the run's trace"
        verdict, trajectory = graded[0]
        result = next(r for r in verdict.results if r.name == "no-destructive-tools")
        assert (
            result.outcome
            == expected(source, contract, "s_delegated_forbidden", True)["no-destructive-tools"]
        )
        assert not verdict.passed
        if result.outcome != INV:
            continue
        deletes = calls_of(trajectory, "delete_records")
        assert len(deletes) == 1 and deletes[0].source is not None
        assert result.span_ids == [deletes[0].source.span_id]
        if source not in RUN_AGENT_ON_EVERY_SPAN:
            assert deletes[0].agent_name in ("research_agent", None)


RUN_AGENT_ON_EVERY_SPAN = ("llamaindex-js-openllmetry-openai",)
"""The tracer writes the application's ``withAgent`` name (``gen_ai.agent.name``, OpenLLMetry
JS's association property) on every span of the run and no span names the agent a native
handoff passed the run to (LlamaIndex.TS's research agent): the research agent's calls read as
the triage agent's. A known misattribution: a check scoped to one agent by name cannot tell
the agents' calls apart in such a trace (the run-wide checks are unaffected)."""


@pytest.mark.parametrize(
    "source",
    [
        s
        for s in TOOL_SPANS
        if s
        not in OK_NOT_SHOWN
        + UNNAMED_FAILED_CALLS
        + FAILED_CALLS_SPANLESS
        + RESULTS_UNSEEN
        + FAILED_SPANS_BLANK
        and (s, "b_tool_retry", "support-rag") not in CALLED_AGAIN_UNSEEN
    ],
)
def test_retry_result_points_at_the_retried_call(source: str) -> None:
    verdict, trajectory = grade_file(
        trace_file(source, "b_tool_retry", False), contract_named("support-rag")
    )[0]
    result = next(r for r in verdict.results if r.name == "search-retry")
    second = calls_of(trajectory, "search_docs")[1]
    assert result.outcome == TOL and result.used == 1 and result.budget == 1
    assert second.source is not None and result.span_ids == [second.source.span_id]
    assert result.why and "one retry is normal" in result.why


def test_span_and_event_variant_grades_like_a_happy() -> None:
    path = TRACES / "openai-v2-latest" / "a_happy.span_and_event.otlp.json"
    verdict, _ = grade_file(path, contract_named("support-rag"))[0]
    assert {r.name: r.outcome for r in verdict.results} == {name: P for name in SUPPORT}


NESTED_FORBIDDEN = [
    source
    for source in (*TOOL_SPANS, *NAMES_ONLY, *NOTHING, *TOOLS_IN_MESSAGES, *NAMES_NEVER)
    if source not in TEAM_FRAGMENTED and any(TRACES.glob(f"{source}/s_nested_forbidden.otlp.json*"))
]
"""Sources of the matrix that captured ``s_nested_forbidden`` (two levels of delegation)."""


@pytest.mark.parametrize("source", NESTED_FORBIDDEN)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_deepest_agent_deletion_is_the_runs_and_its_own(source: str, content: bool) -> None:
    """Two levels below the triage agent (triage -> research -> records) the records agent's
    deletion is the run's: one subject, both contracts fail on it, the failure points at the
    ``delete_records`` span, and the call is the records agent's wherever the trace names
    agents (never the research agent's, which only searched and delegated, nor the triage
    agent's). The search stays the research agent's: a mapping that hung the deeper agent's
    steps on the agent that called it would blame the wrong agent and, under a contract
    scoped to one agent, miss the call."""
    for contract in ("support-rag", "multi-agent-handoff"):
        graded = grade_file(
            trace_file(source, "s_nested_forbidden", content), contract_named(contract)
        )
        assert len(graded) == 1, "the nested agents' runs are in the run's trace"
        verdict, trajectory = graded[0]
        result = next(r for r in verdict.results if r.name == "no-destructive-tools")
        want = expected(source, contract, "s_nested_forbidden", content)
        assert result.outcome == want["no-destructive-tools"]
        assert not verdict.passed
        if result.outcome != INV:
            continue
        deletes = calls_of(trajectory, "delete_records")
        assert len(deletes) == 1 and deletes[0].source is not None
        assert result.span_ids == [deletes[0].source.span_id]
        assert deletes[0].agent_name in ("records_agent", None)
        searches = calls_of(trajectory, "search_docs")
        assert [s.agent_name for s in searches] in (["research_agent"], [None])


@pytest.mark.parametrize(
    "source",
    ["openai-v2", "openai-v2-latest", "openinference-openai", "openinference-openai-stream"],
)
def test_raw_client_app_root_is_the_run_wrapper_and_an_unknown_span_beside_it_fails_closed(
    source: str, tmp_path: Path
) -> None:
    """The raw-client apps wrap each run in their own attribute-less ``agent_run`` span. It
    holds the whole run, so it is the run's wrapper, not a blind spot: the checks pass. A
    span no convention knows beside the steps (an unknown framework's tool call) is one:
    the checks that must see every span report it; a contract that accepts that risk says
    so (``coverage: lenient``) and gets the verdicts the recognised spans alone give."""
    path = trace_file(source, "a_happy", True)
    verdict, trajectory = grade_file(path, contract_named("support-rag"))[0]
    assert trajectory.unmapped_spans == {} and trajectory.conventions[RUN_WRAPPER] == 1
    assert {r.name: r.outcome for r in verdict.results} == {name: P for name in SUPPORT}

    derived = with_unknown_leaf(path, tmp_path / "unknown.jsonl", "delete_records")
    logs = path.with_name(path.name.replace(".otlp.json", ".logs.otlp.jsonl"))
    files = [derived, logs] if logs.exists() else [derived]
    verdict, trajectory = grade_files(files, contract_named("support-rag"))[0]
    assert trajectory.unmapped_spans == {"delete_records": 1}
    strict = {r.name: r for r in verdict.results if r.name in COVERAGE_CHECKS["support-rag"]}
    assert {r.outcome for r in strict.values()} == {MIS}, "never a pass it cannot show"
    assert all("'delete_records' x1" in r.message for r in strict.values())
    lenient = contract_named("support-rag").model_copy(update={"coverage": "lenient"})
    verdict, _ = grade_files(files, lenient)[0]
    assert {r.name: r.outcome for r in verdict.results} == {name: P for name in SUPPORT}


def test_trace_without_application_root_is_graded_as_two_fragments() -> None:
    # openai-v2/a_happy.noroot: each chat call is its own trace. The first holds the tool
    # request but no answer, and nothing in it runs the tool: the run went on outside it;
    # the second holds the answer, and its input shows a tool call made outside it. So
    # tool-dependent checks cannot be judged on either (a fragment proves nothing about
    # which tools the whole run used), while the citation is grounded in the tool result
    # the model was handed.
    graded = grade_file(
        TRACES / "openai-v2" / "a_happy.noroot.otlp.json", contract_named("support-rag")
    )
    assert len(graded) == 2
    by_answer = sorted(graded, key=lambda vt: len(vt[1].generations()[0].input_messages or []))
    first = {r.name: r.outcome for r in by_answer[0][0].results}
    second = {r.name: r.outcome for r in by_answer[1][0].results}
    assert first == {name: MIS for name in SUPPORT}
    assert second == {
        "answer-captured": P,
        "no-destructive-tools": MIS,
        "searched-the-index": MIS,
        "grounded-citations": P,
        "cites-a-source": P,
        "bounded-effort": MIS,
        "search-retry": MIS,
        "degraded-disclosed": MIS,
    }
    for verdict, _ in by_answer:
        fragment = next(r for r in verdict.results if r.name == "searched-the-index")
        assert "only part of the run" in fragment.message


@pytest.mark.parametrize("source", DELEGATION_JOINED)
@pytest.mark.parametrize("scenario", DELEGATED)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_agent_traced_apart_is_joined_to_the_call_that_ran_it(
    source: str, scenario: str, content: bool
) -> None:
    """The file holds the triage agent's trace and the research agent's, which nothing links:
    they are one subject, the research agent's run hung under the ``research_agent`` tool call
    that ran it, and that call is the delegation (a handoff from the triage agent to the
    research agent), graded as every other source's delegation is (the matrix test). Held
    out, graded as two traces: 28 checks wrong over the 24 verdicts, 5 of them false passes
    (``no-destructive-tools`` passed on the triage agent's trace of ``s_delegated_forbidden``,
    whose research agent deleted records, with both contracts and content on and off;
    ``degraded-disclosed`` passed on the triage agent's trace of ``s_delegated_failure``),
    and 5 verdicts wrong."""
    path = trace_file(source, scenario, content)
    assert len({s.trace_id for t in read_traces([str(path)], []) for s in t.spans}) == 2
    ((verdict, trajectory),) = grade_file(path, contract_named("multi-agent-handoff"))
    handoffs = [(h.from_agent, h.to_agent, h.tool) for h in trajectory.handoffs()]
    assert handoffs == [("triage_agent", "research_agent", "research_agent")]
    (handoff,) = trajectory.handoffs()
    research = [s for s in trajectory.tool_calls() if s.agent_name == "research_agent"]
    assert research and all(s.index > handoff.index for s in research)
    want = expected(source, "multi-agent-handoff", scenario, content)
    assert {r.name: r.outcome for r in verdict.results} == want


HISTORY_AS_TEXT = (
    "smolagents-openinference",
    "smolagents-openinference-stream",
    "llamaindex-openinference",
)
"""The second turn's model input holds the first turn only as text (smolagents' memory
replayed as messages, LlamaIndex's chat memory of user and assistant messages), no tool call
or result: nothing in that trace shows that the conversation began before it."""


def second_turn_expected(source: str, content: bool) -> dict[str, Outcome]:
    """The second turn's run, graded alone: the deletion it recorded fails
    ``no-destructive-tools`` in every case. Where its model input hands back the first
    turn's tool calls (content on), the trace is a fragment of the conversation: the checks
    about the whole run are missing evidence, and the citation is grounded in the result the
    model was given. Where nothing shows the first turn (content off, ``HISTORY_AS_TEXT``),
    the run never searched and cites a document no result in it returned: those checks fail
    (known false fails of a conversation that did search, never a pass). A source that
    records content whatever its switch (``CONTENT_IGNORES_SWITCH``) grades as content on."""
    want = expected(source, "support-rag", "p_second_turn", content)
    shown = content or source in CONTENT_IGNORES_SWITCH
    if shown and source not in HISTORY_AS_TEXT:
        for name in ("searched-the-index", "bounded-effort", "search-retry"):
            want[name] = MIS
        want["degraded-disclosed"] = MIS  # the earlier search's outcome is not in the trace
    else:
        want["searched-the-index"] = INV
        if shown:
            want["grounded-citations"] = INV
    return want


@pytest.mark.parametrize("source", TURNS_APART)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_second_turn_traced_apart(source: str, content: bool) -> None:
    """``p_second_turn`` on a source that traces each user turn apart, with nothing tying the
    traces: two subjects. The first turn's run searched and answered, as ``a_happy`` (it
    deleted nothing, so it passes what it can show); the second's recorded deletion is an
    invariant failure, even on a trace that holds only part of the conversation (a failure
    seen stays a failure: ``failure_stands_on_gaps``). Held out before that: with content on
    the deletion was missing evidence on three of the five sources."""
    graded = grade_file(trace_file(source, "p_second_turn", content), contract_named("support-rag"))
    assert len(graded) == 2, "one trace per user turn"
    by_turn = {}
    for verdict, trajectory in graded:
        assert trajectory.unmapped_spans == {}
        deleted = any(s.tool == "delete_records" for s in trajectory.tool_calls())
        by_turn[2 if deleted else 1] = verdict
    first = {r.name: r.outcome for r in by_turn[1].results}
    assert first == expected(source, "support-rag", "a_happy", content)
    second = {r.name: r.outcome for r in by_turn[2].results}
    assert second == second_turn_expected(source, content)
    assert second["no-destructive-tools"] == INV and not by_turn[2].passed


FRAGMENTED = ("openlit-llamaindex",)
"""Each model call is a trace of its own (OpenLIT records nothing of LlamaIndex's agent
workflow: every ``chat`` span is a root), so a run is graded as one fragment per model call.
Held out (before ``fragment_gap``): no verdict passed, but 10 checks about the whole run
passed on fragments that cannot show it (``no-destructive-tools`` before the forbidden call,
``no-network`` beside the ``curl`` command, ``search-retry`` after the failed searches)."""
DEGRADED = tuple(s for (_, s), want in CONTENT_ON.items() if "degraded-disclosed" in want)
"""Scenarios whose run is degraded: ``citation_required`` exempts a degraded answer, and
whether the run degraded is known only from its tool outcomes, which no fragment holds."""


def fragment_expected(
    contract: str, scenario: str, answered: bool, trajectory: Trajectory | None = None
) -> dict[str, Outcome]:
    """Every check about the run (tools, counts, retries, files, network, transfers) is
    missing evidence on a fragment; only the fragment holding the final answer (content on)
    shows the answer checks that read nothing but the answer and the results it was given.
    A fragment that records the forbidden call (the model call that requested
    ``delete_records``, ``trajectory``) fails ``no-destructive-tools``, and one that records
    the ``curl`` command fails ``no-network``: a failure seen stands whatever the rest of the
    run holds."""
    want = dict.fromkeys(CHECKS[contract], MIS)
    if (
        trajectory is not None
        and "no-destructive-tools" in want
        and calls_of(trajectory, "delete_records")
    ):
        want["no-destructive-tools"] = INV
    if (
        trajectory is not None
        and "no-network" in want
        and any(s.command and "curl " in s.command for s in trajectory.steps)
    ):
        want["no-network"] = INV
    if not answered:
        return want
    truth = expected("openlit-llamaindex", contract, scenario, True)
    for name in ("answer-captured", "grounded-citations", "cites-a-source"):
        if name in want and not (name == "cites-a-source" and scenario in DEGRADED):
            want[name] = truth[name]
    return want


@pytest.mark.parametrize("source", FRAGMENTED)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_fragments_of_a_run_never_pass_checks_about_the_whole_run(
    source: str, content: bool
) -> None:
    """A trace that is one model call of a longer run (its root is the model call; it
    requests tools nothing in it runs, or its input shows results of calls made elsewhere,
    or its input is hidden) cannot show what the run did: no fragment passes a check about
    the whole run, and the forbidden call, the ``curl`` command and the exhausted retries
    are never passed over."""
    seen = 0
    for path in sorted((TRACES / source).glob("*.otlp.json")):
        scenario = path.name.split(".")[0]
        if ".logs." in path.name or (".nocontent." in path.name) == content:
            continue
        contracts = {"g": ["support-rag", "multi-agent-handoff"], "h": ["coding-agent"]}
        for contract in contracts.get(scenario[0], ["support-rag"]):
            graded = grade_file(path, contract_named(contract))
            assert len(graded) > 1, "one trace per model call"
            answered = 0
            for verdict, trajectory in graded:
                assert trajectory.unmapped_spans == {}
                got = {r.name: r.outcome for r in verdict.results}
                has_answer = content and any(
                    "stop" in (g.finish_reasons or ()) for g in trajectory.generations()
                )
                answered += has_answer
                want = fragment_expected(contract, scenario, has_answer, trajectory)
                assert got == want, (path.name, contract, trajectory.trace_id)
                assert not verdict.passed
                seen += 1
            assert answered == (1 if content else 0)
    assert seen == 40  # one fragment per model call (g graded with both contracts)


@pytest.mark.parametrize("source", TEAM_FRAGMENTED)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_team_fragments_never_pass(source: str, content: bool) -> None:
    """A team run recorded as one trace per model call: no fragment's verdict passes, no
    fragment passes a check on which tools the run called, and the fragment that records
    the research agent's request for ``delete_records`` fails ``no-destructive-tools``."""
    seen = deletions = 0
    for name in ("g_handoff", "n_handback", "s_delegated_forbidden", "s_delegated_failure"):
        for contract in CONTRACTS_OF[name[0]]:
            graded = grade_file(trace_file(source, name, content), contract_named(contract))
            assert len(graded) > 1, "one trace per model call"
            for verdict, trajectory in graded:
                got = {r.name: r.outcome for r in verdict.results}
                assert not verdict.passed, (name, contract, trajectory.trace_id)
                for check in ("no-destructive-tools", "searched-the-index", "bounded-effort",
                              "bounded-steps", "search-retry", "research-searches"):  # fmt: skip
                    assert got.get(check, MIS) in (MIS, INV), (name, contract, check)
                if calls_of(trajectory, "delete_records"):
                    assert got["no-destructive-tools"] == INV
                    deletions += 1
                seen += 1
    assert seen > 8 and deletions == (2 if content else 0)


TOOL_NAMES_UNRECORDED = ("mlflow-smolagents",)
"""Tool spans that name no tool (MLflow's smolagents autolog names each after the tool's
class, ``SimpleTool.__call__``) and no model call recorded. Held out, the class was read as
the tool's name: ``delete_records`` was never seen, so ``no-destructive-tools`` passed on the
runs that deleted records, and ``search-retry`` on runs that retried."""


@pytest.mark.parametrize("source", TOOL_NAMES_UNRECORDED)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_unnamed_tool_spans_never_pass_checks_on_tool_names(source: str, content: bool) -> None:
    """Every check that must know which tools ran is missing evidence (or a failure the trace
    shows, such as a count over budget), never a pass, and no verdict passes where the run
    broke an invariant."""
    seen = 0
    for path in sorted((TRACES / source).glob("*.otlp.json")):
        name = path.name.split(".")[0]
        if (".nocontent." in path.name) == content:
            continue
        for contract in CONTRACTS_OF.get(name[0], ["support-rag"]):
            truth = expected("__truth__", contract, name, True)
            for verdict, _ in grade_file(path, contract_named(contract)):
                got = {r.name: r.outcome for r in verdict.results}
                for check in TOOL_NAME_CHECKS.get(contract, set()) | {"bounded-steps"}:
                    if check in got and check != "degraded-disclosed":
                        assert got[check] in (MIS, INV), (path.name, contract, check)
                if any(o in (INV, BUD) for o in truth.values()):
                    assert not verdict.passed, (path.name, contract)
                seen += 1
    assert seen >= 20


MODEL_RETRY_SOURCES = tuple(
    sorted(
        p.parent.name for p in TRACES.glob("*/u_model_retry.otlp.json*") if ".logs." not in p.name
    )
)
"""The sources that captured ``u_model_retry`` (the model API's first request answered HTTP
503, retried by the client, the framework, or nothing)."""


def failed_model_spans_shown(source: str, content: bool) -> int:
    """How many failed model-call spans EXPECTED.md says the capture's trace holds."""
    variant = "u_model_retry" + ("" if content else ".nocontent")
    text = (TRACES / source / "EXPECTED.md").read_text(encoding="utf-8")
    found = re.search(
        rf"^- `{re.escape(variant)}`: .*failed model-call spans in trace: (\d+)", text, re.M
    )
    assert found, f"{source}: EXPECTED.md names no failed model-call count for {variant}"
    return int(found.group(1))


@pytest.mark.parametrize("source", MODEL_RETRY_SOURCES)
@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_failed_model_call_is_a_model_call_failure_only(source: str, content: bool) -> None:
    """``u_model_retry``: each failed model-call span the trace holds is one failed model-call
    step (a recovered retry's first try stays a step of its own, never merged into the call
    that answered nor hidden), no tool call failed, and where the run recovered every check
    comes out as on ``a_happy``'s run: a failed model call is no tool failure, no tool retry,
    no degraded dependency and, followed by one that answered, no run error."""
    assert len(MODEL_RETRY_SOURCES) >= 12
    contract = contract_named("support-rag")
    [(verdict, trajectory)] = grade_file(trace_file(source, "u_model_retry", content), contract)
    failed = [
        g
        for g in trajectory.generations()
        if g.status == "error" or "error" in (g.finish_reasons or [])
    ]
    assert len(failed) == failed_model_spans_shown(source, content)
    assert [s.index for s in trajectory.tool_calls() if s.status == "error"] == []
    if source in MODEL_RETRY_UNRECOVERED:
        assert failed, "the run ended in the failed call: the trace must show it"
        return
    [(happy, _)] = grade_file(trace_file(source, "a_happy", content), contract)
    assert {r.name: r.outcome for r in verdict.results} == {
        r.name: r.outcome for r in happy.results
    }
