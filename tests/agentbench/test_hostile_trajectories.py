"""An AgentBench trajectory is recorded agent output: data, not configuration
(docs/security.md). ``run`` and ``gate`` must end on any trajectory file with verdicts or a
located input error (exit 2), never a traceback, and must not read without bound.

Through the real CLI in a subprocess, with the bundled task."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "examples" / "tasks" / "calculator_fix.json"
CLI = str(Path(sys.executable).with_name("otel-oracles"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "run", str(TASK), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_a_trajectory_nested_past_the_parser_is_an_input_error(tmp_path: Path) -> None:
    """100,000 nested arrays in a tool argument: Python's JSON parser gives up with
    RecursionError, which ended ``run`` in a traceback with exit 1 (a failed run)."""
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "deep.json"
    path.write_text('{"steps": [{"tool": "read_file", "args": {"path": "calc.py", "x": ' + deep)
    path.write_text(path.read_text() + "}}]}")
    result = run("--trajectory", str(path))
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    assert "deep.json" in result.stderr and "nested too deeply" in result.stderr, result.stderr


def test_a_trajectory_past_the_size_limit_is_not_read_whole(tmp_path: Path) -> None:
    """A trajectory is read up to the message limit (64 MiB) like a trace file: one holding
    a 70 MB file content was read whole (with a link to ``/dev/zero``, without end)."""
    path = tmp_path / "big.json"
    with path.open("w") as out:
        out.write('{"steps": [{"tool": "write_file", "args": {"path": "calc.py", "content": "')
        out.write("x" * (70 * 1024 * 1024))
        out.write('"}}]}')
    result = run("--trajectory", str(path))
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    assert "larger than" in result.stderr, result.stderr
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    endless = run("--trajectory", str(zero))
    assert endless.returncode == 2 and "larger than" in endless.stderr, endless.stderr


def test_a_path_nested_a_thousand_directories_deep_is_refused(tmp_path: Path) -> None:
    """Replay creates a written file's directories one at a time, each checked for links by
    its path from the workspace root: the work grows with the square of the depth, 3.9 s
    for one file 1,000 directories deep here, so a 1 MB trajectory of such writes held the
    grader for about an hour. A path deeper than ``MAX_PATH_PARTS`` is a replay error."""
    steps = ",".join(
        '{"tool": "write_file", "args": {"path": "' + f"d{i}/" * 1_000 + 'f.py", "content": "x"}}'
        for i in range(30)
    )
    path = tmp_path / "deep-paths.json"
    path.write_text('{"steps": [' + steps + "]}")
    result = run("--trajectory", str(path), "--explain", "full")
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "deeper than 64 directories" in result.stdout, result.stdout + result.stderr


def test_a_deep_replay_left_behind_does_not_stop_later_runs(tmp_path: Path) -> None:
    """Every ``run`` and ``gate`` first removes the replay directories that killed graders
    left behind. One left 1,000 directories deep (by a grader before the depth limit, or
    killed while removing it) ended every later run in ``RecursionError`` from
    ``shutil.rmtree``: the directory is removed without recursing per level now."""
    left = tmp_path / "otel-oracles-replay-999999999-abcdefgh"  # no such process
    left.mkdir()
    fd = os.open(left, os.O_RDONLY)
    for _ in range(1_000):  # one level at a time (pathlib's mkdir recurses per level too)
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = below
    os.close(os.open("f.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)
    from otel_oracles.replay import sweep_orphaned_replays

    try:
        assert sweep_orphaned_replays(tmp_path) == 1
        assert not left.exists()
    finally:  # pytest's own clean-up of old temporary directories recurses per level too
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(left)], check=False)


def test_a_trajectory_creating_too_many_files_is_a_replay_error(tmp_path: Path) -> None:
    """Depth and bytes were bounded, the number of files was not: 64 MiB of trajectory
    holds a million writes of a tiny file, each made on disk at a few milliseconds apiece
    (3,000 took 11 s to grade here), an hour of one grader and a million inodes. Past
    ``MAX_CREATED_ENTRIES`` files and directories the replay is refused at the step that
    passes it: the verdict is that one ``replay`` error (a harness error, never a pass)."""
    limit = 10_000  # MAX_CREATED_ENTRIES, as docs/security.md states it
    steps = ",".join(
        '{"tool": "write_file", "args": {"path": "d/' + f'{i}", "content": ""}}}}'
        for i in range(limit + 500)
    )
    path = tmp_path / "many-files.json"
    path.write_text('{"steps": [' + steps + "]}")
    result = run("--trajectory", str(path), "--explain", "full")
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    # the directory ``d`` and the files 0..9,998 fit; the file 9,999 is one too many
    expected = f"steps[{limit - 1}]: the trajectory creates more than {limit} files"
    assert expected in result.stdout, result.stdout + result.stderr[-2000:]
    assert "ERROR" in result.stdout and "error replay: replay refused" in result.stdout


def test_rewriting_the_same_files_is_not_counted_again(tmp_path: Path) -> None:
    """The bound counts what is created, not how many edits there are: an agent that saves
    the same file 12,000 times is replayed as before."""
    steps = ",".join(
        '{"tool": "write_file", "args": {"path": "calc.py", "content": "' + f'{i}"}}}}'
        for i in range(12_000)
    )
    path = tmp_path / "rewrites.json"
    path.write_text('{"steps": [' + steps + "]}")
    result = run("--trajectory", str(path), "--explain", "full")
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "creates more than" not in result.stdout, result.stdout
    assert "calculator-fix" in result.stdout, result.stdout + result.stderr[-2000:]


def test_a_trajectory_of_a_million_steps_is_refused_before_its_steps_are_read(
    tmp_path: Path,
) -> None:
    """64 MiB holds a million tiny steps: reading them took 69 s and 2 GB before replay
    refused them (each step read costs tens of microseconds and about 2 KB). More than
    ``MAX_TRAJECTORY_STEPS`` is an input error now, counted before any step is read: under a
    1 GiB address space and 60 s, where reading them ran out of both."""
    path = tmp_path / "million.json"
    path.write_text('{"steps": [' + ",".join(['{"tool": "t"}'] * 1_000_000) + "]}")
    limited = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "from otel_oracles.cli import main; sys.argv = ['otel-oracles'] + sys.argv[1:]; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", limited, "run", str(TASK), "--trajectory", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    assert "million.json" in result.stderr, result.stderr
    assert "1000000 steps, more than the limit of 100000" in result.stderr, result.stderr


def test_the_step_limit_is_configurable_and_names_the_file(tmp_path: Path) -> None:
    """``--max-steps`` on ``run`` and ``gate``: a trajectory one step over is an input error
    naming the file and the limit; one at the limit is graded."""
    three = tmp_path / "three.json"
    three.write_text('{"steps": [{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]}')
    over = run("--trajectory", str(three), "--max-steps", "2")
    assert over.returncode == 2, over.stdout + over.stderr
    assert "three.json" in over.stderr and "more than the limit of 2" in over.stderr, over.stderr
    at = run("--trajectory", str(three), "--max-steps", "3")
    assert at.returncode == 1 and "calculator-fix" in at.stdout, at.stdout + at.stderr
    gate = subprocess.run(
        [CLI, "gate", "--tasks", str(TASK), "-t", str(three), "--max-steps", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert gate.returncode == 2 and "more than the limit of 2" in gate.stderr, gate.stderr
