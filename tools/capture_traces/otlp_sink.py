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
from typing import Any


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
