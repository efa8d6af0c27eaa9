"""The evidence probes the core answers (``EvidencePlan``, ``native/python/src/evidence/
probes.rs``) as the Python they replaced in ``grade/evidence.py``, kept as their
specification: what each name lacks and the message that says so, byte for byte.

``reference_lacking(ev, names)`` answers as ``Evidence.lacking`` did: every name in order,
the core-probed ones by the comprehensions here (``tool_names`` by the whole Python probe
the core's usual answer came from), the others (``final_output`` ...) by their probes in
``grade/evidence.py``, which the core did not take over.
"""

from __future__ import annotations

from collections.abc import Callable

from otel_oracles._native import message_tool_names, messages_empty, unnamed_request
from otel_oracles.grade.evidence import (
    LIMITED_SPAN_MARKS,
    STOPPED_FINISH_REASONS,
    WORK_INVISIBLE,
    Evidence,
    absent,
    is_placeholder,
    list_steps,
    refused_model_call,
    split_name,
    work_invisible,
)
from otel_oracles.model.step import Step, StepKind
from otel_oracles.model.tool_name import tool_matches


def _matches(tool: str | None, scope: str | None) -> bool:
    return scope is None or (tool is not None and tool_matches(scope, tool, True))


def _raw_arguments_captured(step: Step) -> bool:
    raw = step.arguments_raw
    return bool(raw) and "arguments" not in step.redacted and not is_placeholder(raw)


def _field(label: str, field: str) -> Callable[[Evidence, str | None], str | None]:
    def probe(ev: Evidence, scope: str | None) -> str | None:
        calls = [s for s in ev.trajectory.tool_calls() if _matches(s.tool, scope)]
        gaps = [s for s in calls if s.raw is None and absent(s, field)]
        if field == "result":
            gaps = [s for s in gaps if s.status != "error"]
        if field == "arguments":
            gaps = [s for s in gaps if not _raw_arguments_captured(s)]
        if gaps:
            return f"{label} not captured for {len(gaps)} of {len(calls)} tool call(s): " + (
                list_steps(gaps)
            )
        return None

    return probe


def _outcomes(ev: Evidence, scope: str | None) -> str | None:
    answering = ev.answering()
    calls = [s for s in ev.trajectory.tool_calls() if _matches(s.tool, scope)]
    gaps = [
        s
        for s in calls
        if s.status == "unset"
        and id(s) not in answering
        and (absent(s, "result") or s.attributes.get("outcome_unknown"))
        and not (s.error_type or s.error_message or s.documents is not None)
    ]
    if not gaps:
        return None
    undeclared = sorted({str(v) for s in gaps if (v := s.attributes.get("outcome_undeclared"))})
    if undeclared:
        values = ", ".join(repr(v) for v in undeclared)
        return (
            f"tool outcomes unknown for {len(gaps)} call(s): status value(s) {values} "
            "that no convention declares a success or a failure (tool_outcomes): "
            + list_steps(gaps)
        )
    seen_only = all(s.synthesized for s in gaps)
    where = "seen only in model messages" if seen_only else "whose spans never show a failure"
    return (
        f"tool outcomes unknown for {len(gaps)} call(s) {where} "
        "(no failure status; result not captured, or one a failure would match): "
        + list_steps(gaps)
    )


def _inputs(ev: Evidence, scope: str | None) -> str | None:
    def captured(s: Step) -> bool:
        if s.raw is not None:
            return True
        if not absent(s, "arguments") or _raw_arguments_captured(s):
            return True
        return not absent(s, "command") or not absent(s, "path")

    calls = [s for s in ev.trajectory.tool_calls() if _matches(s.tool, scope)]
    gaps = [s for s in calls if not captured(s)]
    if gaps:
        return f"tool inputs (arguments) not captured for {len(gaps)} call(s): " + list_steps(gaps)
    return None


def _messages(field: str, label: str) -> Callable[[Evidence, str | None], str | None]:
    def probe(ev: Evidence, scope: str | None) -> str | None:
        gens = ev.trajectory.generations()
        if not gens:
            return f"{label}: the trace has no model-call spans"
        gaps = [s for s in gens if absent(s, field) or messages_empty(getattr(s, field))]
        if gaps:
            return (
                f"{label} not captured for {len(gaps)} of {len(gens)} model call(s): "
                + list_steps(gaps)
            )
        return None

    return probe


def _tokens(ev: Evidence, scope: str | None) -> str | None:
    gens = ev.trajectory.generations()
    if not gens:
        return "token usage: the trace has no model-call spans"
    unrecorded = [s for s in gens if s.input_tokens is None or s.output_tokens is None]
    errors, patterns = ev.trajectory.model_status_errors, ev.trajectory.model_status_patterns
    gaps = [s for s in unrecorded if not refused_model_call(s, errors, patterns)]
    if gaps:
        return (
            f"token usage not recorded for {len(gaps)} of {len(gens)} model call(s): "
            + list_steps(gaps)
        )
    return None


def _file_edits(ev: Evidence, scope: str | None) -> str | None:
    gaps = [
        s
        for s in ev.trajectory.steps
        if s.kind == StepKind.FILE_EDIT
        and s.raw is None
        and (absent(s, "path") or s.content is None)
    ]
    if gaps:
        return "file edit path/content not captured for " + list_steps(gaps)
    return None


def _agents(ev: Evidence, scope: str | None) -> str | None:
    if ev.trajectory.agents() or any(s.kind == StepKind.HANDOFF for s in ev.trajectory.steps):
        return None
    return "agents: the trace has no agent or handoff spans, so transfers cannot be seen"


def _timing(ev: Evidence, scope: str | None) -> str | None:
    gaps = [
        s
        for s in ev.trajectory.steps
        if not s.synthesized and (s.start_ns is None or s.end_ns is None)
    ]
    if gaps:
        return f"start/end times missing on {len(gaps)} step(s): " + list_steps(gaps)
    return None


def _steps(ev: Evidence, scope: str | None) -> str | None:
    return None if ev.trajectory.steps else "the trajectory has no steps"


def _tool_names(ev: Evidence, scope: str | None) -> str | None:
    """Which tools ran is known when tool spans exist, or when every model call that may
    have asked for tools shows (in its messages or in synthesized calls) which ones."""
    # An AgentBench step may be typed (``{"type": "file_edit"}``) without a tool name.
    t = ev.trajectory
    nameless = ev.nameless_calls()
    if nameless:
        return f"tool names not captured for {len(nameless)} tool call(s): " + list_steps(nameless)
    fragment = ev.fragment_gap()
    if fragment is not None:
        return fragment
    groups = ev.groups
    if groups.tool_spans or groups.all_raw:
        return None  # tool spans (or an AgentBench trajectory) list every call
    if work_invisible(t):
        return f"tool names unknown: {WORK_INVISIBLE}, so nothing shows which tools the run called"
    ordered = sorted(t.steps, key=lambda s: s.index)
    unknown: list[Step] = []
    unnamed = [
        s for s in ordered if s.kind == StepKind.GENERATION and unnamed_request(s.output_messages)
    ]
    if unnamed:
        return (
            f"tool names unknown: {len(unnamed)} model call(s) requested a tool whose name was "
            "not recorded: " + list_steps(unnamed)
        )
    for pos, step in enumerate(ordered):
        if step.kind != StepKind.GENERATION:
            continue
        reasons = {r.lower() for r in step.finish_reasons} if step.finish_reasons else None
        if reasons is not None and reasons <= STOPPED_FINISH_REASONS:
            continue  # the model stopped without asking for tools
        if step.status == "error" and step.output_messages is None and reasons is None:
            continue  # the call failed and no reply is recorded: the model asked for nothing
        if any(mark in step.attributes for mark in LIMITED_SPAN_MARKS):
            unknown.append(step)  # a call it asked for may be among what its span lost
            continue
        if message_tool_names(step.output_messages):
            continue
        if step.output_messages and not messages_empty(step.output_messages):
            # The answer was captured with its content and asks for no tool: the model
            # stopped there, whatever the finish reason was (some instrumentations omit it).
            continue
        following = []
        for nxt in ordered[pos + 1 :]:
            if nxt.kind == StepKind.GENERATION:
                break
            following.append(nxt)
        if any(s.is_tool for s in following):
            continue
        unknown.append(step)
    if unknown:
        return (
            "tool names unknown: the trace has no tool spans and "
            f"{len(unknown)} model call(s) may have requested tools without captured "
            "output messages: " + list_steps(unknown)
        )
    return None


REFERENCE: dict[str, Callable[[Evidence, str | None], str | None]] = {
    "steps": _steps,
    "tool_arguments": _field("tool arguments", "arguments"),
    "tool_results": _field("tool results", "result"),
    "tool_outcomes": _outcomes,
    "tool_inputs": _inputs,
    "input_messages": _messages("input_messages", "input messages"),
    "output_messages": _messages("output_messages", "output messages"),
    "token_usage": _tokens,
    "file_edits": _file_edits,
    "agents": _agents,
    "timing": _timing,
    "tool_names": _tool_names,
}
"""The core-probed evidence names, each by the probe it had in Python."""


def reference_lacking(ev: Evidence, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(name, message)`` for every name of ``names`` the trajectory lacks, in order, as
    the Python probes found it (the names the core does not probe asked of ``ev``)."""
    found = []
    for name in names:
        base, scope = split_name(name)
        probe = REFERENCE.get(base)
        message = probe(ev, scope) if probe is not None else ev.probed(name)
        if message:
            found.append((name, message))
    return tuple(found)
