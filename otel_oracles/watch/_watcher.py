"""The watch loop's state: sessions, their verdicts under the watch contract, the alerts.

``Watcher.offer`` takes decoded log records (from the receivers or from files), files them
into sessions (``SessionBook``), appends them to each session's saved telemetry, re-grades
the sessions that changed with the watch contract through the ordinary ``grade`` (the same
call ``otel-oracles run`` makes on the saved trajectory, so a replay gives the same
verdicts), saves their trajectories, and returns what is new: steps and alerts. One thread
feeds it (the event loop, or ``--once``).

Grading a session reads the whole session, so re-grading it on every record would cost the
square of its length: a session sent one record per request (a chatty exporter, or a
hostile one on loopback) would keep the watcher grading and delay every other session.
A session is therefore re-graded on a record while it is small (``SMALL_SESSION`` records)
and then only once it has grown by a quarter since its last grading (``GROWTH``), which
bounds all the grading of a session to a few times the cost of grading it once. What arrives
in between is pending: ``tick`` grades a pending session once the watcher has spent at most
a fifth of the time since its last grading on it (``PACE``; the live loop calls it twice a
second), and ``flush`` grades every pending session (end of input, shutdown). The final
verdicts and alerts are those of grading each session as a whole; only an alert that a
later record would have withdrawn before the next grading may go unseen.
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from otel_oracles.config_yaml import load_yaml, read_config_bytes
from otel_oracles.errors import InputError
from otel_oracles.grade.compiled import CompiledContract
from otel_oracles.grade.evaluator import grade
from otel_oracles.grade.loader import compile_contract
from otel_oracles.grade.oracles.coding_rule import SEVERITIES, Severity
from otel_oracles.model.result import Outcome, Verdict
from otel_oracles.model.span import LogRecord, SpanRecord
from otel_oracles.model.step import MAX_TRAJECTORY_STEPS, Trajectory
from otel_oracles.watch._conventions import coding_agent_conventions
from otel_oracles.watch._sessions import SessionBook, WatchedSession

DEFAULT_CONTRACT = Path(__file__).with_name("contract.yaml")
CONTRACT_FILE = "watch-contract.yaml"
"""Name of the contract copy in the sessions directory (with ``--project`` as its root)."""

SMALL_SESSION = 64
"""Records up to which a session is re-graded on every record it receives."""
GROWTH = 4
"""Past ``SMALL_SESSION``, a session is re-graded once it received a ``1/GROWTH`` part more
records than it had when last graded."""
PACE = 4.0
"""``tick`` grades a pending session once ``PACE`` times its last grading's duration has
passed since that grading ended (at most a fifth of the time spent on it)."""


@dataclass(frozen=True, slots=True)
class Alert:
    """A rule a session broke (``invariant_failure``) or could not be judged by."""

    session: str
    """The session's key (``<agent>-<session id>``)."""
    session_id: str
    agent: str
    rule: str
    severity: Severity
    message: str
    steps: tuple[int, ...]
    outcome: Outcome

    @property
    def is_violation(self) -> bool:
        return self.outcome == Outcome.INVARIANT_FAILURE

    @property
    def identity(self) -> tuple[object, ...]:
        """When an alert is news: a violation when its rule flags other steps, a check that
        cannot judge only the first time (its message changes as steps arrive)."""
        if self.is_violation:
            return (self.rule, self.outcome, self.steps)
        return (self.rule, self.outcome)


@dataclass
class Update:
    """What one ``offer`` changed: new steps per session, new alerts."""

    steps: list[tuple[WatchedSession, int, dict[str, Any]]] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)


def write_contract(source: Path, target: Path, root: str | None) -> Path:
    """Copy the watch contract to ``target``, with ``root`` set on ``write_outside_root``
    when given, so the saved sessions replay under exactly the rules they were watched by."""
    data = load_yaml(read_config_bytes(source))
    if root is not None:
        for spec in data.get("invariants", []):
            if isinstance(spec, dict) and spec.get("type") == "write_outside_root":
                spec["root"] = root
    target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


class Watcher:
    """Sessions, verdicts and alerts of one ``watch`` run.

    ``save_dir`` receives ``<agent>-<session>.trajectory.json`` (AgentBench trajectory) and
    ``<agent>-<session>.telemetry.jsonl`` (every record as received) per session, and the
    contract copy; ``project`` limits the watch to sessions working there; a session of more
    than ``max_steps`` steps is not graded (an ``error`` alert) but still saved."""

    def __init__(
        self,
        save_dir: Path,
        project: str | None = None,
        contract: Path = DEFAULT_CONTRACT,
        max_steps: int = MAX_TRAJECTORY_STEPS,
    ) -> None:
        self.save_dir = save_dir
        self.max_steps = max_steps
        self.save_dir.mkdir(parents=True, exist_ok=True)
        self.project = posixpath.normpath(project) if project else None
        self.contract_path = write_contract(contract, save_dir / CONTRACT_FILE, self.project)
        self.compiled: CompiledContract = compile_contract(self.contract_path)
        self.book = SessionBook(coding_agent_conventions(), self.project)
        self.verdicts: dict[str, Verdict] = {}
        self.alerts: dict[str, list[Alert]] = {}
        self._saved_raw: dict[str, int] = {}
        self._shown_steps: dict[str, int] = {}
        self._pending: dict[str, WatchedSession] = {}
        """Changed since their last grading (visible sessions only)."""
        self._graded_at: dict[str, tuple[int, float, float]] = {}
        """Per session: records it held, when (monotonic seconds) its last grading ended,
        and how long that grading took."""
        self.gradings = 0
        """Sessions graded so far (each re-grading counted)."""
        self.span_services: dict[str, int] = {}
        """Spans received per ``service.name`` (``""`` when absent): watch reads log events
        only, so these are counted, never checked."""

    def visible(self, session: WatchedSession) -> bool:
        """Shown, graded and saved: every session, or with ``--project`` those that may be
        working there (``WatchedSession.works_in``)."""
        return self.project is None or session.works_in(self.project)

    def sessions(self) -> list[WatchedSession]:
        return [s for s in self.book.sessions.values() if self.visible(s)]

    def offer_spans(self, spans: Iterable[SpanRecord]) -> None:
        """Count spans per service: an agent that exports spans only (GitHub Copilot CLI)
        has nothing watch reads, and must not read as a clean run (``spans_unchecked``)."""
        for span in spans:
            service = span.resource.get("service.name")
            key = service if isinstance(service, str) else ""
            self.span_services[key] = self.span_services.get(key, 0) + 1

    def spans_unchecked(self) -> dict[str, int]:
        """Spans per service from which no log record was checked: that service's sessions
        were never seen, so a run holding them cannot show that they kept the rules."""
        return {
            name: n
            for name, n in self.span_services.items()
            if name not in self.book.checked_services
        }

    def offer(self, records: Iterable[LogRecord]) -> Update:
        """File ``records``; show their steps, save their telemetry, and re-grade the changed
        sessions that are due (small, or grown by a ``1/GROWTH`` part since last graded)."""
        changed: dict[str, WatchedSession] = {}
        for record in records:
            session = self.book.offer(record)
            if session is not None:
                changed[session.key] = session
        update = Update()
        for session in changed.values():
            if not self.visible(session):
                continue
            start = self._shown_steps.get(session.key, 0)
            update.steps += [
                (session, i, session.steps[i]) for i in range(start, len(session.steps))
            ]
            self._shown_steps[session.key] = len(session.steps)
            self._save_telemetry(session)
            self._pending[session.key] = session
            if self._grown(session):
                update.alerts += self._grade_and_save(session)
        return update

    def tick(self, now: float | None = None) -> Update:
        """Grade the pending sessions whose last grading is ``PACE`` times its own duration
        in the past (``now``: ``time.monotonic()``)."""
        now = time.monotonic() if now is None else now
        update = Update()
        for key, session in list(self._pending.items()):
            _, ended, took = self._graded_at.get(key, (0, 0.0, 0.0))
            if now - ended >= PACE * took:
                update.alerts += self._grade_and_save(session)
        return update

    def flush(self) -> Update:
        """Grade every pending session: what has arrived is graded as a whole."""
        update = Update()
        for session in list(self._pending.values()):
            update.alerts += self._grade_and_save(session)
        return update

    @property
    def pending(self) -> int:
        """Sessions that changed since their last grading."""
        return len(self._pending)

    def _grown(self, session: WatchedSession) -> bool:
        held = len(session.raw)
        if held <= SMALL_SESSION or session.key not in self._graded_at:
            return True
        graded = self._graded_at[session.key][0]
        return held - graded >= max(1, graded // GROWTH)

    def _grade_and_save(self, session: WatchedSession) -> list[Alert]:
        started = time.monotonic()
        alerts = self._grade(session)
        self._save_trajectory(session)
        ended = time.monotonic()
        self.gradings += 1
        self._graded_at[session.key] = (len(session.raw), ended, ended - started)
        self._pending.pop(session.key, None)
        return alerts

    def _grade(self, session: WatchedSession) -> list[Alert]:
        try:
            trajectory = Trajectory.from_agentbench(
                session.trajectory_json(), source=session.key, max_steps=self.max_steps
            )
        except InputError as exc:
            return self._not_graded(session, exc)
        verdict = grade(self.compiled, trajectory)
        self.verdicts[session.key] = verdict
        alerts = [
            Alert(
                session=session.key,
                session_id=session.session_id,
                agent=session.agent,
                rule=r.name,
                severity=_severity(r.params.get("severity")),
                message=r.message,
                steps=tuple(r.step_indexes),
                outcome=r.outcome,
            )
            for r in verdict.results
            if r.outcome in (Outcome.INVARIANT_FAILURE, Outcome.MISSING_EVIDENCE, Outcome.ERROR)
        ]
        before = {a.identity for a in self.alerts.get(session.key, [])}
        self.alerts[session.key] = alerts
        return [a for a in alerts if a.identity not in before]

    def _not_graded(self, session: WatchedSession, exc: InputError) -> list[Alert]:
        """A session the graders refuse (longer than ``MAX_TRAJECTORY_STEPS``): an ``error``
        alert beside the ones already raised, which stay (what they flagged happened), and
        no verdict (a pass of the earlier steps says nothing of the rest). The session is
        still saved by the caller, so nothing that arrived is lost."""
        self.verdicts.pop(session.key, None)
        alert = Alert(
            session=session.key,
            session_id=session.session_id,
            agent=session.agent,
            rule="trajectory",
            severity="high",
            message=exc.message,
            steps=(),
            outcome=Outcome.ERROR,
        )
        alerts = self.alerts.setdefault(session.key, [])
        if any(a.identity == alert.identity for a in alerts):
            return []
        alerts.append(alert)
        return [alert]

    def _save_telemetry(self, session: WatchedSession) -> None:
        """Append the session's records not saved yet: everything that arrived is on disk
        as soon as it is filed, whether or not its session was graded since."""
        done = self._saved_raw.get(session.key, 0)
        with (self.save_dir / f"{session.key}.telemetry.jsonl").open("a") as out:
            for item in session.raw[done:]:
                out.write(json.dumps(item, default=str) + "\n")
        self._saved_raw[session.key] = len(session.raw)

    def _save_trajectory(self, session: WatchedSession) -> None:
        """Rewrite the session's trajectory, as graded (``otel-oracles run`` replays it)."""
        trajectory = self.save_dir / f"{session.key}.trajectory.json"
        trajectory.write_text(json.dumps(session.trajectory_json(), indent=1, default=str))

    def violations(self) -> list[Alert]:
        return [a for alerts in self.alerts.values() for a in alerts if a.is_violation]

    def fails(self, threshold: Severity) -> bool:
        """Is any violation at least as severe as ``threshold``?"""
        floor = SEVERITIES.index(threshold)
        return any(SEVERITIES.index(a.severity) >= floor for a in self.violations())


def _severity(value: Any) -> Severity:
    return value if value in SEVERITIES else "high"
