"""A grade that replays a workspace on disk removes the directory when it ends: the disk
replay entered right away (an edit path the in-memory replay leaves to the disk) and the
lazy one (a command check asking for the workspace), one grade after another, each
directory gone once its grade returns (the grade's exit stack, made by the first replay on
disk, ``evaluator._on_disk``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from otel_oracles.grade import grade
from otel_oracles.grade.loader import compile_contract, parse_contract
from otel_oracles.model.contract import Contract
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import REPLAY_PREFIX


def _task(oracles: list[dict[str, str]]) -> Contract:
    return parse_contract(
        {"id": "t", "name": "n", "description": "d", "prompt": "p",
         "workspace": {"a.py": "x = 0\n"}, "oracles": oracles},
        "task.json",
    )  # fmt: skip


def _edit(path: str) -> Trajectory:
    steps = [{"tool": "write_file", "args": {"path": path, "content": "x = 1\n"}}]
    return Trajectory.from_agentbench({"steps": steps}, source="t.json")


@pytest.fixture
def replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this test's replays go (the temporary directory made ``tmp_path``)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _left(where: Path) -> list[Path]:
    return sorted(where.glob(f"{REPLAY_PREFIX}*"))


@pytest.mark.parametrize("path", ["a.py", "./a.py", "sub//b.py"], ids=["memory", "dot", "slashes"])
def test_each_grade_removes_the_directory_it_replayed_on_disk(replays: Path, path: str) -> None:
    """The command sees the edit (the workspace was on disk for it), and nothing is left."""
    compiled = compile_contract(
        _task([{"type": "test_must_pass", "command": "grep -q 'x = 1' a.py || test -f sub/b.py"}])
    )
    for _ in range(2):
        verdict = grade(compiled, _edit(path))
        assert verdict.passed, verdict.results
        assert _left(replays) == []
