"""Coding-agent log events -> sessions, each an AgentBench trajectory.

A coding agent's run is one session (its session or conversation id), not one trace:
Claude Code starts a trace per prompt, Codex CLI exports log events with no trace at all.
``SessionBook.offer`` takes one decoded log record, recognises the agent by the event name's
prefix (``coding-agents.yaml``), and files the record under its session:

- tool calls become AgentBench ``steps`` (``type`` ``command`` / ``file_edit`` for shell
  and write tools, so ``Trajectory.from_agentbench`` and every oracle read them as usual),
  with ``args`` as exported, the permission ``decision`` joined by call id, ``cwd`` when
  known, and ``missing`` naming the setting that exports absent arguments;
- prompts, model calls and permission decisions become ``events`` of the session;
- every record is kept as raw telemetry (``raw``), so the saved session shows what arrived.

Not thread-safe: one caller (the watch loop) feeds it.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.model.span import LogRecord
from otel_oracles.watch._conventions import (
    AgentConvention,
    CodingAgentConventions,
    EventMapping,
)

REDACTED = frozenset({"[REDACTED]", "<REDACTED>", "REDACTED"})
"""Placeholders agents write instead of content they were told not to export."""

_KEY_CHARS = 120
"""Longest ``<agent>-<session id>`` kept whole in a session's key: with ``+``, a hash and
``.trajectory.json`` its file names stay well within 255 bytes."""

_KEY_SAFE = re.compile(r"[A-Za-z0-9._-]+")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


@dataclass
class WatchedSession:
    """One coding-agent session as far as its telemetry has arrived."""

    agent: str
    session_id: str
    version: str | None = None
    cwd: str | None = None
    """The working directory, when the agent exports it (Codex CLI does)."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    raw: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A file-name-safe id, distinct for distinct sessions: ``<agent>-<session id>``
        when that is made of ``[A-Za-z0-9._-]`` and at most ``_KEY_CHARS`` long (the agents'
        UUIDs), else its first ``_KEY_CHARS`` characters with the rest replaced by ``_``,
        then ``+`` and a hash of the whole. The session id is the sender's to choose: with
        the characters replaced alone, two ids differing only there shared files and
        alerts, and a long one made a name no file system takes. ``+`` is never kept from
        an id, so a key with a hash is never another session's plain key."""
        plain = f"{self.agent}-{self.session_id}"
        if len(plain) <= _KEY_CHARS and _KEY_SAFE.fullmatch(plain):
            return plain
        digest = hashlib.sha256(f"{self.agent}\0{self.session_id}".encode()).hexdigest()
        return _KEY_UNSAFE.sub("_", plain[:_KEY_CHARS]) + "+" + digest[:16]

    def trajectory_json(self) -> dict[str, Any]:
        """The AgentBench trajectory: ``steps`` for every grader, the rest informational."""
        return {
            "agent": self.agent,
            "agent_version": self.version,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "steps": self.steps,
            "events": self.events,
        }

    def works_in(self, project: str) -> bool:
        """Could this session be working in ``project``? Only an exported working directory
        elsewhere says no: a session that does not export one is kept (fail closed: its
        writes outside the project are what ``--project`` is meant to catch)."""
        return self.cwd is None or _inside(self.cwd, project)


def _inside(path: str, root: str) -> bool:
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def event_names(record: LogRecord) -> list[str]:
    """Where agents put an event's name: the ``event.name`` attribute, the record's event
    name, the body (Claude Code: ``tool_result`` / ``claude_code.tool_result``)."""
    names = [record.attributes.get("event.name"), record.event_name, record.body]
    return [n for n in names if isinstance(n, str) and n]


class SessionBook:
    """Sessions by (agent, session id), filled one log record at a time."""

    def __init__(self, conventions: CodingAgentConventions, project: str | None = None) -> None:
        self.conventions = conventions
        self.project = posixpath.normpath(project) if project else None
        self.sessions: dict[tuple[str, str], WatchedSession] = {}
        self.ignored = 0
        """Records of no known coding agent, or without a session id."""
        self.unrecognised: dict[str, int] = {}
        """Records per ``service.name`` (``""`` when absent) that no agent convention
        recognises: nothing in them was checked, so a run that holds any cannot show that
        every session kept the rules (DESIGN section 8), and the CLI says so."""
        self.checked_services: set[str] = set()
        """``service.name`` of every record an agent convention recognised."""

    def offer(self, record: LogRecord) -> WatchedSession | None:
        """File one record; returns its session when a step or event was added."""
        service = record.resource.get("service.name")
        found = self.conventions.agent_for(service) if isinstance(service, str) else None
        if found is None:
            self.ignored += 1
            key = service if isinstance(service, str) else ""
            self.unrecognised[key] = self.unrecognised.get(key, 0) + 1
            return None
        agent, conv = found
        self.checked_services.add(str(service))
        names = event_names(record)
        name = next((n for n in names if n in conv.events), names[0] if names else "")
        attrs = {**record.resource, **record.attributes}
        sid = next((str(attrs[k]) for k in conv.session if attrs.get(k)), None)
        if sid is None:
            self.ignored += 1
            return None
        session = self.sessions.get((agent, sid))
        if session is None:
            session = WatchedSession(agent, sid)
            self.sessions[(agent, sid)] = session
        if session.version is None:
            session.version = next((str(attrs[k]) for k in conv.version if attrs.get(k)), None)
        session.raw.append(_raw(record, name))
        mapping = conv.events.get(name)
        if mapping is None:
            return None
        self._apply(session, conv, mapping, record, name)
        return session

    def _apply(
        self,
        session: WatchedSession,
        conv: AgentConvention,
        m: EventMapping,
        record: LogRecord,
        name: str,
    ) -> None:
        attrs = record.attributes
        when = record.time_ns
        if m.entry == "prompt":
            text = _text(attrs.get(m.text)) if m.text else None
            event: dict[str, Any] = {"kind": "prompt", "time_unix_nano": when}
            if text is None:
                event["missing"] = m.unset or "prompt text not exported"
            else:
                event["text"] = text
            session.events.append(event)
        elif m.entry == "model":
            session.events.append(
                {
                    "kind": "model",
                    "time_unix_nano": when,
                    "model": _text(attrs.get(m.model)) if m.model else None,
                    "input_tokens": _int(attrs.get(m.input_tokens)) if m.input_tokens else None,
                    "output_tokens": _int(attrs.get(m.output_tokens)) if m.output_tokens else None,
                }
            )
        elif m.entry == "decision":
            call_id = _text(attrs.get(m.call_id)) if m.call_id else None
            decision: dict[str, Any] = {
                "kind": "decision",
                "time_unix_nano": when,
                "tool": _text(attrs.get(m.tool)) if m.tool else None,
                "call_id": call_id,
                "decision": _text(attrs.get(m.decision)) if m.decision else None,
                "source": _text(attrs.get(m.source)) if m.source else None,
            }
            session.events.append(decision)
            if call_id:
                session.decisions[call_id] = decision
        else:
            for step in self._tool_steps(session, conv, m, attrs, when, name):
                session.steps.append(step)

    def _tool_steps(
        self,
        session: WatchedSession,
        conv: AgentConvention,
        m: EventMapping,
        attrs: Any,
        when: int,
        name: str,
    ) -> list[dict[str, Any]]:
        tool = (_text(attrs.get(m.tool)) if m.tool else None) or "unknown"
        action = conv.tools.kind_of(tool)
        step: dict[str, Any] = {"tool": tool, "action": action}
        if action in ("command", "file_edit"):
            step["type"] = action
        call_id = _text(attrs.get(m.call_id)) if m.call_id else None
        if call_id:
            step["call_id"] = call_id
        args = _json_object(attrs.get(m.arguments)) if m.arguments else None
        if args is None:
            step["missing"] = m.unset or f"{name} carries no tool arguments"
        else:
            step["args"] = args
        if m.success and m.success in attrs:
            step["status"] = "ok" if str(attrs[m.success]).lower() == "true" else "error"
        decision = _text(attrs.get(m.decision)) if m.decision else None
        if decision is None and call_id in session.decisions:
            decision = session.decisions[call_id]["decision"]
        if decision:
            step["decision"] = decision
        if args is not None and conv.cwd_argument and isinstance(args.get(conv.cwd_argument), str):
            session.cwd = args[conv.cwd_argument]
        if session.cwd:
            step["cwd"] = session.cwd
        step["time_unix_nano"] = when
        if action == "file_edit" and args is not None and isinstance(args.get("input"), str):
            files = _PATCH_FILE.findall(args["input"])
            if files:
                return [
                    {**step, "args": {"path": f.strip(), "patch": args["input"]}} for f in files
                ]
        return [step]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return None if text in REDACTED or text == "" else text


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or value in REDACTED:
        return None
    try:
        parsed = load_json_document(value)
    except JsonDocumentError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _raw(record: LogRecord, name: str) -> dict[str, Any]:
    return {
        "event_name": name,
        "time_unix_nano": record.time_ns,
        "trace_id": record.trace_id,
        "span_id": record.span_id,
        "attributes": dict(record.attributes),
        "body": record.body,
        "resource": dict(record.resource),
        "scope": record.scope_name,
    }
