"""A directory walk checks that each file it found is regular before reading any of them
(``test_special_files.py``), but the files are opened one after the other, later: a file
swapped for a FIFO (or a link to ``/dev/zero``) after the check and before its open was
opened by path, blocked on the FIFO forever, or read the device without end. The reader
now opens a walked file without waiting (``O_NONBLOCK``) and checks the descriptor it
opened (``fstat``), not the path.

The real reader (``read_paths``, what ``grade`` runs) over a real directory: the first
file's batch is taken (every file has been checked by then), the second file is swapped,
and the rest of the reading runs on a thread that must finish; a reader blocked on the
FIFO is released by opening the FIFO's writing end, so a failing run ends too."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "examples" / "traces" / "pydantic-ai-a_happy.otlp.json"

LIMIT_S = 30
"""Reading one small file takes milliseconds; the hang this guards against never ends."""


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    ("swap", "kind"), [(_fifo, "FIFO"), (_zero, "character device")], ids=["fifo", "dev-zero"]
)
def test_a_file_swapped_after_the_walk_checked_it_is_not_read(
    tmp_path: Path, swap: Callable[[Path], None], kind: str
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(TRACE, traces / "a.otlp.json")
    shutil.copy(TRACE, traces / "b.otlp.json")
    problems: list[InputProblem] = []
    batches = read_paths([str(traces)], problems)
    first = next(batches)  # the walk has checked both files: both were regular
    assert first.spans
    swapped = traces / "b.otlp.json"
    swapped.unlink()
    swap(swapped)
    rest: list[object] = []
    reader = threading.Thread(target=lambda: rest.extend(batches), daemon=True)
    reader.start()
    reader.join(LIMIT_S)
    blocked = reader.is_alive()
    if blocked and kind == "FIFO":  # release the reader (its open returns, then EOF)
        os.close(os.open(swapped, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(LIMIT_S)
    assert not blocked, f"the reader still waits on the swapped {kind} after {LIMIT_S} s"
    assert rest == []
    assert [p.message.split(";")[0] for p in problems] == [f"not a regular file ({kind})"]
    assert problems[0].source == str(swapped)
