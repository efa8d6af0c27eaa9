"""promote: a production trace into a scrubbed test fixture that grades to the same verdict
(``otel-oracles promote``, docs/promote.md)."""

from otel_oracles.promote._promote import Promotion, VerdictSummary, find_trace, promote
from otel_oracles.promote._scrub import DEFAULT_KEEP, ScrubNote, ScrubPolicy, scrub_trace

__all__ = [
    "DEFAULT_KEEP",
    "Promotion",
    "ScrubNote",
    "ScrubPolicy",
    "VerdictSummary",
    "find_trace",
    "promote",
    "scrub_trace",
]
