"""A minimal OTLP/HTTP sink on 127.0.0.1 (ephemeral port) that keeps every request body.

The coding-agent CLIs export their own telemetry (logs, metrics and, for some, traces) to
``<endpoint>/v1/{logs,metrics,traces}``; the sink answers each with an empty success and keeps
``(signal, content type, body)`` in arrival order, so the capture can be written exactly as
the exporter sent it. ``with OtlpSink() as endpoint:`` serves until the block ends.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Received:
    signal: str
    """``logs``, ``metrics`` or ``traces``, from the request path."""
    content_type: str
    body: bytes
    """Uncompressed request body."""


class OtlpSink:
    def __init__(self) -> None:
        self.received: list[Received] = []
        lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self._body()
                if self.headers.get("Content-Encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                signal = self.path.rstrip("/").rsplit("/", 1)[-1]
                content_type = self.headers.get("Content-Type", "")
                with lock:
                    sink.received.append(Received(signal, content_type, body))
                ok = b"{}" if "json" in content_type else b""
                self.send_response(200)
                self.send_header("Content-Type", content_type or "application/x-protobuf")
                self.send_header("Content-Length", str(len(ok)))
                self.end_headers()
                self.wfile.write(ok)

            def _body(self) -> bytes:
                """The request body, sent with a length or chunked (Bun's fetch chunks)."""
                if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                    return self.rfile.read(int(self.headers.get("Content-Length", 0)))
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class OtlpGrpcSink:
    """The same sink for exporters that speak OTLP over gRPC only (eino-ext's APMPlus handler):
    a gRPC server on 127.0.0.1 (ephemeral port, no TLS) answering the trace, metrics and logs
    services' ``Export`` with an empty success. The request bytes are kept undecoded (the
    handlers take no deserializer), so ``received`` holds each body exactly as sent, with the
    content type ``application/x-protobuf`` the HTTP sink records for protobuf bodies.
    ``with OtlpGrpcSink() as endpoint:`` serves until the block ends; ``endpoint`` is
    ``127.0.0.1:<port>``, as gRPC exporters take it."""

    SERVICES: ClassVar[dict[str, str]] = {
        "traces": "opentelemetry.proto.collector.trace.v1.TraceService",
        "metrics": "opentelemetry.proto.collector.metrics.v1.MetricsService",
        "logs": "opentelemetry.proto.collector.logs.v1.LogsService",
    }

    def __init__(self) -> None:
        from concurrent import futures

        import grpc

        self.received: list[Received] = []
        lock = threading.Lock()

        def keeper(signal: str) -> Any:
            def export(body: bytes, _context: Any) -> bytes:
                with lock:
                    self.received.append(Received(signal, "application/x-protobuf", body))
                return b""  # an empty Export*ServiceResponse: everything accepted

            return grpc.unary_unary_rpc_method_handler(export)

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(service, {"Export": keeper(signal)})
                for signal, service in self.SERVICES.items()
            ]
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    def __enter__(self) -> str:
        self.server.start()
        return f"127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.stop(grace=None)
