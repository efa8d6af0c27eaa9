"""What serve's receiving process spends per span, its sockets aside, in one process.

``serve_worker.py`` counts a grading worker; this counts the receiving process's own work on
the serve data set's protobuf requests (bench/serve_load.py's data), driven in-process so
that it can run under ``valgrind --tool=cachegrind``:

- each body through ``GradingServer.ingest`` as the OTLP/HTTP handler calls it (decode for
  transfer, the grader's own telemetry dropped, the trace count checked, offered to the
  online assembler, appended to a real spool, fsync'd);
- a sweep after each body on a clock advancing 32 ms a body (~16,000 spans/s), as
  ``serve_worker.py prepare``: the decision wait and the join window, traces handed to
  ``ProcessGrading`` (the real one, its workers stand-ins with no process), and each
  worker's message made as its send thread makes it (bodies read back from the spool, cut
  to the worker's spans, pickled);
- the previous sweep's traces reported graded, two verdict lines each (``_graded``:
  settled in the spool in one transaction, counted, one ``verdict`` log line per verdict in
  serve's JSON format, written to /dev/null).

What it leaves out: aiohttp (parsing HTTP, reading the body), the pipes and the event loop.

    valgrind --tool=cachegrind python bench/serve_receive.py run     # everything above
    valgrind --tool=cachegrind python bench/serve_receive.py setup   # start-up and reading only

(PYTHONHASHSEED=0). (run - setup) / the span count printed is the receiving process's cost
per span, sockets aside; ``--no-spool`` and ``--no-log`` take those parts out to see them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from framed import first_bodies

HERE = Path(__file__).resolve().parent
STEP_S = 0.032
"""Clock advance per body: ~512-span requests at ~16,000 spans/s, one sweep a body."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["setup", "run"])
    ap.add_argument("--bodies", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-spool", action="store_true", help="spool.enabled: false")
    ap.add_argument("--no-log", action="store_true", help="log_level: warning (no verdict lines)")
    ap.add_argument("--data", type=Path, default=HERE / "out" / "serve-data-5000" / "traces.binpb")
    args = ap.parse_args()

    from otel_oracles.cli import StartUpGc
    from otel_oracles.emit import own_telemetry_check
    from otel_oracles.server import _wiring
    from otel_oracles.server._grading import VerdictLine
    from otel_oracles.server._logging import configure_logging
    from otel_oracles.server._processes import ProcessGrading, _message, _Worker
    from otel_oracles.server._service import GradingServer
    from otel_oracles.server._spool import spool_for
    from otel_oracles.server.config import ServeSettings

    bodies = first_bodies(args.data, args.bodies)
    settings = ServeSettings.model_validate({
        "assembly": {"decision_wait": "0.2s", "join_window": "0.5s", "max_trace_age": "120s",
                     "max_traces": 50_000, "max_buffered_spans": 2_000_000},
        "grading": {"contracts": [str(HERE / "contracts")], "processes": args.workers},
        "spool": {"enabled": not args.no_spool, "path": tempfile.mkdtemp() + "/spool"},
        "log_level": "warning" if args.no_log else "info",
    })  # fmt: skip
    stderr, sys.stderr = sys.stderr, open(os.devnull, "w")  # noqa: SIM115
    configure_logging(settings.log_level, settings.log_format)  # verdict lines: written, dropped
    sys.stderr = stderr
    logging.getLogger("otel_oracles.server._service").setLevel(settings.log_level.upper())

    class Emitter:
        metrics = None

        def export(self, results: Any) -> None: ...
        def force_flush(self, timeout_millis: int = 0) -> bool:
            return True

        def shutdown(self) -> None: ...

    grading: list[ProcessGrading] = []

    def backend(server: GradingServer) -> ProcessGrading:
        g = ProcessGrading(settings, args.workers, 2, 64, server.record_graded,
                           server.record_crash, None)  # fmt: skip
        g._workers = [_Worker(i, None, None) for i in range(args.workers)]  # type: ignore[arg-type]
        grading.append(g)
        return g

    server = GradingServer(
        settings, grade=None, emitter=Emitter(),
        decode=lambda b, ct, s: _wiring._decode(b, ct, s, for_transfer=True),
        is_own=own_telemetry_check(settings.self_telemetry.skip_service_names),
        backend=backend, spool=spool_for(settings),
    )  # fmt: skip
    clock = [0.0]
    server.assembler._clock = lambda: clock[0]
    assert server.joiner is not None
    server.joiner._clock = lambda: clock[0]
    if server.spool is not None:
        server.spool.open()
    server._state = "running"
    pg = grading[0]
    StartUpGc.settle()  # as serve's ``main`` leaves the collector for the command
    lines = [VerdictLine("coding-agent@1", "pass"), VerdictLine("any-agent@1", "pass")]
    if args.mode == "setup":
        print(json.dumps({"bodies": len(bodies)}))
        return

    spans = traces = sent = 0
    for body in bodies:
        clock[0] += STEP_S
        server.ingest(body, "application/x-protobuf", "traces", "http")
        spans += server.stats.snapshot()["received"]["http.traces"] - spans
        # The workers report what they were sent by the previous sweep, all graded.
        for w in pg._workers:
            tokens = list(w.inflight)
            if tokens:
                pg._graded(w, [(t, lines) for t in tokens], None, True)
                traces += len(tokens)
        server._sweep_once()
        for w in pg._workers:
            while not w.outbox.empty():
                msg = w.outbox.get()
                assert msg is not None
                sent += len(_message(msg, pg._payload))
    print(json.dumps({"bodies": len(bodies), "spans": spans, "traces_graded": traces,
                      "bytes_to_workers": sent}))  # fmt: skip


if __name__ == "__main__":
    main()
