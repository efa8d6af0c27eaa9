"""Short plain-English descriptions of session steps and alerts, shared by the terminal view
and the Markdown report."""

from __future__ import annotations

from typing import Any

from otel_oracles.watch._watcher import Alert

MAX_TEXT = 100


def _short(text: str, limit: int = MAX_TEXT) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe_step(step: dict[str, Any]) -> str:
    """``$ curl ...``, ``edit /p/calc.py``, ``read /p/a.py``, ``web: url``, ``mcp__x(...)``."""
    args = step.get("args")
    action = step.get("action")
    tool = str(step.get("tool"))
    if not isinstance(args, dict):
        return f"{tool} (arguments not exported)"
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    path = next((args[k] for k in ("file_path", "path", "absolute_path") if k in args), None)
    if action == "command" and command:
        return f"$ {_short(str(command))}"
    if action == "file_edit" and path:
        return f"edit {path}"
    if action == "file_read" and path:
        return f"read {path}"
    if action == "web":
        target = args.get("url") or args.get("query") or args.get("prompt") or ""
        return f"web {tool}: {_short(str(target), 80)}"
    return f"{tool}({_short(', '.join(f'{k}={v}' for k, v in args.items()), 80)})"


def describe_alert(alert: Alert) -> str:
    steps = ", ".join(str(i) for i in alert.steps)
    where = f" at step {steps}" if steps else ""
    if alert.is_violation:
        return f"{alert.severity.upper()} {alert.rule}{where}: {alert.message}"
    return f"cannot judge {alert.rule}: {alert.message}"
