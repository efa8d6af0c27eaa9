"""``GradingSession``: the one grading loop (decoded batches -> subjects -> verdicts).

Why one object: the offline ``grade`` command, its ``--workers`` processes and ``serve``'s
grading workers used to run three copies of "assemble, grade, count", and the copies drifted
(late spans reported by one and dropped by another, grouping that changed with the worker
count). A session is built once per process, from loaded contracts and conventions or from
a picklable ``SessionSpec`` (what a worker process receives); it holds what is compiled per
contract (the ``match`` selectors), and ``grade`` (one assembled subject) is the unit its
``run`` loop and ``serve``'s workers both call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from otel_oracles._frozen import FrozenValue, set_field
from otel_oracles._lazy_log import LazyLogger
from otel_oracles.decode import DecodedBatch
from otel_oracles.grade import CompiledContract, Evidence, compile_contract, grade
from otel_oracles.grade.selector import MappedAgents
from otel_oracles.mapping import ConventionCache, ConventionSet, load_conventions, map_trace
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Verdict
from otel_oracles.model.span import SpanRecord, Trace
from otel_oracles.model.step import Trajectory
from otel_oracles.safe_regex import RegexBudgetExceeded
from otel_oracles.sandbox import SANDBOXED, CommandPolicy
from otel_oracles.session._counts import GradeRun, add_unclassified
from otel_oracles.session._input import DEFAULT_LIMITS, InputLimits, traces_from_batches
from otel_oracles.session._subject import (
    NOT_AGENT_RUN,
    NotGraded,
    error_verdict,
    holds_agent_run,
    mapped_agent_names,
    possibly_its_run,
    shows_agent_work,
)

logger = LazyLogger(__name__)

Graded = list[tuple[Verdict, Trajectory]]
"""One subject's (verdict, trajectory) pairs, one per contract that selected it."""

_SHARD_HEX_DIGITS = 8
"""Trace ids are random; their last 32 bits spread subjects evenly over any worker count."""


def shard_of(trace_id: str, workers: int) -> int:
    """The worker that owns the subject named ``trace_id`` (no trace id: worker 0)."""
    if not trace_id:
        return 0
    try:
        return int(trace_id[-_SHARD_HEX_DIGITS:], 16) % workers
    except ValueError:
        return 0


# Plain classes, not dataclasses: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class Shard(FrozenValue):
    """Which subjects a session's ``run`` grades: those ``shard_of`` gives to ``index`` of
    ``count`` workers. The others are still read, assembled and joined (so every worker
    groups exactly as one process would), just not mapped, graded or counted."""

    __slots__ = ("count", "index")
    index: int
    count: int

    def __init__(self, index: int = 0, count: int = 1) -> None:
        set_field(self, "index", index)
        set_field(self, "count", count)

    def owns(self, subject_id: str) -> bool:
        return self.count == 1 or shard_of(subject_id, self.count) == self.index


WHOLE = Shard()
"""Every subject: one process grades the whole input."""


class SessionSpec(FrozenValue):
    """Everything a process needs to build the same session (picklable: no compiled state).

    Files, not loaded objects: a worker process loads them itself, so compiled convention
    rules and selectors never cross a process boundary. The caller loads them first
    (``GradingSession.load``) so a bad file is reported once, before any worker starts."""

    __slots__ = ("commands", "contract_files", "convention_dirs", "limits")
    contract_files: tuple[Path, ...]
    convention_dirs: tuple[Path, ...]
    limits: InputLimits
    commands: CommandPolicy

    def __init__(
        self,
        contract_files: tuple[Path, ...],
        convention_dirs: tuple[Path, ...] = (),
        limits: InputLimits = DEFAULT_LIMITS,
        commands: CommandPolicy = SANDBOXED,
    ) -> None:
        set_field(self, "contract_files", contract_files)
        set_field(self, "convention_dirs", convention_dirs)
        set_field(self, "limits", limits)
        set_field(self, "commands", commands)


class Resume(FrozenValue):
    """Where a ``run`` picks up the work of a process that died (``grade --workers``).

    Subjects up to order ``after`` were graded and delivered by the process that died: they
    are read, assembled and joined again (so grouping stays the one-process grouping), but
    neither counted nor graded. Subjects in ``lost`` get ``error`` verdicts naming why,
    without being graded again: grading them may be what killed that process."""

    __slots__ = ("after", "lost")
    after: int
    lost: Mapping[int, NotGraded]

    def __init__(self, after: int = -1, lost: Mapping[int, NotGraded] | None = None) -> None:
        set_field(self, "after", after)
        set_field(self, "lost", {} if lost is None else lost)


FROM_START = Resume()
"""Nothing done yet."""


class GradedSubject(NamedTuple):
    """One graded subject from ``GradingSession.run``."""

    order: int
    """The subject's position among all subjects of the input (every worker numbers them
    alike), so results from several workers can be put back in one process's order."""
    graded: Graded


class GradingSession:
    """Contracts and conventions ready to grade, and the loop that grades a stream.

    Thread-safe for distinct subjects: ``grade`` keeps no per-call state on the session.
    """

    def __init__(
        self,
        contracts: Sequence[Contract | CompiledContract],
        conventions: ConventionSet,
        *,
        commands: CommandPolicy = SANDBOXED,
        limits: InputLimits = DEFAULT_LIMITS,
        spec: SessionSpec | None = None,
    ) -> None:
        self._compiled: tuple[CompiledContract, ...] = tuple(
            c if isinstance(c, CompiledContract) else compile_contract(c) for c in contracts
        )
        """Each contract compiled once (oracles, typed params, selector) for every subject."""
        self.contracts: tuple[Contract, ...] = tuple(c.contract for c in self._compiled)
        self.conventions = conventions
        self.commands = commands
        self.limits = limits
        self.spec = spec
        """What the session was loaded from, when it was (``grade --workers`` needs it)."""

    @classmethod
    def load(cls, spec: SessionSpec) -> GradingSession:
        """Load the spec's contracts and conventions (``ContractError``/``ConventionError``
        name the bad file); mapping files seen before come from the cache the environment
        names (``ConventionCache.from_env``)."""
        return cls(
            [compile_contract(p) for p in spec.contract_files],
            load_conventions(list(spec.convention_dirs), ConventionCache.from_env()),
            commands=spec.commands,
            limits=spec.limits,
            spec=spec,
        )

    # ---- the loop ---------------------------------------------------------------------

    def run(
        self,
        batches: Iterable[DecodedBatch],
        counts: GradeRun,
        *,
        shard: Shard = WHOLE,
        resume: Resume = FROM_START,
        in_hand: Callable[[int], object] | None = None,
    ) -> Iterator[GradedSubject]:
        """Grade every subject in ``batches`` that ``shard`` owns, in the order subjects
        complete; subjects no contract graded are counted in ``counts``, not yielded.

        Every subject is read, assembled and joined whatever the shard, so completion, late
        spans and joins are decided as with one process, and ``counts``' stream-wide part
        (input problems are the reader's; assembly stats) is the whole input's.

        A subject whose grading raises outside the checks (a check's own exception is only
        its result's ``error``) gets ``grading_crash`` verdicts and the loop goes on: one
        trace that breaks the grader must not cost the others their verdicts, nor end the
        run in a traceback. ``KeyboardInterrupt`` (Ctrl-C) still stops it.
        ``resume`` continues the work of a process that died; ``in_hand(order)`` is called
        before a subject is graded and ``in_hand(-1)`` after, so a parent can tell which
        subject a worker was grading when it died.
        """
        subjects = traces_from_batches(batches, counts.assembly, self.limits)
        # What the loop asks of every subject, read once: the shard's test is skipped when
        # one process owns every subject, and the lost ones are looked up only on a resume.
        after, lost_ones, skipped = resume.after, resume.lost, counts.skipped
        every = shard.count == 1
        for order, subject in enumerate(subjects):
            if order <= after or not (every or shard.owns(subject.trace_id)):
                continue
            counts.traces += 1
            counts.spans += len(subject.spans)
            skips = sum(skipped.values())
            lost = lost_ones.get(order) if lost_ones else None
            if lost is not None:
                graded = self._not_graded(subject, lost)
            else:
                if in_hand is not None:
                    in_hand(order)
                try:
                    graded = self.grade(subject, skipped)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # one trace must not end the run
                    logger.error(
                        "grading trace %s crashed; reported as error",
                        subject.trace_id,
                        exc_info=True,
                    )
                    graded = self._not_graded(subject, NotGraded.crashed(exc))
                if in_hand is not None:
                    in_hand(-1)
            if not graded:
                if sum(skipped.values()) == skips:
                    counts.note_unselected(subject)
                continue
            counts.traces_unclassified += add_unclassified(counts.unclassified, graded)
            yield GradedSubject(order, graded)

    def _not_graded(self, subject: Trace, why: NotGraded) -> Graded:
        """``not_graded``; when even selecting contracts for the subject raises, an
        ``error`` verdict from every contract of the session (fail closed: any of them may
        have selected it, and a trace must not vanish from the report)."""
        try:
            return self.not_graded(subject, *why)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001  (it is in every verdict's message)
            message = (
                f"{why.message}; choosing the contracts that select it raised too "
                f"({type(exc).__name__}: {exc}), so every contract reports it"
            )
            return [
                error_verdict(c, subject, why.stage, message, why.error_type)
                for c in self.contracts
            ]

    # ---- one subject ------------------------------------------------------------------

    def grade(self, trace: Trace, skipped: dict[str, int] | None = None) -> Graded:
        """Grade one assembled subject against every contract that selects it.

        The trace is mapped once (only when some contract selects it) and each selected
        contract is graded on that one trajectory. A trace that holds no agent run
        (``holds_agent_run``: a graph build, a health check) is no subject: it gets no
        verdict, and ``skipped`` counts it by reason. Never raises for odd telemetry. A
        ``match`` regex that exceeds its budget on this trace makes that contract's verdict
        ``error`` (naming the regex), a convention regex that does makes every selected
        contract's; other contracts and other traces are not affected.
        """
        mapped: list[Trajectory] = []
        names: list[dict[str, str]] = []

        def agents() -> dict[str, str]:
            """Mapped only when a selector needs agent names no span carries; kept for
            grading (and the names for the other contracts' selectors)."""
            if not names:
                mapped.append(map_trace(trace, self.conventions))
                names.append(mapped_agent_names(mapped[0]))
            return names[0]

        try:
            chosen, stalled = self.select(trace, agents)
        except RegexBudgetExceeded as exc:  # a convention regex, while mapping for a selector
            return [_stalled(contract, trace, "mapping", exc) for contract in self.contracts]
        possibly = self._possibly(trace, chosen, stalled) if trace.orphans else {}
        # (No comprehension made and called for the usual empty ``stalled``.)
        out = [_stalled(c.contract, trace, "match", exc) for c, exc in stalled] if stalled else []
        if not chosen and not possibly:
            return out
        try:
            trajectory = mapped[0] if mapped else map_trace(trace, self.conventions)
        except RegexBudgetExceeded as exc:
            every = [*chosen, *(c for c in self._compiled if id(c) in possibly)]
            return out + [_stalled(c.contract, trace, "mapping", exc) for c in every]
        if not holds_agent_run(trajectory):
            if skipped is not None:
                skipped[NOT_AGENT_RUN] = skipped.get(NOT_AGENT_RUN, 0) + 1
            return out
        if possibly and not shows_agent_work(trajectory):
            possibly = {}  # spans of unknown kind alone: no run to say anything of
            if not chosen:
                return out
        evidence = Evidence(trajectory)  # what the contracts ask of it, computed once
        if not possibly:
            # The usual subject: the contracts that selected it, in the session's order
            # (``select`` keeps it), with no set of them made and none looked up.
            for compiled in chosen:
                verdict = grade(compiled, trajectory, commands=self.commands, evidence=evidence)
                out.append((verdict, trajectory))
            return out
        picked = set(map(id, chosen))
        for compiled in self._compiled:
            why = possibly.get(id(compiled))
            if id(compiled) not in picked and why is None:
                continue
            verdict = grade(compiled, trajectory, commands=self.commands, evidence=evidence)
            if why is not None:
                verdict = possibly_its_run(verdict, why)
            out.append((verdict, trajectory))
        return out

    def _possibly(
        self,
        trace: Trace,
        chosen: list[CompiledContract],
        stalled: list[tuple[CompiledContract, RegexBudgetExceeded]],
    ) -> dict[int, str]:
        """For a trace whose spans name parents that never arrived (a run killed mid-way, a
        lost batch): the contracts that did not select it but whose ``match`` the missing
        part could satisfy (``id`` of each -> why). Why: such a selector keys on the agent
        span or the root, which are what a killed run never exports; without this a CI gate
        whose contracts select by agent name would say nothing about a run that died, a
        silent pass. Graded, the trace fails closed (``trace_complete``, ``fragment_gap``).
        A regex of the selector that runs past its budget here joins ``stalled``."""
        skip = {id(c) for c in chosen} | {id(c) for c, _ in stalled}
        possibly: dict[int, str] = {}
        for compiled in self._compiled:
            if id(compiled) in skip:
                continue
            try:
                why = compiled.could_select(trace)
            except RegexBudgetExceeded as exc:
                stalled.append((compiled, exc))
                continue
            if why is not None:
                possibly[id(compiled)] = why
        return possibly

    def select(
        self, trace: Trace, agents: MappedAgents | None = None
    ) -> tuple[list[CompiledContract], list[tuple[CompiledContract, RegexBudgetExceeded]]]:
        """The contracts whose ``match`` selects ``trace``, in the session's order, and those
        whose ``match`` regex stalled on it (each with why; neither selected nor skipped).
        ``agents`` gives the agent names conventions mapped (see ``grade.selector``)."""
        chosen: list[CompiledContract] = []
        stalled: list[tuple[CompiledContract, RegexBudgetExceeded]] = []
        root: SpanRecord | None = None
        root_read = False
        for compiled in self._compiled:
            # The selector itself (``CompiledContract.selects`` is this call behind one more
            # Python frame, paid per contract per trace); a ``match``-less contract selects
            # every trace without a call. The root (a property walking the roots) is read
            # once for all the contracts, not once per selector.
            selector = compiled.selector
            if selector.always:
                chosen.append(compiled)
                continue
            if not root_read:
                root, root_read = trace.root, True
            try:
                if selector(trace, agents, root):
                    chosen.append(compiled)
            except RegexBudgetExceeded as exc:
                stalled.append((compiled, exc))
        return chosen, stalled

    def timed_out(self, trace: Trace, seconds: float) -> Graded:
        """``error`` verdicts, one per contract that selects ``trace``, for a subject whose
        grading ran past its time budget (``serve``'s ``grading.trace_timeout``)."""
        message = f"grading took longer than {seconds:g} s (grading.trace_timeout); stopped"
        return self.not_graded(trace, "trace_timeout", message, "TimeoutError")

    def not_graded(self, trace: Trace, stage: str, message: str, error_type: str) -> Graded:
        """``error`` verdicts (one result named ``stage``), one per contract that selects
        ``trace`` or whose selector stalled on it, for a subject whose grading could not
        finish: it ran out of time, raised, or the process grading it died. Why: once a
        trace is acknowledged it must end in a verdict, never only in a log line.

        The trace is not mapped here (mapping may be what crashed, or killed the worker), so
        a contract that selects by an agent name no span carries (one only conventions
        give) cannot tell: it reports the trace too, saying so, rather than let a trace it
        may select vanish from the report (fail closed). So does one whose ``match`` the
        part of the trace that never arrived could satisfy (``could_select``)."""
        out: Graded = []
        for compiled in self._compiled:
            why = message
            try:
                # Without agent names first: a selection then is one whatever they are.
                chosen = (
                    compiled.selects(trace)
                    or compiled.selects(trace, _unmapped)
                    or (bool(trace.orphans) and compiled.could_select(trace) is not None)
                )
            except RegexBudgetExceeded:
                chosen = True
            except _NeedsMapping:
                chosen = True
                why = f"{message} (this contract selects by an agent name only mapping gives)"
            if chosen:
                out.append(error_verdict(compiled.contract, trace, stage, why, error_type))
        return out


class _NeedsMapping(Exception):
    """A selector asked for the agent names conventions map, on a trace not mapped."""


def _unmapped() -> dict[str, str]:
    raise _NeedsMapping


def _stalled(
    contract: Contract, trace: Trace, stage: str, exc: RegexBudgetExceeded
) -> tuple[Verdict, Trajectory]:
    """An ``error`` verdict for a trace whose content stalled a regex before grading
    (``stage`` is ``match`` for contract selectors, ``mapping`` for convention rules)."""
    return error_verdict(contract, trace, stage, f"{stage}: {exc.message}", type(exc).__name__)
