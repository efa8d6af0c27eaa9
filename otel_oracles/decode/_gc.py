"""Garbage-collector settings for bulk ingestion (offline ``grade`` of large exports)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BULK_GC_THRESHOLD0 = 50_000
"""Generation-0 threshold while ingesting in bulk (CPython's default is 700)."""


@contextmanager
def bulk_ingest_gc(threshold0: int = BULK_GC_THRESHOLD0) -> Iterator[None]:
    """Collect young objects rarely while decoding and assembling; restore on exit.

    Why: decoding allocates millions of small containers (JSON documents, records) while the
    traces in flight stay alive, so with the default threshold a young collection runs every
    few spans and keeps promoting into full collections that rescan every buffered trace.
    Measured on 50k synthetic GenAI spans: decode + assembly 1.4x (protobuf) to 2x (JSON)
    faster with this setting. Decoded records hold no reference cycles, so collecting less
    often frees the same memory, only later; peak memory grows by at most ``threshold0``
    young objects. Process-wide: meant for the CLI's batch commands, not for a library
    caller embedded in another program, and not for the server.
    """
    old = gc.get_threshold()
    gc.set_threshold(threshold0, old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
