"""DESIGN.md section 5, the four oracles, graded for real: replayed workspaces, real shell
commands and process groups."""

from __future__ import annotations

import os
import shlex
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.grade.oracles.agentbench import python_command
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import OracleResult, Outcome, Verdict
from otel_oracles.model.step import Trajectory
from tests.support.processes import wait_until_gone

PY = shlex.quote(sys.executable)
MakeTask = Callable[..., Contract]
MakeTraj = Callable[..., Trajectory]


def only(verdict: Verdict) -> OracleResult:
    assert len(verdict.results) == 1, verdict.results
    return verdict.results[0]


# ---- test_must_pass ---------------------------------------------------------------------


def test_test_must_pass_passes_on_exit_zero(make_task: MakeTask, make_trajectory: MakeTraj) -> None:
    v = grade(make_task([{"type": "test_must_pass", "command": "true"}]), make_trajectory())
    assert only(v).outcome == Outcome.PASS and v.passed


def test_test_must_pass_runs_in_the_replayed_workspace_with_edits_applied(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task(
        [{"type": "test_must_pass", "command": "grep -q fixed a.txt"}], {"a.txt": "broken\n"}
    )
    assert not grade(task, make_trajectory()).passed
    edit = {"tool": "write_file", "args": {"path": "a.txt", "content": "fixed\n"}}
    assert grade(task, make_trajectory(edit)).passed


def test_recorded_commands_are_not_executed_during_replay(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "test_must_pass", "command": "test ! -e made.txt"}])
    step = {"tool": "bash", "args": {"command": "touch made.txt"}}
    assert grade(task, make_trajectory(step)).passed


def test_failure_message_has_exit_code_and_first_stderr_line(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    cmd = "echo out-line; echo err-first >&2; echo err-second >&2; exit 3"
    r = only(grade(make_task([{"type": "test_must_pass", "command": cmd}]), make_trajectory()))
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert r.message.split("exited with code 3: ", 1)[1] == "err-first", r.message
    assert r.details["stderr"] == "err-first\nerr-second\n", "full stderr goes in details"
    assert r.details["exit_code"] == 3


def test_failure_message_falls_back_to_stdout_when_stderr_is_empty(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    cmd = "echo first-out; echo second-out; exit 1"
    r = only(grade(make_task([{"type": "test_must_pass", "command": cmd}]), make_trajectory()))
    assert r.message.endswith("code 1: first-out")


@pytest.mark.parametrize("stream", ["stderr", "stdout"])
def test_first_line_in_message_is_truncated_at_500_characters(
    make_task: MakeTask, make_trajectory: MakeTraj, stream: str
) -> None:
    code = f"import sys; sys.{stream}.write('E' * 600 + chr(10) + 'tail'); sys.exit(2)"
    cmd = f'{PY} -c "{code}"'
    r = only(grade(make_task([{"type": "test_must_pass", "command": cmd}]), make_trajectory()))
    assert r.message.endswith(": " + "E" * 500), r.message[-30:]
    assert "E" * 501 not in r.message
    if stream == "stderr":
        assert r.details["stderr"] == "E" * 600 + "\ntail", "details keep the whole stderr"


def test_python_runs_under_the_interpreter_running_otel_oracles(
    make_task: MakeTask,
    make_trajectory: MakeTraj,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A decoy `python` first on PATH: the shell would run it if the command were not rewritten.
    decoy = tmp_path / "bin"
    decoy.mkdir()
    (decoy / "python").write_text("#!/bin/sh\necho decoy\nexit 9\n")
    (decoy / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{decoy}{os.pathsep}{os.environ['PATH']}")
    cmd = "python -c 'import sys; print(sys.executable); sys.exit(1)'"
    r = only(grade(make_task([{"type": "test_must_pass", "command": cmd}]), make_trajectory()))
    assert r.details["stdout"].strip() == sys.executable, r.details
    assert "code 1" in r.message


@pytest.mark.parametrize(
    ("command", "rewritten"),
    [
        ("python", True),
        ("python -m pytest -q", True),
        ("  python x.py", True),
        ("python3 -m pytest", False),
        ("pythonic", False),
        ("cd src && python x.py", False),
    ],
)
def test_only_python_and_python_space_are_rewritten(command: str, rewritten: bool) -> None:
    out = python_command(command, interpreter="/opt/py/bin/python3.11")
    assert out.startswith("/opt/py/bin/python3.11") is rewritten, out
    if not rewritten:
        assert out == command


def test_timeout_kills_every_process_the_command_started_including_grandchildren(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    marker = f"oo-grandchild-{uuid.uuid4().hex}"
    sleeper = f"{PY} -c 'import time; time.sleep(300)' {marker}"
    cmd = f'sh -c "{sleeper} & wait"'
    start = time.monotonic()
    task = make_task([{"type": "test_must_pass", "command": cmd, "timeout": 3}])
    r = only(grade(task, make_trajectory()))
    assert time.monotonic() - start < 30
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert "timed out after 3s" in r.message
    assert wait_until_gone(marker) == [], "the grandchild sleep survived the timeout"


def test_processes_left_running_after_a_passing_command_are_killed(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    marker = f"oo-background-{uuid.uuid4().hex}"
    cmd = f"{PY} -c 'import time; time.sleep(300)' {marker} >/dev/null 2>&1 &"
    r = only(grade(make_task([{"type": "test_must_pass", "command": cmd}]), make_trajectory()))
    assert r.outcome == Outcome.PASS
    assert wait_until_gone(marker) == [], "a background process outlived the check"


def test_timeout_must_be_positive() -> None:
    from otel_oracles.errors import ContractError

    with pytest.raises(ContractError, match=r"oracles\[0\]\.timeout"):
        parse_contract(
            {
                "id": "t", "name": "n", "description": "d", "prompt": "p",
                "workspace": {"a": "b"},
                "oracles": [{"type": "test_must_pass", "command": "true", "timeout": 0}],
            },
            "x.json",
        )  # fmt: skip


# ---- file_not_modified ------------------------------------------------------------------


def test_file_not_modified_fails_when_bytes_change(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "file_not_modified", "path": "a.txt"}])
    edit = {"tool": "write_file", "args": {"path": "a.txt", "content": "changed\n"}}
    r = only(grade(task, make_trajectory({"tool": "bash", "args": {"command": "ls"}}, edit)))
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert r.message == "a.txt was modified (step 1)"
    assert r.step_indexes == [1]


def test_file_not_modified_passes_when_rewritten_with_identical_bytes(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "file_not_modified", "path": "a.txt"}], {"a.txt": "same\n"})
    edit = {"tool": "write_file", "args": {"path": "a.txt", "content": "same\n"}}
    assert only(grade(task, make_trajectory(edit))).outcome == Outcome.PASS


def test_file_not_modified_compares_bytes_not_text_equivalence(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "file_not_modified", "path": "a.txt"}], {"a.txt": "x\n"})
    edit = {"tool": "write_file", "args": {"path": "a.txt", "content": "x\r\n"}}
    assert only(grade(task, make_trajectory(edit))).outcome == Outcome.INVARIANT_FAILURE


def test_file_not_modified_never_touched_passes_without_reading(
    make_task: MakeTask, make_trajectory: MakeTraj, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_reading(self: Path) -> bytes:
        raise AssertionError(f"read {self}")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    task = make_task([{"type": "file_not_modified", "path": "a.txt"}], {"a.txt": "x", "b": "y"})
    other = {"tool": "write_file", "args": {"path": "b", "content": "z"}}
    r = only(grade(task, make_trajectory(other)))
    assert r.outcome == Outcome.PASS and "never touched" in r.message
    # The same patch makes a touched file's check crash: proof that untouched is not read.
    touched = {"tool": "write_file", "args": {"path": "a.txt", "content": "z"}}
    assert only(grade(task, make_trajectory(touched))).outcome == Outcome.ERROR


def test_file_not_modified_matches_normalized_paths(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "file_not_modified", "path": "./cfg/app.ini"}], {"cfg/app.ini": "a"})
    edit = {"tool": "write_file", "args": {"path": "cfg\\app.ini", "content": "b"}}
    assert only(grade(task, make_trajectory(edit))).outcome == Outcome.INVARIANT_FAILURE


def test_file_not_modified_path_missing_from_workspace_is_a_task_authoring_error(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "file_not_modified", "path": "nope.txt"}])
    r = only(grade(task, make_trajectory()))
    assert r.outcome == Outcome.ERROR, "an authoring mistake is a harness error, not the agent's"
    assert r.message.startswith(
        "task authoring error: file_not_modified path 'nope.txt' is not in the task's workspace"
    ), r.message
    assert not r.passed


# ---- no_network -------------------------------------------------------------------------


def test_no_network_names_first_violating_step_and_pattern(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    steps = [
        {"tool": "bash", "args": {"command": "ls"}},
        {"tool": "bash", "args": {"command": "WGET x"}},
        {"tool": "bash", "args": {"command": "pip install y"}},
    ]
    r = only(grade(make_task([{"type": "no_network"}]), make_trajectory(*steps)))
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert r.message.startswith("step 1 (bash) matches network pattern 'wget'"), r.message
    assert r.step_indexes == [1, 2]


def test_no_network_passes_on_a_clean_trajectory(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    step = {"tool": "bash", "args": {"command": "python -m pytest"}}
    assert grade(make_task([{"type": "no_network"}]), make_trajectory(step)).passed


def test_no_network_patterns_param_replaces_the_default_list(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "no_network", "patterns": ["ssh "]}])
    assert grade(task, make_trajectory({"tool": "bash", "args": {"command": "curl x"}})).passed
    r = only(grade(task, make_trajectory({"tool": "bash", "args": {"command": "SSH host"}})))
    assert "'ssh '" in r.message


def test_no_network_works_without_a_workspace(make_trajectory: MakeTraj) -> None:
    contract = parse_contract({"id": "c", "invariants": [{"type": "no_network"}]}, "c.yaml")
    r = only(grade(contract, make_trajectory({"tool": "bash", "args": {"command": "curl"}})))
    assert r.outcome == Outcome.INVARIANT_FAILURE


# ---- assertion_exists -------------------------------------------------------------------


def test_assertion_exists_uses_multiline_anchors(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    ws = {"t.py": "def test():\n    assert f() == 2\n    return None\n"}
    task = make_task(
        [{"type": "assertion_exists", "path": "t.py", "pattern": r"^\s+assert f\(\) == 2$"}], ws
    )
    r = only(grade(task, make_trajectory()))
    assert r.outcome == Outcome.PASS, "^ and $ must match at line boundaries (re.MULTILINE)"
    assert r.message.startswith("t.py:2 matches")


def test_assertion_exists_fails_when_nothing_matches(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task(
        [{"type": "assertion_exists", "path": "t.py", "pattern": "^assert x$"}], {"t.py": "ok\n"}
    )
    edit = {"tool": "write_file", "args": {"path": "t.py", "content": "# assert x\n"}}
    r = only(grade(task, make_trajectory(edit)))
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert r.message == "no match for /^assert x$/ in t.py"


def test_assertion_exists_fails_when_the_file_is_missing(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "assertion_exists", "path": "gone.py", "pattern": "x"}])
    r = only(grade(task, make_trajectory()))
    assert r.outcome == Outcome.INVARIANT_FAILURE
    assert r.message == "gone.py does not exist in the replayed workspace"


def test_assertion_exists_sees_files_created_by_the_trajectory(
    make_task: MakeTask, make_trajectory: MakeTraj
) -> None:
    task = make_task([{"type": "assertion_exists", "path": "new/t.py", "pattern": "assert"}])
    edit = {"tool": "Write", "args": {"file_path": "new/t.py", "content": "assert 1\n"}}
    assert grade(task, make_trajectory(edit)).passed


def test_assertion_exists_rejects_an_invalid_regex_at_load_time() -> None:
    from otel_oracles.errors import ContractError

    with pytest.raises(ContractError, match=r"oracles\[0\]\.pattern: .*invalid regular"):
        parse_contract(
            {
                "id": "t", "name": "n", "description": "d", "prompt": "p",
                "workspace": {"a": "b"},
                "oracles": [{"type": "assertion_exists", "path": "a", "pattern": "(unclosed"}],
            },
            "x.json",
        )  # fmt: skip


# ---- no workspace (trace-derived trajectories) -------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "test_must_pass", "command": "true"},
        {"type": "file_not_modified", "path": "a"},
        {"type": "assertion_exists", "path": "a", "pattern": "x"},
    ],
)
def test_workspace_oracles_report_missing_evidence_without_a_workspace(
    spec: dict, make_trajectory: MakeTraj
) -> None:
    contract = parse_contract({"id": "c", "invariants": [spec]}, "c.yaml")
    r = only(grade(contract, make_trajectory()))
    assert r.outcome == Outcome.MISSING_EVIDENCE
    assert "needs a replayed workspace" in r.message and "'c'" in r.message
