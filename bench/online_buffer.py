"""``serve``'s receiving process without its sockets: receive and release cost per span, and
the memory each buffered span holds, for one or more source trees side by side.

For each request of a collector-framed protobuf file (``bench/gen_traces.py``'s
``traces.binpb``), a fresh process per run (the ``otel_oracles`` package of the tree given
with ``--tree`` imported) calls that tree's ``GradingServer.ingest`` as ``serve`` does with
grading in worker processes (decode for transfer, drop the grader's own telemetry, check
the trace count, offer to the online assembler, append to a real spool unless
``--no-spool``), with limits high enough that nothing is refused and a decision wait long
enough that nothing is released meanwhile. Then every trace is released (``due`` far in
the future) and each body's bytes are read once, as the send threads do for the workers.
Per run:

- ``receive_us_per_span``: CPU seconds of the receive loop / spans buffered;
- ``release_us_per_span``: CPU seconds of releasing every trace and reading its bodies;
- ``settle_us_per_span``: CPU seconds of settling every trace in the spool once graded, in
  batches of ``--settle-batch`` traces (one transaction each, as each batch of results
  does in ``serve``);
- ``bytes_per_buffered_span``: RSS growth while everything is buffered / spans buffered
  (the request bodies included, as a receiver reads each one into a new bytes object);
- ``body_bytes_per_span``: the request bytes alone / spans.

Runs of the trees are interleaved; the summary prints medians per tree.

    git worktree add --detach /tmp/before <commit>   # plus its built _native module
    python bench/online_buffer.py --tree before=/tmp/before --tree after=. --runs 5

Prints one JSON object (also written to bench/out/online_buffer.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import functools, gc, json, os, struct, sys, tempfile, time
from pathlib import Path

import otel_oracles
assert otel_oracles.__file__.startswith(os.environ["PYTHONPATH"]), otel_oracles.__file__
from otel_oracles.emit import own_telemetry_check
from otel_oracles.server import _wiring
from otel_oracles.server._service import GradingServer
from otel_oracles.server._spool import spool_for
from otel_oracles.server.config import ServeSettings

data_path, spool_on = Path(sys.argv[1]), sys.argv[2] == "spool"
data = data_path.read_bytes()
frames, pos = [], 0
while pos < len(data):
    (n,) = struct.unpack(">I", data[pos : pos + 4])
    frames.append((pos + 4, n))
    pos += 4 + n
settings = ServeSettings.model_validate({
    "assembly": {"max_traces": 1_000_000, "max_buffered_spans": 10_000_000},
    "grading": {"contracts": [str(data_path.parent)]},
    "spool": {"enabled": spool_on, "path": tempfile.mkdtemp() + "/spool",
              "max_bytes": 1 << 40},
})


class Backend:
    # Nothing is graded here: the bench stops where the workers would take over.
    processes, restarts, inflight = 2, 0, 0
    def start(self): pass
    def free_slots(self): return 0
    def submit(self, traces): pass
    def tick(self): pass
    def wait_idle(self, timeout): return True
    def stop(self, timeout): pass


class Emitter:
    def export(self, results): pass
    def force_flush(self, timeout_millis=0): return True
    def shutdown(self): pass


server = GradingServer(
    settings, grade=None, emitter=Emitter(),
    decode=functools.partial(_wiring._decode, for_transfer=True),
    is_own=own_telemetry_check(settings.self_telemetry.skip_service_names),
    backend=lambda _server: Backend(), spool=spool_for(settings) if spool_on else None,
)
if server.spool is not None:
    server.spool.open()
server._state = "running"


def rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


gc.collect()
rss0 = rss()
cpu0 = time.process_time()
for start, n in frames:
    # A new bytes object per request, as a receiver gets it from its socket.
    server.ingest(data[start : start + n], "application/x-protobuf", "traces", "http")
cpu1 = time.process_time()
rss1 = rss()
assembler = server.assembler
spans = assembler.buffered_items
body_bytes = sum(n for _, n in frames)
cpu2 = time.process_time()
released = assembler.due(now=time.monotonic() + 10 * settings.assembly.max_trace_age)
# What the send threads then read of each body once (from memory, or from the spool).
bodies = {}
for ready in released:
    for span in ready.spans:
        if span.body.id not in bodies:
            bodies[span.body.id] = len(span.body.payload)
cpu3 = time.process_time()
assert sum(len(r.spans) for r in released) == spans and sum(bodies.values()) == body_bytes
# Their results exported, the traces leave the spool in batches as the workers' results
# arrive (GradingServer.record_graded); the last batch frees every request.
settle_batch = int(sys.argv[3])
if server.spool is not None:
    for i in range(0, len(released), settle_batch):
        server.spool.settle(
            [t for ready in released[i : i + settle_batch] for t in ready.trace_ids],
            exported=True,
        )
    assert server.spool.requests_held == 0
cpu4 = time.process_time()
print(json.dumps({
    "spans": spans,
    "traces": len(released),
    "receive_us_per_span": (cpu1 - cpu0) / spans * 1e6,
    "release_us_per_span": (cpu3 - cpu2) / spans * 1e6,
    "settle_us_per_span": (cpu4 - cpu3) / spans * 1e6,
    "bytes_per_buffered_span": (rss1 - rss0) / spans,
    "body_bytes_per_span": body_bytes / spans,
}))
"""


def run_once(tree: Path, data: Path, spool: bool, settle_batch: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    # -P: the tree on PYTHONPATH is imported, never an otel_oracles in the working directory.
    mode = "spool" if spool else "memory"
    done = subprocess.run(
        [sys.executable, "-P", "-c", _CHILD, str(data), mode, str(settle_batch)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", required=True, metavar="NAME=PATH",
        help="a directory holding the otel_oracles package to measure (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--data", type=Path, default=HERE / "out" / "data-2000-c64" / "traces.binpb",
        help="collector-framed protobuf requests (bench/gen_traces.py)",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--settle-batch", type=int, default=16,
        help="traces settled per spool transaction (serve: one per batch of results)",
    )  # fmt: skip
    parser.add_argument(
        "--no-spool", action="store_true",
        help="spool.enabled: false (request bodies stay in memory until graded)",
    )  # fmt: skip
    ns = parser.parse_args()
    trees = [(n, Path(p)) for n, _, p in (t.partition("=") for t in ns.tree)]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in trees}
    for _ in range(ns.runs):
        for name, tree in trees:
            runs[name].append(run_once(tree, ns.data, not ns.no_spool, ns.settle_batch))
    out: dict[str, object] = {"data": str(ns.data), "runs": ns.runs, "spool": not ns.no_spool}
    for name, results in runs.items():
        out[name] = {
            key: round(statistics.median(r[key] for r in results), 2) for key in results[0]
        } | {
            f"{key}_range": [round(min(r[key] for r in results), 2),
                             round(max(r[key] for r in results), 2)]
            for key in ("receive_us_per_span", "release_us_per_span", "settle_us_per_span")
        }  # fmt: skip
    text = json.dumps(out, indent=2)
    print(text)
    target = HERE / "out" / "online_buffer.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
