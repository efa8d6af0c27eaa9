"""OTLP/gRPC sending on grpcio: one unary call per request, the request bytes passed
through as they are (no message object is built). The rules are ``_transport``'s."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
from google.rpc.error_details_pb2 import RetryInfo

from otel_oracles.emit._transport import Attempt, OtlpTarget, Payload, Sender, Signal

_GRPC_METHODS: dict[Signal, str] = {
    "traces": "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    "logs": "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    "metrics": "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
}
_RETRYABLE_GRPC = frozenset(
    {
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
_RETRY_INFO = "google.rpc.retryinfo-bin"


def _read(path: str | None) -> bytes | None:
    if not path:
        return None
    with open(path, "rb") as fh:
        return fh.read()


class GrpcSender(Sender):
    """OTLP/gRPC: one unary call per request on a grpcio channel; the request bytes are sent
    as they are (no message object is built)."""

    def __init__(self, target: OtlpTarget) -> None:
        super().__init__(target)
        self._lock = threading.Lock()
        self._metadata = tuple(target.headers.items())
        self._channel: grpc.Channel | None = None
        self._call: Callable[..., Any] | None = None

    def _open(self) -> Callable[..., Any]:
        with self._lock:
            if self._call is None:
                t = self.target
                compression = grpc.Compression.Gzip if t.compression == "gzip" else None
                if t.tls:
                    credentials = grpc.ssl_channel_credentials(
                        root_certificates=_read(t.certificate),
                        private_key=_read(t.client_key),
                        certificate_chain=_read(t.client_certificate),
                    )
                    self._channel = grpc.secure_channel(
                        t.endpoint, credentials, compression=compression
                    )
                else:
                    self._channel = grpc.insecure_channel(t.endpoint, compression=compression)
                # No serializers: requests and responses stay bytes.
                self._call = self._channel.unary_unary(_GRPC_METHODS[t.signal])
            return self._call

    def _reopen(self) -> None:
        with self._lock:
            if self._channel is not None:
                self._channel.close()
            self._channel = self._call = None

    def _compressed(self, payload: Payload) -> bytes:
        """The request as ``bytes``: grpcio sends nothing else (a ``memoryview`` of a
        ``ProtoRequest``'s buffer is copied here; gRPC compresses on its channel)."""
        return bytes(payload)

    def _attempt(self, body: Payload, timeout_s: float, attempt_no: int) -> Attempt:
        try:
            self._open()(body, metadata=self._metadata, timeout=timeout_s)
        except grpc.RpcError as error:
            code = error.code()
            if code is grpc.StatusCode.UNAVAILABLE and attempt_no == 0:
                self._reopen()
            return Attempt(
                False,
                f"{code.name}: {error.details()}",
                code in _RETRYABLE_GRPC,
                _retry_info(error),
            )
        return Attempt(True)

    def shutdown(self) -> None:
        super().shutdown()
        self._reopen()


def _retry_info(error: grpc.RpcError) -> float | None:
    """The delay a ``google.rpc.RetryInfo`` trailer asks for, if the receiver sent one."""
    for key, value in error.trailing_metadata() or ():
        if key == _RETRY_INFO:
            info = RetryInfo.FromString(value)
            return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return None
