"""What serve's write-ahead spool spends per span when every request it takes is deleted.

``serve_receive.py`` counts the receiving process as a whole, but stops while most of its
requests still feed traces in the join window, so it deletes few; in a steady stream serve
deletes every request once its traces are exported. This drives ``Spool`` alone the way
serve does over a request's life, on the serve data set's protobuf requests
(bench/serve_load.py's data): each body appended (fsync'd) with 30 traces, read back once
(as the first worker message needing it does), and settled two requests later.

    valgrind --tool=cachegrind python bench/serve_spool.py run     # everything above
    valgrind --tool=cachegrind python bench/serve_spool.py setup   # start-up and reading only

(PYTHONHASHSEED=0). (run - setup) / the span count printed is the spool's cost per span;
``run`` also prints the CPU seconds of the measured loop (``process_time``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from framed import first_bodies

HERE = Path(__file__).resolve().parent
TRACES_PER_REQUEST = 30


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["setup", "run"])
    ap.add_argument("--bodies", type=int, default=40)
    ap.add_argument("--data", type=Path, default=HERE / "out" / "serve-data-5000" / "traces.binpb")
    args = ap.parse_args()

    from otel_oracles.decode import decode
    from otel_oracles.server._spool import Spool

    bodies = first_bodies(args.data, args.bodies)
    # Counted in both modes, so that (run - setup) holds the spool's work alone.
    spans = sum(len(decode(b, "application/x-protobuf", for_transfer=True).spans) for b in bodies)
    spool = Spool(Path(tempfile.mkdtemp()) / "spool", 1 << 30, "contracts")
    spool.open()
    if args.mode == "setup":
        print(json.dumps({"bodies": len(bodies), "spans": spans}))
        return

    held: list[tuple[int, list[str]]] = []
    cpu = time.process_time()
    for i, body in enumerate(bodies):
        traces = [f"{i:08x}{k:024x}" for k in range(TRACES_PER_REQUEST)]
        request_id = spool.append("traces", "application/x-protobuf", body, traces)
        held.append((request_id, traces))
        if len(spool.body(request_id)) != len(body):
            raise AssertionError(f"request {request_id} read back short")
        if i >= 2:
            spool.settle(held[i - 2][1], exported=True)
    cpu = time.process_time() - cpu
    spool.close()
    print(json.dumps({"bodies": len(bodies), "bytes": sum(map(len, bodies)),
                      "spans": spans, "cpu_s": round(cpu, 3)}))  # fmt: skip


if __name__ == "__main__":
    main()
