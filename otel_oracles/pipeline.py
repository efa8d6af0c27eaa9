"""The wiring every front end reuses: decode -> assemble -> map -> select -> grade.

``grade_trace`` is the unit the online server, the in-process span processor and the
benchmarks call for one assembled trace; ``grade_paths`` is the offline ``grade`` command's
whole run over files. Neither prints or exits: they return verdicts and a ``RunReport``.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from otel_oracles.assemble import AssemblyStats, assemble_offline, join_sessions
from otel_oracles.assemble.config import DEFAULT_IDLE_SPANS
from otel_oracles.decode import DecodedBatch, read_paths
from otel_oracles.decode.config import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_MESSAGE_BYTES
from otel_oracles.grade import grade
from otel_oracles.grade.evidence import counted_names
from otel_oracles.grade.selector import MappedAgents, TraceSelector, selector_for
from otel_oracles.mapping import ConventionSet, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import (
    InputProblem,
    OracleResult,
    Outcome,
    RunReport,
    Verdict,
    count_outcomes,
)
from otel_oracles.model.span import Trace
from otel_oracles.model.step import StepKind, Trajectory
from otel_oracles.safe_regex import RegexBudgetExceeded
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int], None]
"""Called with the number of input bytes just finished (per file)."""

_SELECTOR_CACHE_MAX = 4096
_selectors: dict[int, tuple[Contract, TraceSelector]] = {}


def _selector(contract: Contract) -> TraceSelector:
    """Selectors compiled once per contract object (contracts are immutable)."""
    cached = _selectors.get(id(contract))
    if cached is not None and cached[0] is contract:
        return cached[1]
    if len(_selectors) >= _SELECTOR_CACHE_MAX:
        _selectors.clear()
    sel = selector_for(contract)
    _selectors[id(contract)] = (contract, sel)
    return sel


def selected_contracts(
    trace: Trace, contracts: Sequence[Contract], agents: MappedAgents | None = None
) -> tuple[list[Contract], list[tuple[Contract, RegexBudgetExceeded]]]:
    """The contracts whose ``match`` selects ``trace``, in the given order, and those whose
    ``match`` regex stalled on this trace (each with why; neither selected nor skipped).
    ``agents`` gives the agent names conventions mapped (see ``grade.selector``)."""
    chosen: list[Contract] = []
    stalled: list[tuple[Contract, RegexBudgetExceeded]] = []
    for contract in contracts:
        try:
            if _selector(contract)(trace, agents):
                chosen.append(contract)
        except RegexBudgetExceeded as exc:
            stalled.append((contract, exc))
    return chosen, stalled


def mapped_agent_names(trajectory: Trajectory) -> dict[str, str]:
    """Span id -> agent name, for every step a convention gave an agent name."""
    return {
        step.source.span_id: step.agent_name
        for step in trajectory.steps
        if step.agent_name and step.source is not None
    }


NOT_AGENT_RUN = "held no agent run (no model call, tool call or agent step): not graded"


def holds_agent_run(trajectory: Trajectory) -> bool:
    """Whether a trajectory is an agent run that contracts grade: it has a model call, a tool
    call (file edits and commands included), a retrieval, an agent or a handoff step, or
    spans no convention recognised (they may be an agent run of an unknown framework: fail
    closed, the graders report them). A trace with none (a LangGraph graph compiled at
    start-up, embeddings only) is no failing run, and no passing one either: not a subject."""
    return bool(trajectory.unmapped_spans) or any(
        step.kind != StepKind.OTHER for step in trajectory.steps
    )


def subject_notes(skipped: dict[str, int]) -> list[str]:
    """The run-summary lines for traces that were not graded as subjects."""
    return [f"{n} trace(s) {reason}" for reason, n in sorted(skipped.items())]


def grade_trace(
    trace: Trace,
    contracts: Sequence[Contract],
    conventions: ConventionSet,
    *,
    commands: CommandPolicy = SANDBOXED,
    skipped: dict[str, int] | None = None,
) -> list[tuple[Verdict, Trajectory]]:
    """Grade one assembled trace against every contract that selects it (``commands``: how
    checks that execute commands may run, see ``otel_oracles.sandbox``).

    The trace is mapped once (only when some contract selects it) and each selected contract
    is graded on that one trajectory. Spans whose parent never arrived make every verdict
    carry a ``missing_evidence`` result (``trace_complete``): the graders saw part of a trace.
    A trace that holds no agent run (``holds_agent_run``: a graph build, a health check)
    is no subject: it gets no verdict, and ``skipped`` counts it by reason.
    Thread-safe for distinct traces; never raises for odd telemetry. A ``match`` regex that
    exceeds its budget on this trace makes that contract's verdict ``error`` (naming the
    regex), a convention regex that does makes every selected contract's; other contracts
    and other traces are not affected.
    """
    mapped: list[Trajectory] = []
    names: list[dict[str, str]] = []

    def agents() -> dict[str, str]:
        """Mapped only when a selector needs agent names no span carries; kept for grading
        (and the names for the other contracts' selectors)."""
        if not names:
            mapped.append(map_trace(trace, conventions))
            names.append(mapped_agent_names(mapped[0]))
        return names[0]

    try:
        chosen, stalled = selected_contracts(trace, contracts, agents)
    except RegexBudgetExceeded as exc:  # a convention regex, while mapping for a selector
        return [_stalled(contract, trace, "mapping", exc) for contract in contracts]
    out = [_stalled(contract, trace, "match", exc) for contract, exc in stalled]
    if not chosen:
        return out
    try:
        trajectory = mapped[0] if mapped else map_trace(trace, conventions)
    except RegexBudgetExceeded as exc:
        return out + [_stalled(contract, trace, "mapping", exc) for contract in chosen]
    if not holds_agent_run(trajectory):
        if skipped is not None:
            skipped[NOT_AGENT_RUN] = skipped.get(NOT_AGENT_RUN, 0) + 1
        return out
    for contract in chosen:
        verdict = grade(contract, trajectory, commands=commands)
        if trajectory.orphan_spans:
            verdict = _with_orphans(verdict, contract, trajectory)
        out.append((verdict, trajectory))
    return out


def _stalled(
    contract: Contract, trace: Trace, stage: str, exc: RegexBudgetExceeded
) -> tuple[Verdict, Trajectory]:
    """An ``error`` verdict for a trace whose content stalled a regex before grading
    (``stage`` is ``match`` for contract selectors, ``mapping`` for convention rules)."""
    return error_verdict(contract, trace, stage, f"{stage}: {exc.message}", type(exc).__name__)


def timed_out_verdicts(
    trace: Trace, contracts: Sequence[Contract], seconds: float
) -> list[tuple[Verdict, Trajectory]]:
    """``error`` verdicts, one per contract that selects ``trace``, for a trace whose grading
    ran past its time budget (``serve``'s ``grading.trace_timeout``)."""
    chosen, stalled = selected_contracts(trace, contracts)
    message = f"grading took longer than {seconds:g} s (grading.trace_timeout); stopped"
    return [
        error_verdict(c, trace, "trace_timeout", message, "TimeoutError")
        for c in [*chosen, *(c for c, _ in stalled)]
    ]


def error_verdict(
    contract: Contract, trace: Trace, stage: str, message: str, error_type: str
) -> tuple[Verdict, Trajectory]:
    """A verdict of one ``error`` result named ``stage``: the trace could not be graded."""
    result = OracleResult(
        oracle_type=stage,
        name=stage,
        outcome=Outcome.ERROR,
        passed=False,
        message=message,
        details={"error.type": error_type},
        contract_id=contract.id,
        contract_version=contract.version,
    )
    trajectory = Trajectory(steps=[], trace_id=trace.trace_id, span_count=len(trace.spans))
    verdict = Verdict(
        contract_id=contract.id,
        contract_version=contract.version,
        contract_hash=contract.content_hash,
        contract_name=contract.name,
        subject=trace.trace_id,
        trace_id=trace.trace_id,
        passed=False,
        results=[result],
        counts=count_outcomes([result]),
    )
    return verdict, trajectory


def _with_orphans(verdict: Verdict, contract: Contract, trajectory: Trajectory) -> Verdict:
    count = len(trajectory.orphan_spans)
    result = OracleResult(
        oracle_type="trace_complete",
        name="trace_complete",
        layer="evidence",
        outcome=Outcome.MISSING_EVIDENCE,
        passed=contract.on_missing_evidence == "warn",
        message=(
            f"{count} span(s) name a parent span that is not in the trace: "
            "part of the trace is missing"
        ),
        details={"orphan_spans": list(trajectory.orphan_spans)},
        span_ids=list(trajectory.orphan_spans),
        contract_id=contract.id,
        contract_version=contract.version,
    )
    results = [*verdict.results, result]
    return verdict.model_copy(
        update={
            "results": results,
            "counts": count_outcomes(results),
            "passed": verdict.passed and result.passed,
        }
    )


@dataclass(slots=True)
class GradeRun:
    """What one offline run saw besides the verdicts (for summaries and ``inspect``)."""

    traces: int = 0
    traces_unselected: int = 0
    spans: int = 0
    problems: list[InputProblem] = field(default_factory=list)
    assembly: AssemblyStats = field(default_factory=AssemblyStats)
    skipped: dict[str, int] = field(default_factory=dict)
    """Traces not graded as subjects, by reason (``grade_trace``'s ``skipped``)."""
    unselected_seen: dict[str, int] = field(default_factory=dict)
    """``service``/``agent`` labels of traces no contract selected (bounded), so a run that
    graded nothing can say what it did see."""

    traces_unclassified: int = 0
    """Graded traces holding spans no convention recognised."""
    unclassified: dict[str, int] = field(default_factory=dict)
    """Span name -> count of such spans over those traces."""

    def note_unselected(self, trace: Trace) -> None:
        self.traces_unselected += 1
        count_labels(self.unselected_seen, trace)


def add_unclassified(unclassified: dict[str, int], graded: list[tuple[Verdict, Trajectory]]) -> int:
    """Add a graded trace's unrecognised spans (name -> count) to ``unclassified``; 1 when it
    had any, else 0 (for the run's coverage note)."""
    if not graded or not graded[0][1].unmapped_spans:
        return 0
    for name, n in graded[0][1].unmapped_spans.items():
        unclassified[name] = unclassified.get(name, 0) + n
    return 1


def coverage_note(traces: int, unclassified: dict[str, int]) -> str | None:
    """The run-summary line when graded traces held spans no convention recognised: checks
    that need every span reported missing evidence there, and ``inspect`` shows them."""
    if not traces:
        return None
    shown = counted_names(unclassified, COVERAGE_NOTE_NAMES)
    return (
        f"coverage: {traces} graded trace(s) hold {sum(unclassified.values())} span(s) no "
        f"convention recognised ({shown}); checks that need every span report missing "
        "evidence there (see otel-oracles inspect)"
    )


COVERAGE_NOTE_NAMES = 5
"""Span names a coverage note lists before it stops."""


SEEN_LABELS_MAX = 20
"""How many distinct service/agent labels a run remembers for its "nothing graded" message."""


def count_labels(seen: dict[str, int], trace: Trace) -> None:
    """Count ``service <name>`` and ``agent <name>`` for one trace into ``seen`` (bounded)."""
    labels: list[str] = []
    root = trace.root if trace.root is not None else (trace.spans[0] if trace.spans else None)
    service = root.resource.get("service.name") if root is not None else None
    if isinstance(service, str) and service:
        labels.append(f"service {service}")
    for span in trace.spans:
        agent = span.attributes.get("gen_ai.agent.name")
        if isinstance(agent, str) and agent:
            labels.append(f"agent {agent}")
            break
    for label in labels:
        add_label(seen, label)


def add_label(seen: dict[str, int], label: str, count: int = 1) -> None:
    """Count ``label``; past ``SEEN_LABELS_MAX`` distinct labels new ones are not kept."""
    if label in seen or len(seen) < SEEN_LABELS_MAX:
        seen[label] = seen.get(label, 0) + count


def nothing_graded_reason(
    traces: int, spans: int, seen: dict[str, int], *, unreadable: int = 0
) -> str:
    """Why a run produced no verdict, in words a user can act on."""
    if spans == 0 and unreadable:
        return f"no spans were read: {unreadable} input(s) unreadable (see the errors above)"
    if spans == 0:
        return (
            "no spans were read: the input holds no trace data (empty file, empty "
            "resourceSpans, or only logs/metrics)"
        )
    shown = ", ".join(f"{label} ({n})" for label, n in sorted(seen.items())) or "no names"
    return (
        f"{traces} trace(s) with {spans} span(s) were read, but no contract's match "
        f"selected any of them; seen: {shown}"
    )


def input_files(paths: Sequence[str]) -> list[tuple[str, int]]:
    """(path, size in bytes) for progress reporting; directories are walked like the
    decoder walks them, ``-`` and unreadable paths count 0 (the decoder reports them)."""
    out: list[tuple[str, int]] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.startswith("."):
                        f = Path(dirpath) / name
                        out.append((str(f), f.stat().st_size))
        elif p.is_file():
            out.append((arg, p.stat().st_size))
        else:
            out.append((arg, 0))
    return out


@dataclass(frozen=True, slots=True)
class InputLimits:
    """How much one offline run reads and holds (``grade``/``inspect`` flags, docs/ingest.md):
    the decoder's per-line/message and decompressed-size limits, and the assembler's release
    window and memory cap."""

    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    idle_spans: int = DEFAULT_IDLE_SPANS
    max_buffered_spans: int | None = None

    def read(self, paths: Sequence[str], problems: list[InputProblem]) -> Iterator[DecodedBatch]:
        """``read_paths`` under these limits."""
        return read_paths(
            list(paths),
            problems,
            max_message_bytes=self.max_message_bytes,
            max_decompressed_bytes=self.max_decompressed_bytes,
        )

    def assemble(
        self, batches: Iterable[DecodedBatch], stats: AssemblyStats | None = None
    ) -> Iterator[Trace]:
        """``assemble_offline`` under these limits."""
        return assemble_offline(
            batches,
            idle_spans=self.idle_spans,
            max_buffered_spans=self.max_buffered_spans,
            stats=stats,
        )


DEFAULT_LIMITS = InputLimits()


def read_traces(
    paths: Sequence[str],
    problems: list[InputProblem],
    progress: ProgressCallback | None = None,
    stats: AssemblyStats | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[Trace]:
    """Decode and assemble every trace in ``paths`` (files, directories, globs, ``-``).

    Streaming: a trace is yielded once the assembler judges it complete (see
    ``assemble_offline``), so memory follows the traces in flight, not the input size; what
    the assembler did (late or evicted spans) accrues in ``stats``. ``progress`` is called
    with input bytes read since its last call: within a file where the OS tells the read
    position (Linux ``/proc``), else once per file. Traces of one run (span links, a
    shared conversation/session id) come out joined into one (``join_sessions``; traces
    wait in its window of ``DEFAULT_WINDOW_SPANS`` spans for that).
    """
    batches = (
        limits.read(paths, problems)
        if progress is None
        else _with_progress(paths, problems, progress, limits)
    )
    yield from traces_from_batches(batches, stats, limits)


def traces_from_batches(
    batches: Iterable[DecodedBatch],
    stats: AssemblyStats | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[Trace]:
    """Assemble decoded batches into traces the way ``read_traces`` does once it has read
    them: the grader's own telemetry dropped, traces of one run joined. Callers that hold
    records rather than files (the pytest fixture's in-memory exporters) start here."""
    traces = limits.assemble(without_own_telemetry(batches), stats=stats)
    yield from join_sessions(traces, stats=stats.joined if stats is not None else None)


def without_own_telemetry(batches: Iterable[DecodedBatch]) -> Iterator[DecodedBatch]:
    """``batches`` without the grader's own spans and log records (``emit``'s
    ``own_telemetry_check``, the one ``serve`` skips on receipt): an export holding an agent's
    spans and the grade spans and events emitted for them grades like the agent's spans
    alone."""
    from otel_oracles.emit import own_telemetry_check  # the OTel SDK, only when reading

    is_own = own_telemetry_check()
    for batch in batches:
        if any(map(is_own, batch.spans)):
            batch.spans = [s for s in batch.spans if not is_own(s)]
        if any(map(is_own, batch.logs)):
            batch.logs = [r for r in batch.logs if not is_own(r)]
        yield batch


PROGRESS_INTERVAL_S = 0.25
"""How often the read position is sampled for the progress callback."""


def _with_progress(
    paths: Sequence[str],
    problems: list[InputProblem],
    progress: ProgressCallback,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[DecodedBatch]:
    reported = 0
    for arg in paths:
        files = input_files([arg])
        starts: dict[str, int] = {}
        offset = reported
        for name, size in files:
            starts[name] = offset
            offset += size
        last = time.monotonic()
        for batch in limits.read([arg], problems):
            yield batch
            now = time.monotonic()
            if now - last < PROGRESS_INTERVAL_S:
                continue
            last = now
            current = next((n for n in starts if batch.source.startswith(n)), None)
            position = _read_position(current) if current is not None else None
            if current is not None and position is not None:
                done = starts[current] + position
                if done > reported:
                    progress(done - reported)
                    reported = done
        if offset > reported:
            progress(offset - reported)
            reported = offset


def _read_position(path: str) -> int | None:
    """Where this process is reading ``path``, from Linux's ``/proc/self/fdinfo`` (the
    decoder opens the file itself); ``None`` elsewhere or when it is not open."""
    fd_dir = Path("/proc/self/fd")
    try:
        target = os.path.realpath(path)
        for fd in os.listdir(fd_dir):
            try:
                if os.readlink(fd_dir / fd) != target:
                    continue
                for line in (Path("/proc/self/fdinfo") / fd).read_text().splitlines():
                    if line.startswith("pos:"):
                        return int(line.split()[1])
            except OSError:
                continue
    except OSError:
        return None
    return None


def grade_paths(
    paths: Sequence[str],
    contracts: Sequence[Contract],
    conventions: ConventionSet,
    *,
    progress: ProgressCallback | None = None,
    run: GradeRun | None = None,
    on_graded: Callable[[list[tuple[Verdict, Trajectory]]], object] | None = None,
    keep_verdicts: bool = True,
    commands: CommandPolicy = SANDBOXED,
    limits: InputLimits = DEFAULT_LIMITS,
) -> RunReport:
    """Grade every trace found in ``paths`` against the contracts that select it.

    ``on_graded`` receives each trace's (verdict, trajectory) pairs as they are graded
    (e.g. an emitter's ``export``), so trajectories need not be kept for the whole run.
    With ``keep_verdicts=False`` the report's ``verdicts`` stay empty: the caller streams
    them from ``on_graded`` (``grade`` does, so its memory does not grow with the input).

    Unreadable inputs never stop the run: each becomes an ``InputProblem`` in
    ``report.input_errors`` (the CLI turns any into exit code 2 unless ``--keep-going``).
    """
    stats = run if run is not None else GradeRun()
    problems = stats.problems
    verdicts: list[Verdict] = []
    for trace in read_traces(paths, problems, progress, stats.assembly, limits):
        stats.traces += 1
        stats.spans += len(trace.spans)
        skips = sum(stats.skipped.values())
        graded = grade_trace(
            trace, contracts, conventions, commands=commands, skipped=stats.skipped
        )
        stats.traces_unclassified += add_unclassified(stats.unclassified, graded)
        if not graded:
            if sum(stats.skipped.values()) == skips:
                stats.note_unselected(trace)
        elif on_graded is not None:
            on_graded(graded)
        if keep_verdicts:
            verdicts.extend(v for v, _ in graded)
    notes = [f"{stats.traces} trace(s), {stats.spans} span(s) read"]
    if stats.traces_unselected:
        notes.append(f"{stats.traces_unselected} trace(s) matched no contract's selector")
    notes.extend(subject_notes(stats.skipped))
    if (coverage := coverage_note(stats.traces_unclassified, stats.unclassified)) is not None:
        notes.append(coverage)
    if stats.assembly.summary():
        notes.append(stats.assembly.summary())
    return RunReport(verdicts=verdicts, input_errors=list(problems), notes=notes)
