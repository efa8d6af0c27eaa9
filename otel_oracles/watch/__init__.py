"""``otel-oracles watch``: coding agents' own OpenTelemetry, graded live by a default contract.

Claude Code, Codex CLI and Gemini CLI export log events; ``SessionBook`` turns them into
sessions (AgentBench trajectories, ``coding-agents.yaml`` says how), ``Watcher`` grades each
changed session with the watch contract (``contract.yaml``: ordinary oracles with a
severity) and saves it for replay through ``otel-oracles run``. docs/watch.md.
"""

from otel_oracles.watch._conventions import CodingAgentConventions, coding_agent_conventions
from otel_oracles.watch._sessions import SessionBook, WatchedSession
from otel_oracles.watch._watcher import DEFAULT_CONTRACT, Alert, Update, Watcher

__all__ = [
    "DEFAULT_CONTRACT",
    "Alert",
    "CodingAgentConventions",
    "SessionBook",
    "Update",
    "WatchedSession",
    "Watcher",
    "coding_agent_conventions",
]
