"""``otel-oracles watch``: coding agents' own OpenTelemetry, graded live by a default contract.

Claude Code, Codex CLI and Gemini CLI export log events; ``SessionBook`` turns them into
sessions (AgentBench trajectories, ``coding-agents.yaml`` says how), ``Watcher`` grades each
changed session with the watch contract (``contract.yaml``: ordinary oracles with a
severity) and saves it for replay through ``otel-oracles run``. docs/watch.md.
"""

from otel_oracles.watch._conventions import CodingAgentConventions, coding_agent_conventions
from otel_oracles.watch._describe import describe_alert, describe_step
from otel_oracles.watch._receive import (
    DEFAULT_GRPC_ENDPOINT,
    DEFAULT_HTTP_ENDPOINT,
    WatchIngest,
    receive_until,
    receivers_settings,
)
from otel_oracles.watch._report import markdown_report
from otel_oracles.watch._sessions import SessionBook, WatchedSession
from otel_oracles.watch._watcher import DEFAULT_CONTRACT, Alert, Update, Watcher

__all__ = [
    "DEFAULT_CONTRACT",
    "DEFAULT_GRPC_ENDPOINT",
    "DEFAULT_HTTP_ENDPOINT",
    "Alert",
    "CodingAgentConventions",
    "SessionBook",
    "Update",
    "WatchIngest",
    "WatchedSession",
    "Watcher",
    "coding_agent_conventions",
    "describe_alert",
    "describe_step",
    "markdown_report",
    "receive_until",
    "receivers_settings",
]
