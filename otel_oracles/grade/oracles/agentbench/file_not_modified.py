"""``file_not_modified``: whether the run changed a file's bytes (the package docstring says
what the four AgentBench oracles share)."""

import posixpath
from typing import ClassVar

from pydantic import field_validator

from otel_oracles._native import CheckPlan
from otel_oracles.errors import ContractError
from otel_oracles.grade.oracles.agentbench._workspace import (
    file_edits,
    hidden_write,
    no_workspace,
    normalized,
    relative_path,
    steps_naming,
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
from otel_oracles.model.step import FILE_EDIT
from otel_oracles.replay import safe_target


@register_oracle
class FileNotModified(OracleCheck):
    """Fail when the trajectory changed a file's bytes.

    A path the trajectory never touched passes without reading it. A path that is not in the
    task's workspace is a task-authoring mistake, reported as a harness error (not as an
    agent failure) with a message that says so. On a trace, a span no convention recognised
    may be the write that changed the file, so a pass needs every span seen (fail closed).
    So may a recognised call that is not a recorded file edit: an edit or patch tool no
    convention declares as one, or a shell command (``sed -i pytest.ini``, ``rm pytest.ini``).
    A pass on a trace therefore also needs no such call after the last recorded write to
    name the file (``steps_naming``); one that does is missing evidence naming it (it may
    only have read the file). A recorded write that changed the bytes fails either way. An
    AgentBench trajectory keeps the exact DESIGN section 5 semantics: there, only file edits
    change files.
    """

    oracle_type = "file_not_modified"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file the agent must not change."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return relative_path(value)

    given: Params
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: OracleParams) -> None:
        super().__init__(params)
        path = self.given.path
        target = normalized(path)
        name = posixpath.basename(target)
        self.native_plan = PLANS.file_not_modified(path, target, name, FILE_EDIT)

    def check(self, ctx: GradeContext) -> Finding:
        # The usual answer, the task's file never touched (no recorded edit wrote it, no
        # other call names it): the core's (``native_plan``).
        planned = self.native_plan.finding(ctx)
        return planned if planned is not None else self.python_body(ctx)

    def python_body(self, ctx: GradeContext) -> Finding:
        """Every answer of the check, the plan's included: ``check`` asks it where the plan
        leaves the answer to Python, and the plan's tests hold the plan to it."""
        params = self.given
        if not ctx.has_workspace:
            return no_workspace(self.oracle_type, ctx)
        target = normalized(params.path)
        initial = {normalized(k): v for k, v in ctx.initial_workspace.items()}
        if target not in initial:
            raise ContractError(
                f"task authoring error: file_not_modified path {params.path!r} is not in the "
                f"task's workspace (files: {', '.join(sorted(initial))})",
                ctx.contract.source or ctx.contract.id,
            )
        edits = [i for i, p, _ in file_edits(ctx) if p == target]
        unchanged = True
        if edits:
            # Only a touched file is read, from the replayed directory (replayed on first use).
            assert ctx.workspace is not None
            current = safe_target(ctx.workspace, target, params.path).read_bytes()
            unchanged = current == initial[target].encode("utf-8")
        if unchanged:
            hidden = steps_naming(ctx, target)
            if hidden:
                return hidden_write(self.oracle_type, params.path, hidden, "names")
            if not edits:
                return Finding.ok(f"{params.path} was never touched")
            return Finding.ok(
                f"{params.path} was written but its bytes are unchanged", step_indexes=tuple(edits)
            )
        steps = ", ".join(str(i) for i in edits)
        return Finding.fail(
            f"{params.path} was modified (step {steps})",
            step_indexes=tuple(edits),
            details={"path": params.path, "edit_steps": edits},
        )
