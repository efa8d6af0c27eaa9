"""A counting OTLP/HTTP sink in its own process, so its CPU is never charged to the grader.

Prints ``{"endpoint": "http://127.0.0.1:PORT"}`` on stdout once listening (port 0, i.e.
ephemeral), then answers each line read on stdin with the counts so far as one JSON line
(``{"spans": N, "log_records": N, "requests": N}``); exits at end of stdin. Bodies are parsed
with the stock OTLP classes and counted, not stored: G4 must prove count in = count out
without the sink's memory growing with the run.
"""

from __future__ import annotations

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

counts = {"spans": 0, "log_records": 0, "requests": 0}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        spans = logs = 0
        reply: bytes
        if self.path.endswith("/v1/traces"):
            req = ExportTraceServiceRequest.FromString(body)
            spans = sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
            reply = ExportTraceServiceResponse().SerializeToString()
        elif self.path.endswith("/v1/logs"):
            lreq = ExportLogsServiceRequest.FromString(body)
            logs = sum(len(sl.log_records) for rl in lreq.resource_logs for sl in rl.scope_logs)
            reply = ExportLogsServiceResponse().SerializeToString()
        else:
            reply = ExportMetricsServiceResponse().SerializeToString()
        with lock:
            counts["spans"] += spans
            counts["log_records"] += logs
            counts["requests"] += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"endpoint": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    for _ in sys.stdin:
        with lock:
            print(json.dumps(counts), flush=True)
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
