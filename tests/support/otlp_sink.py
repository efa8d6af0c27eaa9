"""A real OTLP receiver for tests: gRPC and HTTP (protobuf and JSON) on 127.0.0.1, port 0.

Why a real one: the emitter, ``serve`` and the collector end-to-end tests must prove what
actually crossed the wire (ids, attributes, counts, and that no planted secret leaked),
so the tests point the real OTel SDK exporters (or a real collector) at this sink instead
of mocking exporters.

Usage::

    from tests.support.otlp_sink import OtlpSink

    with OtlpSink() as sink:
        # gRPC: sink.grpc_endpoint == "http://127.0.0.1:<port>"
        # HTTP: sink.http_endpoint == "http://127.0.0.1:<port>" (append /v1/traces etc.)
        ...export...
        spans = sink.wait_for_spans(3, timeout=10)     # AssertionError on timeout
        logs = sink.log_records()
        assert b"secret" not in sink.all_bytes()

Contract:
- Both servers bind 127.0.0.1 on an ephemeral port and run on daemon threads.
- Every accepted request is recorded as a ``Received`` (signal, transport, the exact body
  bytes after transport decompression, the decoded ``Export*ServiceRequest``, headers).
  Recording is thread-safe; the accessors return snapshots.
- ``reject_next(n)`` makes the next ``n`` requests fail retryably (gRPC ``UNAVAILABLE``,
  HTTP 503) without recording them, for retry/backpressure tests.
- OTLP/JSON bodies follow the OTLP rules (hex ids, integer enums); they are converted to the
  same protobuf request classes, so tests assert on one shape whatever the encoding.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
import zlib
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

Signal = Literal["traces", "logs", "metrics"]

_REQUESTS: dict[Signal, tuple[type[Message], type[Message], str]] = {
    "traces": (
        trace_service_pb2.ExportTraceServiceRequest,
        trace_service_pb2.ExportTraceServiceResponse,
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    ),
    "logs": (
        logs_service_pb2.ExportLogsServiceRequest,
        logs_service_pb2.ExportLogsServiceResponse,
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    ),
    "metrics": (
        metrics_service_pb2.ExportMetricsServiceRequest,
        metrics_service_pb2.ExportMetricsServiceResponse,
        "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
    ),
}
_HTTP_PATHS: dict[str, Signal] = {
    "/v1/traces": "traces",
    "/v1/logs": "logs",
    "/v1/metrics": "metrics",
}
_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


@dataclass(frozen=True)
class Received:
    """One accepted export request."""

    signal: Signal
    transport: Literal["grpc", "http"]
    content_type: str
    """``application/grpc``, ``application/x-protobuf`` or ``application/json``."""
    body: bytes
    """Exactly the bytes received, after transport decompression (gzip/deflate)."""
    request: Any
    """The decoded ``Export{Trace,Logs,Metrics}ServiceRequest``."""
    headers: dict[str, str] = field(default_factory=dict)
    """Lower-cased header / gRPC metadata names."""


@dataclass(frozen=True)
class SpanItem:
    """A received span with the resource and scope it came under."""

    span: Span
    resource: dict[str, Any]
    scope_name: str

    @property
    def attributes(self) -> dict[str, Any]:
        return attrs(self.span.attributes)

    @property
    def trace_id(self) -> str:
        return self.span.trace_id.hex()

    @property
    def span_id(self) -> str:
        return self.span.span_id.hex()

    @property
    def parent_span_id(self) -> str:
        return self.span.parent_span_id.hex()


@dataclass(frozen=True)
class LogItem:
    """A received log record with its resource and scope."""

    record: LogRecord
    resource: dict[str, Any]
    scope_name: str

    @property
    def attributes(self) -> dict[str, Any]:
        return attrs(self.record.attributes)

    @property
    def trace_id(self) -> str:
        return self.record.trace_id.hex()

    @property
    def span_id(self) -> str:
        return self.record.span_id.hex()


@dataclass(frozen=True)
class MetricItem:
    """A received metric (all its data points) with its resource and scope."""

    metric: Metric
    resource: dict[str, Any]
    scope_name: str

    def points(self) -> list[tuple[dict[str, Any], Any]]:
        """(attributes, data point) for every point, whatever the metric type."""
        kind = self.metric.WhichOneof("data")
        if kind is None:
            return []
        return [(attrs(p.attributes), p) for p in getattr(self.metric, kind).data_points]


def any_value(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attrs(value.kvlist_value.values)
    return getattr(value, kind)


def attrs(kvs: Any) -> dict[str, Any]:
    """A repeated ``KeyValue`` as a dict."""
    return {kv.key: any_value(kv.value) for kv in kvs}


def _hex_ids_to_b64(node: Any) -> Any:
    """OTLP/JSON ids are hex; protobuf's JSON parser wants base64 for bytes fields."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                out[key] = base64.b64encode(bytes.fromhex(value)).decode() if value else ""
            else:
                out[key] = _hex_ids_to_b64(value)
        return out
    if isinstance(node, list):
        return [_hex_ids_to_b64(v) for v in node]
    return node


def parse_otlp_json(signal: Signal, body: bytes) -> Message:
    """Decode an OTLP/JSON request body (hex ids, integer or named enums)."""
    request_cls = _REQUESTS[signal][0]
    data = _hex_ids_to_b64(json.loads(body))
    return json_format.ParseDict(data, request_cls(), ignore_unknown_fields=True)


class OtlpSink:
    """gRPC + HTTP OTLP receiver collecting every request (see module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._received: list[Received] = []
        self._reject = 0
        self._grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._grpc_server.add_generic_rpc_handlers((self._grpc_handlers(),))
        self.grpc_port = self._grpc_server.add_insecure_port("127.0.0.1:0")
        self._http_server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http_server.daemon_threads = True
        self.http_port = self._http_server.server_address[1]
        self._http_thread = threading.Thread(
            target=self._http_server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="otlp-sink-http",
            daemon=True,
        )
        self._started = False

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def grpc_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.grpc_port}"

    @property
    def http_endpoint(self) -> str:
        """Base URL; OTLP/HTTP signal paths are ``/v1/traces``, ``/v1/logs``, ``/v1/metrics``."""
        return f"http://127.0.0.1:{self.http_port}"

    def start(self) -> OtlpSink:
        if not self._started:
            self._grpc_server.start()
            self._http_thread.start()
            self._started = True
        return self

    def stop(self) -> None:
        """Stop both servers; safe to call twice."""
        if self._started:
            self._grpc_server.stop(grace=None).wait(5)
            self._http_server.shutdown()
            self._http_server.server_close()
            self._started = False

    def __enter__(self) -> OtlpSink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- recording -------------------------------------------------------------------------

    def reject_next(self, count: int) -> None:
        """Fail the next ``count`` requests retryably (gRPC UNAVAILABLE / HTTP 503)."""
        with self._lock:
            self._reject = count

    def _take_reject(self) -> bool:
        with self._lock:
            if self._reject > 0:
                self._reject -= 1
                return True
            return False

    def _record(self, item: Received) -> None:
        with self._lock:
            self._received.append(item)
            self._lock.notify_all()

    def clear(self) -> None:
        with self._lock:
            self._received.clear()

    # ---- accessors (snapshots) -------------------------------------------------------------

    def requests(self, signal: Signal | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self._received if signal is None or r.signal == signal]

    def all_bytes(self) -> bytes:
        """Every received body concatenated (for grepping what left the process)."""
        return b"\n".join(r.body for r in self.requests())

    def spans(self) -> list[SpanItem]:
        out = []
        for req in self.requests("traces"):
            for rs in req.request.resource_spans:
                res = attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    out.extend(SpanItem(s, res, ss.scope.name) for s in ss.spans)
        return out

    def log_records(self) -> list[LogItem]:
        out = []
        for req in self.requests("logs"):
            for rl in req.request.resource_logs:
                res = attrs(rl.resource.attributes)
                for sl in rl.scope_logs:
                    out.extend(LogItem(r, res, sl.scope.name) for r in sl.log_records)
        return out

    def metrics(self, name: str | None = None) -> list[MetricItem]:
        out = []
        for req in self.requests("metrics"):
            for rm in req.request.resource_metrics:
                res = attrs(rm.resource.attributes)
                for sm in rm.scope_metrics:
                    out.extend(
                        MetricItem(m, res, sm.scope.name)
                        for m in sm.metrics
                        if name is None or m.name == name
                    )
        return out

    # ---- waiting ---------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[OtlpSink], bool], timeout: float = 10.0) -> bool:
        """Block until ``predicate(self)`` is true (re-checked on every request); False on
        timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                # The predicate uses the accessors, which take the (re-entrant) lock.
                if predicate(self):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(min(remaining, 0.2))

    def wait_for_spans(self, count: int, timeout: float = 10.0) -> list[SpanItem]:
        """At least ``count`` spans, or AssertionError naming what arrived."""
        if not self.wait_for(lambda s: len(s.spans()) >= count, timeout):
            raise AssertionError(f"expected >= {count} spans, got {len(self.spans())}")
        return self.spans()

    def wait_for_logs(self, count: int, timeout: float = 10.0) -> list[LogItem]:
        """At least ``count`` log records, or AssertionError naming what arrived."""
        if not self.wait_for(lambda s: len(s.log_records()) >= count, timeout):
            raise AssertionError(f"expected >= {count} log records, got {len(self.log_records())}")
        return self.log_records()

    def wait_for_metric(self, name: str, timeout: float = 10.0) -> list[MetricItem]:
        """At least one metric named ``name``, or AssertionError listing the names seen."""
        if not self.wait_for(lambda s: bool(s.metrics(name)), timeout):
            seen = sorted({m.metric.name for m in self.metrics()})
            raise AssertionError(f"metric {name!r} not received; got {seen}")
        return self.metrics(name)

    # ---- transports ------------------------------------------------------------------------

    def _grpc_handlers(self) -> grpc.GenericRpcHandler:
        by_service: dict[str, grpc.RpcMethodHandler] = {}
        for signal, (request_cls, response_cls, method) in _REQUESTS.items():

            def export(
                raw: bytes,
                context: grpc.ServicerContext,
                signal: Signal = signal,
                request_cls: type[Message] = request_cls,
                response_cls: type[Message] = response_cls,
            ) -> bytes:
                if self._take_reject():
                    context.abort(grpc.StatusCode.UNAVAILABLE, "otlp sink: rejecting on request")
                request = request_cls()
                try:
                    request.ParseFromString(raw)
                except DecodeError as exc:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad protobuf: {exc}")
                headers = {k.lower(): str(v) for k, v in context.invocation_metadata()}
                self._record(Received(signal, "grpc", "application/grpc", raw, request, headers))
                return response_cls().SerializeToString()

            # No (de)serializers: the handler sees the exact bytes that were sent.
            by_service[method.split("/")[1]] = grpc.unary_unary_rpc_method_handler(export)
        return _MultiServiceHandler(by_service)

    def _handle_http(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, str, bytes]:
        signal = _HTTP_PATHS.get(path)
        if signal is None:
            return 404, "text/plain", b"unknown OTLP path"
        if self._take_reject():
            return 503, "text/plain", b"otlp sink: rejecting on request"
        encoding = headers.get("content-encoding", "").lower()
        try:
            if encoding == "gzip":
                raw = gzip.decompress(raw)
            elif encoding == "deflate":
                raw = zlib.decompress(raw)
        except (OSError, zlib.error) as exc:
            return 400, "text/plain", f"bad {encoding} body: {exc}".encode()
        ctype = headers.get("content-type", "application/x-protobuf").split(";")[0].strip()
        request_cls, response_cls, _ = _REQUESTS[signal]
        try:
            if ctype == "application/json":
                request = parse_otlp_json(signal, raw)
            else:
                request = request_cls()
                request.ParseFromString(raw)
        except (DecodeError, json_format.ParseError, ValueError) as exc:
            return 400, "text/plain", f"bad {ctype} body: {exc}".encode()
        self._record(Received(signal, "http", ctype, raw, request, headers))
        if ctype == "application/json":
            return 200, ctype, b"{}"
        return 200, "application/x-protobuf", response_cls().SerializeToString()


class _MultiServiceHandler(grpc.GenericRpcHandler):
    """Routes ``/<service>/Export`` to the per-signal handler, with raw bytes in and out so
    the sink records exactly what was sent."""

    def __init__(self, by_service: dict[str, grpc.RpcMethodHandler]) -> None:
        self._by_service = by_service

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        parts = handler_call_details.method.split("/")  # type: ignore[attr-defined]
        if len(parts) == 3 and parts[2] == "Export":
            return self._by_service.get(parts[1])
        return None


def _handler_for(sink: OtlpSink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, ctype, body = sink._handle_http(self.path.split("?")[0], headers, raw)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Keep test output quiet."""

    return Handler
