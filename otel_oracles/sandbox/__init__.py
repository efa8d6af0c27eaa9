"""The trust boundary for commands: contracts are trusted, traces are not, and a command a
contract names runs over files a trace wrote. So every check that executes something runs
it here: inside a bubblewrap sandbox (fresh user, PID, mount and network namespaces, the
workspace the only writable path, resource limits, capped output, the whole process tree
killed at the end), or, only when the operator passed ``--unsafe-run-commands``, directly.
See docs/security.md.
"""

from otel_oracles.sandbox._bwrap import sandbox_problem
from otel_oracles.sandbox._run import CommandRun, minimal_environment, run_command
from otel_oracles.sandbox.config import (
    SANDBOXED,
    UNSAFE,
    CommandMode,
    CommandPolicy,
    SandboxLimits,
)

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
