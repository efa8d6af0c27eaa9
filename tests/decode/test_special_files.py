"""A directory of traces is data: it can hold a FIFO, a device file or a broken symbolic link
(an attacker who can write the export directory, or a careless ``ln -s``). ``grade`` on
that directory must end, with every special file named as an input problem, and never
block on a FIFO nobody writes, read ``/dev/zero`` without end, or end in a traceback.

Run through the real CLI in a subprocess: a hang is the failure this guards against."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "examples" / "traces" / "pydantic-ai-a_happy.otlp.json"
CONTRACT = REPO / "bench" / "contracts" / "any-agent.yaml"
CLI = str(Path(sys.executable).with_name("otel-oracles"))

LIMIT_S = 60
"""A run over one small trace takes a few seconds even on a loaded machine; the hang this
guards against never ends."""


def grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "grade", *args, "-c", str(CONTRACT)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        check=False,
        cwd=REPO,
    )


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    directory = tmp_path / "traces"
    directory.mkdir()
    shutil.copy(TRACE, directory / "a.otlp.json")
    return directory


def test_fifo_in_a_directory_is_skipped_not_waited_on(traces: Path) -> None:
    os.mkfifo(traces / "b.jsonl")  # no writer ever opens it: open() for reading blocks
    run = grade(str(traces))
    assert "1 verdict(s)" in run.stdout, run.stdout + run.stderr
    assert "b.jsonl: not a regular file (FIFO)" in run.stderr, run.stderr
    assert run.returncode == 2  # an input the run could not read is an input error


def test_device_behind_a_symlink_in_a_directory_is_skipped(traces: Path) -> None:
    (traces / "zero.jsonl").symlink_to("/dev/zero")  # endless: no decompression limit applies
    run = grade(str(traces))
    assert "1 verdict(s)" in run.stdout, run.stdout + run.stderr
    assert "zero.jsonl: not a regular file (character device)" in run.stderr, run.stderr
    assert run.returncode == 2


def test_pattern_matching_a_fifo_skips_it(traces: Path) -> None:
    os.mkfifo(traces / "b.otlp.json")
    run = grade(str(traces / "*.json"))
    assert "1 verdict(s)" in run.stdout, run.stdout + run.stderr
    assert "b.otlp.json: not a regular file (FIFO)" in run.stderr, run.stderr


def test_broken_symlink_in_a_directory_is_an_input_problem(traces: Path) -> None:
    (traces / "gone.json").symlink_to(traces / "nowhere.json")
    run = grade(str(traces))
    assert "Traceback" not in run.stderr, run.stderr
    assert "1 verdict(s)" in run.stdout, run.stdout + run.stderr
    assert "gone.json: cannot read: No such file or directory" in run.stderr, run.stderr
    assert run.returncode == 2


def test_a_fifo_named_on_its_own_is_still_read(tmp_path: Path) -> None:
    """Process substitution (``grade <(zcat x.gz)``) hands a pipe: naming one is a choice."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [CLI, "grade", str(fifo), "-c", str(CONTRACT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    with open(fifo, "wb") as writer:  # blocks until the grader opens it for reading
        writer.write(TRACE.read_bytes())
    out, err = proc.communicate(timeout=LIMIT_S)
    assert "1 verdict(s)" in out, out + err
    assert proc.returncode in (0, 1), err
