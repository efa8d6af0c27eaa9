"""Options on the trust boundary shared by ``grade``, ``run`` and ``gate``: whether commands
from contracts may run outside the sandbox, and how much of a result's text reports show
(docs/security.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from otel_oracles.emit import ExplainMode, explain_from_env, explain_mode
from otel_oracles.sandbox import SANDBOXED, UNSAFE, CommandPolicy

F = TypeVar("F", bound=Callable[..., Any])


def unsafe_commands_option(func: F) -> F:
    """``--unsafe-run-commands``: the only way a command-running check runs unsandboxed."""
    return click.option(
        "--unsafe-run-commands",
        "unsafe_commands",
        is_flag=True,
        help="Run command-running checks (test_must_pass) directly on this machine when the "
        "sandbox (bubblewrap) is missing or unusable. The commands then run over files the "
        "traces wrote, with your user's rights and network: only for traces you trust. "
        "Without it such checks give `error` where no sandbox is available.",
    )(func)


def explain_option(func: F) -> F:
    """``--explain template|full`` for the reports (and ``grade``'s emitted telemetry)."""
    return click.option(
        "--explain",
        type=click.Choice(["template", "full"]),
        default=None,
        help="template (default, or OTEL_ORACLES_EXPLAIN): reports (and emitted telemetry) "
        "say which check gave which outcome with ids, tool names, error classes and counts "
        "only, never argument values or message text from traces; full: the checks' own "
        "messages and details, which may quote trace content (e-mail addresses, keys).",
    )(func)


def resolve_explain(explain: str | None) -> ExplainMode:
    """``--explain``, else ``OTEL_ORACLES_EXPLAIN``, else ``template``: the reports follow
    the same setting as the emitted telemetry (``EmitSettings.from_env``, which reads the
    variable through the same ``explain_from_env``, a bad value an error even beside
    ``--explain``); a grade without an export builds no settings model."""
    env = explain_from_env()
    if explain is None:
        return env or "template"
    return explain_mode(explain, "--explain")


def command_policy(unsafe_commands: bool) -> CommandPolicy:
    """The policy the command line asked for: sandboxed unless ``--unsafe-run-commands``."""
    return UNSAFE if unsafe_commands else SANDBOXED
