"""Replay: workspace materialized in a fresh directory, edits applied in order, and no path
(absolute, '..', Windows-style, through a symlink) ever writes outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.errors import ContractError, ReplayError
from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import replayed_workspace, safe_target, write_inside


def traj(*steps: dict) -> Trajectory:
    return Trajectory.from_agentbench({"steps": list(steps)}, source="t.json")


def edit(path: str, content: str = "pwned") -> dict:
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def test_edits_apply_in_order_and_later_edits_win() -> None:
    t = traj(edit("a.txt", "one"), edit("sub/b.txt", "two"), edit("a.txt", "three"))
    with replayed_workspace({"a.txt": "zero", "keep.txt": "k"}, t) as root:
        assert (root / "a.txt").read_text() == "three"
        assert (root / "sub" / "b.txt").read_text() == "two"
        assert (root / "keep.txt").read_text() == "k"
    assert not root.exists(), "the replay directory is removed afterwards"


def test_each_replay_gets_a_fresh_directory() -> None:
    with replayed_workspace({"a": "1"}, traj(edit("b"))) as first:
        pass
    with replayed_workspace({"a": "1"}, traj()) as second:
        assert not (second / "b").exists()
    assert first != second


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/etc/otel-oracles-pwned", "absolute"),
        ("C:\\Windows\\pwned.txt", "absolute"),
        ("c:/pwned.txt", "absolute"),
        ("\\\\server\\share\\pwned.txt", "absolute"),
        ("\\rooted\\pwned.txt", "absolute"),
        ("../pwned.txt", "'..'"),
        ("..\\..\\pwned.txt", "'..'"),
        ("sub/../../pwned.txt", "'..'"),
        ("..", "'..'"),
    ],
)
def test_escaping_edit_paths_are_refused(path: str, why: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with pytest.raises(ReplayError, match=why):
        write_inside(root, path, "x", "steps[0]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ws"], "nothing written outside"
    assert list(root.iterdir()) == []


def test_a_symlinked_directory_pointing_outside_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ReplayError, match="escapes the workspace through a symlink"):
        write_inside(root, "link/pwned.txt", "x", "steps[2]")
    assert list(outside.iterdir()) == []


def test_a_symlinked_file_pointing_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("original")
    (root / "config.ini").symlink_to(victim)
    with pytest.raises(ReplayError, match="symlink"):
        write_inside(root, "config.ini", "x", "steps[0]")
    assert victim.read_text() == "original"


def test_a_symlink_inside_the_workspace_is_not_written_through(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    with pytest.raises(ReplayError, match="goes through a symlink"):
        write_inside(root, "alias/f.txt", "x", "steps[0]")
    assert list((root / "real").iterdir()) == []


def test_a_dangling_symlink_planted_earlier_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = tmp_path / "created-outside.txt"
    (root / "out.txt").symlink_to(target)
    with pytest.raises(ReplayError):
        write_inside(root, "out.txt", "x", "steps[0]")
    assert not target.exists()


def test_safe_target_refuses_reads_through_symlinks_too(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "etc").symlink_to("/etc", target_is_directory=True)
    with pytest.raises(ReplayError, match="symlink"):
        safe_target(root, "etc/passwd", "assertion_exists")


def test_file_and_directory_collisions_are_replay_errors_not_crashes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_inside(root, "a", "file", "workspace")
    with pytest.raises(ReplayError, match="needs directory a but that is a file"):
        write_inside(root, "a/b", "x", "steps[0]")
    write_inside(root, "d/e", "x", "workspace")
    with pytest.raises(ReplayError, match="is a directory"):
        write_inside(root, "d", "x", "steps[1]")


def _task(oracles: list[dict], workspace: dict[str, str]) -> Contract:
    return parse_contract(
        {"id": "t", "name": "n", "description": "d", "prompt": "p", "workspace": workspace,
         "oracles": oracles},
        "task.json",
    )  # fmt: skip


def test_grading_an_escaping_trajectory_fails_as_a_harness_error(tmp_path: Path) -> None:
    task = _task([{"type": "no_network"}], {"a.txt": "x"})
    target = tmp_path / "escaped.txt"
    rel = str(target).lstrip("/")  # from / after climbing out of the replay dir
    v = grade(task, traj(edit("../" * 12 + rel)))
    assert not v.passed and v.verdict == "error"
    assert v.results[0].outcome == Outcome.ERROR
    assert v.results[0].message.startswith("replay refused: steps[0]: path")
    assert "escapes the workspace through '..'" in v.results[0].message
    assert not target.exists()


def test_absolute_edit_refused_by_grade_and_nothing_written(tmp_path: Path) -> None:
    target = tmp_path / "abs.txt"
    v = grade(_task([{"type": "no_network"}], {"a": "x"}), traj(edit(str(target))))
    assert v.verdict == "error" and "is absolute" in v.results[0].message
    assert not target.exists()


@pytest.mark.parametrize("key", ["/abs.txt", "../up.txt", "a/../../up.txt", "C:\\x.txt", "."])
def test_task_workspace_keys_must_be_relative_paths(key: str) -> None:
    with pytest.raises(ContractError, match="expected a relative path inside the workspace"):
        _task([{"type": "no_network"}], {key: "x"})


@pytest.mark.parametrize(
    ("oracle", "bad"),
    [("file_not_modified", "/etc/passwd"), ("assertion_exists", "../x.py")],
)
def test_oracle_paths_outside_the_workspace_are_rejected_at_load(oracle: str, bad: str) -> None:
    spec = (
        {"type": oracle, "path": bad, "pattern": "x"}
        if oracle == "assertion_exists"
        else {"type": oracle, "path": bad}
    )
    with pytest.raises(ContractError, match=r"oracles\[0\]\.path"):
        _task([spec], {"a": "x"})


def test_a_symlink_planted_by_an_earlier_check_is_not_read_through(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("assert leaked\n")
    task = _task(
        [
            {"type": "test_must_pass", "command": f"rm t.py && ln -s {secret} t.py"},
            {"type": "assertion_exists", "path": "t.py", "pattern": "assert"},
        ],
        {"t.py": "nothing here\n"},
    )
    v = grade(task, traj())
    planted = v.results[1]
    assert planted.outcome == Outcome.ERROR, "must not judge a file outside the workspace"
    assert "escapes the workspace through a symlink" in planted.message
