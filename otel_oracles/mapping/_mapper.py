"""MAP: one assembled ``Trace`` -> one ``Trajectory`` of steps, through the mapping files.

Per span, the first matching rule (files by priority, rules in file order) makes a draft step
from its field sources. Then trace-level passes that no single span can do:

1. **Enclosing agent**: a non-agent step's ``agent_name`` is the nearest ancestor agent
   step's name (instrumentations put wrong names on child spans, e.g. ``OpenAI Agent``), else
   its own attribute. A handoff without ``from_agent`` gets the enclosing agent.
2. **Tool-call linking**, per agent scope (call ids repeat across agents): each ``tool_call``
   part in a generation's output is matched to a later tool/handoff step of that scope by call
   id, else (steps without an id) by tool name in order. Unmatched requests become
   ``synthesized`` tool_call steps placed right after their generation, so a call is never
   counted twice; their results come from the first later generation's input that carries a
   ``tool_call_response`` with the same id. A generation whose finish reason says "tool calls"
   but shows none (content capture off) and is followed by no tool step gets one placeholder
   tool_call with ``tool=None``: a call happened, its name is missing evidence.
3. **One model call, one step**: a generation nested alone in a generation for the same
   call (stacked instrumentations, see ``_stacked``) is merged into it, before the passes
   above. **Token usage**: a generation with generations still below it (a wrapper around
   several calls) is flagged ``usage_aggregated`` so ``Trajectory.token_usage()`` counts
   leaves only.
4. **File edits and commands**: a tool call of a write tool or shell tool becomes
   ``file_edit`` / ``command`` with path/content/command from its arguments (AgentBench rules).
"""

from __future__ import annotations

import functools
from typing import Any

from otel_oracles import safe_regex
from otel_oracles._frozen import Value
from otel_oracles._native import (
    Linker,
    StepBuilder,
    TraceDrafter,
    assign_agents,
    build_trajectory,
    flag_aggregated_usage,
    handoff_targets,
    nested_agent_handoffs,
    requested_handoffs,
    requests_from_next_input,
    run_wrappers,
    tools_running_agents,
)
from otel_oracles.mapping._compile import (
    CompiledRule,
    CompiledSet,
    read_fields,
)
from otel_oracles.mapping._limits import apply_limits
from otel_oracles.mapping._loader import ConventionSet, ToolKinds
from otel_oracles.mapping._stacked import merge_sibling_layers, merge_stacked_generations
from otel_oracles.mapping._text_requests import requests_in_text
from otel_oracles.mapping._tool_results import (
    ToolResultRules,
    error_type_of,
    message_result,
    outcome_text,
)
from otel_oracles.mapping.parsers.scalars import (
    parse_string,
)
from otel_oracles.model.span import SpanRecord, Trace
from otel_oracles.model.step import (
    COMMAND_KEYS,
    CONTENT_KEYS,
    PATH_KEYS,
    SHELL_TOOLS,
    WRITE_TOOLS,
    SpanRef,
    Step,
    StepKind,
    Trajectory,
    normalize_path,
)
from otel_oracles.model.tool_name import OpenCalls, parse_tool_name

STRING_FIELDS: frozenset[str] = frozenset(
    {"tool", "call_id", "error_type", "error_message", "provider", "model", "agent_name",
     "agent_id", "conversation_id", "from_agent", "to_agent", "query"}
)  # fmt: skip

TOOLISH: frozenset[str] = frozenset({"tool_call", "retrieval", "handoff"})
_ERROR_TYPE_RX = r"^\s*([A-Za-z_][\w.]*(?:Error|Exception))\b"
"""Compiled on its first error text by ``safe_regex`` (its cache), not at import."""


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``); compared and shown as one.
class Draft(Value):
    """A step under construction (mutable until the trace-level passes are done)."""

    __slots__ = (
        "attributes",
        "children",
        "claimed",
        "fields",
        "follows",
        "kind",
        "outcome_hidden",
        "redacted",
        "rule",
        "scope",
        "span",
        "status",
        "synthesized",
    )

    kind: str
    span: SpanRecord | None
    rule: CompiledRule
    fields: dict[str, Any]
    redacted: set[str]
    attributes: dict[str, Any]
    status: str
    scope: str
    """Span id of the enclosing agent step ("" = trace level)."""
    synthesized: bool
    children: list[SpanRecord]
    """The span's direct children, kept for the rule's deferred fields (read after the
    trace-level passes if needed)."""
    follows: list[Draft]
    """Synthesized tool calls to place right after this (generation) draft."""
    claimed: bool
    """A tool step already matched to a requested call."""
    outcome_hidden: bool
    """The call's failure would show only in a result that was not captured (a rule with
    ``result_error_keys``): its span's own status proves nothing, and neither does the OK of
    a layer recording the same call around it (see ``_stacked``)."""

    def __init__(
        self,
        kind: str,
        span: SpanRecord | None,
        rule: CompiledRule,
        fields: dict[str, Any] | None = None,
        redacted: set[str] | None = None,
        attributes: dict[str, Any] | None = None,
        status: str = "unset",
        scope: str = "",
        synthesized: bool = False,
        children: list[SpanRecord] | None = None,
        follows: list[Draft] | None = None,
        claimed: bool = False,
        outcome_hidden: bool = False,
    ) -> None:
        self.kind = kind
        self.span = span
        self.rule = rule
        self.fields = {} if fields is None else fields
        self.redacted = set() if redacted is None else redacted
        self.attributes = {} if attributes is None else attributes
        self.status = status
        self.scope = scope
        self.synthesized = synthesized
        self.children = [] if children is None else children
        self.follows = [] if follows is None else follows
        self.claimed = claimed
        self.outcome_hidden = outcome_hidden


def map_trace(trace: Trace, conventions: ConventionSet) -> Trajectory:
    """Map one trace. Never raises on odd telemetry: what cannot be read stays ``None``."""
    compiled: CompiledSet = conventions.compiled()
    drafter = compiled.trace_drafter or _trace_drafter(compiled)
    drafts: list[Draft]
    draft_by_span: dict[str, Draft]
    used_files: dict[str, int]
    unrecognised: list[SpanRecord]
    by_id: dict[str, SpanRecord]  # every span by its id, made by the drafter's walk
    drafts, draft_by_span, used_files, unrecognised, by_id = drafter.draft_trace(
        trace.spans, trace.children, compiled.table.select(trace.spans, trace.children)
    )

    wrappers, unmapped = _run_wrappers(unrecognised, draft_by_span, by_id)
    if wrappers:
        used_files[RUN_WRAPPER] = wrappers

    drafts = merge_stacked_generations(drafts, draft_by_span, by_id)
    drafts = merge_sibling_layers(drafts, draft_by_span, by_id)
    tools_running_agents(drafts)
    assign_agents(drafts, draft_by_span, by_id, _read_deferred, compiled)
    drafts = nested_agent_handoffs(drafts, draft_by_span, by_id, Draft)
    handoff_targets(drafts)
    _requests_from_next_input(drafts)
    requests_in_text(drafts)  # tool requests the model wrote as text (``_text_requests``)
    _link_tool_calls(drafts, compiled)
    if compiled.handoff_requests:
        _requested_handoffs(drafts, compiled.handoff_requests)
    flag_aggregated_usage(drafts, draft_by_span, by_id)
    apply_limits(trace, drafts)
    steps: list[Step] = _STEPS.build_steps(drafts, trace.trace_id, compiled.tool_kinds)
    # The trajectory's own values around the steps, made by the core
    # (``native/python/src/step.rs``); ``from_normalized`` unless an id or a name is odd.
    return build_trajectory(
        Trajectory,
        StepKind.AGENT,
        trace,
        steps,
        unmapped,
        used_files,
        compiled.final_answer_tools,
        compiled.model_status,
    )


RUN_WRAPPER = "(run wrapper)"
"""Coverage label of the application's own spans around a run (see ``run_wrappers``)."""


def _run_wrappers(
    unrecognised: list[SpanRecord],
    steps: dict[str, Draft],
    by_id: dict[str, SpanRecord],
) -> tuple[int, dict[str, int]]:
    """How many unrecognised spans enclose every recognised step of the trace, and the
    other unrecognised spans counted by name (``Trajectory.unmapped_spans``).

    Applications wrap a run in spans of their own (``agent_run``, ``handle_request``, a web
    framework's server span) that no convention knows. Such a span holds the whole run, so
    it cannot be a tool or model call that the graders failed to see: it is classified as
    the run's wrapper, not a blind spot. A span an unknown framework records for a tool call
    or a model call sits beside the recognised steps, never around all of them, and stays
    unrecognised (checks that need every span then fail closed on it). An ancestor chain is
    walked up the spans' parent ids until a span without a parent in the trace, or one the
    chain holds already (a looping chain). Run by the compiled core
    (``native/python/src/passes.rs`` ``run_wrappers``, over ``trace_passes::common_ancestors``
    in ``native/core``)."""
    return run_wrappers(unrecognised, steps, by_id)


# ---- per span -----------------------------------------------------------------------------


def _trace_drafter(compiled: CompiledSet) -> TraceDrafter:
    """The set's ``TraceDrafter`` (made on its first trace, kept on the set): the core drafts
    a trace's spans in one call, a run's limit included (a model call whose system or user
    messages hold one of the files' ``run_limit_prompts``, the framework's own request for a
    final answer, found by a plain substring search; a rule's ``run_limit_call``), and a
    tool, retrieval or handoff step's outcome and result: an ``outcome`` field read is
    applied by ``_apply_outcome``, the result judged by the tool-result rules
    (``ResultRules.judge``) and what they say applied by ``apply_judgement``, a result
    captured as ``null`` marks the step ``result_empty``. Python finishes a draft only for
    a rule with ``result_error_keys`` (``_finish``)."""
    rules = [(rule, bool(rule.result_error_keys)) for rule in compiled.rules]
    results = compiled.tool_results
    drafter = TraceDrafter(
        compiled.drafter,
        rules,
        Draft,
        _finish,
        list(compiled.run_limit_prompts),
        results.core,
        (functools.partial(_apply_outcome, results=results), apply_judgement),
    )
    compiled.trace_drafter = drafter
    return drafter


def _finish(draft: Draft) -> None:
    """A draft of a rule with ``result_error_keys``, after its outcome and before its result
    is judged (``TraceDrafter``): an error object among the keys fails the call (its type
    read by ``safe_regex``); none recorded leaves a call that did not fail with an unknown
    outcome, its only failure signal not captured."""
    fields = draft.fields
    if draft.status == "error":
        return
    result = fields.get("result")
    error = _result_error(result, draft.rule.result_error_keys)
    if error is not None:
        draft.status = "error"
        fields.setdefault("error_message", error)
        m = safe_regex.match(_ERROR_TYPE_RX, error)
        if m:
            fields.setdefault("error_type", m.group(1))
    elif result is None:
        draft.status = "unset"  # the only failure signal was not captured
        draft.outcome_hidden = True


def _apply_outcome(
    draft: Draft, value: Any, undeclared_unknown: bool, results: ToolResultRules
) -> None:
    """The ``outcome`` field's value (the first read, ``CompiledRule.outcome_reads``; the
    core has taken every outcome field out of the draft's fields) into the draft's status: a
    declared error fails the call, a declared success stands for a status the span did not
    give; an undeclared value read as unknown (``Source.undeclared``) leaves a call its span
    did not fail with an unknown outcome, never a success: the step is ``unset``,
    ``attributes.outcome_unknown``, and ``attributes.outcome_undeclared`` names the value
    for the missing-evidence message."""
    if results.is_denied_outcome(value):  # refused before it ran (``denied_outcomes``)
        mark_denied(draft, f"outcome {outcome_text(value)}")
        return
    outcome = results.reading(value, undeclared_unknown)
    if outcome == "error" or (outcome == "ok" and draft.status == "unset"):
        draft.status = outcome
    elif outcome == "unknown" and draft.status != "error":
        draft.status = "unset"
        draft.outcome_hidden = True  # a layer of a stacked call: its OK proves nothing
        draft.attributes["outcome_unknown"] = True
        text = outcome_text(value)
        shown = text if text is not None else parse_string(value)
        draft.attributes["outcome_undeclared"] = (shown or "")[:80]


# ---- trace-level passes ---------------------------------------------------------------------


def _read_deferred(draft: Draft, compiled: CompiledSet) -> None:
    """The deferred fields (a non-agent step's own ``agent_name``, needed only when no agent
    encloses it: an attribute read saved on most spans), read and normalized exactly as
    the core's drafter would have."""
    assert draft.span is not None
    read_fields(
        draft.span, draft.children, draft.rule.deferred, compiled, draft.fields, draft.redacted
    )
    f = draft.fields
    if "agent_name" in f and type(f["agent_name"]) is not str:
        f["agent_name"] = parse_string(f["agent_name"])


def _parts(msg: dict[str, Any]) -> list[dict[str, Any]]:
    parts = msg.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _responses(gen: Draft) -> dict[str, dict[str, Any]]:
    """Tool results in a generation's input, by call id. A response without an id (OpenLLMetry
    log events drop it) answers the earliest unanswered call of the assistant message before
    it: chat APIs require tool results in the order of the calls. An id used again (the
    google-genai instrumentation numbers calls per response: ``search_docs_0`` in every turn)
    keeps its latest response: the generation that asked for it is the latest one before.
    A made-up ``<tool>_<n>`` id that answers no unanswered call answers the earliest
    unanswered call of that tool whose id is made up so (``OpenCalls.twin``)."""
    out: dict[str, dict[str, Any]] = {}
    pending = OpenCalls()  # unanswered calls, in call order
    for msg in gen.fields.get("input_messages") or []:
        for part in _parts(msg):
            kind = part.get("type")
            if kind == "tool_call" and part.get("id"):
                pending.open(str(part["id"]), part.get("name"))
            elif kind == "tool_call_response":
                if part.get("id"):
                    call_id = str(part["id"])
                    if call_id not in pending:
                        call_id = pending.twin(call_id) or call_id
                elif pending:
                    call_id = pending.first()
                else:
                    continue
                pending.close(call_id)
                out[call_id] = part
    return out


def _requested_handoffs(drafts: list[Draft], patterns: tuple[str, ...]) -> None:
    """A requested call no span ran (synthesized) of a tool ``handoff_requests`` declares a
    handoff request (``transfer_to_<agent>``) is the handoff when the next agent to start
    after the model call that asked for it is that agent: the framework switched agents as
    the request asked, and traced the switch but not the tool (the OpenAI Agents SDK under
    ``opentelemetry-instrumentation-genai-openai-agents``, which drops the SDK's handoff
    spans). The call becomes a handoff step from the requesting agent to that agent. Any
    other agent next, or none, leaves it a call never run: the transfer is not shown, and
    the handoff check fails or lacks evidence rather than passing on a guess. The agent's
    name is compared as a tool name writes it: lower case, every run of characters other
    than letters and digits one ``_`` (the OpenAI Agents SDK's handoff tool names). Run by
    the compiled core (``native/python/src/passes.rs`` ``requested_handoffs``, names through
    ``trace_passes::agent_key``); the set's patterns (``CompiledSet.handoff_requests``) are
    matched by ``safe_regex`` (``_requested_agent``), each compiled once, on its first name."""
    requested_handoffs(drafts, patterns, _requested_agent)


def _requested_agent(pattern: str, tool: str) -> str | None:
    """The agent a ``handoff_requests`` pattern reads from a tool name (group ``agent``), or
    ``None`` when it does not match (or the group took no part)."""
    m = safe_regex.match(pattern, tool)
    agent = m.group("agent") if m else None
    return agent if isinstance(agent, str) else None


def _requests_from_next_input(drafts: list[Draft]) -> None:
    """Rules with ``requests_from_next_input``: a model call whose recorded output shows
    neither text nor a requested call (the tracer dropped the tool-call objects, or records
    only text) takes the calls it asked for from the next model call of its scope, whose input
    is this call's input, then the assistant message that asked, then the results. Only the
    assistant turns with tool calls right after this input are read, each followed by
    nothing but tool results: a framework that stores several calls of one reply as one
    assistant turn each (Pipecat: call, result, call, result) gives them all, since no model
    call came between them. Nothing is read unless the next input continues this one (at
    least one more message, the same roles up to this input's length) and its first new
    message is such a turn; otherwise the output stays as recorded, and the usual linking
    treats the call as one whose requests were not captured. An output flagged as not
    captured (OpenLLMetry's Ollama instrumentation writes a reply that only asked for tools
    as its role alone) is no obstacle: the next input's turn is this reply as the
    application handed it back, so it replaces the output and the flag. Run by the compiled
    core (``native/python/src/passes.rs`` ``requests_from_next_input``)."""
    requests_from_next_input(drafts)


def _link_tool_calls(drafts: list[Draft], compiled: CompiledSet) -> None:
    """Tool-call linking, per agent scope (call ids repeat across agents), in the compiled
    core (``native/python/src/linking.rs``, ``Linker.link``): each call a model call asked
    for (a ``tool_call`` part of its output) goes to the first unclaimed tool, retrieval or
    handoff step of its scope after it with the call's id (or, by id, one that had not ended
    when the model call started: OpenLIT's Claude Agent SDK instrumentation opens a tool span
    at the streamed tool_use block), else, among steps without an id, the first of its tool's
    name, never past a later model call of the scope that asked for that tool again (that
    call's own request is the one it answers); a request made without an id may take a step
    whose id the framework gave the call itself (ADK for Go), and a request left over when a
    handoff naming no tool follows is that handoff (openai-agents' ``agent_handoff``). The
    step gets the call id and, when its span did not capture them, the arguments
    (``requested_in`` names the model call where neither has an id); a rule with
    ``result_from_messages`` takes the result the model was handed (``_take_result``), by
    call id in a later model call's input of the scope, else of another scope after it (a
    run resumed after an approval), or, without an id, by position in the next input that
    carries the conversation on. A request no step of its scope ran goes to an unclaimed
    step of another scope that started after the model call (graph frameworks put the model
    call and the tool run under different nodes), else, where the rule synthesizes, becomes
    a synthesized call (``_synthesize``). A model call that shows no request but whose finish
    reason says it asked for tools, with no tool step before the next model call (or, in a
    scope without tool steps, one that did not fail and that the loop calls again right
    after, whose output was not captured or, where no model call of the scope shows a request
    or a finish reason asking for tools, whose reply text may hold a request no rule reads:
    Langroid's default tool mode, a code agent's calls in code; or, in a scope with tool
    steps whose model calls record no finish reason, one that did not fail, whose output is
    flagged not captured and that the loop calls again right after with no step between:
    OpenInference's Agno instrumentation with content off, a tool the agent does not have),
    gets a placeholder
    (``_hidden_call``), unless a tool step of an enclosing agent's scope ran within its
    agent's run (OpenLIT's Claude Agent SDK hangs a sub-agent's tool calls under the run's
    agent). Every search is indexed:
    linking costs what a trace holds, never its square (``tests/mapping/test_linking_cost.py``,
    ``test_linking_search_cost.py``)."""
    _LINKER.link(drafts, compiled.tool_call_finish_reasons, compiled.tool_results)


def _take_result(target: Draft, response: dict[str, Any], results: ToolResultRules) -> None:
    """A step of a rule with ``result_from_messages`` that recorded no result takes the
    response the model was handed for its call (found by the core): a response whose content
    was dropped marks the result redacted; an error-shaped result fails a call its span did
    not fail (``judge_result``)."""
    if response.get("response") is None:
        target.redacted.add("result")
        return
    target.fields["result"] = message_result(response["response"])
    judge_result(target, results)  # an error-shaped result fails an OK span


def _synthesize(
    gen: Draft,
    req: dict[str, Any],
    response: dict[str, Any] | None,
    results: ToolResultRules,
) -> Draft:
    """The step of a call ``gen`` asked for that no span recorded, with the response the
    core found for it (by call id, else by position), or ``None``. A request written as
    text (``in_text``) is marked ``attributes.requested_in_text``, and its outcome is never
    a success: unknown, unless its result is error-shaped."""
    draft = Draft(kind="tool_call", span=gen.span, rule=gen.rule, synthesized=True, scope=gen.scope)
    f = draft.fields
    written = bool(req.get("in_text"))
    if written:
        # A request the model wrote as text that no span ran (``_text_requests``): the
        # framework may have run it, or refused it; what it returned cannot prove success.
        draft.attributes["requested_in_text"] = True
    f["tool"] = parse_string(req.get("name"))
    if req.get("id"):
        f["call_id"] = str(req["id"])
    if "arguments" in req and req["arguments"] is not None:
        f["arguments"] = req["arguments"]
    else:
        draft.redacted.add("arguments")  # the request was seen, its arguments were dropped
    if gen.fields.get("agent_name"):
        f["agent_name"] = gen.fields["agent_name"]
    if response is not None and response.get("response") is None:
        draft.redacted.add("result")
    elif response is not None:
        result = message_result(response["response"])
        f["result"] = result
        error = _result_error(result, gen.rule.error_keys)
        if error is not None:
            draft.status = "error"
            f["error_message"] = error
            m = safe_regex.match(_ERROR_TYPE_RX, error)
            if m:
                f["error_type"] = m.group(1)
        else:
            draft.status = "ok"
            judge_result(draft, results)
            if draft.status == "ok" and (not gen.rule.results_show_failures or written):
                # A failure would read the same (``SynthesizeOptions.results_show_failures``):
                # the result is kept, the outcome is unknown, never a success.
                draft.status = "unset"
                draft.attributes["outcome_unknown"] = True
    return draft


def judge_result(draft: Draft, results: ToolResultRules) -> None:
    """What a tool step's result says (see ``_tool_results``): an approval step's refusal
    marks a call that never ran (``mark_denied``); an error-shaped result fails a call its
    span did not fail; an empty one marks it ``attributes.result_empty``."""
    f = draft.fields
    result = f.get("result")
    if result is None:
        return
    said = results.judge(result, draft.status == "error")
    if said is not None:
        apply_judgement(draft, said)


def apply_judgement(draft: Draft, said: tuple[str, Any]) -> None:
    """What the tool-result rules said of a step's result (``judge_result``; the core's
    drafter calls it when they said anything)."""
    f = draft.fields
    what, text = said
    if what == "denied":
        mark_denied(draft, text)
    elif what == "error":
        draft.status = "error"
        f.setdefault("error_message", text)
        error_type = error_type_of(text)
        if error_type is not None:
            f.setdefault("error_type", error_type)
    else:
        draft.attributes["result_empty"] = True


def mark_denied(draft: Draft, why: str) -> None:
    """A call an approval step (a human in the loop, a policy hook) refused before the tool
    ran: failed (status ``error``, so no check reads it as a success), ``attributes.denied``
    so the checks tell it from a tool that ran and failed (``tool_called`` does not count
    it as made, ``tool_retries`` and ``tool_errors`` not as a failure), and the refusal as
    its error message. The framework's span of such a call (the OpenAI Agents SDK opens one
    before asking for approval) ends OK with no output: its status says nothing here."""
    draft.status = "error"
    draft.attributes["denied"] = True
    draft.attributes.pop("result_empty", None)  # an output of null: the refusal's, not empty
    draft.fields["error_message"] = why[:500]


def _result_error(result: Any, keys: tuple[str, ...]) -> str | None:
    if isinstance(result, dict):
        for key in keys:
            if result.get(key) is not None:
                value = result[key]
                return value if isinstance(value, str) else parse_string(value)
    return None


def _hidden_call(gen: Draft) -> Draft:
    draft = Draft(kind="tool_call", span=gen.span, rule=gen.rule, synthesized=True, scope=gen.scope)
    draft.redacted.update({"tool", "arguments", "result"})
    draft.attributes["tool_calls_hidden"] = True
    if gen.fields.get("agent_name"):
        draft.fields["agent_name"] = gen.fields["agent_name"]
    return draft


_LINKER = Linker(_responses, _take_result, _synthesize, _hidden_call)
"""Tool-call linking in the core, with what a found result and a new step mean here."""


def _known_tool_name(bare: str, served: Any) -> str:
    """``bare``, or the AgentBench file or shell tool it stands for: the name the MCP server
    ran the call under (``served``), or the known tool a ``_``-joined toolset prefix stands
    before (``docs_write_file``)."""
    if bare in WRITE_TOOLS or bare in SHELL_TOOLS:
        return bare
    if isinstance(served, str) and (served in WRITE_TOOLS or served in SHELL_TOOLS):
        return served
    for known in (*WRITE_TOOLS, *SHELL_TOOLS):
        if bare.endswith("_" + known):
            return known
    return bare


@functools.lru_cache(maxsize=4096)
def _tool_class(tool: Any, served: Any, own: ToolKinds | None) -> StepKind:
    """What a tool call of ``tool`` is (``served``: the name the MCP server ran it under;
    ``own``: its rule's own file and shell tools). A plugin- or toolset-qualified name
    (``SupportTools-write_file``) edits files or runs commands like its bare name does, and so
    does a name the MCP server ran the call under (a merged MCP layer's ``mcp_tool``) or a
    ``_``-joined toolset prefix of a known file or shell tool (``docs_write_file``: fail
    closed, an edit is never missed for a prefix). Pure: remembered per exact ``str`` names
    (bounded)."""
    bare = parse_tool_name(tool).name if isinstance(tool, str) else None
    if bare is not None:
        bare = _known_tool_name(bare, served)
    if bare in WRITE_TOOLS or (own is not None and bare in own.file_edit):
        return StepKind.FILE_EDIT
    if bare in SHELL_TOOLS or (own is not None and bare in own.command):
        return StepKind.COMMAND
    return StepKind.TOOL_CALL


# ---- building records without re-validating what this module just normalized ---------------

_FIELD_TYPES: dict[str, type] = {
    **dict.fromkeys(STRING_FIELDS, str),
    "input_tokens": int,
    "output_tokens": int,
    "input_messages": list,
    "output_messages": list,
    "documents": list,
    "finish_reasons": list,
    "tools_offered": tuple,
    "result": object,
    "arguments": object,  # replaced by the step builder (arguments / arguments_raw)
}
"""The exact type each draft field has for a step to skip validation (``None`` always may).
The drafter guarantees them (``finish_reasons`` is always a list of strings, message lists
are lists of dicts); the trace-level passes set strings. Anything else (a str subclass, a
bool token count, a non-string tool name from a message part) takes the validated path, so
its outcome is exactly what validation says. ``result`` is ``Any``."""

_STEPS = StepBuilder(
    Step,
    SpanRef,
    {name: None if kind is object else kind for name, kind in _FIELD_TYPES.items()},
    parse_string,
    StepKind,
    (_tool_class, normalize_path, PATH_KEYS, CONTENT_KEYS, COMMAND_KEYS),
)
"""Builds a trace's steps in the compiled core, one call per trace
(``native/python/src/step.rs``): each draft and the synthesized calls after it, a tool
call's kind (``file_edit`` / ``command`` by ``_tool_class``, with the path and content or
the command from its arguments), the record as ``Step.from_normalized`` would make it, or
``Step(**values)`` when a value has an unexpected type."""
