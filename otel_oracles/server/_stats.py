"""The server's own counters: the source of ``GET /stats`` and of the exported self-metrics.

Plain integers behind one lock: the receive path (event-loop thread) and the grading
workers both write; reads take a consistent snapshot. Names and meanings are listed in
docs/serve.md ("Metrics").
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from typing import Any

# Latencies kept for the /stats percentiles; the exported histogram sees every sample.
_LATENCY_WINDOW = 10_000


class ServeStats:
    """Thread-safe counters. ``rejected`` is keyed by reason (``buffer_full``, ``malformed``,
    ...) and counts spans/log records when the body could be decoded, else requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.received: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.graded_traces: Counter[str] = Counter()
        self.verdicts: Counter[str] = Counter()
        self.late = 0
        self.skipped_self = 0
        self.unattached_logs = 0
        self.grading_errors = 0
        self.overflow_admitted = 0
        self.buffered_traces = 0
        self.buffered_spans = 0
        self.grading_inflight = 0
        self.grading_processes = 0
        self.worker_restarts = 0
        self._latency: deque[float] = deque(maxlen=_LATENCY_WINDOW)

    def add(self, field: str, key: str, n: int = 1) -> None:
        with self._lock:
            getattr(self, field)[key] += n

    def incr(self, field: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, field, getattr(self, field) + n)

    def graded(self, reason: str, verdicts: list[str], latency_s: float) -> None:
        """One trace graded: ``verdicts`` are its verdicts' ``pass``/``fail``/``error``."""
        with self._lock:
            self.graded_traces[reason] += 1
            for v in verdicts:
                self.verdicts[v] += 1
            self._latency.append(latency_s)

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready view (``GET /stats``), latencies in milliseconds."""
        with self._lock:
            lat = sorted(self._latency)

            def pct(q: float) -> float | None:
                return round(lat[min(int(q * len(lat)), len(lat) - 1)] * 1000, 3) if lat else None

            return {
                "received": dict(self.received),
                "requests": dict(self.requests),
                "rejected": dict(self.rejected),
                "late": self.late,
                "skipped_self_telemetry": self.skipped_self,
                "unattached_logs": self.unattached_logs,
                "graded_traces": dict(self.graded_traces),
                "verdicts": dict(self.verdicts),
                "grading_errors": self.grading_errors,
                "overflow_admitted": self.overflow_admitted,
                "buffered_traces": self.buffered_traces,
                "buffered_spans": self.buffered_spans,
                "grading_inflight": self.grading_inflight,
                "grading_processes": self.grading_processes,
                "worker_restarts": self.worker_restarts,
                "latency_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)},
            }
