"""The result exporter's flow control: grading threads wait while results queue up in front
of the single exporter thread (it would otherwise starve for the GIL and verdict latency
would grow with the queue), and the wait can never hang or lose a result."""

from __future__ import annotations

import threading
import time

from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.server._grading import ResultExporter


def ready(i: int) -> ReadyTrace:
    return ReadyTrace(f"t{i}", [], [], "complete", time.monotonic())


def test_put_blocks_at_the_backlog_limit_until_the_exporter_catches_up() -> None:
    gate = threading.Event()
    exported: list[str] = []

    def export(pairs: list[object]) -> None:
        gate.wait(10)
        exported.extend(str(p) for p in pairs)

    done: list[str] = []
    exp = ResultExporter(export, lambda batch: done.extend(r.trace_id for r, _ in batch),
                         max_batch=1, max_backlog=2)  # fmt: skip
    exp.start()
    exp.put(ready(0), ["r0"])  # taken by the exporter, which blocks in export
    time.sleep(0.1)
    exp.put(ready(1), ["r1"])
    exp.put(ready(2), ["r2"])  # backlog now 2 queued
    third = threading.Thread(target=exp.put, args=(ready(3), ["r3"]))
    third.start()
    third.join(0.3)
    assert third.is_alive(), "put must wait while max_backlog results are queued"
    gate.set()
    third.join(5)
    assert not third.is_alive()
    assert exp.wait_idle(5)
    exp.stop()
    assert done == ["t0", "t1", "t2", "t3"], "every result exported once, in order"
    assert exported == ["r0", "r1", "r2", "r3"]


def test_put_never_waits_without_a_running_exporter_thread() -> None:
    exp = ResultExporter(lambda pairs: None, lambda batch: None, max_backlog=1)
    t0 = time.monotonic()
    for i in range(3):
        exp.put(ready(i), [])  # not started: must not block (nothing would drain it)
    assert time.monotonic() - t0 < 0.5
    assert exp.backlog == 3, "kept, not dropped"
