"""assemble stage: span and log records -> traces (span tree, orphans, log-based events).

``build_trace`` is shared by offline and online assembly; ``assemble_offline`` groups a stream
of decoded batches by trace id with memory bound by the traces in flight (see
``docs/ingest.md`` for the release policy). ``assemble.online`` is the server's assembler.
"""

from __future__ import annotations

from collections.abc import Iterable

from otel_oracles.assemble._offline import AssemblyStats, OfflineAssembly
from otel_oracles.assemble._sessions import (
    ReleasedTrace,
    SessionStats,
    join_released,
    join_sessions,
)
from otel_oracles.assemble._tree import build_trace
from otel_oracles.assemble.config import DEFAULT_IDLE_SPANS
from otel_oracles.decode import DecodedBatch


def assemble_offline(
    batches: Iterable[DecodedBatch],
    *,
    max_buffered_spans: int | None = None,
    idle_spans: int = DEFAULT_IDLE_SPANS,
    stats: AssemblyStats | None = None,
) -> OfflineAssembly:
    """Yield the traces in ``batches``, each once, as soon as it is judged complete.

    A trace is released when its root span has arrived and ``idle_spans`` further records
    have been read with none for it (four times that without a root), or at the end of the
    input. ``max_buffered_spans`` caps memory: over it, the least recently active traces are
    released early and marked ``incomplete``. Records arriving for a released trace are
    counted as late in ``stats`` (the returned iterator's ``.stats``, or the one passed in).
    Any input smaller than ``idle_spans`` records is grouped exactly. Lazy: reads ``batches``
    only as traces are consumed.
    """
    return OfflineAssembly(
        batches,
        max_buffered_spans=max_buffered_spans,
        idle_spans=idle_spans,
        stats=stats if stats is not None else AssemblyStats(),
    )


__all__ = [
    "AssemblyStats",
    "OfflineAssembly",
    "ReleasedTrace",
    "SessionStats",
    "assemble_offline",
    "build_trace",
    "join_released",
    "join_sessions",
]
