"""``otel-oracles validate``: check contract, task, trajectory and manifest files without
grading anything, so authoring mistakes fail in review rather than in a gate run."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from otel_oracles.cli._kinds import classify
from otel_oracles.errors import ContractError, OtelOraclesError
from otel_oracles.grade.loader import compile_contract
from otel_oracles.mapping import load_convention_file
from otel_oracles.model.contract import Contract, discover_contract_files
from otel_oracles.model.manifest import load_manifest
from otel_oracles.model.step import Trajectory, normalize_path

SKIPPED: dict[str, str] = {
    "otlp": "OTLP data, not a contract (grade it with 'otel-oracles grade')",
    "serve-config": "serve configuration (check it with 'otel-oracles serve --check-config')",
}
"""Kinds recognised but not validated here: reported as skipped, never as invalid."""


def _authoring_problems(contract: Contract) -> None:
    """Mistakes that load fine but can never grade: caught here instead of at gate time."""
    if contract.workspace is None:
        return
    workspace = {normalize_path(k) for k in contract.workspace}
    layers = (
        ("evidence", contract.evidence),
        ("oracles" if contract.agentbench else "invariants", contract.invariants),
        ("tolerances", contract.tolerances),
    )
    for key, specs in layers:
        for i, spec in enumerate(specs):
            path = spec.params.get("path")
            if spec.type == "file_not_modified" and normalize_path(str(path)) not in workspace:
                raise ContractError(
                    f"{key}[{i}].path: {path!r} is not in the task's workspace "
                    "(file_not_modified would report a task-authoring error)",
                    contract.source,
                )


def _contract(path: Path) -> str:
    contract = compile_contract(path).contract  # compiled: a bad match regex is caught too
    _authoring_problems(contract)
    kind = "task" if contract.agentbench else "contract"
    # A relaxed coverage is a deliberate risk: the summary shows it, the default stays quiet.
    relaxed = "; coverage lenient" if contract.coverage == "lenient" else ""
    return f"{kind} {contract.id}@{contract.version}: {len(contract.checks())} check(s){relaxed}"


def _trajectory(path: Path) -> str:
    t = Trajectory.load(path)
    return f"trajectory: {len(t.steps)} step(s), {len(t.file_edits())} file edit(s)"


def _manifest(path: Path) -> str:
    m = load_manifest(path)
    extra = f", {len(m.trajectories)} trajectory entries" if m.trajectories else ""
    ignored = f"; ignored keys: {', '.join(m.unknown_keys)}" if m.unknown_keys else ""
    return f"manifest: {len(m.task_files)} task file(s){extra}{ignored}"


def _conventions(path: Path) -> str:
    conv = load_convention_file(path)
    return f"conventions {conv.name}: {len(conv.rules)} rule(s)"


CHECKERS: dict[str, Callable[[Path], str]] = {
    "contract": _contract,
    "conventions": _conventions,
    "trajectory": _trajectory,
    "manifest": _manifest,
}
"""Kind -> checker returning a one-line summary or raising ``OtelOraclesError``."""


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file as a list.")
def validate_command(files: tuple[Path, ...], as_json: bool) -> None:
    """Validate contracts, AgentBench tasks, trajectories, gate manifests and mapping files.

    Directories are searched (not recursively) for .json/.yaml/.yml files. Each file is
    reported as ok or with every problem in it, one line each ('error: <file>: <key path>:
    <what was expected>', with a "did you mean" hint for a near-miss name);
    OTLP data and serve configurations are recognised and skipped.
    Exit code: 0 all valid, 1 any invalid, 2 usage error or no file to validate.

    \b
    Examples:
      otel-oracles validate examples/tasks
      otel-oracles validate examples/tasks/calculator_fix.json examples/manifest.json
    """
    results: list[dict[str, Any]] = []
    for path in discover_contract_files(list(files)):
        kind = classify(path)
        if kind in SKIPPED:
            results.append({"file": str(path), "kind": kind, "ok": None, "summary": SKIPPED[kind]})
            continue
        try:
            summary = CHECKERS[kind](path)
            results.append({"file": str(path), "kind": kind, "ok": True, "summary": summary})
        except ContractError as exc:
            results.append(
                {
                    "file": str(path),
                    "kind": kind,
                    "ok": False,
                    "error": str(exc),
                    "problems": [f"{exc.source}: {p}" if exc.source else p for p in exc.problems],
                }
            )
        except OtelOraclesError as exc:
            results.append({"file": str(path), "kind": kind, "ok": False, "error": str(exc)})
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for r in results:
            if r["ok"] is None:
                click.echo(f"skipped: {r['file']}: {r['summary']}")
            elif r["ok"]:
                click.echo(f"ok: {r['file']}: {r['summary']}")
            else:
                for problem in r.get("problems") or [r["error"]]:
                    click.echo(f"error: {problem}", err=True)
        skipped = sum(1 for r in results if r["ok"] is None)
        bad = sum(1 for r in results if r["ok"] is False)
        tail = f", {skipped} skipped" if skipped else ""
        click.echo(f"{len(results) - skipped} file(s) checked, {bad} invalid{tail}")
    if not results:
        # Validating nothing proves nothing: a review step pointed at the wrong folder
        # must not go green.
        where = ", ".join(str(f) for f in files)
        click.echo(
            f"error: {where}: nothing to validate: no contract, task, trajectory or manifest "
            "file (.json/.yaml/.yml) found",
            err=True,
        )
        sys.exit(2)
    sys.exit(1 if any(r["ok"] is False for r in results) else 0)
