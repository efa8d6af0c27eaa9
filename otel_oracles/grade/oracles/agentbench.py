"""The four AgentBench oracles: ``test_must_pass``, ``file_not_modified``, ``no_network`` and
``assertion_exists``, with the exact semantics of DESIGN.md section 5.

Three of them judge the replayed workspace (``ctx.workspace``). A trajectory graded by a
contract without a workspace (a trace-derived one) gives them nothing to look at, so they
report missing evidence instead of guessing. ``no_network`` reads only the trajectory and
works for both. Each declares the evidence a trace-derived run must carry (which tools ran,
what the edits wrote or the calls were given), so content capture off is missing evidence,
not a replay of nothing.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator

from otel_oracles import safe_regex
from otel_oracles.errors import ContractError
from otel_oracles.grade.network import OutboundRequest, outbound_requests
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
)
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.step import DEFAULT_NETWORK_PATTERNS, normalize_path
from otel_oracles.replay import safe_target

MESSAGE_LINE_LIMIT = 500
"""Characters of the first stderr/stdout line kept in a ``test_must_pass`` failure message."""


def _relative_path(value: str) -> str:
    """Reject paths that can never be inside a workspace, at load time rather than at replay."""
    norm = normalize_path(value)
    if not norm:
        raise ValueError("must name a file inside the workspace")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise ValueError(f"must be a workspace-relative path, got absolute path {value!r}")
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"must stay inside the workspace, got {value!r}")
    return value


def _no_workspace(oracle_type: str, ctx: GradeContext) -> Finding:
    return Finding.missing(
        f"{oracle_type} needs a replayed workspace, but contract {ctx.contract.id!r} has no "
        "'workspace' (a trace-derived trajectory cannot be replayed)"
    )


def python_command(command: str, interpreter: str | None = None) -> str:
    """``python`` or ``python ...`` runs under the interpreter running otel-oracles, so a
    task's tests see the same Python (and installed pytest) whatever ``PATH`` says."""
    exe = interpreter or sys.executable
    stripped = command.lstrip()
    if stripped == "python" or stripped.startswith(("python ", "python\t")):
        return shlex.quote(exe) + stripped[len("python") :]
    return command


def first_line(text: str, limit: int = MESSAGE_LINE_LIMIT) -> str:
    """The first non-blank line, cut at ``limit`` characters."""
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


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
    is missing evidence (a write among them may be what made the tests pass or fail).
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name says

    oracle_type = "test_must_pass"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits"})
    runs_commands: ClassVar[bool] = True
    needs_full_coverage = True

    class Params(CoverageParams):
        command: str = Field(min_length=1)
        """Shell command run in the replayed workspace, e.g. ``python -m pytest -q``."""
        timeout: float = Field(default=60, gt=0)
        """Seconds before everything the command started is killed and the check fails."""

    def check(self, ctx: GradeContext) -> Finding:
        if ctx.workspace is None:
            return _no_workspace(self.oracle_type, ctx)
        params = self.params
        assert isinstance(params, TestMustPass.Params)
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


@register_oracle
class FileNotModified(OracleCheck):
    """Fail when the trajectory changed a file's bytes.

    A path the trajectory never touched passes without reading it. A path that is not in the
    task's workspace is a task-authoring mistake, reported as a harness error (not as an
    agent failure) with a message that says so. On a trace, a span no convention recognised
    may be the write that changed the file, so a pass needs every span seen (fail closed).
    """

    oracle_type = "file_not_modified"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file the agent must not change."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return _relative_path(value)

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, FileNotModified.Params)
        if not ctx.has_workspace:
            return _no_workspace(self.oracle_type, ctx)
        target = normalize_path(params.path)
        initial = {normalize_path(k): v for k, v in ctx.initial_workspace.items()}
        if target not in initial:
            raise ContractError(
                f"task authoring error: file_not_modified path {params.path!r} is not in the "
                f"task's workspace (files: {', '.join(sorted(initial))})",
                ctx.contract.source or ctx.contract.id,
            )
        edits = [i for i, p, _ in ctx.trajectory.file_edits() if p == target]
        if not edits:
            return Finding.ok(f"{params.path} was never touched")
        # Only a touched file is read, from the replayed directory (replayed on first use).
        assert ctx.workspace is not None
        current = safe_target(ctx.workspace, target, params.path).read_bytes()
        if current == initial[target].encode("utf-8"):
            return Finding.ok(
                f"{params.path} was written but its bytes are unchanged", step_indexes=tuple(edits)
            )
        steps = ", ".join(str(i) for i in edits)
        return Finding.fail(
            f"{params.path} was modified (step {steps})",
            step_indexes=tuple(edits),
            details={"path": params.path, "edit_steps": edits},
        )


@register_oracle
class NoNetwork(OracleCheck):
    """Fail when any step mentions network access or a package-registry install.

    A case-insensitive substring scan of every step's raw JSON (curl, wget, http://,
    pip install, npm install, go get, ...). The first violation is named in the message.
    On a trace, every string a tool step carries is scanned (``Step.scan_text``), and an
    outbound HTTP request the trace recorded (``grade/network.py``) fails it too, naming the
    host.
    """

    oracle_type = "no_network"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_inputs"})
    needs_full_coverage = True
    failure_stands_on_gaps = True  # a recorded network command or request happened

    class Params(CoverageParams):
        patterns: tuple[str, ...] = Field(default=DEFAULT_NETWORK_PATTERNS, min_length=1)
        """Substrings that count as network access (case-insensitive); defaults to the
        AgentBench list."""

        @field_validator("patterns")
        @classmethod
        def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
            if any(not p for p in value):
                raise ValueError("an empty pattern would match every step")
            return value

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, NoNetwork.Params)
        found = ctx.evidence.network_violations(params.patterns, ctx.trajectory.steps)
        requests = outbound_requests(ctx.evidence)
        if not found and requests:
            return _requests_finding(requests)
        if not found:
            return Finding.ok(f"no network access in {len(ctx.trajectory.steps)} steps")
        first = found[0]
        tool = f" ({first.tool})" if first.tool else ""
        steps = sorted({v.step_index for v in found})
        more = f" ({len(found) - 1} more match(es))" if len(found) > 1 else ""
        by_index = {s.index: s for s in ctx.trajectory.steps}
        spans = tuple(
            s.source.span_id for i in steps if (s := by_index.get(i)) and s.source is not None
        )
        return Finding.fail(
            f"step {first.step_index}{tool} matches network pattern {first.pattern!r}{more}",
            step_indexes=tuple(steps),
            span_ids=spans,
            details={
                "violations": [
                    {"step": v.step_index, "tool": v.tool, "pattern": v.pattern}
                    for v in found[:100]
                ]
            },
        )


def _requests_finding(requests: list[OutboundRequest]) -> Finding:
    first = requests[0]
    hosts = sorted({r.host for r in requests})
    more = f" ({len(requests) - 1} more request(s))" if len(requests) > 1 else ""
    return Finding.fail(
        f"step {first.step.index} is an outbound HTTP {first.method} request to {first.host}"
        f"{more}; hosts: {', '.join(hosts)}",
        step_indexes=tuple(r.step.index for r in requests),
        span_ids=tuple(r.step.source.span_id for r in requests if r.step.source is not None),
        details={
            "requests": [
                {"step": r.step.index, "method": r.method, "host": r.host} for r in requests[:100]
            ]
        },
    )


@register_oracle
class AssertionExists(OracleCheck):
    """Fail when a file in the replayed workspace is missing or no line matches a regex.

    The pattern is a Python regular expression searched with ``re.MULTILINE``, so ``^`` and
    ``$`` anchor at line boundaries. On a trace, as for ``test_must_pass``, the replayed file
    holds only the writes of recognised spans: where spans went unrecognised the result is
    missing evidence.
    """

    oracle_type = "assertion_exists"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file that must keep the assertion."""
        pattern: str
        """Python regex searched with re.MULTILINE (``^``/``$`` match at every line)."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return _relative_path(value)

        @field_validator("pattern")
        @classmethod
        def _compiles(cls, value: str) -> str:
            problem = safe_regex.syntax_error(value, safe_regex.MULTILINE)
            if problem is not None:
                raise ValueError(f"invalid regular expression: {problem}")
            return value

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, AssertionExists.Params)
        if not ctx.has_workspace:
            return _no_workspace(self.oracle_type, ctx)
        known, data = ctx.replayed_file(params.path, params.path)
        if known:
            if data is None:  # a directory or nothing: not a file either way
                return Finding.fail(
                    f"{params.path} does not exist in the replayed workspace", unseen=True
                )
            # What read_text does: decode, then universal newlines.
            text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        else:
            assert ctx.workspace is not None
            target = safe_target(ctx.workspace, params.path, params.path)
            if not target.is_file():
                return Finding.fail(
                    f"{params.path} does not exist in the replayed workspace", unseen=True
                )
            text = Path(target).read_text(encoding="utf-8", errors="replace")
        match = safe_regex.search(params.pattern, text, safe_regex.MULTILINE)
        if match is None:
            return Finding.fail(
                f"no match for /{params.pattern}/ in {params.path}",
                details={"path": params.path, "pattern": params.pattern},
                unseen=True,
            )
        line = text.count("\n", 0, match.start()) + 1
        return Finding.ok(
            f"{params.path}:{line} matches /{params.pattern}/",
            details={"line": line, "match": match.group(0)[:MESSAGE_LINE_LIMIT]},
        )
