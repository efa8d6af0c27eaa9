"""Emission CPU against grading CPU, the way ``grade --export otlp`` runs (not a test).

Grades one trace at a time and hands the verdicts to ``BatchingEmitter(OtelEmitter)``;
the CPU of grading and of emission are summed separately in the same process and run, with
an OTLP receiver (tests/support/otlp_sink.py) in another process so its CPU is not charged.

    python tests/emit/emit_cost.py bench/out/data-1000-c64/traces.binpb CONTRACTS_DIR \\
        grpc|http/protobuf [both|log|span]

Prints one JSON line: results, grade_cpu_s, emit_cpu_s, ratio, emission µs per result, and
what the receiver counted (count in = count out).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SINK = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.support.otlp_sink import OtlpSink
with OtlpSink() as s:
    print(json.dumps({"grpc": s.grpc_endpoint, "http": s.http_endpoint}), flush=True)
    for _ in sys.stdin:
        counts = {"spans": len(s.spans()), "log_records": len(s.log_records())}
        print(json.dumps(counts), flush=True)
"""


def main(data: str, contracts_dir: str, protocol: str, forms: str = "both") -> None:
    from otel_oracles.emit import BatchingEmitter, EmitSettings, OtelEmitter, build_emitter
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import discover_contract_files
    from otel_oracles.pipeline import grade_trace, read_traces

    contracts = [load_contract(f) for f in discover_contract_files([Path(contracts_dir)])]
    conventions = load_conventions([])
    sink = subprocess.Popen(
        [sys.executable, "-c", SINK, str(REPO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert sink.stdout is not None and sink.stdin is not None
    endpoints = json.loads(sink.stdout.readline())
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoints["grpc" if protocol == "grpc" else "http"]
    os.environ["OTEL_EXPORTER_OTLP_PROTOCOL"] = protocol
    settings = EmitSettings(log_events=forms != "span", span_events=forms != "log")
    otel = build_emitter("otlp", settings=settings)
    assert isinstance(otel, OtelEmitter)
    emitter = BatchingEmitter(otel)
    grade_cpu = emit_cpu = 0.0
    results = 0
    traces = iter(read_traces([data], []))
    while True:
        start = time.process_time()
        trace = next(traces, None)
        if trace is None:
            grade_cpu += time.process_time() - start
            break
        pairs = grade_trace(trace, contracts, conventions)
        graded = time.process_time()
        grade_cpu += graded - start
        emitter.export(pairs)
        emit_cpu += time.process_time() - graded
        results += sum(len(v.results) for v, _ in pairs)
    start = time.process_time()
    emitter.shutdown()
    emit_cpu += time.process_time() - start
    sink.stdin.write("\n")
    sink.stdin.flush()
    received = json.loads(sink.stdout.readline())
    sink.stdin.close()
    sink.wait(10)
    out = {
        "protocol": protocol,
        "forms": forms,
        "results": results,
        "grade_cpu_s": round(grade_cpu, 3),
        "emit_cpu_s": round(emit_cpu, 3),
        "ratio": round(emit_cpu / grade_cpu, 3),
        "emit_us_per_result": round(emit_cpu / max(results, 1) * 1e6, 1),
        "received": received,
        "exported": {"spans": otel.stats.spans_exported, "logs": otel.stats.log_records_exported},
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
