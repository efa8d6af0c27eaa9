"""Evidence: what an oracle needs captured before it may judge.

Each evidence name maps to a probe that returns ``None`` when the trajectory has the
evidence, or a message naming what is missing and where. Absence is reasoned about, not
assumed:

- a field that is ``None``, listed in ``Step.redacted``, or holds a redaction placeholder
  (``__REDACTED__``, ``[REDACTED]``, an empty string where content was dropped) is missing;
- a field nobody could have captured (no step of that kind) is missing too;
- a raw-client trace (no tool spans) whose model calls finished with tool calls but whose
  output messages were not captured cannot show which tools ran, so ``tool_names`` is
  missing there, and with it every check that depends on tool names (even
  ``tool_not_called``: "no call seen" is not "no call made").

Names are either plain (``tool_arguments``) or scoped with a colon: ``tool_arguments:<glob>``
and ``tool_results:<glob>`` only look at calls of matching tools, ``attribute:<key>`` asks
for one attribute anywhere in the trace (step attributes, the root span, the resource).

The helpers ``final_output``, ``message_text`` and ``is_placeholder`` live here because the
probes and the oracles must agree on what "captured" means.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any

from otel_oracles import safe_regex
from otel_oracles._frozen import FrozenValue, set_field
from otel_oracles._native import (
    MAX_LISTED_STEPS,
    EvidencePlan,
    SlotClass,
    StepView,
    message_tool_names,
    messages_empty,
    unnamed_request,
)
from otel_oracles._native import absent as native_absent
from otel_oracles._native import answer_calls as native_answer_calls
from otel_oracles._native import answering as native_answering
from otel_oracles._native import calls_of as native_calls_of
from otel_oracles._native import fragment_gap as native_fragment_gap
from otel_oracles._native import is_placeholder as native_is_placeholder
from otel_oracles._native import lacking_of as native_lacking_of
from otel_oracles._native import last_generation as native_last_generation
from otel_oracles._native import list_steps as native_list_steps
from otel_oracles._native import message_text as native_message_text
from otel_oracles._native import stopped_short as native_stopped_short
from otel_oracles._native import where as native_where
from otel_oracles.model.step import (
    AGENT,
    FILE_EDIT,
    GENERATION,
    HANDOFF,
    OTHER,
    RETRIEVAL,
    TOOLISH_KINDS,
    NetworkViolation,
    Step,
    StepKind,
    Trajectory,
    network_violations,
)
from otel_oracles.model.tool_name import OpenCalls, tool_matches

Probe = Callable[["Evidence", str | None], str | None]
"""``probe(evidence, scope)``: ``None`` when the evidence is there, else what is missing."""

TOOL_CALL_FINISH_REASONS: frozenset[str] = frozenset(
    {
        "tool_calls", "tool_call", "tool-calls", "tool_use", "function_call", "tool-call",
        "function_calls",
    }
)  # fmt: skip
"""Finish-reason spellings meaning "the model asked for tools" across instrumentations
(``function_calls``: AutoGen's ``CreateResult``)."""

STOPPED_FINISH_REASONS: frozenset[str] = frozenset(
    {
        "stop", "length", "content_filter", "error",
        "end_turn", "stop_sequence", "complete", "max_tokens", "max_output_tokens",
        "content-filter", "content_filtered", "safety", "recitation", "blocklist",
        "prohibited_content", "spii", "refusal", "guardrail_intervened",
        "malformed_function_call",
    }
)  # fmt: skip
"""Finish reasons that say the model ended its turn without asking for tools: the shared
vocabulary's ``stop``, ``length``, ``content_filter`` and ``error`` and the vendor spellings
``otel-genai.yaml`` maps onto them. A reason outside both sets (a framework's own word, such
as AutoGen's ``function_calls`` before it was known) says neither: a call that gave it and
shows no reply content may have asked for tools, so it is never read as one that did not."""

CUT_FINISH_REASONS: dict[str, str] = {
    **dict.fromkeys(("length", "max_tokens", "max_output_tokens"), "the token limit"),
    **dict.fromkeys(
        (
            "content_filter", "content-filter", "content_filtered", "safety", "recitation",
            "blocklist", "prohibited_content", "spii", "refusal", "guardrail_intervened",
        ),
        "the provider's content filter",
    ),
}  # fmt: skip
"""Finish reasons that say the model stopped before it finished its reply, and what stopped
it: the shared vocabulary's ``length`` and ``content_filter`` and the vendor spellings
``otel-genai.yaml`` maps onto them (Anthropic's ``max_tokens`` and ``refusal``, Gemini's
``MAX_TOKENS``, ``SAFETY`` and ``RECITATION``, Bedrock's ``content_filtered`` and
``guardrail_intervened``). A run whose last model call ended so has no complete answer
(``_cut_off``)."""

LIMITED_SPAN_MARKS = ("attributes_dropped", "events_dropped")
"""Step attributes the mapping sets on a step whose span lost attributes or events to an
SDK's count limits (``mapping/_limits.py``): its message lists may be missing items, so the
tool calls a model call's output shows are not all it asked for."""

MAX_LISTED = MAX_LISTED_STEPS
"""How many offending steps a message names before it stops listing (5: ``list_steps``,
the core's, stops there)."""


class Evidence:
    """What the checks of every contract ask of one trajectory, computed once per trajectory.

    One ``Evidence`` is made per trajectory and handed to every check through
    ``GradeContext.evidence`` (the pipeline shares one across the contracts graded on the
    same trajectory). Every check of a contract asks for the same evidence, tool calls and
    final answer of the same immutable trajectory, and several checks ask the same of the
    same step (a result's text, normalized arguments, why a call failed): keeping the answers
    here keeps grading cost per check flat, and they go away with the trajectory's grading
    instead of depending on what the process graded before.

    Two attributes are what the core's check plans read (``native/python/src/evidence.rs``),
    so a plan and the Python checks share one answer per trajectory without a Python call:

    - ``groups``, the trajectory's steps sorted by kind (``group_steps``: the core's
      ``StepView``), made with the ``Evidence``: what every check and probe selects from
      (the checks read it ~23,000 times a grade; a property computing it on first use cost
      a Python call on each read);
    - ``memo``, every answer kept for the trajectory: ``memoized``'s keys, the class's own
      facts under ``"Evidence.<method>"`` (``answering``, ``stopped_short`` ...), the call
      selections of ``calls_of``, what each evidence ``Plan`` lacks (``lacking_of``, keyed
      by the plan), the core's tables (``("call_failures", pattern)`` ...).

    Not shared across threads: a trajectory is graded by one thread at a time.
    """

    __slots__ = (
        "__weakref__",
        "_probed",
        "_steps",
        "groups",
        "memo",
        "trajectory",
    )

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.groups: StepView = group_steps(trajectory.steps)
        self.memo: dict[Hashable, Any] = {}
        self._probed: dict[str, str | None] = {}
        self._steps: dict[Hashable, dict[int, Any]] = {}

    def __repr__(self) -> str:
        return f"Evidence(trajectory={self.trajectory.trace_id!r}, memo={len(self.memo)})"

    def memoized(self, key: Hashable, compute: Callable[..., Any], *args: Any) -> Any:
        """``compute(*args)`` once per key for this trajectory. ``key`` must capture every
        input ``compute`` reads besides the trajectory and ``args``; keys starting with
        ``"Evidence."`` or ``("Evidence.`` are the class's own. The arguments are passed, not
        closed over: the checks ask ~26,000 times a grade, most often a value already made,
        and a closure made per ask cost more than the lookup."""
        # Tested with ``in``, not read under ``try``: half the lookups here miss (each
        # check's own key, first asked), and a ``KeyError`` raised and caught costs ~2,000
        # instructions, the test ~100 (docs/performance.md).
        memo = self.memo
        if key in memo:
            return memo[key]
        value = memo[key] = compute(*args)
        return value

    def step_memoized(
        self, step: Step, key: Hashable, compute: Callable[..., Any], *args: Any
    ) -> Any:
        """``compute(*args)`` once per (step, key) for a step of this trajectory (a step from
        elsewhere is computed every time). ``key`` must capture every input ``compute`` reads
        besides the step and ``args`` (passed, not closed over: ``memoized``)."""
        steps = self.trajectory.steps
        index = step.index
        if not (0 <= index < len(steps) and steps[index] is step):
            return compute(*args)
        # One table per key: a lookup hashes the key and the index, not a new pair of them.
        # Each step's first lookup misses: tested with ``in`` (``memoized``).
        tables = self._steps
        table = tables.get(key)
        if table is None:
            table = tables[key] = {}
        if index in table:
            return table[index]
        value = table[index] = compute(*args)
        return value

    def network_violations(
        self, patterns: Iterable[str], steps: Iterable[Step]
    ) -> list[NetworkViolation]:
        """``Trajectory.find_network_violations(patterns)`` over ``steps`` (the trajectory's,
        or some of them): ``no_network``, ``network_access`` and ``package_install`` each
        search with their own patterns. The texts are not kept between them: the core
        writes each into one reused buffer and searches it in place, which costs less than
        the Python string a kept text needs (docs/performance-history.md)."""
        return network_violations(steps, patterns)

    def tool_calls(self) -> list[Step]:
        """``trajectory.tool_calls()`` (``groups.calls`` as a fresh list)."""
        return list(self.groups.calls)

    def calls_of(
        self, names: tuple[str, ...], unknown_namespace_matches: bool = False
    ) -> tuple[Step, ...]:
        """The tool calls (``tool_calls``, in step order) whose tool, or the MCP server's own
        name for a call a framework qualified (``mcp_tool``), one of ``names`` names
        (``model.tool_name.first_match``'s answer, of the core's matcher kept per ``names``
        for the process; every call when ``names`` is empty), found once
        per (``names``, ``unknown_namespace_matches``) and kept in ``memo``: the checks of a
        trajectory's contracts ask the same selections (every call, the forbidden tools)
        again and again. The core's (``evidence.rs``, ``calls_of``), which the check plans
        call without a Python frame (~12,000 asks a grade)."""
        return native_calls_of(self, names, unknown_namespace_matches)

    def nameless_calls(self) -> tuple[Step, ...]:
        """The trace-derived tool calls whose tool name was not recorded (AgentBench steps
        are taken as written; ``groups.nameless``): they make ``tool_names`` missing
        evidence, and the counts that must stay lower bounds count each of them unless it
        is shown to be a named call's twin (``trace_common.nameless_twins``)."""
        return self.groups.nameless

    # The facts below are each kept in ``memo`` under ``"Evidence.<method>"``. The core
    # works out ``answering``, ``last_generation``, ``fragment_gap`` and ``stopped_short``
    # (``native/python/src/evidence.rs``: its check plans and ``known_clear`` ask them
    # first, without a Python frame; these methods ask the same functions), calling back
    # here only to word what it found.

    def answering(self) -> frozenset[int]:
        """``id()`` of each final-answer tool call (``final_answer_calls``), made once: the
        checks that leave the answer's delivery out of the calls they count or align ask
        whether each call is one."""
        ids: frozenset[int] = native_answering(self)
        return ids

    def generations(self) -> list[Step]:
        """``trajectory.generations()`` (``groups.generations`` as a fresh list)."""
        return list(self.groups.generations)

    def agents(self) -> list[Step]:
        """``trajectory.agents()`` (``groups.agents`` as a fresh list)."""
        return list(self.groups.agents)

    def last_generation(self) -> Step | None:
        """The run's last model call, found once by the core (``StepView.last_generation``):
        the model call that ended last (end time, then step index) among those no later
        call started during. A call still open when the next one started handed its output
        on before its span ended (ADK for Java ends each ``call_llm`` span only after the
        steps that follow it have run), so ending last does not make it the last call; all
        of them count when every call was followed so (no timing to tell). The final output
        and ``stopped_short`` both start from it."""
        last: Step | None = native_last_generation(self)
        return last

    def final_output(self) -> FinalOutput:
        """``final_output(trajectory)``, computed once."""
        memo = self.memo
        if "Evidence.final_output" in memo:
            found: FinalOutput = memo["Evidence.final_output"]
            return found
        result = memo["Evidence.final_output"] = _final_output_of(self)
        return result

    def stopped_short(self) -> str | None:
        """Why the run did not end because the agent had finished (its framework's limit
        ended it), or ``None``, computed once (``_stopped_words`` says when and how)."""
        why: str | None = native_stopped_short(self)
        return why

    def final_answer_calls(self) -> list[Step]:
        """``final_answer_calls(trajectory)`` (a fresh list per call)."""
        return list(self._answer_calls())

    def _answer_calls(self) -> list[Step]:
        """The final-answer calls (``final_answer_calls`` says which), found once by the core
        (``StepView.final_answer_calls``; the kept list: callers copy it)."""
        calls: list[Step] = native_answer_calls(self)
        return calls

    def coverage_gap(self) -> str | None:
        """``coverage_gap(trajectory)``, computed once."""
        unmapped = self.trajectory.unmapped_spans
        if not unmapped:
            return None
        memo = self.memo
        if "Evidence.coverage_gap" in memo:
            found: str = memo["Evidence.coverage_gap"]
            return found
        message = memo["Evidence.coverage_gap"] = _coverage_message(unmapped)
        return message

    def fragment_gap(self) -> str | None:
        """``fragment_gap(trajectory)``, computed once (asked after every pass of a check
        that needs the whole run; the core's: ``_fragment_words`` words what it finds)."""
        message: str | None = native_fragment_gap(self)
        return message

    def lacking(self, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """``lacking_of`` the plan of ``names`` (sorted, unique; ``planned``, made once per
        tuple): for the names asked outside a compiled contract (a replay's ``file_edits``,
        a check's own ``tool_names``, ``probed``)."""
        return self.lacking_of(planned(names))

    def lacking_of(self, plan: Plan) -> tuple[tuple[str, str], ...]:
        """``(name, message)`` for every evidence name of ``plan`` (a compiled contract's or
        check's, ``Plan``) the trajectory lacks, decided once per plan and kept in ``memo``
        under the plan itself (hashed by identity, not name by name): the checks of a
        trajectory's contracts ask a handful of plans, most of them lacking nothing.

        The core's (``evidence.rs`` ``lacking_of``, which the evaluator's ``known_clear``
        asks for each contract without a Python frame, ~3,500 times a grade): the names the
        core probes (``CORE_PROBES``: the tool-call, token, message, file-edit, timing,
        steps, agents and tool-names probes) are answered by one call of the plan's core
        plan, which reads the view's groups and the steps once for all of them (each walk's
        answer kept in the view, so another plan asking the same name reads it there) and
        hands back only the names lacking, with the steps that lack them; their messages are
        worded by the plan's ``wordings``. ``tool_names`` needs to know whether the trace is
        a fragment of a run (``fragment_gap``, which the contract's ``known_clear`` asks
        anyway) unless nameless calls decide it; ``tool_outcomes`` needs the final-answer
        calls (``answering``). The other names (``final_output`` ...: facts of the
        trajectory) are each probed once per trajectory (``probed``), in position order
        with the core's."""
        return native_lacking_of(self, plan)

    def probed(self, name: str) -> str | None:
        """What the probe of evidence ``name`` (``tool_arguments:search_*``) says is
        missing, or ``None``: run once per name for this trajectory (the checks of its
        contracts ask a few names each, many of them the same; most are first asked here,
        so tested with ``in``)."""
        probed = self._probed
        if name in probed:
            return probed[name]
        base, scope = split_name(name)
        message = probed[name] = PROBES[base](self, scope)
        return message

    def gaps(self, names: tuple[str, ...]) -> list[str]:
        """Messages for every evidence name in ``names`` (sorted, unique) the trajectory
        lacks (``lacking``; a fresh list per call: callers insert into it)."""
        return [message for _, message in self.lacking(names)]


def group_steps(steps: Sequence[Step]) -> StepView:
    """The core's ``StepView`` of ``steps`` (``native/python/src/evidence/view.rs``), made in
    one pass: a trajectory's steps sorted by what the checks and probes select (``calls``,
    ``generations``, ``agents``, ``handoffs``: the selections ``Trajectory`` defines
    (``tool_calls`` ...), in step order; ``nameless``, the calls found with
    ``is_placeholder``; ``tool_spans``, ``all_raw``), the kinds compared as Python compares
    them, and the typed records the per-trajectory facts are worked out over (the run's last
    model call, the error that ended it, the last run's agents, the work left unread). The
    view is what ``Evidence.groups`` is: the checks of every contract graded on the
    trajectory read its tuples instead of filtering the steps again, and no Python record
    copies them (a frozen dataclass's ``__init__`` paid ``object.__setattr__`` per field)."""
    return StepView(steps, TOOLISH_KINDS, GENERATION, AGENT, HANDOFF, OTHER)


is_placeholder: Callable[[Any], bool] = native_is_placeholder
"""True for a redaction placeholder or an empty string (content dropped, not content):
``None``; a string that, stripped of whitespace, is empty, ``__REDACTED__``,
``[REDACTED]``, ``<redacted>``, ``REDACTED``, ``[FILTERED]``, ``<omitted>`` or ``<elided>``
in any case, or three or more ``*``. Containers count as placeholders when non-empty and
made only of placeholders; an empty dict or list is a real value (a tool called with no
arguments). The core's (``native/core/src/placeholder.rs``): linear in the text, and a text
is read only as far as its first character when that rules it out."""


absent: Callable[[Step, str], bool] = native_absent
"""Whether ``field`` of ``step`` was not captured (None, redacted or a placeholder:
``field in step.redacted or is_placeholder(getattr(step, field))``). The core's
(``native/python/src/evidence/naming.rs``), which the citation plans call without a Python
call per source."""

where: Callable[[Step], str] = native_where
"""``step 3 (search_docs, span ab12...)``: how messages point at a step (its tool, else a
model call's model, else its agent, else any model, else its kind; ``step 3
(search_docs)`` without a span). The core's (``evidence/naming.rs``), which the plans call
without a Python call per step they name."""

list_steps: Callable[[Sequence[Step]], str] = native_list_steps
"""The first ``MAX_LISTED`` steps as ``where`` names them, joined by ``", "``, then
`` and N more`` for the rest. The core's (``evidence/naming.rs``)."""


# ---- coverage -----------------------------------------------------------------------------------


def coverage_gap(t: Trajectory) -> str | None:
    """``None`` when every span of the trace was recognised by a convention, else a message
    naming the unrecognised spans (names and counts, the most frequent first, capped): what a
    check that needs complete visibility reports instead of a pass (``Evidence.coverage_gap``
    computes it once per trajectory)."""
    return Evidence(t).coverage_gap()


def fragment_gap(t: Trajectory) -> str | None:
    """``None`` unless the trace shows that it holds only part of a run, else why: what a
    check about everything the run did reports instead of a pass (``Evidence.fragment_gap``
    computes it once per trajectory). A trace is a fragment when

    - model input refers to tool calls (requests, or results handed back) that no step of
      the trace made (``calls_outside``): the run began before the trace, or made calls
      that opened no span and that no model call in the trace shows it asked for (the Azure
      AI Agents SDK answers a call of a function its toolset lacks with an output posted by
      call id, read as the input of the service's next model call);
    - nothing encloses its model calls (the trace's root span is a model call: no
      application, agent or wrapper span shows where the run starts and ends) and that call
      requested tools that no step of the trace runs or answers: the run went on after the
      trace (one chat call per trace, e.g. a framework its tracer does not instrument);
    - nothing encloses its model calls and the root call's input was not captured: nothing
      shows that the call starts the run rather than continuing one.

    A trace with a root of its own (an agent span, the application's run wrapper) holds the
    whole run: a request left unanswered there is where the run stopped."""
    return Evidence(t).fragment_gap()


def _fragment_words(ev: Evidence, found: tuple[str, Step | None, Any] | None) -> str:
    """The message of the fragment gap the core found (``Evidence.fragment_gap``: spans
    naming a parent that never arrived, ``found`` ``None``, decide it first; else what the
    core's walk of the model calls' messages found, ``StepView.fragment``)."""
    if found is None:
        return f"the trace holds only part of the run: {_unfinished(ev.trajectory)}"
    kind, step, value = found
    if kind == "outside":
        return (
            "the trace holds only part of the run: model input refers to "
            f"{len(value)} tool call(s) not in this trace ({', '.join(value[:3])}), "
            "made before it began or without a step of their own"
        )
    assert step is not None  # the other findings name the model call
    if kind == "unanswered":
        names = ", ".join(dict.fromkeys(value)) or "names not captured"
        return (
            "the trace holds only part of the run: its root span is a model call and "
            f"{where(step)} requested tool calls ({names}) that no step of the trace runs "
            "or answers, so the run went on outside this trace"
        )
    return (
        "the trace may hold only part of the run: its root span is a model call "
        f"({where(step)}) whose input was not captured, so nothing shows that the run "
        "starts there"
    )


def _unfinished(t: Trajectory) -> str | None:
    """Why the trace does not show its run finish, or ``None``: spans name a parent span that
    never arrived (``Trajectory.orphan_spans``). An SDK exports a span only when it ends, so
    the span still open when the export stopped is missing while the children that had
    ended are there: the agent's process was killed or crashed mid-run (its agent or root
    span never ends), the run was still going when it was exported, or a batch of it was
    lost on the way. Which of these the trace cannot tell, and in each the missing part may
    hold the forbidden call, one more call or retry, or the answer. A span whose sender
    marks its parent as another process's (OTLP span flags: a caller never exported here)
    is a root, not an orphan (``build_trace``); one whose sender does not say fails closed
    here with the rest."""
    orphans = t.orphan_spans
    if not orphans:
        return None
    return (
        f"{len(orphans)} span(s) name a parent span that never arrived (the span enclosing "
        "them was still open when the export stopped, or was lost: a run killed or still "
        "going, or a dropped export), so the run is not shown to have finished"
    )


def counted_names(counts: dict[str, int], limit: int, *, quoted: bool = False) -> str:
    """``name x3, other x1 and 2 more name(s)``: the most frequent first, at most ``limit``."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{name!r} x{n}" if quoted else f"{name} x{n}" for name, n in items[:limit])
    more = len(items) - limit
    if more > 0:
        shown += f" and {more} more name(s)"
    return shown


def _coverage_message(unmapped: dict[str, int]) -> str:
    shown = counted_names(unmapped, MAX_LISTED, quoted=True)
    return (
        f"coverage: {sum(unmapped.values())} span(s) no convention recognised ({shown}) may "
        "hold what this check rules out; map them in a convention, or relax with "
        "coverage: lenient"
    )


# ---- messages and the final output --------------------------------------------------------------


message_text: Callable[[Any], str | None] = native_message_text
"""The text a message carries (GenAI ``parts``, OpenAI ``content`` string or list, several
texts joined by a newline), or ``None`` when it carries none (structure only, as with
content capture off). The core's (``native/python/src/evidence/messages.rs``), as are
``message_tool_names`` (tool names requested inside messages: GenAI ``tool_call`` parts,
OpenAI ``tool_calls``), ``messages_empty`` (messages present as structure only: roles and
part types, no text or tool payloads) and ``unnamed_request`` (a ``tool_call`` part whose
name was not recorded: a call was asked for, so no finish reason, Gemini's ``STOP`` with or
without calls, can say the model asked for nothing); the final output and the fragment gap
read them in the core's own walk of the messages (``StepView.final_output``,
``StepView.fragment``)."""


# A plain class, not a frozen dataclass: the methods ``dataclasses`` generates are compiled
# from source at every start (``otel_oracles._frozen``); compared, hashed and shown as one.
class FinalOutput(FrozenValue):
    """The agent's final answer, or why it is not known.

    ``text`` is what answer checks search (regexes, cited ids); ``value`` is the structured
    answer when one was delivered as a final-answer tool's arguments (``schema_valid``
    validates it as it is rather than re-parsing text)."""

    __slots__ = ("missing", "step", "text", "value")
    text: str | None
    step: Step | None
    missing: str | None
    value: Any

    def __init__(
        self, text: str | None, step: Step | None, missing: str | None = None, value: Any = None
    ) -> None:
        set_field(self, "text", text)
        set_field(self, "step", step)
        set_field(self, "missing", missing)
        set_field(self, "value", value)


_make_output = SlotClass(FinalOutput, FinalOutput._fields, keywords=True).make
"""``FinalOutput(...)`` made in its memory by the core (``SlotClass``; by name, since its
slots are sorted rather than in field order), as ``Finding.ok`` makes a finding (its
``__init__`` sets each field through ``object.__setattr__``, ~1,000 instructions a field;
every trajectory's answer checks read one)."""


def _output(
    text: str | None, step: Step | None, missing: str | None = None, value: Any = None
) -> FinalOutput:
    """``FinalOutput(text, step, missing, value)``, made by ``_make_output``."""
    return _make_output(text, step, missing, value)


def final_output(t: Trajectory) -> FinalOutput:
    """The final answer, the one definition every answer check reads:

    1. the arguments of the last call of a final-answer tool (``final_answer``,
       ``final_result``, output-type tools: ``Trajectory.final_answer_tools``, declared by
       the conventions; ``final_answer_calls``). Such a tool is the channel the answer is
       delivered through, so it wins over any model text around it; its arguments not
       captured is a missing answer, never a fall-back to other text;
       1b. else the structured answer of the last run's agent (a convention's
       ``structured_output``: LangChain's ``structured_response``), for the same reason;
    2. else the text of the last model call ("last" by end time, then step index, among the
       calls no later call started during: ``Evidence.last_generation``);
    3. else an agent span's output (some instrumentations put the run's result there);
    4. else the output is missing, saying why.

    A run that ended in an error (its last model call failed, or its agent span ended with
    an error when or after that call ended: ``_run_error``) has no answer: 2 and 3 are not
    read, and the reason names the failure.
    A run whose last model call was cut off (the token limit or a content filter:
    ``_cut_off``) has no complete answer either: 2 and 3 are not read, and the reason names
    the cut.

    ``Evidence.final_output`` computes it once per trajectory."""
    return Evidence(t).final_output()


def final_answer_calls(t: Trajectory) -> list[Step]:
    """Calls of the trajectory's final-answer tools, in answer order (last = the answer):
    calls of a tool ``final_answer_tools`` names, calls a convention rule marks as
    answering (``delivers_answer``: a structured-output tool named after the user's output
    type, known by what its span records), and calls no span ran whose arguments are an
    agent's structured answer (``attributes.structured_output`` of an agent run that did not
    end in an error: LangChain's ``create_agent`` tool strategy answers its output tool's
    call inside the agent, so the call is seen only in the model's request, and the run's
    output state holds those arguments as its answer) or a structured object an ``other``
    step that did not fail returned (Instructor's forced function call, whose arguments its
    ``instructor.create`` span returned as the validated object: such an object is no run's
    answer on its own, an application may validate many, but a request no span ran whose
    arguments are exactly the object is the call that delivered it), in answer order (end
    time, none first, then step index). Worked out by the core over the trajectory's typed
    view (``StepView.final_answer_calls``, asked by ``Evidence._answer_calls``), the tools
    matched by the core's matcher kept for the conventions' tuple (``first_match``'s rules,
    remembered per name for the process; ``first_match`` itself asked only for what the
    core leaves to it)."""
    return Evidence(t).final_answer_calls()


def _tool_answer(step: Step) -> FinalOutput:
    args = step.arguments
    if args is not None and not is_placeholder(args):
        return _output(_object_answer_text(args), step, value=args)
    raw = step.arguments_raw
    if raw is not None and not is_placeholder(raw):
        return _output(raw, step)
    return _output(
        None,
        step,
        f"final output not captured: final-answer tool call {where(step)}: arguments not captured",
    )


def _object_answer_text(answer: dict[str, Any]) -> str:
    """The text answer checks search in an answer delivered as an object: its single string
    value (``final_answer(answer="...")``), else the object as JSON."""
    values = list(answer.values())
    if len(values) == 1 and isinstance(values[0], str):
        return values[0]
    return _ANSWER_ENCODER.encode(answer)


_ANSWER_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _final_output_of(ev: Evidence) -> FinalOutput:
    # Asked once per trajectory whose contracts read its answer; the common case (a finished
    # run, no final-answer call, the last model call's text) costs no frame of Python beyond
    # this one: the orphans tested before ``_unfinished`` words them, the core's kept list
    # of final-answer calls read in place (not copied), the output made by ``_make_output``.
    if ev.trajectory.orphan_spans:
        # A run the trace does not show finish returned no answer it shows: any text seen
        # (a final-answer call, a model call's text) may be one the run went on from.
        unfinished = _unfinished(ev.trajectory)
        return _output(None, ev.last_generation(), f"no final answer: {unfinished}")
    answers: list[Step] = native_answer_calls(ev)
    if answers:
        return _tool_answer(answers[-1])
    # The rest is read by the core in one walk (``StepView.final_output``): the run's last
    # model call, the error that ended the run (``_run_error``), the agent steps of the run
    # that ended last, outermost first (``last_run_agents``: a subject may hold several runs
    # of an agent side by side, a conversation's turns, and the answer is the last run's;
    # within one run the outermost agent's output is what it returned, a delegating agent
    # passing its helper's answer on), and in this order: a last-run agent's structured
    # answer (its output state's ``structured_response``: the channel, as a final-answer
    # tool, whatever model text came before), the last call's cut (``_cut_off``), its text
    # (unless a tracer that writes the model's thoughts as text parts too, a convention's
    # ``thoughts_unmarked``, made it several parts: reading the reasoning as the answer could
    # pass an answer on what the model only thought), a last-run agent's text (one that ended
    # in an error returned none), else why there is none.
    kind, step, value = ev.groups.final_output(CUT_FINISH_REASONS)
    if kind == "text":
        return _make_output(value, step, None, None)
    if kind == "structured":
        return _output(_object_answer_text(value), step, value=value)
    if kind == "error":
        return _output(None, step, _run_error(value, step))
    if kind == "none":
        return _output(None, None, "final output: the trace has no model-call spans")
    assert step is not None  # the other findings name the last model call
    if kind == "cut":
        return _output(None, step, _cut_off(step, value))
    if kind == "thoughts":
        return _output(
            None,
            step,
            f"final output not known: last model call {where(step)}: its answer is "
            f"{value} text parts and the tracer writes the model's thoughts as text parts "
            "too (thoughts_unmarked), so which part is the answer cannot be told",
        )
    if kind == "absent":
        why = "output messages not captured"
    else:
        why = "output messages carry no text (content capture off?)"
    return _output(None, step, f"final output not captured: last model call {where(step)}: {why}")


def _cut_off(last: Step, reason: str) -> str:
    """Why there is no complete answer when the run's last model call stopped before it
    finished its reply: its finish reason says the token limit (``length``) or the provider's
    content filter (``content_filter``) ended it (``CUT_FINISH_REASONS``). Most frameworks
    hand such a reply on as the run's answer, but what the user got is a fragment: the cut
    sentence may be the one that changes the answer (a citation, an exception, the
    disclosure), so no answer check may pass on it. As for a run that ended in an error,
    every check that reads the answer is then missing evidence naming the cut, whatever the
    fragment says, and neither the agent's output (the same fragment passed on) nor an
    earlier call's text is read in its place. A structured answer the framework validated
    (read before this) is a complete object and stays the answer. ``reason`` is the first of
    ``last``'s finish reasons that says so (found by ``StepView.final_output``)."""
    return (
        f"no complete answer: the last model call {where(last)} was cut off by "
        f"{CUT_FINISH_REASONS[reason.lower()]} (finish reason {reason}), so its text is a "
        "fragment of the answer"
    )


def _run_error(failed: Step, last: Step | None) -> str:
    """Why there is no answer when the run ended in an error: its last model call failed
    (status ERROR, or the GenAI finish reason ``error``, which Mastra writes on an OK span:
    an API error, the client's retries spent), or the run's agent span (the outermost one
    naming an agent among those ending when or after that call ended; an SDK's unnamed
    workflow span around it does not speak for the run) ended with an error, so the run
    returned nothing, whatever an earlier call said (a tracer that records no span for the
    failed call leaves the one before it last). An agent that failed and was recovered from
    (its span ended before the run's last call, or inside an agent span that ended OK, as
    AutoGen's cancelled inner run) does not end the run. Then there is no
    answer to judge, which is what the message says, rather than blaming content capture:
    every answer check stays missing evidence (never a pass, not on an earlier call's text),
    and the failure is named where it happened. ``failed`` is the step that ended it
    (``StepView.run_error_step(last)``, found by ``StepView.final_output``)."""
    if failed is last:
        return f"no final answer: the last model call {where(last)} failed{_error_of(last)}"
    return f"no final answer: the run ended in an error at {where(failed)}{_error_of(failed)}"


def _stopped_words(ev: Evidence, kind: str, step: Step, value: Any) -> str:
    """The message of ``Evidence.stopped_short``, which the core decides
    (``native/python/src/evidence.rs``, ``stopped_short``) in this order: why the run did
    not end because the agent had finished, when the trace shows it:

    - the error that ended the run (``StepView.run_error_step``) is one the conventions declare a
      framework raises at its own turn, iteration or model-call limit (``run_limit_errors``:
      the mapping marks the step ``run_limit``), such as ``MaxTurnsExceeded``;
    - or its last model call is the framework's own request for a final answer, made once its
      limit was reached instead of raising (``run_limit_prompts``: the mapping marks the call
      ``run_limit``), as smolagents and CrewAI do;
    - or, where that request's text is not shown, its last model call has the request's
      structural mark (``_forced_answer``): it offered no tools, right after a tool ran, where
      the agent's call before it offered some;
    - or the trace records tool calls but no model call, and no agent span shows how the
      model's last turn ended (a finish reason that asks for no tool): nothing shows the run
      ended on the agent's own answer rather than at a limit (autogen-core's own spans);
    - or the run ended without an error in the middle of its work: after its last model call
      ended, a tool it had been using (tool spans show it running before that call) was
      called again, or was asked for by that call and never ran, and no model call came
      after to read the result. A framework whose step limit ends the loop does this:
      LangGraph's prebuilt ReAct agent puts a text of its own in place of the last request,
      LangChain's ``AgentExecutor`` returns its own text after the last tool ran. Only a tool
      seen running before is work: a tool no span ran earlier may be the answer's channel
      (final-answer tools, an output tool named after the user's type), and an unnamed
      request may be either.

    Then how much more the agent would have done is not in the trace: a count of its
    effort is a lower bound, never a pass (``max_tool_calls``, ``max_steps``,
    ``loop_detected``). A run that failed otherwise (a model API outage) is not stopped by
    a limit; its effort checks judge what it did.

    ``kind`` is what the core found: ``"limit_error"`` (``step`` the failed step, ``value``
    its ``run_limit``), ``"limit_prompt"`` (``step`` the last model call, ``value`` its
    ``run_limit``) or ``"unread"`` (``step`` the last model call, ``value`` the calls left
    unread: ``StepView.unread_work``); the forced answer and a run without model calls are
    worded by ``_forced_answer`` and ``_run_end_unrecorded``, which the core asks."""
    if kind == "limit_error":
        return f"the run was ended by its framework's own limit at {where(step)} ({value})"
    if kind == "limit_prompt":
        return (
            f"the run was ended by its framework's own limit: its last model call {where(step)} "
            f"is the framework's request for a final answer ({value!r})"
        )
    return (
        f"the run ended in the middle of its work: {list_steps(value)}, asked for by or "
        f"after its last model call {where(step)}, reached no model call after it"
    )


def _forced_answer(ev: Evidence, last: Step) -> str | None:
    """Why the run's last model call ``last`` is its framework asking for a final answer,
    when its request's text is not shown (content capture off; with it shown,
    ``run_limit_prompts`` decide), or ``None``. A framework past its limit that does not
    raise asks the model once more for an answer and offers it no tools (smolagents'
    ``provide_final_answer``, CrewAI's forced final answer): the call offered none
    (``tools_offered == ()``, recorded, not unknown), a tool ran after the same agent's call
    before it (the loop was working, not done), and that call offered tools. A final call
    made by design after the agent had answered (a structured-output call, a summary) comes
    after a call that asked for no tool, so no tool ran between them; a call whose tools the
    trace does not record (``None``) shows nothing. The core asks it only for a last call
    that offered none (``tools_offered == ()``) and whose input is not shown (``None``, or
    listed in ``redacted``): it tests that first (``stopped_short``)."""
    before = [
        g for g in ev.groups.generations if g.index < last.index and g.agent_name == last.agent_name
    ]
    previous = before[-1] if before else None
    offered = previous.tools_offered if previous is not None else None
    if previous is None or not offered:
        return None
    if not any(previous.index < c.index < last.index for c in ev.groups.calls):
        return None
    return (
        f"the run was ended by its framework's own limit: its last model call {where(last)} "
        f"offered no tools, right after a tool ran, where the call before it "
        f"{where(previous)} offered {len(offered)}: the framework asking for a final answer "
        "(the request's text is not shown)"
    )


def _run_end_unrecorded(ev: Evidence) -> str | None:
    """Why a trace without model calls cannot show that its run ended on the agent's own
    answer (``Evidence.stopped_short``), or ``None`` when it can or when there is no work to judge:
    the tool spans list every call the run made, but the model's turn after the last one
    (an answer, or none because a limit ended the loop) is not recorded, unless an agent
    span records how the model's last turn ended (a finish reason asking for no tool)."""
    if not any(not s.synthesized and s.raw is None for s in ev.groups.calls):
        return None
    for agent in ev.groups.agents:
        reasons = {r.lower() for r in agent.finish_reasons or ()}
        if reasons and not reasons & TOOL_CALL_FINISH_REASONS:
            return None
    return (
        "the run ended where its trace cannot show how (it records no model call, so nothing "
        "shows the run ended on the agent's own answer rather than at a limit of its framework)"
    )


def _error_of(step: Step) -> str:
    """`` (TypeName)``: the error a failed step records, when it names one."""
    return f" ({step.error_type})" if step.error_type else ""


# ---- probes -------------------------------------------------------------------------------------


def _matches(tool: str | None, scope: str | None) -> bool:
    # Scopes widen to namespace-less names too: evidence is asked of every call that may be
    # the scoped tool.
    return scope is None or (tool is not None and tool_matches(scope, tool, True))


Wording = Callable[["Evidence", int, "list[Step] | None"], str | None]
"""``words(evidence, read, gaps)``: the message of a core-probed name the trajectory lacks
(``EvidencePlan.lacking``: the steps its probe read, ``read`` of them, and those lacking
what it asks for, ``None`` where it names no step), or ``None`` when it is not missing
after all (every token gap a refused model call)."""


def _field_words(label: str) -> Wording:
    """The message of the probe of a tool call's ``arguments`` or ``result``. AgentBench
    steps are taken as written (their fields are what was recorded). Arguments captured as
    non-JSON text (a repr, ``arguments_raw``, not flagged as not captured nor a
    placeholder) are evidence of a kind: only a missing dict *and* missing raw text is
    absence. A failed call has no result by nature: its failure is the evidence."""

    def words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
        if gaps:
            return f"{label} not captured for {len(gaps)} of {read} tool call(s): " + list_steps(
                gaps
            )
        return None

    return words


def _asked_alone(base: str) -> Probe:
    """The probe of the core-probed evidence name ``base`` (``CORE_PROBES``) asked alone
    (``Evidence.probed``): the plan of that one name."""

    def probe(ev: Evidence, scope: str | None) -> str | None:
        found = ev.lacking((base if scope is None else f"{base}:{scope}",))
        return found[0][1] if found else None

    return probe


class Plan:
    """An evidence-name tuple (sorted, unique: a compiled contract's or check's) made ready
    to ask of trajectories (``Evidence.lacking_of``), once per tuple: kept on the compiled
    contract and on each compiled check (``grade/compiled.py``), or made once per tuple
    asked outside them (``planned``). Read-only once made."""

    __slots__ = ("core", "names", "outcomes", "python", "tool_names", "wordings")

    core: EvidencePlan | None
    """The core's plan of the names it probes (``CORE_PROBES``), or ``None``."""
    names: tuple[str, ...]
    outcomes: bool
    """Whether the core plan asks ``tool_outcomes`` (it then needs ``Evidence.answering``)."""
    python: tuple[tuple[int, str], ...]
    """The names probed in Python (``probed``), with their positions."""
    tool_names: bool
    """Whether ``tool_names`` is among the names (the core plan then needs to know whether
    the trace is a fragment of a run)."""
    wordings: tuple[Wording | None, ...]
    """How each position's message is worded (``None`` at the Python-probed names)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        entries: list[tuple[int, str, str | None]] = []
        wordings: list[Wording | None] = []
        python: list[tuple[int, str]] = []
        for pos, name in enumerate(names):
            base, scope = split_name(name)
            core = CORE_PROBES.get(base)
            if core is None:
                python.append((pos, name))
                wordings.append(None)
            else:
                entries.append((pos, core[0], scope))
                wordings.append(core[1])
        plan = EvidencePlan(entries, tool_matches, FILE_EDIT) if entries else None
        self.names = names
        self.core = plan
        self.outcomes = plan is not None and plan.outcomes
        self.tool_names = any(probe == "names" for _, probe, _ in entries)
        self.wordings = tuple(wordings)
        self.python = tuple(python)

    def __repr__(self) -> str:
        return f"Plan({self.names!r})"


@functools.lru_cache(maxsize=1024)
def planned(names: tuple[str, ...]) -> Plan:
    """The ``Plan`` of ``names`` asked outside a compiled contract (``Evidence.lacking``),
    made once per tuple: the same plan each time, so ``Evidence`` keeps its answer."""
    return Plan(names)


def _generation_words(label: str) -> Wording:
    """The message of the probe of the model calls' input or output messages: not captured,
    or captured as structure only (``messages_empty``)."""

    def words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
        if not read:
            return f"{label}: the trace has no model-call spans"
        if gaps:
            return f"{label} not captured for {len(gaps)} of {read} model call(s): " + list_steps(
                gaps
            )
        return None

    return words


def _steps_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """A trajectory without steps (found by the core)."""
    return "the trajectory has no steps"


WORK_INVISIBLE = "the trace has neither tool spans nor model calls"
"""Why a run's work is not in its trace (``work_invisible``), as messages say it."""


def work_invisible(t: Trajectory) -> bool:
    """Whether the trace shows the run but none of its work: every span recognised and the
    run seen (an agent or chain span, say), yet neither a tool span nor a model call whose
    messages could show the calls and what they returned (an instrumentation recording the
    agent around a loop it no longer sees into: Haystack 3's Agent inside a Pipeline under
    OpenInference). Such a run is not shown to have called nothing: which tools ran, and
    what they returned, are unknown. Unrecognised spans are the coverage setting's to judge
    (lenient coverage judges what was seen); AgentBench trajectories list every step."""
    return (
        bool(t.steps)
        and not t.unmapped_spans
        and not any(s.kind == GENERATION or s.is_tool or s.raw is not None for s in t.steps)
    )


def _names_words(ev: Evidence, read: int, nameless: list[Step] | None) -> str | None:
    """Which tools ran is known when tool spans exist, or when every model call that may
    have asked for tools shows (in its messages or in synthesized calls) which ones. The
    core answers the usual trace (``EvidencePlan.lacking``: no nameless call, no fragment
    gap, tool spans or an AgentBench trajectory listing every call); this words the rest:
    the nameless calls it found, the fragment gap, and a trace without tool spans
    (``_names_unknown``)."""
    # An AgentBench step may be typed (``{"type": "file_edit"}``) without a tool name.
    if nameless:
        return f"tool names not captured for {len(nameless)} tool call(s): " + list_steps(nameless)
    fragment = ev.fragment_gap()
    if fragment is not None:
        return fragment
    return _names_unknown(ev)


def _names_unknown(ev: Evidence) -> str | None:
    """Why a trace without tool spans (nor an AgentBench trajectory) cannot show which tools
    ran, or ``None`` when its model calls show it: each call that may have asked for tools
    shows the names in its messages, or in the synthesized calls after it."""
    t = ev.trajectory
    if work_invisible(t):
        return f"tool names unknown: {WORK_INVISIBLE}, so nothing shows which tools the run called"
    ordered = sorted(t.steps, key=lambda s: s.index)
    unknown: list[Step] = []
    unnamed = [s for s in ordered if s.kind == GENERATION and unnamed_request(s.output_messages)]
    if unnamed:
        return (
            f"tool names unknown: {len(unnamed)} model call(s) requested a tool whose name was "
            "not recorded: " + list_steps(unnamed)
        )
    for pos, step in enumerate(ordered):
        if step.kind != GENERATION:
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
            if nxt.kind == GENERATION:
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


def _history_ids(messages: list[dict[str, Any]] | None) -> tuple[list[str], list[str]]:
    """(the call ids the assistant requested in ``messages``, the call ids of the tool
    results handed back in them), in one pass over a model call's input: requests are the
    ids of the assistant's ``tool_call`` parts and OpenAI ``tool_calls``; results are
    ``tool_call_response`` parts and ``tool`` messages' ``tool_call_id`` (some frameworks
    send the model the results without the assistant message that requested them). A
    result whose id is a made-up ``<tool>_<n>`` numbered differently from its call's
    (``OpenCalls.twin``) is that call's. Called by the core (``StepView.fragment``) for each
    model call that has input: the ``OpenCalls`` it answers twins with is the mapper's too."""
    requested: list[str] = []
    answered: list[str] = []
    names: set[str] = set()  # ids requested in ``tool_call`` parts
    opened = OpenCalls()
    for m in messages or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        for part in m.get("parts") or []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "tool_call":
                if role == "assistant" and part.get("id"):
                    call_id = str(part["id"])
                    requested.append(call_id)
                    names.add(call_id)
                    opened.open(call_id, part.get("name"))
            elif kind == "tool_call_response" and part.get("id"):
                response_id = str(part["id"])
                if response_id not in names:
                    response_id = opened.twin(response_id) or response_id
                answered.append(response_id)
                opened.close(response_id)
        if role == "assistant":
            for call in m.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id"):
                    requested.append(str(call["id"]))
                    opened.open(str(call["id"]), None)
        elif role == "tool" and m.get("tool_call_id"):
            answered.append(str(m["tool_call_id"]))
            opened.close(str(m["tool_call_id"]))
    return requested, answered


def calls_outside(t: Trajectory) -> list[str]:
    """Ids of tool calls the conversation history (model input: the assistant's requests and
    the results handed back) refers to that no step of this trace made: the trace is a
    fragment of a longer run (e.g. one chat call per trace when the application has no root
    span). Steps without a call id may be those calls, so
    only the excess counts. A handoff step answers a call like a tool step (the delegation
    tool's span, whose call id the instrumentation may not record). Found by the core with
    the rest of the fragment gap (``StepView.fragment``), before anything else it asks."""
    found = Evidence(t).groups.fragment(t.root_span_id, TOOL_CALL_FINISH_REASONS, _history_ids)
    if found is None or found[0] != "outside":
        return []
    ids: list[str] = found[2]
    return ids


def tool_responses(step: Step) -> list[Any]:
    """Tool results a model call was given in its input (``tool`` messages,
    ``tool_call_response`` parts): evidence of what tools returned, even from calls whose
    own step is not in the trace."""
    out: list[Any] = []
    for m in step.input_messages or []:
        if not isinstance(m, dict):
            continue
        for part in m.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                value = part.get("response", part.get("result"))
                if not is_placeholder(value):
                    out.append(value)
        content = m.get("content")
        if m.get("role") == "tool" and content is not None and not is_placeholder(content):
            out.append(content)
    return out


def _outcomes_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """Whether each call succeeded is known from a tool span's status; a call seen only in
    messages (synthesized), or a tool span whose instrumentation never marks a failure (its
    convention reads failures from the result: status ``unset``), shows its outcome only in
    its captured result, and not even there when its convention says the results cannot
    tell a failure from a success (``attributes.outcome_unknown``). A final-answer tool call
    (``final_answer_calls``) is the answer's delivery, not a dependency that may have failed:
    pydantic-ai runs its output tool with no span, so its call is seen only in the model's
    request, and no check needs its outcome."""
    # A gap: status ``unset``, no final-answer call, the result absent or its convention's
    # ``outcome_unknown`` set, and neither an error type, an error message nor documents.
    if gaps:
        undeclared = sorted({str(v) for s in gaps if (v := s.attributes.get("outcome_undeclared"))})
        if undeclared:
            # A status of the tool's own that no convention's tool_outcomes declares.
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
    return None


def _file_edits_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """Path and content of every trace-derived file edit (AgentBench steps are taken as
    written: a missing content there means an empty file, by the AgentBench rules)."""
    if gaps:
        return "file edit path/content not captured for " + list_steps(gaps)
    return None


def _inputs_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """What each trace-derived tool call was asked to do: arguments (parsed, or raw text as
    ``tool_arguments`` takes it), or the command / path the mapping extracted."""
    if gaps:
        return f"tool inputs (arguments) not captured for {len(gaps)} call(s): " + list_steps(gaps)
    return None


_STATUS_TEXT_CHARS = 2000
"""How much of an error message is searched for the status: clients name it at the start
(a wrapper's own words first, then the cause's), and an error message is trace content."""


def refused_model_call(
    step: Step, status_errors: Sequence[str] = (), status_patterns: Sequence[str] = ()
) -> bool:
    """Whether a failed model call is one the model API refused: it answered an HTTP error
    status (or could not be reached) instead of a completion, so the call spent no tokens.

    A refused call records no usage because there is none: a token budget counts it as 0
    rather than as usage not recorded. The trace must show both that no answer came back
    (no output messages, no output tokens, no finish reason but ``error``) and that the
    failure is the API's answer: ``error.type`` an HTTP 4xx/5xx status (the semantic
    conventions' value for an HTTP error), or what the model clients say, as the conventions
    declare it (``model_errors`` in ``conventions/*.yaml``; a trajectory carries the union,
    ``Trajectory.model_status_errors`` / ``model_status_patterns``): one of their HTTP-status
    error classes (``status_errors``), or the status in the error message
    (``status_pattern``). A timeout, a failure after an answer came back (a validation or
    parsing error) or a call that only says "finish reason error" may have spent tokens:
    its usage stays unknown."""
    if step.status != "error" or step.output_tokens is not None:
        return False
    if any(r != "error" for r in step.finish_reasons or ()):
        return False
    if step.output_messages and not messages_empty(step.output_messages):
        return False  # an answer came back (an empty message is a recorded nothing)
    kind = step.error_type or ""
    if len(kind) == 3 and kind[0] in "45" and kind.isascii() and kind.isdigit():
        return True
    name = kind.rpartition(".")[2].removeprefix("AI_")
    if name and name in status_errors:
        return True
    text = (step.error_message or "")[:_STATUS_TEXT_CHARS]
    return bool(text) and any(safe_regex.search(rx, text) is not None for rx in status_patterns)


def _token_words(ev: Evidence, read: int, unrecorded: list[Step] | None) -> str | None:
    """The model calls (``read`` of them) without input or output tokens (the core's pass),
    less those the API refused (``refused_model_call``)."""
    if not read:
        return "token usage: the trace has no model-call spans"
    if not unrecorded:
        return None
    errors, patterns = ev.trajectory.model_status_errors, ev.trajectory.model_status_patterns
    gaps = [s for s in unrecorded if not refused_model_call(s, errors, patterns)]
    if gaps:
        return f"token usage not recorded for {len(gaps)} of {read} model call(s): " + list_steps(
            gaps
        )
    return None


def _final_output(ev: Evidence, scope: str | None) -> str | None:
    return ev.final_output().missing


def _retrieval_documents(ev: Evidence, scope: str | None) -> str | None:
    retrievals = [
        s
        for s in ev.trajectory.steps
        # A tool call that ran a retriever holds that retrieval (mapping/_stacked.py).
        if (s.kind == RETRIEVAL or s.attributes.get("retrieval")) and _matches(s.tool, scope)
    ]
    if not retrievals:
        return "retrieval documents: the trace has no retrieval steps"
    gaps = [s for s in retrievals if s.documents is None or "documents" in s.redacted]
    if gaps:
        return f"retrieved documents not captured for {len(gaps)} retrieval(s): " + list_steps(gaps)
    return None


def _agents_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """No agent or handoff step (found by the core)."""
    return "agents: the trace has no agent or handoff spans, so transfers cannot be seen"


def _timing_words(ev: Evidence, read: int, gaps: list[Step] | None) -> str | None:
    """The steps from spans (not synthesized) without a start or end time."""
    if gaps:
        return f"start/end times missing on {len(gaps)} step(s): " + list_steps(gaps)
    return None


def attribute_value(t: Trajectory, key: str) -> tuple[bool, Any, Step | None]:
    """(found, value, step): the first non-placeholder value of ``key`` on a step, the root
    span or the resource."""
    for step in t.steps:
        if key in step.attributes and not is_placeholder(step.attributes[key]):
            return True, step.attributes[key], step
    for bag in (t.root_attributes, t.resource):
        if key in bag and not is_placeholder(bag[key]):
            return True, bag[key], None
    return False, None, None


def _attribute(ev: Evidence, scope: str | None) -> str | None:
    if not scope:
        raise ValueError("evidence 'attribute' needs a key: attribute:<key>")
    found, _, _ = attribute_value(ev.trajectory, scope)
    return None if found else f"attribute {scope!r} not found on any span or the resource"


CORE_PROBES: dict[str, tuple[str, Wording]] = {
    "steps": ("steps", _steps_words),
    "tool_arguments": ("arguments", _field_words("tool arguments")),
    "tool_results": ("result", _field_words("tool results")),
    "tool_outcomes": ("outcomes", _outcomes_words),
    "input_messages": ("input_messages", _generation_words("input messages")),
    "output_messages": ("output_messages", _generation_words("output messages")),
    "token_usage": ("tokens", _token_words),
    "file_edits": ("file_edits", _file_edits_words),
    "tool_inputs": ("inputs", _inputs_words),
    "agents": ("agents", _agents_words),
    "timing": ("timing", _timing_words),
    "tool_names": ("names", _names_words),
}
"""The evidence names the core probes (``EvidencePlan``, ``native/python/src/evidence/
probes.rs``), each with its core probe and how its message is worded: every one of a
name tuple's is answered in one call (``Evidence.lacking``)."""

PROBES: dict[str, Probe] = {
    "steps": _asked_alone("steps"),
    "tool_names": _asked_alone("tool_names"),
    "tool_arguments": _asked_alone("tool_arguments"),
    "tool_results": _asked_alone("tool_results"),
    "tool_outcomes": _asked_alone("tool_outcomes"),
    "input_messages": _asked_alone("input_messages"),
    "output_messages": _asked_alone("output_messages"),
    "token_usage": _asked_alone("token_usage"),
    "file_edits": _asked_alone("file_edits"),
    "tool_inputs": _asked_alone("tool_inputs"),
    "final_output": _final_output,
    "retrieval_documents": _retrieval_documents,
    "agents": _asked_alone("agents"),
    "timing": _asked_alone("timing"),
    "attribute": _attribute,
}
"""Evidence name -> probe (``probed``; the core's names ask their plan alone).
``otel-oracles schema`` and the docs list these names."""

EVIDENCE_DESCRIPTIONS: dict[str, str] = {
    "steps": "the trace mapped to at least one step",
    "tool_names": "which tools ran (tool spans, or tool calls visible in model messages)",
    "tool_arguments": "arguments of every tool call (scope: tool_arguments:<glob>)",
    "tool_results": "results of every tool call (scope: tool_results:<glob>)",
    "tool_outcomes": "whether each tool call failed (span status, or a captured result)",
    "input_messages": "input messages of every model call",
    "output_messages": "output messages of every model call",
    "token_usage": "input and output token counts of every model call",
    "file_edits": "path and content of every file edit (what replay writes)",
    "tool_inputs": "what each tool call was asked to do (arguments, command or path)",
    "final_output": "the text of the agent's final answer",
    "retrieval_documents": "documents returned by retrieval steps",
    "agents": "agent or handoff spans",
    "timing": "start and end times of every step",
    "attribute": "one attribute anywhere in the trace: attribute:<key>",
}

KNOWN_KINDS = frozenset(StepKind)


@functools.lru_cache(maxsize=1024)
def split_name(name: str) -> tuple[str, str | None]:
    """``tool_arguments:search_*`` -> (``tool_arguments``, ``search_*``), split once per
    name: the names are the loaded contracts' few, and ``Evidence.probed`` asks each of them
    again for every trajectory (~10,000 times a grade)."""
    base, sep, scope = name.partition(":")
    return base, (scope if sep else None)


def find_gaps(required: Iterable[str], trajectory: Trajectory) -> list[str]:
    """Messages for every required evidence name the trajectory lacks (unknown names are a
    programming error in the oracle, so they raise)."""
    return [message for _, message in _gaps(required, Evidence(trajectory))]


def _gaps(required: Iterable[str], ev: Evidence) -> Iterator[tuple[str, str]]:
    for name in sorted(set(required)):
        message = ev.probed(name)
        if message:
            yield name, message
