"""``test_must_pass``: a contract's command run in the replayed workspace (the package
docstring says what the four AgentBench oracles share)."""

import shlex
import sys
from typing import ClassVar

from pydantic import Field

from otel_oracles.grade.oracles.agentbench._workspace import (
    first_line,
    hidden_write,
    no_workspace,
    steps_writing_workspace,
)
from otel_oracles.grade.oracles.base import CoverageParams, Finding, GradeContext, OracleCheck
from otel_oracles.grade.registry import register_oracle


def python_command(command: str, interpreter: str | None = None) -> str:
    """``python`` or ``python ...`` runs under the interpreter running otel-oracles, so a
    task's tests see the same Python (and installed pytest) whatever ``PATH`` says."""
    exe = interpreter or sys.executable
    stripped = command.lstrip()
    if stripped == "python" or stripped.startswith(("python ", "python\t")):
        return shlex.quote(exe) + stripped[len("python") :]
    return command


@register_oracle
class TestMustPass(OracleCheck):
    """Run a shell command in the replayed workspace; pass when it exits 0.

    The command comes from the contract, but the files it runs over come from the trace, so
    it runs sandboxed (``GradeContext.run_command``, docs/security.md): no network, the
    workspace the only writable path, resource limits, stdout and stderr kept up to a cap
    at each end. ``python`` and ``python ...`` run under the interpreter running
    otel-oracles. On timeout everything the command started is killed and the check fails;
    whatever it left running after it exited is killed too. On a trace the workspace holds
    only the writes of recognised spans: where spans went unrecognised, a pass or a failure
    is missing evidence (a write among them may be what made the tests pass or fail). So is
    it where a recognised call may have written a file unseen (``steps_writing_workspace``):
    the command then does not run, since its answer would be about a workspace the run may
    never have had.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name says

    oracle_type = "test_must_pass"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    runs_commands: ClassVar[bool] = True
    needs_full_coverage = True

    class Params(CoverageParams):
        command: str = Field(min_length=1)
        """Shell command run in the replayed workspace, e.g. ``python -m pytest -q``."""
        timeout: float = Field(default=60, gt=0)
        """Seconds before everything the command started is killed and the check fails."""

    given: Params

    def check(self, ctx: GradeContext) -> Finding:
        if not ctx.has_workspace:
            return no_workspace(self.oracle_type, ctx)
        params = self.given
        hidden = steps_writing_workspace(ctx)
        if hidden:
            return hidden_write(
                self.oracle_type, "the replayed workspace", hidden, "may have written a file in"
            )
        command = python_command(params.command)
        run = ctx.run_command(command, params.timeout)
        details: dict[str, object] = {
            "command": params.command,
            "executed": command,
            "exit_code": run.exit_code,
            "sandboxed": run.sandboxed,
            "process_limit": run.process_limit_problem or "enforced",
            "stderr": run.stderr,
            "stdout": run.stdout,
            "stdout_bytes": run.stdout_bytes,
            "stderr_bytes": run.stderr_bytes,
        }
        if run.timed_out:
            details["timeout"] = params.timeout
            return Finding.fail(
                f"`{params.command}` timed out after {params.timeout:g}s; "
                "every process it started was killed",
                details=details,
                unseen=True,
            )
        if run.exit_code == 0:
            return Finding.ok(f"`{params.command}` exited 0", details=details)
        line = first_line(run.stderr) if run.stderr.strip() else first_line(run.stdout)
        return Finding.fail(
            f"`{params.command}` exited with code {run.exit_code}: {line}",
            details=details,
            unseen=True,
        )
