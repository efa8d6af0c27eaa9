"""Memory of one request body of many tiny traces, before and after, side by side.

A body of one-span traces is the cheapest way to make ``serve`` build per-trace objects: in
the assembler (a buffered entry, its span list) and in the spool (one row per trace). This
bench decodes such a body as the receiver does (``for_transfer``), offers it to an
``OnlineAssembler`` with ``serve``'s defaults and appends it to a real spool, in a fresh
process per run, with the ``otel_oracles`` package of each tree given (``--tree``, e.g. the
current checkout and an older commit extracted with ``git archive``). Per run it records
the peak of Python allocations (tracemalloc) and the growth of the process's peak RSS
while ingesting; the summary prints medians per tree. Where the tree enforces
``receivers.max_traces_per_request``, the body is first checked against it (the receiver
does so before buffering) and the result says whether it was refused.

    git archive f436b9c otel_oracles | tar -x -C /tmp/before
    python bench/many_traces_memory.py --tree before=/tmp/before --tree after=. --traces 200000

Prints one JSON object (also written to bench/out/many_traces_memory.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import json, os, resource, sys, tempfile, tracemalloc
from pathlib import Path

import otel_oracles
assert otel_oracles.__file__.startswith(os.environ["PYTHONPATH"]), otel_oracles.__file__

body = Path(sys.argv[1]).read_bytes()
cap_mode = sys.argv[2]
from otel_oracles.assemble.online import OnlineAssembler
from otel_oracles.decode import decode
from otel_oracles.server._spool import Spool
from otel_oracles.server.config import ServeSettings

settings = ServeSettings()
a = settings.assembly
assembler = OnlineAssembler(
    decision_wait=a.decision_wait, max_trace_age=a.max_trace_age, max_traces=a.max_traces,
    max_buffered_spans=a.max_buffered_spans, max_spans_per_trace=a.max_spans_per_trace,
    decision_cache_size=a.decision_cache_size, overflow_traces=a.overflow_traces,
)
spool = Spool(Path(tempfile.mkdtemp()) / "spool", 1 << 40, "bench")
spool.open()
cap = getattr(settings.receivers, "max_traces_per_request", None)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
batch = decode(body, "application/x-protobuf", for_transfer=True)
refused = False
if cap is not None and cap_mode == "default":
    from otel_oracles.server._service import _check_trace_count
    from otel_oracles.server._status import TooManyTraces
    try:
        _check_trace_count(batch.spans, batch.logs, cap)
    except TooManyTraces:
        refused = True
if not refused:
    admission = assembler.offer(batch.spans, batch.logs)
    spool.append("traces", "application/x-protobuf", body, admission.traces)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "refused": refused,
    "buffered_traces": assembler.buffered_traces,
    "traced_peak_mb": peak / 1e6,
    "rss_growth_mb": (rss1 - rss0) / 1e3,
}))
"""


def make_body(traces: int, path: Path) -> int:
    """A protobuf ExportTraceServiceRequest of ``traces`` one-span traces (a root span each,
    with one attribute), written to ``path``; its size."""
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    req = trace_service_pb2.ExportTraceServiceRequest()
    scope = req.resource_spans.add().scope_spans.add()
    for i in range(traces):
        span = scope.spans.add()
        span.trace_id = os.urandom(16)
        span.span_id = os.urandom(8)
        span.name = "chat"
        span.start_time_unix_nano = 1_700_000_000_000_000_000 + i
        span.end_time_unix_nano = span.start_time_unix_nano + 1000
        attr = span.attributes.add()
        attr.key = "gen_ai.operation.name"
        attr.value.string_value = "chat"
    data = req.SerializeToString()
    path.write_bytes(data)
    return len(data)


def run_once(tree: Path, body: Path, cap_mode: str) -> dict[str, float | bool | int]:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    # -P: the tree on PYTHONPATH is imported, never an otel_oracles in the working directory.
    done = subprocess.run(
        [sys.executable, "-P", "-c", _CHILD, str(body), cap_mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float | bool | int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", required=True, metavar="NAME=PATH",
        help="a directory holding the otel_oracles package to measure (repeatable)",
    )  # fmt: skip
    parser.add_argument("--traces", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    trees = [(n, Path(p)) for n, _, p in (t.partition("=") for t in ns.tree)]
    out: dict[str, object] = {"traces": ns.traces, "runs": ns.runs}
    with tempfile.TemporaryDirectory() as tmp:
        body = Path(tmp) / "body.pb"
        out["body_mb"] = make_body(ns.traces, body) / 1e6
        rows: dict[str, dict[str, object]] = {}
        for name, tree in trees:
            for cap_mode in ("default", "raised"):
                runs = [run_once(tree, body, cap_mode) for _ in range(ns.runs)]
                rows[f"{name} ({cap_mode} cap)"] = {
                    "refused": runs[0]["refused"],
                    "buffered_traces": runs[0]["buffered_traces"],
                    "traced_peak_mb": statistics.median(float(r["traced_peak_mb"]) for r in runs),
                    "rss_growth_mb": statistics.median(float(r["rss_growth_mb"]) for r in runs),
                }
        out["results"] = rows
    text = json.dumps(out, indent=2)
    print(text)
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "many_traces_memory.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
