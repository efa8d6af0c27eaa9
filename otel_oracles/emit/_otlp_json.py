"""OTLP/JSON lines files, in the collector ``file`` exporter's format.

One OTLP/JSON object per line, one line per exported batch: ``{"resourceSpans": ...}``,
``{"resourceLogs": ...}`` or ``{"resourceMetrics": ...}``, all three signals in one file, so
the collector's ``otlpjsonfile`` receiver (or any OTLP/HTTP JSON endpoint) can load results
later. Encoding is strict OTLP/JSON: hex ids, integer enums, 64-bit integers as strings,
lowerCamelCase keys. Every line is written by the compiled core (``otel_oracles._native``):
spans and log records from the emitter's own records (``_records``), metrics from the
collections of its metric readers (``_metric_data``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO, Any

from otel_oracles._native import encode_logs_json, encode_metrics_json, encode_spans_json
from otel_oracles.emit._metric_data import MetricsData
from otel_oracles.emit._metric_export import OwnMetricExporter
from otel_oracles.emit._records import ItemBatch
from otel_oracles.emit._sinks import RecordSignal, Sink


class OtlpJsonLinesFile:
    """One file shared by the three signal exporters; each write is one whole line.
    Thread-safe. The file is created (truncated) on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fh: IO[bytes] | None = path.open("wb")
        self._users = 0

    def write(self, line_json: bytes) -> bool:
        """Append one line: an OTLP/JSON object's bytes."""
        line = line_json + b"\n"
        with self._lock:
            if self._fh is None:
                return False
            self._fh.write(line)
            return True

    def flush(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.flush()

    def acquire(self) -> OtlpJsonLinesFile:
        """Register one more exporter; the file closes when the last one shuts down."""
        with self._lock:
            self._users += 1
        return self

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users <= 0 and self._fh is not None:
                self._fh.close()
                self._fh = None


class JsonLinesSink(Sink):
    """Grade spans and evaluation log records as lines of the results file."""

    name = "OTLP/JSON lines file"

    def __init__(self, out: OtlpJsonLinesFile) -> None:
        self._out = out.acquire()
        self._shutdown = False

    def export(self, signal: RecordSignal, batch: ItemBatch[Any]) -> bool:
        if self._shutdown:
            return False
        line = encode_spans_json(batch) if signal == "traces" else encode_logs_json(batch)
        return self._out.write(line)

    def shutdown(self) -> None:
        if not self._shutdown:
            self._shutdown = True
            self._out.release()


class JsonLinesMetricExporter(OwnMetricExporter):
    """Metrics as lines of the results file (cumulative, as the collector writes them)."""

    def __init__(self, out: OtlpJsonLinesFile) -> None:
        super().__init__()
        self._out = out.acquire()

    def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
        return self._out.write(encode_metrics_json(metrics_data))

    def force_flush(self, timeout_s: float) -> bool:
        self._out.flush()
        return True

    def shutdown(self, timeout_s: float) -> None:
        if not self.shut_down:
            super().shutdown(timeout_s)
            self._out.release()
