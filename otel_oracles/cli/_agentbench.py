"""Loading and grading shared by ``run`` and ``gate``: tasks x trajectories -> RunReport."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from otel_oracles.grade import grade
from otel_oracles.grade.loader import load_contract
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.model.step import MAX_TRAJECTORY_STEPS, Trajectory, normalize_path
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

F = TypeVar("F", bound=Callable[..., Any])


def max_steps_option(func: F) -> F:
    """``--max-steps``: the most steps a trajectory may hold (``MAX_TRAJECTORY_STEPS``)."""
    return click.option(
        "--max-steps",
        type=click.IntRange(min=1),
        default=MAX_TRAJECTORY_STEPS,
        show_default=True,
        help="Most steps a trajectory may hold; a longer one is an input error (exit 2) "
        "before any of its steps is read or any pair is graded.",
    )(func)


def display_path(path: Path) -> str:
    """Paths relative to the working directory when below it: shorter, stable subjects."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


@dataclass(frozen=True)
class Pairing:
    """One trajectory and the tasks it is graded against."""

    trajectory: Trajectory
    tasks: list[Contract]
    expect: str | None = None


def load_trajectory(path: Path, max_steps: int = MAX_TRAJECTORY_STEPS) -> Trajectory:
    trajectory = Trajectory.load(path, max_steps)
    return trajectory.model_copy(update={"source": display_path(path)})


def load_tasks(paths: list[Path]) -> list[Contract]:
    return [load_contract(p) for p in paths]


def wrote_any_workspace_file(trajectory: Trajectory, task: Contract) -> bool:
    """Compatibility: did the trajectory write a file that the task's workspace holds?"""
    workspace = {normalize_path(k) for k in task.workspace or {}}
    return any(path in workspace for _, path, _ in trajectory.file_edits())


def grade_pairings(
    pairings: list[Pairing], commands: CommandPolicy = SANDBOXED
) -> tuple[RunReport, list[tuple[Verdict, str]]]:
    """Grade every pairing; return the report and (verdict, expected) for expectations.
    ``commands``: how checks that execute commands may run (sandboxed by default)."""
    report = RunReport()
    expected: list[tuple[Verdict, str]] = []
    for pairing in pairings:
        t = pairing.trajectory
        ids = ", ".join(task.id for task in pairing.tasks)
        report.notes.append(f"{t.source} was scored against {len(pairing.tasks)} task(s): {ids}")
        for task in pairing.tasks:
            verdict = grade(task, t, commands=commands)
            report.verdicts.append(verdict)
            if pairing.expect is not None:
                expected.append((verdict, pairing.expect))
            if not verdict.passed and t.file_edits() and not wrote_any_workspace_file(t, task):
                report.notes.append(
                    f"{t.source} wrote none of the workspace files of task {task.id!r}: it was "
                    "probably recorded for another task (scope it with --manifest)"
                )
    return report, expected
