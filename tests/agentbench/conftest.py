"""Fixtures for the AgentBench tests: tasks and trajectories written as real files, and the
real ``otel-oracles`` console script run in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.contract import Contract
from otel_oracles.model.step import Trajectory


def otel_oracles_argv() -> list[str]:
    """The installed console script next to the running interpreter, else the module."""
    script = Path(sys.executable).with_name("otel-oracles")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from otel_oracles.cli import main; main()"]


@pytest.fixture(scope="session")
def cli_argv() -> list[str]:
    """argv prefix that runs the real ``otel-oracles`` (for module-scoped fixtures)."""
    return otel_oracles_argv()


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``otel-oracles ARGS`` for real; returns the completed process (text mode)."""

    def run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None):
        return subprocess.run(
            [*otel_oracles_argv(), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=300,
        )

    return run


def task_dict(
    oracles: list[dict[str, Any]], workspace: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": extra.pop("id", "t"),
        "name": "a task",
        "description": "a test task",
        "prompt": "do it",
        "workspace": workspace if workspace is not None else {"a.txt": "hello\n"},
        "oracles": oracles,
        **extra,
    }


@pytest.fixture
def make_task() -> Callable[..., Contract]:
    """Build a validated AgentBench task contract from oracles (and a workspace)."""

    def make(
        oracles: list[dict[str, Any]], workspace: dict[str, str] | None = None, **extra: Any
    ) -> Contract:
        return parse_contract(task_dict(oracles, workspace, **extra), "task.json")

    return make


def trajectory(*steps: dict[str, Any]) -> Trajectory:
    return Trajectory.from_agentbench({"steps": list(steps)}, source="traj.json")


@pytest.fixture
def make_trajectory() -> Callable[..., Trajectory]:
    return trajectory


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[[str, Any], Path]:
    """Write ``data`` as JSON to ``tmp_path / name`` (parents created); return the path."""

    def write(name: str, data: Any) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return path

    return write
