"""Limits of the in-process grader, checked when it is built (as the SDK's own processors
check theirs): a wrong value fails the program's start-up naming the argument, never a
request later."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WAIT_MILLIS = 500
"""How long a trace waits after its root span ended before it is graded: spans ended by
other threads or tasks just after the root (a background tool call, a late log record)
are still part of the run."""

DEFAULT_MAX_TRACES = 1_000
"""Traces buffered at once; an agent serving more runs in parallel than this has its
newest traces counted as dropped rather than its memory growing without bound."""

DEFAULT_MAX_SPANS_PER_TRACE = 10_000
"""Spans kept per trace; a trace with more is not graded (counted as dropped): a verdict on
part of a run could pass a check the missing part fails."""

DEFAULT_MAX_TRACE_BYTES = 64 * 1024 * 1024
"""Bytes of span and log content kept per trace (names, attribute keys and values, event
and link attributes, log bodies): the agent's SDK bounds a span's attributes by number,
not by size, so 10,000 spans of a 1 MB argument each are within every count limit and
would be 10 GB of the agent's own memory. A trace past it is not graded (counted as
dropped), as past the span cap."""

DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024
"""Bytes held across every buffered trace; a span or log record that would pass it is not
kept and its trace not graded (counted): many runs at once, each under its own budget,
must not add up to more than the agent can spare."""

DEFAULT_MAX_TRACE_AGE_MILLIS = 600_000
"""A trace whose root never ends (a crashed run, a root ended in another process) is
evicted, counted, after this long."""

DEFAULT_MAX_CLOSED_TRACES = 10_000
"""Trace ids remembered after grading or dropping, so a straggler is counted as late (or
dropped) instead of starting a new partial trace."""


@dataclass(frozen=True, slots=True)
class ProcessorLimits:
    """How long to wait for stragglers, and how much the grader may hold; see the
    ``DEFAULT_*`` constants for why each default is what it is."""

    wait_millis: int = DEFAULT_WAIT_MILLIS
    max_traces: int = DEFAULT_MAX_TRACES
    max_spans_per_trace: int = DEFAULT_MAX_SPANS_PER_TRACE
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES
    max_trace_age_millis: int = DEFAULT_MAX_TRACE_AGE_MILLIS
    max_closed_traces: int = DEFAULT_MAX_CLOSED_TRACES

    def __post_init__(self) -> None:
        if self.wait_millis < 0:
            raise ValueError(f"wait_millis: must be >= 0, got {self.wait_millis}")
        for name in (
            "max_traces",
            "max_spans_per_trace",
            "max_trace_bytes",
            "max_buffered_bytes",
            "max_trace_age_millis",
        ):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"{name}: must be >= 1, got {value}")
        if self.max_closed_traces < 0:
            raise ValueError(f"max_closed_traces: must be >= 0, got {self.max_closed_traces}")
