"""What ``otel-oracles watch`` prints: the setup snippets, then the sessions as they change.

On a terminal the screen is redrawn (sessions with their latest steps, then the alerts);
piped, every new step and alert is one plain line, so logs and tests read it line by line.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from otel_oracles.report import terminal_safe
from otel_oracles.watch import Update, Watcher, describe_alert, describe_step

LATEST_STEPS = 5
"""Steps shown per session on the live screen."""
LATEST_ALERTS = 12


def setup_text(http_port: int, grpc_port: int) -> str:
    """The exact settings to paste per agent, for the ports actually bound."""
    http = f"http://127.0.0.1:{http_port}"
    return f"""otel-oracles watch: OTLP/HTTP on {http}, OTLP/gRPC on 127.0.0.1:{grpc_port}

Claude Code (environment):
  export CLAUDE_CODE_ENABLE_TELEMETRY=1 OTEL_LOGS_EXPORTER=otlp OTEL_METRICS_EXPORTER=none
  export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_EXPORTER_OTLP_ENDPOINT={http}
  export OTEL_LOG_TOOL_DETAILS=1 OTEL_LOG_USER_PROMPTS=1 OTEL_LOGS_EXPORT_INTERVAL=1000

Codex CLI (~/.codex/config.toml):
  [otel]
  log_user_prompt = true
  exporter = {{ otlp-http = {{ endpoint = "{http}/v1/logs", protocol = "binary" }} }}

Gemini CLI (.gemini/settings.json):
  {{"telemetry": {{"enabled": true, "target": "local", "otlpProtocol": "http",
                 "otlpEndpoint": "{http}", "logPrompts": true}}}}

Watching. Ctrl-C stops and writes the report."""


class PlainView:
    """One line per new step and per new alert."""

    def __init__(self, echo: Callable[[str], None] = click.echo) -> None:
        self.echo = echo

    def start(self, banner: str) -> None:
        self.echo(banner)

    def update(self, update: Update) -> None:
        # What an agent ran or wrote is shown, never obeyed by the terminal (terminal_safe).
        for session, index, step in update.steps:
            self.echo(terminal_safe(f"[{session.agent} {session.session_id[:8]}] step {index}: "
                                    f"{describe_step(step)}"))  # fmt: skip
        for alert in update.alerts:
            prefix = "ALERT" if alert.is_violation else "note"
            self.echo(terminal_safe(
                f"{prefix} [{alert.agent} {alert.session_id[:8]}] {describe_alert(alert)}"
            ))  # fmt: skip


class LiveView:
    """Redraws the whole screen on every change: banner, sessions, latest alerts."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher
        self.header = ""
        self.alerts: list[str] = []

    def start(self, banner: str) -> None:
        """Print the full setup once; the first session replaces it with the live screen,
        headed by the banner's first line (the endpoints)."""
        self.header = banner.splitlines()[0] + "  (Ctrl-C stops)"
        click.echo(banner)

    def update(self, update: Update) -> None:
        for alert in update.alerts:
            if alert.is_violation:
                self.alerts.append(terminal_safe(f"[{alert.agent}] {describe_alert(alert)}"))
        if update.steps or update.alerts:
            self._draw()

    def _draw(self) -> None:
        lines = [self.header, "", "SESSIONS"]
        sessions = self.watcher.sessions()
        if not sessions:
            lines.append("  (none yet)")
        for s in sessions:
            failing = sum(1 for a in self.watcher.alerts.get(s.key, []) if a.is_violation)
            flag = click.style(f"{failing} alert(s)", fg="red", bold=True) if failing else "ok"
            session = terminal_safe(f"{s.agent} {s.session_id[:8]}")
            cwd = terminal_safe(s.cwd or "")
            lines.append(f"  {session}  {len(s.steps)} step(s)  {flag}  {cwd}")
            start = max(0, len(s.steps) - LATEST_STEPS)
            for i in range(start, len(s.steps)):
                lines.append(f"    {i}: {terminal_safe(describe_step(s.steps[i]))}")
        lines += ["", "ALERTS"]
        lines += [f"  {a}" for a in self.alerts[-LATEST_ALERTS:]] or ["  (none)"]
        click.echo("\x1b[H\x1b[2J" + "\n".join(lines), nl=True)
