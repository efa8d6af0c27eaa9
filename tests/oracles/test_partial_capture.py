"""A tracer that records less than the captures hold must never turn a failing check into a
pass (DESIGN section 8): an attribute left out makes a check missing evidence, or leaves its
verdict as it was, but is not read as "nothing happened". Derived at test time from real
captures by leaving attribute keys out (``tests/support/unknown_spans.without_attributes``):
what another version of the tracer, or a content setting that drops one field, would export.

Found by leaving out one attribute key at a time from every capture whose expected verdict
has a failing check and grading again; the keys below are the ones that turned a failure
into a pass before the fixes they name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from otel_oracles.model.result import Outcome
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, grade_files
from tests.support.unknown_spans import without_attributes

NOT_PASSED = {Outcome.INVARIANT_FAILURE, Outcome.MISSING_EVIDENCE, Outcome.BUDGET_EXHAUSTED}

ARGUMENT_KEY = re.compile(
    r"^llm\.(input|output)_messages\.\d+\.message\.tool_calls\.\d+\.tool_call\.function\.arguments$"
)


def _keys(path: Path, pattern: re.Pattern[str]) -> set[str]:
    doc = json.loads(path.read_text())
    return {
        a["key"]
        for rs in doc["resourceSpans"]
        for scope in rs["scopeSpans"]
        for span in scope["spans"]
        for a in span.get("attributes", [])
        if pattern.match(a["key"])
    }


@pytest.mark.parametrize(
    "source", ["groq-openinference", "langchain-agents-openinference", "langgraph-openinference"]
)
def test_tool_calls_whose_arguments_were_not_recorded_are_not_calls_without_arguments(
    source: str, tmp_path: Path
) -> None:
    """OpenInference leaves out empty arguments, and a tracer hiding content may leave out
    every call's arguments while keeping the tool names: the model's requested calls then say
    nothing of their arguments, so the coding agent's ``curl`` (in a ``run_command`` whose
    span, where there is one, records its string input, which is no arguments object) cannot
    be ruled out. Before, absent arguments were read as ``{}`` and ``no-network`` passed."""
    path = TRACES / source / "h_coding_agent.otlp.json"
    contract = contract_named("coding-agent")
    verdict, _ = grade_files([path], contract)[0]
    assert {r.name: r.outcome for r in verdict.results}["no-network"] == Outcome.INVARIANT_FAILURE
    keys = _keys(path, ARGUMENT_KEY)
    assert keys, "the capture records the requested calls' arguments"
    derived = without_attributes(path, tmp_path / "no-arguments.jsonl", keys)
    verdict, _ = grade_files([derived], contract)[0]
    result = {r.name: r for r in verdict.results}["no-network"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message
    assert "arguments" in result.message


def test_a_wrapper_span_read_as_a_model_call_does_not_hide_the_model_s_answer(
    tmp_path: Path,
) -> None:
    """OpenLLMetry's Haystack instrumentation records the output field's name (``replies``)
    as the reply on its wrapper span; ``haystack.yaml`` knows that span by its
    ``llm.request.type``. Without that attribute the wrapper is read as a model call stacked
    on the OpenAI SDK's span of the same call: the merged step must keep the model's real
    answer (the layer nearer the wire), so the fabricated citation still fails."""
    path = TRACES / "haystack-openllmetry" / "e_fabricated_citation.otlp.json"
    derived = without_attributes(path, tmp_path / "no-request-type.jsonl", {"llm.request.type"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes["grounded-citations"] in NOT_PASSED
    assert outcomes["grounded-citations"] == Outcome.INVARIANT_FAILURE


@pytest.mark.parametrize(
    ("scenario", "check"),
    [
        ("d_forbidden_tool", "no-destructive-tools"),
        ("c_retry_exhausted", "search-retry"),
        ("j_undisclosed_failure", "degraded-disclosed"),
    ],
)
@pytest.mark.parametrize(
    ("source", "name_key"),
    [("llamaindex-openinference", "tool.name"), ("mlflow-llamaindex", "name")],
)
def test_a_llamaindex_tool_span_without_its_name_is_an_unnamed_call(
    scenario: str, check: str, source: str, name_key: str, tmp_path: Path
) -> None:
    """LlamaIndex's tool spans are named after the instrumented method
    (``FunctionTool.acall`` for every tool), by OpenInference and by MLflow's autolog alike:
    without the attribute that names the tool the call is unnamed, so the checks that must
    know which tools ran are missing evidence. Before, every call was a call of
    ``FunctionTool.acall`` and these failing checks passed. The model's own request for
    ``delete_records`` still names that call: a forbidden call seen, whose failure stands
    whatever else is missing (``failure_stands_on_gaps``)."""
    path = TRACES / source / f"{scenario}.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {name_key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}[check]
    seen = Outcome.INVARIANT_FAILURE if check == "no-destructive-tools" else None
    assert result.outcome == (seen or Outcome.MISSING_EVIDENCE), result.message


@pytest.mark.parametrize(
    ("scenario", "check"),
    [("b_tool_retry", "search-retry"), ("j_undisclosed_failure", "degraded-disclosed")],
)
@pytest.mark.parametrize(
    ("source", "name_key"),
    [("llamaindex-retriever-openinference", "tool.name"), ("mlflow-llamaindex-retriever", "name")],
)
def test_a_retriever_tool_span_without_its_name_is_an_unnamed_call(
    scenario: str, check: str, source: str, name_key: str, tmp_path: Path
) -> None:
    """A LlamaIndex ``RetrieverTool``'s span holds the retriever's spans, merged into it as one
    call (one search, one call). Without the attribute naming the tool, the call stays
    unnamed: the checks that must know which tools ran are missing evidence. Before, the
    merged call took the retriever's name, the failed search became another tool's failure,
    and these failing checks passed ("no retries", "no dependency degraded")."""
    path = TRACES / source / f"{scenario}.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {name_key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}[check]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize("source", ["langgraph-openinference", "langgraphjs-openinference"])
def test_a_langgraph_run_s_reply_is_its_last_message_not_its_whole_state(
    source: str, tmp_path: Path
) -> None:
    """With the model calls' reply text not recorded, the answer is the agent's: LangGraph's
    output state holds every message of the run (the question, the search results citing
    doc-17 and doc-42, the reply). Its reply is the last message, "I do not know...", which
    cites nothing; before, the dump of the whole state was the answer and ``cites-a-source``
    passed ``k_unfounded_uncertainty`` on the search results' ids."""
    path = TRACES / source / "k_unfounded_uncertainty.otlp.json"
    keys = _keys(path, re.compile(r"^llm\.output_messages\.\d+\.message\.content$"))
    derived = without_attributes(path, tmp_path / "no-reply-text.jsonl", keys)
    verdict, trajectory = grade_files([derived], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes["cites-a-source"] == Outcome.INVARIANT_FAILURE
    agent = trajectory.agents()[0]
    assert agent.output_messages is not None
    assert [p["content"] for p in agent.output_messages[0]["parts"]] == [
        "I do not know the refund window for enterprise customers."
    ]


@pytest.mark.parametrize(
    ("scenario", "check"),
    [("i_parallel_tools", "no-destructive-tools"), ("j_undisclosed_failure", "degraded-disclosed")],
)
def test_a_tool_span_named_in_the_genai_form_names_its_tool(
    scenario: str, check: str, tmp_path: Path
) -> None:
    """OpenInference's ADK instrumentor keeps ADK's span names (``execute_tool <tool>``):
    without ``tool.name`` the tool is the name's tool part. Before, the tool was named
    ``execute_tool delete_records``, which no contract's ``delete_records`` matches, and the
    forbidden call and the failed search passed unseen."""
    path = TRACES / "openinference-google-adk" / f"{scenario}.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes[check] == Outcome.INVARIANT_FAILURE


@pytest.mark.parametrize(
    "source", ["smolagents-openinference", "smolagents-codeagent-openinference"]
)
def test_a_smolagents_tool_span_without_its_name_is_an_unnamed_call(
    source: str, tmp_path: Path
) -> None:
    """smolagents' OpenInference tool spans are named after the tool's class (``SimpleTool``
    for every ``@tool`` function): without ``tool.name`` the call is unnamed. Before, the
    forbidden ``delete_records`` was a call of ``SimpleTool`` and passed. The
    ``ToolCallingAgent``'s model still names the call it requests: a forbidden call seen,
    whose failure stands whatever else is missing (``failure_stands_on_gaps``); the
    ``CodeAgent``'s requests are code text, which names no call: missing evidence."""
    path = TRACES / source / "d_forbidden_tool.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["no-destructive-tools"]
    named = source == "smolagents-openinference"
    want = Outcome.INVARIANT_FAILURE if named else Outcome.MISSING_EVIDENCE
    assert result.outcome == want, result.message


def test_a_decorated_agent_that_returned_nothing_gave_no_answer(tmp_path: Path) -> None:
    """OpenLLMetry's ``@agent`` decorator records the function's JSON-encoded return value;
    the capture's agent returns nothing (``null``). With the model's reply not recorded,
    ``null`` was read as the answer, which cites no ids, and ``grounded-citations`` passed
    ``e_fabricated_citation``; now the answer is not captured (missing evidence)."""
    path = TRACES / "traceloop-sdk" / "e_fabricated_citation.otlp.json"
    derived = without_attributes(path, tmp_path / "no-reply.jsonl", {"gen_ai.completion.0.content"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["grounded-citations"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message


@pytest.mark.parametrize("key", ["gen_ai.tool_call.id", "gen_ai.operation.name"])
def test_an_adk_tool_response_whose_status_says_error_is_a_failed_call(
    key: str, tmp_path: Path
) -> None:
    """ADK for Java answers a tool that threw with ``{"status": "error", ...}`` and ends
    its span OK; ``adk-java.yaml`` knows its tool spans by ``gen_ai.tool_call.id``. Without
    that attribute (or the operation name) the span is read by ``google-adk.yaml``, which now
    reads ADK's documented ``status`` outcome too: three failed searches are two retries
    over the budget. Before, they were three successful searches and ``search-retry``
    passed."""
    path = TRACES / "adk-java" / "c_retry_exhausted.otlp.json"
    derived = without_attributes(path, tmp_path / "partial.jsonl", {key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes["search-retry"] == Outcome.BUDGET_EXHAUSTED


@pytest.mark.parametrize(
    ("scenario", "check", "want"),
    [
        ("c_retry_exhausted", "search-retry", Outcome.BUDGET_EXHAUSTED),
        ("j_undisclosed_failure", "degraded-disclosed", Outcome.INVARIANT_FAILURE),
    ],
)
@pytest.mark.parametrize("key", [None, "gen_ai.operation.name"])
def test_an_agentscope_tool_response_whose_state_says_error_is_a_failed_call(
    scenario: str, check: str, want: Outcome, key: str | None, tmp_path: Path
) -> None:
    """AgentScope catches a tool's exception, hands the model its message in a
    ``ToolResponse`` envelope whose ``state`` is ``error`` and ends the ``execute_tool``
    span OK: ``agentscope.yaml`` reads the envelope's state as the outcome. Held out, the
    failed searches were successful ones (``search-retry`` passed ``c``, ``degraded-disclosed``
    passed ``j``); without the operation name the span is still known by its scope and name,
    so the generic GenAI tool rule, which does not know the envelope, never reads it."""
    path = TRACES / "agentscope" / f"{scenario}.otlp.json"
    if key is not None:
        path = without_attributes(path, tmp_path / "partial.jsonl", {key})
    verdict, _ = grade_files([path], contract_named("support-rag"))[0]
    outcomes = {r.name: r.outcome for r in verdict.results}
    assert outcomes[check] == want


def test_an_agentscope_tool_span_without_its_result_has_no_known_outcome(
    tmp_path: Path,
) -> None:
    """The envelope is AgentScope's only failure signal (the span ends OK either way): with
    ``gen_ai.tool.call.result`` left out, an OK span shows no outcome, so the retries of
    ``c_retry_exhausted`` are missing evidence, never three successful searches."""
    path = TRACES / "agentscope" / "c_retry_exhausted.otlp.json"
    derived = without_attributes(path, tmp_path / "no-result.jsonl", {"gen_ai.tool.call.result"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize(
    ("scenario", "check", "want"),
    [
        ("c_retry_exhausted", "search-retry", Outcome.BUDGET_EXHAUSTED),
        ("j_undisclosed_failure", "degraded-disclosed", Outcome.INVARIANT_FAILURE),
    ],
)
def test_an_upsonic_failure_flagged_a_success_is_a_failed_call(
    scenario: str, check: str, want: Outcome
) -> None:
    """Upsonic 0.77.3 catches a tool's exception, hands the model its bare message and ends
    the ``tool.execute`` span OK with ``upsonic.tool.success`` true. ``upsonic.yaml`` reads
    the result's form instead (a returned result is wrapped in Upsonic's function dict, a
    caught failure is not): the failed searches are failures, so ``c`` exhausts its retries
    and ``j`` hides a degraded search."""
    path = TRACES / "upsonic" / f"{scenario}.otlp.json"
    verdict, _ = grade_files([path], contract_named("support-rag"))[0]
    assert {r.name: r.outcome for r in verdict.results}[check] == want


def test_an_upsonic_tool_span_without_its_output_has_no_known_outcome(tmp_path: Path) -> None:
    """The output's form is Upsonic's only failure signal: with ``langfuse.observation.output``
    left out (as its content switch leaves it), an OK span flagged a success shows no outcome,
    so the three failed searches of ``c_retry_exhausted`` are missing evidence, never three
    successful ones."""
    path = TRACES / "upsonic" / "c_retry_exhausted.otlp.json"
    derived = without_attributes(
        path, tmp_path / "no-output.jsonl", {"langfuse.observation.output"}
    )
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize(
    "scenario",
    ["b_tool_retry.nocontent", "c_retry_exhausted.nocontent", "l_parallel_failures.nocontent"],
)
def test_a_pipecat_tool_span_without_its_result_has_no_known_outcome(
    scenario: str, tmp_path: Path
) -> None:
    """openinference-instrumentation-pipecat ends every TOOL span OK whatever the function
    reported; the result's ``error`` key is the only failure signal. With ``tool.result`` left
    out (and no ``output.value``, as with content off), an OK span shows no outcome, so the
    failed searches are missing evidence for ``search-retry``, never "no retries"."""
    path = TRACES / "pipecat-openinference" / f"{scenario}.otlp.json"
    contract = contract_named("support-rag")
    verdict, _ = grade_files([path], contract)[0]
    assert {r.name: r.outcome for r in verdict.results}["search-retry"] in NOT_PASSED | {
        Outcome.TOLERATED
    }
    derived = without_attributes(path, tmp_path / "no-result.jsonl", {"tool.result"})
    verdict, _ = grade_files([derived], contract)[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize("scenario", ["d_forbidden_tool", "i_parallel_tools"])
def test_an_openlit_pydantic_ai_graph_node_span_is_no_tool_call_without_its_operation(
    scenario: str, tmp_path: Path
) -> None:
    """OpenLIT's Pydantic AI instrumentor names the tool-calls node's span ``execute_tool
    <model>`` and writes no tool name: without ``gen_ai.operation.name`` it read as a call of a
    tool named after the model, the forbidden call's request beside it went unread (content
    off), and ``no-destructive-tools`` passed. The node is known by its span name too."""
    path = TRACES / "openlit-pydantic-ai" / f"{scenario}.nocontent.otlp.json"
    derived = without_attributes(path, tmp_path / "no-operation.jsonl", {"gen_ai.operation.name"})
    graded = grade_files([derived], contract_named("support-rag"))
    # The agents' definitions are traces of their own; the run is the trace with agents.
    verdict = next(v for v, trajectory in graded if trajectory.agents())
    result = {r.name: r for r in verdict.results}["no-destructive-tools"]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize("source", ["openlit-openai", "openlit-crewai", "openlit-pydantic-ai"])
def test_openlit_requests_without_their_argument_texts_show_no_command(
    source: str, tmp_path: Path
) -> None:
    """With content off the coding agent's ``curl`` is seen in OpenLIT's joined argument texts
    on the chat spans (``openlit_tool_calls``); a tracer that left them out names the calls
    but says nothing of their arguments, so ``no-network`` cannot pass."""
    path = TRACES / source / "h_coding_agent.nocontent.otlp.json"
    contract = contract_named("coding-agent")
    verdict, _ = grade_files([path], contract)[0]
    assert {r.name: r.outcome for r in verdict.results}["no-network"] == Outcome.INVARIANT_FAILURE
    derived = without_attributes(path, tmp_path / "no-args.jsonl", {"gen_ai.tool.args"})
    verdict, _ = grade_files([derived], contract)[0]
    result = {r.name: r for r in verdict.results}["no-network"]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize("key", ["gen_ai.tool_call.id", "gen_ai.operation.name"])
def test_an_adk_java_tool_span_writing_less_shows_no_success_without_its_response(
    key: str, tmp_path: Path
) -> None:
    """With content off ADK for Java writes its tool responses as ``{}`` and ends a tool
    that threw OK, so no outcome is known (``search-retry`` missing evidence). Without the Java
    call id, or without the operation name, the span was read by ``google-adk.yaml`` as one of
    the Python tracer's, whose OK status is a success: the three failed searches passed as no
    retries. Found by the scan of missing-evidence truths (``partial_capture_scan``)."""
    path = TRACES / "adk-java" / "c_retry_exhausted.nocontent.otlp.json"
    derived = without_attributes(path, tmp_path / "partial.jsonl", {key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message


@pytest.mark.parametrize(
    ("source", "capture", "key", "check"),
    [
        ("genkit", "c_retry_exhausted", "genkit:output", "search-retry"),
        ("genkit-go", "c_retry_exhausted", "genkit:output", "search-retry"),
        ("griptape", "d_forbidden_tool", "tags", "no-destructive-tools"),
        ("griptape", "c_retry_exhausted", "tags", "search-retry"),
        ("haystack-openllmetry", "a_happy.nocontent", "llm.request.type", "answer-captured"),
        (
            "crewai-openinference",
            "q_turn_limit",
            "llm.output_messages.0.message.content",
            "cites-a-source",
        ),
    ],
)
def test_a_key_left_out_leaves_a_check_that_cannot_pass_unpassed(
    source: str, capture: str, key: str, check: str, tmp_path: Path
) -> None:
    """Found by the scan of every truth that is not a pass (missing evidence and tolerated
    failures too). Genkit: a tool returning ``{"error": ...}`` ends OK, so without
    ``genkit:output`` an OK tool span shows no outcome (the failed searches passed as no
    retries). Griptape: without ``tags`` a tool's ``try_run()`` was a structure's plumbing and
    the prompt driver's ``run()`` an agent, so no tool ran and the checks on tools passed; a
    ``try_run()`` that is no structure's (``Agent``, ``Pipeline``, ``Workflow``) is a tool call.
    OpenLLMetry's Haystack generator span without ``llm.request.type``: its output field's
    name (``replies``) was the captured answer with content off; it is known by its name.
    CrewAI's default mode without the last model call's text: the agent span's output was
    read whole, the ``TaskOutput`` with the agent's messages and every tool result in them,
    whose document ids passed ``cites-a-source`` on an answer citing nothing; the answer is
    its ``raw`` text (``crewai.yaml``)."""
    path = TRACES / source / f"{capture}.otlp.json"
    derived = without_attributes(path, tmp_path / "partial.jsonl", {key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}[check]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize(
    ("source", "key"),
    [
        ("langgraph-openllmetry", "traceloop.span.kind"),
        ("langchain-create-agent-openllmetry", "traceloop.span.kind"),
        ("mlflow-langgraph", "tool_call_id"),
        ("mlflow-create-agent", "tool_call_id"),
        ("mirascope", "gen_ai.operation.name"),
    ],
)
def test_a_handled_tool_error_s_ok_span_shows_no_success_without_the_key_that_names_it(
    source: str, key: str, tmp_path: Path
) -> None:
    """LangChain tools that handle their error end OK (``OK_NOT_SHOWN``), and Mirascope hands
    the model a raised exception's bare message (``OUTCOMES_UNKNOWN``): with the output not
    recorded an OK call shows no outcome, so ``search-retry`` on ``a_happy`` is missing
    evidence. The rule that knew it was matched by one key (OpenLLMetry's
    ``traceloop.span.kind``, the LangChain callback's ``tool_call_id`` in MLflow's span, the
    operation name on Mirascope's chat span); without it a generic rule read every OK call as
    a success and the check passed. The rules now know the spans by the other marks they carry
    (the GenAI operation, the callback's ``color`` and LangGraph metadata, the span name)."""
    path = TRACES / source / "a_happy.nocontent.otlp.json"
    if source == "mirascope":
        path = TRACES / source / "a_happy.otlp.json"  # its outcomes are unknown in both
    derived = without_attributes(path, tmp_path / "partial.jsonl", {key})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message


def test_a_llamaindex_openllmetry_call_tool_step_without_its_name_is_still_the_call(
    tmp_path: Path,
) -> None:
    """OpenLLMetry's LlamaIndex call_tool step (``BaseWorkflowAgent.task``) ends OK whether or
    not the tool raised; its ``ToolCallResult`` output says (``is_error``). Without
    ``tool.name`` the step was plumbing and the model's requests stood for the calls, read as
    successes: the three failed searches of ``c_retry_exhausted`` passed ``search-retry``. The
    step is known by its ``tool.arguments`` too and named by its result's ``tool_name``."""
    path = TRACES / "llamaindex-openllmetry" / "c_retry_exhausted.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    verdict, _ = grade_files([derived], contract_named("support-rag"))[0]
    result = {r.name: r for r in verdict.results}["search-retry"]
    assert result.outcome == Outcome.BUDGET_EXHAUSTED, result.message


@pytest.mark.parametrize("source", ["crewai-openinference", "crewai-openinference-events"])
def test_a_crewai_tool_span_without_its_name_is_named_after_its_span(
    source: str, tmp_path: Path
) -> None:
    """CrewAI's tool spans are named ``<tool>.run``. Without ``tool.name`` the generic rule
    named the call ``write_file.run``, no file edit, so with content off the coding agent's
    writes were unknown tools and ``pytest-config-untouched`` passed (truth: missing
    evidence, the written paths are hidden). ``crewai.yaml`` names it ``write_file``."""
    path = TRACES / source / "h_coding_agent.nocontent.otlp.json"
    derived = without_attributes(path, tmp_path / "no-tool-name.jsonl", {"tool.name"})
    verdict, _ = grade_files([derived], contract_named("coding-agent"))[0]
    result = {r.name: r for r in verdict.results}["pytest-config-untouched"]
    assert result.outcome == Outcome.MISSING_EVIDENCE, result.message


@pytest.mark.parametrize(
    ("scenario", "contract", "check"),
    [
        ("d_forbidden_tool", "support-rag", "no-destructive-tools"),
        ("h_coding_agent", "coding-agent", "no-network"),
    ],
)
def test_a_langtrace_dspy_prediction_not_recorded_may_have_named_any_tool(
    scenario: str, contract: str, check: str, tmp_path: Path
) -> None:
    """Langtrace records no ReAct tool: each step is the Predict call whose prediction names
    the next tool (``dspy.signature.result``). Without the prediction the forbidden call and
    the ``curl`` command were no calls at all and both failures passed; a Predict call whose
    prediction is missing is now a call of an unknown tool."""
    path = TRACES / "langtrace-dspy" / f"{scenario}.otlp.json"
    derived = without_attributes(path, tmp_path / "no-result.jsonl", {"dspy.signature.result"})
    verdict, _ = grade_files([derived], contract_named(contract))[0]
    result = {r.name: r for r in verdict.results}[check]
    assert result.outcome in NOT_PASSED, result.message


@pytest.mark.parametrize(
    "key",
    [
        "llm.output_messages.0.message.contents.0.message_content.text",
        "llm.output_messages.0.message.contents.0.message_content.type",
    ],
)
def test_a_run_written_as_messages_in_output_value_is_not_one_answer_text(
    key: str, tmp_path: Path
) -> None:
    """OpenInference's Vercel processor writes the whole run as GenAI messages in the agent
    span's ``output.value``, tool results included. Without the answer's own text attribute
    the answer falls back to that output: read as one text, the search result's document ids
    were citations the answer made, and the uncited "I do not know" passed ``cites-a-source``.
    The output is read as the messages it is, so only the answer's text parts count."""
    path = TRACES / "vercel-ai-sdk-openinference" / "k_unfounded_uncertainty.otlp.json"
    contract = contract_named("support-rag")
    verdict, _ = grade_files([path], contract)[0]
    assert {r.name: r.outcome for r in verdict.results}["cites-a-source"] == (
        Outcome.INVARIANT_FAILURE
    )
    derived = without_attributes(path, tmp_path / "no-answer-text.jsonl", {key})
    verdict, _ = grade_files([derived], contract)[0]
    result = {r.name: r for r in verdict.results}["cites-a-source"]
    assert result.outcome in NOT_PASSED, result.message


NAME_KEY = re.compile(
    r"^llm\.output_messages\.\d+\.message\.tool_calls\.\d+\.tool_call\.function\.name$"
)


@pytest.mark.parametrize(
    ("scenario", "contract", "check"),
    [
        ("d_forbidden_tool", "support-rag", "no-destructive-tools"),
        ("i_parallel_tools", "support-rag", "no-destructive-tools"),
        ("h_coding_agent", "coding-agent", "no-network"),
        ("m_excess_calls", "support-rag", "bounded-effort"),
    ],
)
def test_a_requested_call_without_its_name_is_no_reply_that_asked_for_nothing(
    scenario: str, contract: str, check: str, tmp_path: Path
) -> None:
    """Gemini ends a turn that asks for tools with ``STOP``, as one that answers: a raw client
    loop's model call whose requested call lost its name (OpenInference's google-genai
    instrumentor, tool name left out) still asked for a tool, so which tools ran is unknown.
    Before, the finish reason said the model stopped, and the checks on tool names passed."""
    path = TRACES / "openinference-google-genai" / f"{scenario}.otlp.json"
    named = contract_named(contract)
    verdict, _ = grade_files([path], named)[0]
    assert {r.name: r.outcome for r in verdict.results}[check] == Outcome.INVARIANT_FAILURE
    keys = _keys(path, NAME_KEY)
    assert keys, "the capture records the requested calls' names"
    derived = without_attributes(path, tmp_path / "no-names.jsonl", keys)
    verdict, _ = grade_files([derived], named)[0]
    assert {r.name: r.outcome for r in verdict.results}[check] in NOT_PASSED
