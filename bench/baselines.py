"""Baseline decoders: what "merely decoding" a trace export costs, to measure grading against.

Each baseline reads a whole data set written by ``gen_traces.py`` and returns the number of
spans it saw. They are deliberately the plainest correct code, because goal 1 reads
"grading is at least as fast as decoding the file and turning every span's attributes into
Python dicts":

``proto_parse``    ``ExportTraceServiceRequest.ParseFromString`` per message, nothing else
                   (the floor: upb does this in C);
``proto_walk``     parse, then turn the resource's, every span's and every event's
                   attributes into Python dicts (``AnyValue`` -> str/int/float/bool/list/dict);
``json_orjson``    OTLP/JSON lines with ``orjson.loads`` plus the same walk;
``json_stdlib``    the same with the standard library's ``json.loads``.

Run one from the command line to time it alone:
    python bench/baselines.py proto_walk bench/out/data/traces.binpb
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from framed import length_prefixed
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

# ---- protobuf ------------------------------------------------------------------------------


def any_value(v: Any) -> Any:
    """``AnyValue`` -> plain Python (the fastest plain form found: one ``WhichOneof``, then
    ``getattr``; a chain of ``if kind == ...`` branches was ~10% slower)."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def proto_parse(path: Path) -> int:
    n = 0
    for body in length_prefixed(path):
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                n += len(ss.spans)
    return n


def walk_request(body: bytes) -> int:
    """Parse one ExportTraceServiceRequest and turn every resource's, span's and event's
    attributes into dicts; the span count. Also the live receiver baseline's work."""
    n = 0
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    for rs in req.resource_spans:
        resource = {kv.key: any_value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for span in ss.spans:
                attrs = {kv.key: any_value(kv.value) for kv in span.attributes}
                events = [
                    {kv.key: any_value(kv.value) for kv in ev.attributes} for ev in span.events
                ]
                n += 1
        del resource, attrs, events
    return n


def proto_walk(path: Path) -> int:
    return sum(walk_request(body) for body in length_prefixed(path))


# ---- OTLP/JSON -----------------------------------------------------------------------------


def json_any(v: dict[str, Any]) -> Any:
    for kind, val in v.items():
        if kind == "stringValue":
            return val
        if kind == "intValue":
            return int(val)
        if kind in ("boolValue", "doubleValue"):
            return val
        if kind == "arrayValue":
            return [json_any(x) for x in val.get("values", ())]
        if kind == "kvlistValue":
            return {kv["key"]: json_any(kv["value"]) for kv in val.get("values", ())}
        if kind == "bytesValue":
            return val
    return None


def _json_walk(path: Path, loads: Callable[[bytes], Any]) -> int:
    n = 0
    with open(path, "rb") as f:
        for line in f:
            req = loads(line)
            for rs in req.get("resourceSpans", ()):
                resource = {
                    kv["key"]: json_any(kv["value"])
                    for kv in rs.get("resource", {}).get("attributes", ())
                }
                for ss in rs.get("scopeSpans", ()):
                    for span in ss.get("spans", ()):
                        attrs = {
                            kv["key"]: json_any(kv["value"]) for kv in span.get("attributes", ())
                        }
                        events = [
                            {kv["key"]: json_any(kv["value"]) for kv in ev.get("attributes", ())}
                            for ev in span.get("events", ())
                        ]
                        n += 1
                del resource, attrs, events
    return n


def json_orjson(path: Path) -> int:
    return _json_walk(path, orjson.loads)


def json_stdlib(path: Path) -> int:
    return _json_walk(path, json.loads)


BASELINES: dict[str, tuple[Callable[[Path], int], str]] = {
    "proto_parse": (proto_parse, "traces.binpb"),
    "proto_walk": (proto_walk, "traces.binpb"),
    "json_orjson": (json_orjson, "traces.jsonl"),
    "json_stdlib": (json_stdlib, "traces.jsonl"),
}
"""name -> (function, the data-set file it reads)."""


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in BASELINES:
        print(f"usage: baselines.py {{{','.join(BASELINES)}}} FILE", file=sys.stderr)
        return 2
    fn = BASELINES[argv[0]][0]
    t0, c0 = time.perf_counter(), time.process_time()
    n = fn(Path(argv[1]))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"spans": n, "wall_s": wall, "cpu_s": cpu, "spans_per_s": n / wall}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
