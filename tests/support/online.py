"""A hand-moved clock and a small online buffer, shared by the tests of serve's assembly.

The online buffer's completion policy is all about time (quiet periods, age limits); a clock
the test moves by hand makes those tests run in milliseconds and say exactly which instant
releases a trace. The real-socket tests check the same behaviour with the wall clock.
"""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble.online import OnlineAssembler


class ManualClock:
    """A clock that stands still until the test moves ``now``."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def online_assembler(clock: ManualClock, **overrides: int | float) -> OnlineAssembler:
    """An `OnlineAssembler` with small limits a test can reach, any of them overridden."""
    args: dict[str, Any] = {
        "decision_wait": 10.0,
        "max_trace_age": 60.0,
        "max_traces": 100,
        "max_buffered_spans": 1000,
        "max_spans_per_trace": 50,
        "decision_cache_size": 100,
        "retry_after": 0.5,
    }
    args.update(overrides)
    return OnlineAssembler(clock=clock, **args)
