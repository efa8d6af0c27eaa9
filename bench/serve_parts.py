"""What serve's grading workers spend to get their own traces' records, whole bodies vs cut.

Two ways a worker can be sent the spans of the traces it grades, on the serve data set's
protobuf requests (bench/serve_load.py's data; ``--workers`` workers, each trace owned by
one of them by its trace id):

- ``whole``: every worker decodes each whole body and builds the records of its own spans
  (what serve did until 5 December 2026);
- ``cut``: the receiving process cuts each body down to each worker's spans
  (``_native.select_proto``) and the worker decodes that part and builds all of it;
- ``select``: the cutting alone (the receiving process's share of ``cut``);
- ``setup``: reading the data and assigning owners only, to subtract.

Run each mode under ``valgrind --tool=cachegrind`` (PYTHONHASHSEED=0) and divide
(mode - setup) by the span count printed:

    python bench/serve_parts.py cut --workers 2 --bodies 40
"""

from __future__ import annotations

import argparse
import struct
from array import array
from pathlib import Path

from otel_oracles import _native

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["setup", "whole", "cut", "select"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bodies", type=int, default=40)
    ap.add_argument("--data", type=Path, default=HERE / "out" / "serve-data-5000" / "traces.binpb")
    args = ap.parse_args()
    data = args.data.read_bytes()
    bodies: list[bytes] = []
    pos = 0
    while pos < len(data) and len(bodies) < args.bodies:
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        bodies.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    owners = []
    for body in bodies:
        batch, _ = _native.decode_proto(body, "traces")
        owners.append([hash(s.trace_id) % args.workers for s in batch.records()[0]])
    builders = [_native.RecordBuilder() for _ in range(args.workers)]
    spans = 0
    for body, owner in zip(bodies, owners, strict=True):
        for worker, builder in enumerate(builders):
            mine = [i for i, o in enumerate(owner) if o == worker]
            spans += len(mine)
            # As a worker's message names them: (slot, position) pairs (``RecordBuilder.place``).
            refs = (array("I", [n for at in mine for n in (0, at)]).tobytes(), [])
            if args.mode == "whole":
                batch, _ = _native.decode_proto(body, "traces")
                builder.place([batch], [None], [refs], [])
            elif args.mode == "cut":
                batch, _ = _native.decode_proto(_native.select_proto(body, mine), "traces")
                builder.place([batch], [array("I", mine).tobytes()], [refs], [])
            elif args.mode == "select":
                _native.select_proto(body, mine)
    print(spans)


if __name__ == "__main__":
    main()
