"""CPU time of a piece of work for the tests that hold its cost to growing with its input, not
the input's square: the same work at two sizes, side by side in one process. Timed with the
cyclic collector paused: in the whole suite the heap holds every collected test's objects, and
a full collection that happens to fall inside one run scans all of them, which would count as
the work's own growth (a run of 16,000 answers once took 22 times one of 2,000, linear being 8)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """The least CPU seconds of ``repeats`` runs of ``work``, after one run to warm caches
    (conventions compiled, interned strings, allocator arenas): the least, because load on a
    shared machine only ever adds time."""
    was_enabled = gc.isenabled()
    work()
    gc.collect()
    gc.disable()
    try:
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
        return best
    finally:
        if was_enabled:
            gc.enable()
