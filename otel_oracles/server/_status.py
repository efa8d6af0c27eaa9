"""Every way a request can fail, and the ONE function that turns it into OTLP status.

The OTLP specification decides what a sender does next from the status alone, so this
mapping is the receiver's contract with every collector and SDK in front of it:

=====================  ==========  ======================  =========  =====================
condition              HTTP        gRPC                    retried?   why
=====================  ==========  ======================  =========  =====================
buffer full            429 +       RESOURCE_EXHAUSTED +    yes        backpressure: the
                       Retry-After RetryInfo                          sender's queue holds it
bodies in flight full  429 +       (n/a)                   yes        refused from headers,
                       Retry-After                                    connection closed
draining (SIGTERM)     503 +       UNAVAILABLE +           yes        another replica or
                       Retry-After RetryInfo                          this one after restart
no / wrong token       401         UNAUTHENTICATED         no         nothing was buffered
malformed body         400         INVALID_ARGUMENT        no         a retry cannot help
bad Content-Encoding   400         (grpc decodes itself)   no
wrong Content-Type     415         (n/a)                   no
body too large         413         RESOURCE_EXHAUSTED      no         no RetryInfo = final
too many traces        413         RESOURCE_EXHAUSTED      no         (in one request)
internal bug           500         INTERNAL                no         logged with traceback
=====================  ==========  ======================  =========  =====================

Modelled on the collector's ``receiver/otlpreceiver/internal/errors``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import code_pb2, error_details_pb2, status_pb2

from otel_oracles.assemble.online import BufferFull
from otel_oracles.errors import InputError


class InflightFull(BufferFull):
    """HTTP request bodies still arriving hold ``receivers.max_inflight_bytes`` already."""


class Unauthenticated(Exception):
    """The request carried no bearer token, or the wrong one."""


class Draining(Exception):
    """The server is shutting down and accepts nothing new."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnsupportedMediaType(Exception):
    """Content-Type is neither OTLP protobuf nor OTLP JSON."""


class BadEncoding(Exception):
    """Content-Encoding unknown, or the compressed body does not decompress."""


class TooLarge(Exception):
    """The body (compressed or not) exceeds ``receivers.max_request_bytes``."""


class TooManyTraces(TooLarge):
    """The body holds more distinct trace ids than ``receivers.max_traces_per_request``."""


@dataclass(frozen=True, slots=True)
class Status:
    """How one failure is answered on each transport."""

    http: int
    grpc: grpc.StatusCode
    message: str
    retry_after: float | None = None
    """Seconds; set only for retryable conditions."""
    kind: str = "internal"
    """Low-cardinality label for the ``rejected`` metric."""

    def retry_after_header(self) -> str:
        """HTTP ``Retry-After`` is whole seconds (RFC 9110); round up so we never undershoot."""
        return str(max(1, math.ceil(self.retry_after or 0)))

    def grpc_trailers(self) -> tuple[tuple[str, bytes], ...]:
        """``grpc-status-details-bin`` (google.rpc.Status with RetryInfo, the standard place)
        plus ``google.rpc.retryinfo-bin``, where the Python OTLP exporter looks for it."""
        if self.retry_after is None:
            return ()
        secs = max(self.retry_after, 0.0)
        delay = Duration(seconds=int(secs), nanos=int((secs - int(secs)) * 1e9))
        info = error_details_pb2.RetryInfo(retry_delay=delay)
        detail = status_pb2.Status(code=self.grpc.value[0], message=self.message)
        detail.details.add().Pack(info)
        return (
            ("grpc-status-details-bin", detail.SerializeToString()),
            ("google.rpc.retryinfo-bin", info.SerializeToString()),
        )

    def rpc_status(self) -> status_pb2.Status:
        """The google.rpc.Status an OTLP/HTTP error body carries."""
        code = self.grpc.value[0] if self.grpc.value[0] in code_pb2.Code.values() else 2
        return status_pb2.Status(code=code, message=self.message)


def status_for(exc: BaseException) -> Status:
    """Map any failure of a request to its OTLP answer (the table in this module's doc)."""
    match exc:
        case InflightFull():
            return Status(429, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), exc.retry_after,
                          "inflight_full")  # fmt: skip
        case BufferFull():
            return Status(429, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), exc.retry_after,
                          "buffer_full")  # fmt: skip
        case Draining():
            return Status(503, grpc.StatusCode.UNAVAILABLE, str(exc), exc.retry_after, "draining")
        case Unauthenticated():
            return Status(401, grpc.StatusCode.UNAUTHENTICATED, str(exc), kind="unauthenticated")
        case InputError():
            return Status(400, grpc.StatusCode.INVALID_ARGUMENT, str(exc), kind="malformed")
        case BadEncoding():
            return Status(400, grpc.StatusCode.INVALID_ARGUMENT, str(exc), kind="bad_encoding")
        case UnsupportedMediaType():
            return Status(415, grpc.StatusCode.INVALID_ARGUMENT, str(exc), kind="content_type")
        case TooManyTraces():
            return Status(413, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), kind="too_many_traces")
        case TooLarge():
            return Status(413, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), kind="too_large")
        case _:
            return Status(500, grpc.StatusCode.INTERNAL, "internal error", kind="internal")
