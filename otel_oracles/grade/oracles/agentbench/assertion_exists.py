"""``assertion_exists``: a file of the replayed workspace that must keep a line matching a
regex (the package docstring says what the four AgentBench oracles share)."""

import posixpath
from pathlib import Path
from typing import ClassVar

from pydantic import field_validator

from otel_oracles import safe_regex
from otel_oracles._native import CheckPlan
from otel_oracles.grade.oracles.agentbench._workspace import (
    MESSAGE_LINE_LIMIT,
    hidden_write,
    no_workspace,
    normalized,
    relative_path,
    steps_writing,
)
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.oracles.trace_common import PLANS
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.step import COMMAND_KEYS, FILE_EDIT
from otel_oracles.replay import safe_target


@register_oracle
class AssertionExists(OracleCheck):
    """Fail when a file in the replayed workspace is missing or no line matches a regex.

    The pattern is a Python regular expression searched with ``re.MULTILINE``, so ``^`` and
    ``$`` anchor at line boundaries. On a trace, as for ``test_must_pass``, the replayed file
    holds only the writes of recognised spans: where spans went unrecognised the result is
    missing evidence. So is it where a recognised call after the file's last recorded write
    may have written it unseen (``steps_writing``: a shell command that visibly writes it, or
    another call that is not a recorded file edit naming it): the replayed file may not be
    the one the run left, whichever way the regex answers.
    """

    oracle_type = "assertion_exists"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file that must keep the assertion."""
        pattern: str
        """Python regex searched with re.MULTILINE (``^``/``$`` match at every line)."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return relative_path(value)

        @field_validator("pattern")
        @classmethod
        def _compiles(cls, value: str) -> str:
            problem = safe_regex.syntax_error(value, safe_regex.MULTILINE)
            if problem is not None:
                raise ValueError(f"invalid regular expression: {problem}")
            return value

    given: Params
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: OracleParams) -> None:
        super().__init__(params)
        path = self.given.path
        target = normalized(path)
        name = posixpath.basename(target)
        self.native_plan = PLANS.assertion_exists(path, target, name, FILE_EDIT, COMMAND_KEYS)

    def check(self, ctx: GradeContext) -> Finding:
        # The usual failure, the file not in the replayed workspace (no call replay did
        # not apply may have written it): the core's (``native_plan``).
        planned = self.native_plan.finding(ctx)
        return planned if planned is not None else self.python_body(ctx)

    def python_body(self, ctx: GradeContext) -> Finding:
        """Every answer of the check, the plan's included: ``check`` asks it where the plan
        leaves the answer to Python, and the plan's tests hold the plan to it."""
        params = self.given
        if not ctx.has_workspace:
            return no_workspace(self.oracle_type, ctx)
        hidden = steps_writing(ctx, normalized(params.path))
        if hidden:
            return hidden_write(self.oracle_type, params.path, hidden, "may have written")
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
