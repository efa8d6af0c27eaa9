"""What one of serve's grading worker processes spends per span, end to end, in one process.

``serve_parts.py`` measures how a worker gets its records; this runs the worker itself
(``_processes.worker_main``: unpickling messages, building records from the cut parts,
grading on its threads, exporting every verdict over OTLP/HTTP, reporting results back)
in the measured process, fed by a feeder process with the messages the receiving process
would have sent it, so the instructions of a worker alone can be counted:

    python bench/serve_worker.py prepare --workers 2 --bodies 40   # writes the messages
    valgrind --tool=cachegrind python bench/serve_worker.py run     # the worker
    valgrind --tool=cachegrind python bench/serve_worker.py idle    # start-up and stop only

(PYTHONHASHSEED=0). (run - idle) / the span count ``prepare`` prints is a worker's cost per
span. ``prepare`` plays the receiving process on the serve data set's protobuf requests
(bench/serve_load.py's data): each body offered to the online assembler on a clock advancing
32 ms a body (~16,000 spans/s), traces released after a decision wait and through a join
window (0.2 s and 0.5 s, so that traces leave while the first bodies are read), each sweep's
subjects handed to the least busy worker as serve does (``_message``); it keeps
worker 0's messages. The verdicts go to bench/sink_proc.py and the feeder is a spawned
process: neither is measured. The exporter thread batches what has accumulated, so the
number of export requests (printed) varies a little between runs.

Count a tree only after one uncounted run in it (an ``idle`` will do): the conventions cache
keys each file by its path, so the first run in a fresh worktree validates and compiles the
conventions from YAML, ~1.3 G instructions more for that run alone (read as ~300 k a span
more when that run is ``run``; docs/performance-history.md, "serve's workers start without
the receivers"). The machine's load does not move the counts.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import struct
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "serve-worker"
STEP_S = 0.032
"""Clock advance per body: ~512-span requests at ~16,000 spans/s, one sweep a body."""
DECISION_WAIT_S = 0.2
JOIN_WINDOW_S = 0.5
"""serve's defaults are 1 s and 5 s; shorter here so that traces are released while the
first bodies are read (the traces of the bodies read last, still waiting, are not sent)."""


def prepare(args: argparse.Namespace) -> None:
    from otel_oracles.assemble.online import OnlineAssembler, ReadyTrace
    from otel_oracles.assemble.online_join import OnlineJoiner
    from otel_oracles.decode import decode
    from otel_oracles.server._processes import _message

    data = args.data.read_bytes()
    clock = [0.0]
    assembler = OnlineAssembler(
        decision_wait=DECISION_WAIT_S,
        max_trace_age=60.0,
        max_traces=100_000,
        max_buffered_spans=10_000_000,
        max_spans_per_trace=100_000,
        decision_cache_size=100_000,
        clock=lambda: clock[0],
    )
    joiner = OnlineJoiner(
        window=JOIN_WINDOW_S,
        max_traces=100_000,
        max_spans=10_000_000,
        max_age=60.0,
        is_open=assembler.holds,
        clock=lambda: clock[0],
    )
    held: list[int] = [0] * args.workers
    messages: list[bytes] = []
    spans = traces = 0
    token = 0

    def sweep(subjects: list[ReadyTrace]) -> None:
        nonlocal spans, traces, token
        batches: dict[int, list[tuple[Any, ...]]] = {}
        for ready in subjects:
            w = min(range(args.workers), key=lambda i: held[i])
            held[w] += 1
            batches.setdefault(w, []).append(
                (token, ready.trace_id, ready.spans, ready.logs, ready.reason, ready.members)
            )
            token += 1
        for w, items in batches.items():
            held[w] = 0  # as if graded by the next sweep (each worker keeps up)
            if w != 0:
                continue
            messages.append(_message(("grade", items), lambda body: body.payload))
            traces += len(items)
            spans += sum(len(item[2]) for item in items)

    pos = 0
    bodies = 0
    while pos < len(data) and bodies < args.bodies:
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        decoded = decode(data[pos + 4 : pos + 4 + n], "application/x-protobuf",
                         signal="traces", for_transfer=True)  # fmt: skip
        pos += 4 + n
        bodies += 1
        assembler.offer(decoded.spans, decoded.logs)
        clock[0] += STEP_S
        joiner.add(assembler.due())
        sweep(joiner.due())
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "messages.pkl").write_bytes(pickle.dumps(messages))
    print(json.dumps({"messages": len(messages), "traces": traces, "spans": spans}))


def feed(conn: Connection, path: str, send: bool) -> None:
    """The feeder process: send each message, wait until every trace was reported, stop."""
    messages: list[bytes] = pickle.loads(Path(path).read_bytes()) if send else []
    assert conn.recv()[0] == "ready"
    expected = 0
    for blob in messages:
        expected += len(pickle.loads(blob)[1])
        conn.send_bytes(blob)
    graded = 0
    while graded < expected:
        msg = conn.recv()
        if msg[0] == "graded":
            graded += len(msg[1])
    conn.send(("stop", 30.0))
    while conn.recv()[0] != "stopped":
        pass


def run(args: argparse.Namespace, send: bool) -> None:
    from otel_oracles.server import load_settings
    from otel_oracles.server._processes import worker_main

    sink = subprocess.Popen([sys.executable, str(HERE / "sink_proc.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert sink.stdout is not None and sink.stdin is not None
    endpoint = json.loads(sink.stdout.readline())["endpoint"]
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    settings = load_settings(
        overrides={"grading": {"contracts": [str(HERE / "contracts")]}, "log_level": "warning"},
        environ={},
    )
    ctx = multiprocessing.get_context("spawn")
    mine, theirs = ctx.Pipe(duplex=True)
    feeder = ctx.Process(target=feed, args=(theirs, str(OUT / "messages.pkl"), send))
    feeder.start()
    theirs.close()
    worker_main(mine, settings, 2, env)
    feeder.join()
    sink.stdin.write("\n")
    sink.stdin.flush()
    counts = json.loads(sink.stdout.readline())
    sink.stdin.close()
    sink.wait()
    print(json.dumps({"exported": counts}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["prepare", "run", "idle"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bodies", type=int, default=40)
    ap.add_argument("--data", type=Path, default=HERE / "out" / "serve-data-5000" / "traces.binpb")
    args = ap.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if args.mode == "prepare":
        prepare(args)
    else:
        run(args, send=args.mode == "run")


if __name__ == "__main__":
    main()
