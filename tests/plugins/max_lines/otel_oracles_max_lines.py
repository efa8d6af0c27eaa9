"""Example plug-in oracle: a file in the replayed workspace may have at most ``max`` lines.

It is registered only through its entry point (``otel_oracles.oracles``); otel-oracles
itself never imports it by name.
"""

from __future__ import annotations

from pydantic import Field

from otel_oracles import Finding, GradeContext, OracleCheck, OracleParams


class MaxLines(OracleCheck):
    """Fail when a workspace file has more than ``max`` lines after replay."""

    oracle_type = "max_lines"

    class Params(OracleParams):
        path: str
        """Workspace-relative file to measure."""
        max: int = Field(ge=0)
        """Most lines the file may have."""

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, MaxLines.Params)
        if ctx.workspace is None:
            return Finding.missing("max_lines needs a replayed workspace")
        target = ctx.workspace / params.path
        if not target.is_file():
            return Finding.fail(f"{params.path} does not exist")
        lines = len(target.read_text(encoding="utf-8").splitlines())
        if lines > params.max:
            return Finding.fail(f"{params.path} has {lines} lines, more than {params.max}")
        return Finding.ok(f"{params.path} has {lines} lines (max {params.max})")
