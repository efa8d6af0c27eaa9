"""The exceptions otel-oracles raises for problems in what the user gave it.

    OtelOraclesError            base; carries ``source`` (file, key path or line)
    ├── InputError              unreadable OTLP, trajectory, manifest or report file
    ├── ContractError           a contract/task file that does not validate
    ├── ConventionError         a mapping file under conventions/ that does not validate
    ├── PluginError             an oracle plug-in that cannot be registered or loaded
    ├── ReplayError             a workspace path that escapes the replay directory
    └── SandboxError            a command a check would run may not run here (no sandbox,
                                or command-running checks turned off)

The CLI maps every ``OtelOraclesError`` to exit code 2 and one stderr line,
``error: <source>: <message>``. Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations


class OtelOraclesError(Exception):
    """Base for user-facing errors: the message is meant to be read, not debugged."""

    def __init__(self, message: str, source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return f"{self.source}: {self.message}" if self.source else self.message


class InputError(OtelOraclesError):
    """An input file (OTLP, trajectory, manifest) could not be read or decoded."""


class ContractError(OtelOraclesError):
    """A contract or AgentBench task does not validate.

    ``problems`` holds every mistake found in the file, one message each (``validate``
    prints one line per problem); the message joins them for one-line reports."""

    def __init__(
        self, message: str, source: str | None = None, problems: list[str] | None = None
    ) -> None:
        self.problems: list[str] = list(problems) if problems else [message]
        super().__init__("; ".join(self.problems) if problems else message, source)


class ConventionError(OtelOraclesError):
    """A conventions/ mapping file does not validate."""


class PluginError(OtelOraclesError):
    """An oracle plug-in could not be registered or loaded."""


class ReplayError(OtelOraclesError):
    """A trajectory or workspace tried to reach outside the replay directory."""


class SandboxError(OtelOraclesError):
    """A check would run a command, and may not: the sandbox is unavailable (the message
    names how to install it) or command-running checks are turned off. The check's result
    is ``error``, a harness problem rather than the agent's."""


class WorkBudgetExceeded(OtelOraclesError):
    """A check would do more work on one trace than its budget allows (a trace built to stall
    grading, such as an answer citing hundreds of thousands of ids). The check's result is
    ``error``, naming the budget; the other checks carry on."""
