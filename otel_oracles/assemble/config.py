"""Offline assembly defaults (the online assembler has its own, in ``server`` settings)."""

from __future__ import annotations

from otel_oracles._native import LATE_SAMPLE_SIZE as _CORE_LATE_SAMPLE_SIZE
from otel_oracles._native import REMEMBERED_TRACE_IDS as _CORE_REMEMBERED_TRACE_IDS
from otel_oracles._native import UNROOTED_IDLE_FACTOR as _CORE_UNROOTED_IDLE_FACTOR

DEFAULT_IDLE_SPANS = 20_000
"""A trace whose root span has arrived is complete once this many further spans and log
records have been read with none for it. Exporters send a root span last (it ends last, and
batch processors export in end order), so stragglers after the root are rare; any file set
smaller than this is grouped exactly as if it were read whole. Memory: the traces waiting out
this window dominate the offline buffer, about 3-5 KB per held span on synthetic GenAI
traces with 1 KB tool results (about 70-100 MB at this default)."""

UNROOTED_IDLE_FACTOR: int = _CORE_UNROOTED_IDLE_FACTOR
"""A trace with no root yet waits this many times longer: its root may still come (long
agent runs export children long before the root ends), and releasing it early would split it.
The core's constant (``native/core/src/assemble_offline.rs``), read from it."""

REMEMBERED_TRACE_IDS: int = _CORE_REMEMBERED_TRACE_IDS
"""How many released trace ids are remembered to recognise late spans (a few MB). Spans of
a trace released longer ago start a new, partial trace, which shows up as orphans. The core's
constant, read from it."""

LATE_SAMPLE_SIZE: int = _CORE_LATE_SAMPLE_SIZE
"""How many distinct trace ids that received late records are kept in
``AssemblyStats.late_trace_ids`` for the report. The core's constant, read from it."""
