"""``grade --workers`` never leaves workers behind: killing the parent (as a CI timeout or
the OOM killer does, with no chance to clean up) takes its workers with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

CLI = str(Path(sys.executable).with_name("otel-oracles"))


def children(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(c) for c in text.split()}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_grade_kills_its_workers(tmp_path: Path) -> None:
    # Each file is 1 GiB of blank lines in ~80 KB of zstd: seconds of reading per worker
    # per file, so the workers are busy long after their parent is killed.
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\n" * (1 << 30))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for i in range(8):
        (inputs / f"{i}.jsonl.zst").write_bytes(bomb)
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\ninvariants:\n  - {type: tool_not_called, tool: wipe}\n")
    parent = subprocess.Popen(
        [CLI, "grade", "-q", "--workers", "2", "-c", str(contract), str(inputs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:

        def started() -> bool:
            workers.update(children(parent.pid))
            return len(workers) >= 2

        wait_for(started, 60, "two grading workers")
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        wait_for(lambda: not any(alive(w) for w in workers), 10, "the workers to exit")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
