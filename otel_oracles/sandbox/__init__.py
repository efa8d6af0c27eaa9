"""The trust boundary for commands: contracts are trusted, traces are not, and a command a
contract names runs over files a trace wrote. So every check that executes something runs
it here: inside a bubblewrap sandbox (fresh user, PID, mount and network namespaces, the
workspace the only writable path, resource limits, capped output, the whole process tree
killed at the end), or, only when the operator passed ``--unsafe-run-commands``, directly.
See docs/security.md.
"""

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names
from otel_oracles.sandbox.config import (
    SANDBOXED,
    UNSAFE,
    CommandMode,
    CommandPolicy,
    SandboxLimits,
)

if TYPE_CHECKING:
    from otel_oracles.sandbox._bwrap import sandbox_problem
    from otel_oracles.sandbox._run import CommandRun, minimal_environment, run_command

_RUNNER = {
    "CommandRun": "otel_oracles.sandbox._run",
    "minimal_environment": "otel_oracles.sandbox._run",
    "run_command": "otel_oracles.sandbox._run",
    "sandbox_problem": "otel_oracles.sandbox._bwrap",
}
"""The runner's names, imported on first use: every ``grade`` reads the policy
(``CommandPolicy``), but only a contract whose checks run commands needs the runner and its
``subprocess``, ``selectors`` and ``signal`` (~9 M instructions of each start;
docs/performance-history.md, "Start-up: one entry-point scan, field annotations as
objects")."""


__getattr__ = lazy_names(__name__, _RUNNER)


__all__ = [
    "SANDBOXED",
    "UNSAFE",
    "CommandMode",
    "CommandPolicy",
    "CommandRun",
    "SandboxLimits",
    "minimal_environment",
    "run_command",
    "sandbox_problem",
]
