"""A grading process killed by a signal in the middle of a replay cannot clean up its
temporary directory; the next process that replays removes it (real subprocess, real
SIGKILL, its own temporary directory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from otel_oracles.replay import REPLAY_PREFIX, sweep_orphaned_replays

KILLED_MID_REPLAY = """
import os, signal, sys
from otel_oracles.model.step import Trajectory
from otel_oracles.replay import replayed_workspace
traj = Trajectory.from_agentbench({"steps": [
    {"tool": "write_file", "args": {"path": "a.py", "content": "x = 1"}}]})
with replayed_workspace({"a.py": "x = 0"}, traj) as root:
    print(root, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_graders_replay_directory_is_removed_by_the_next(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_MID_REPLAY], capture_output=True, text=True, env=env,
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == -9
    left = Path(proc.stdout.strip())
    assert left.parent == tmp_path and left.name.startswith(REPLAY_PREFIX)
    assert (left / "a.py").read_text() == "x = 1", "the kill left the replay behind"

    mine = tmp_path / f"{REPLAY_PREFIX}{os.getpid()}-live"
    mine.mkdir()
    assert sweep_orphaned_replays(tmp_path) == 1
    assert not left.exists()
    assert mine.exists(), "a live process's replay is never touched"
