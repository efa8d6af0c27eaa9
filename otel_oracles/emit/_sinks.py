"""Where the emitter's records go: one ``Sink`` takes every record signal.

A sink gets a batch of one signal (``traces``: grade spans, ``logs``: evaluation log records)
and says whether it was delivered; the emitter does the batching, counting and back-off for
all sinks and signals alike. The package's sinks encode the records with the native core
(``otel_oracles._native``: OTLP protobuf sent by ``_transport``'s senders, OTLP/JSON lines
in ``_otlp_json``); an SDK exporter a user supplies is wrapped by
``_sdk_adapter.SdkExporterSink``. An emitter whose sinks are all ``OtlpSink``s hands them
requests the core wrote directly (``OtlpSink.send``), not batches.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

from otel_oracles._native import encode_logs_proto, encode_spans_proto
from otel_oracles.emit._records import ItemBatch
from otel_oracles.emit._transport import Payload, Sender

RecordSignal = Literal["traces", "logs"]
RECORD_SIGNALS: tuple[RecordSignal, ...] = ("traces", "logs")
SIGNAL_NOUN: dict[RecordSignal, str] = {"traces": "spans", "logs": "log records"}
"""How messages and counts name each signal's records."""


class Sink(ABC):
    """A destination for the emitter's records (see module docstring)."""

    name: str = ""
    """For messages: what the records went through (e.g. ``OTLP http/protobuf``)."""

    def accepts(self, signal: RecordSignal) -> bool:
        """Whether this sink takes ``signal`` at all (an SDK span exporter takes no logs)."""
        return True

    @abstractmethod
    def export(self, signal: RecordSignal, batch: ItemBatch[Any]) -> bool:
        """Deliver ``batch``; False when it was not accepted (the reason is logged)."""

    @abstractmethod
    def shutdown(self) -> None:
        """Release connections and files. Idempotent."""


class OtlpSink(Sink):
    """OTLP protobuf over gRPC or HTTP: one sender per signal."""

    _encode: ClassVar[Mapping[RecordSignal, Callable[[ItemBatch[Any]], bytes]]] = {
        "traces": encode_spans_proto,
        "logs": encode_logs_proto,
    }

    def __init__(self, senders: Mapping[RecordSignal, Sender]) -> None:
        self._senders = dict(senders)
        self.name = " and ".join(
            sorted({f"OTLP {s.target.protocol}" for s in self._senders.values()})
        )

    def accepts(self, signal: RecordSignal) -> bool:
        return signal in self._senders

    def export(self, signal: RecordSignal, batch: ItemBatch[Any]) -> bool:
        return self.send(signal, self._encode[signal](batch))

    def send(self, signal: RecordSignal, request: Payload) -> bool:
        """Deliver an encoded ``Export{Trace,Logs}ServiceRequest``: the emitter writes its
        records straight into one (``ProtoRequest``) when every sink is an OTLP sink."""
        return self._senders[signal].send(request)

    def shutdown(self) -> None:
        for sender in self._senders.values():
            sender.shutdown()
