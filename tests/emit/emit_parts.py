"""Where emission CPU goes per result, in one process, without the network (not a test).

Grades the traces once, then hands the verdicts to fresh ``OtelEmitter``s in batches of
512 pairs (as ``bench/measure.py emit`` does) three ways, several passes each, and prints
the best pass of each as µs per result:

- ``build``: the emitter with no exporters and no metrics (records and attribute runs);
- ``build+encode``: plus the fast OTLP HTTP exporters, whose POST is replaced by a no-op
  (the SDK's transport costs ~2 ms CPU per request on top, not measured here);
- ``all``: plus the metrics tally, collected for an exporter that drops everything;
- ``encode``: the OTLP protobuf encoding alone (``OtlpSink``'s encoder over the batches a
  ``build`` pass made, each pass on fresh records so shared runs are encoded anew), and
  ``encode_json`` the OTLP/JSON lines the same way (written to ``os.devnull``).

    python tests/emit/emit_parts.py bench/out/data-1000-c64/traces.binpb bench/contracts [PASSES]

To compare two source trees, run it alternately with ``PYTHONPATH=OTHER_TREE`` (A B A B).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def main(data: str, contracts_dir: str, passes: str = "5") -> None:
    import otel_oracles
    from otel_oracles.emit import (
        EmitSettings,
        JsonLinesSink,
        OtelEmitter,
        OtlpJsonLinesFile,
        OtlpSink,
        Sink,
    )
    from otel_oracles.emit._http_sender import HttpSender
    from otel_oracles.emit._metric_data import MetricsData
    from otel_oracles.emit._metric_export import OwnMetricExporter
    from otel_oracles.emit._transport import Attempt, OtlpTarget, Payload
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import discover_contract_files
    from otel_oracles.pipeline import grade_trace, read_traces

    class DropMetrics(OwnMetricExporter):
        def deliver(self, metrics_data: MetricsData, timeout_s: float) -> bool:
            return True

    contracts = [load_contract(f) for f in discover_contract_files([Path(contracts_dir)])]
    conventions = load_conventions([])
    pairs = [p for t in read_traces([data], []) for p in grade_trace(t, contracts, conventions)]
    results = sum(len(v.results) for v, _ in pairs)
    gc.freeze()  # the graded pairs are not emission's garbage to scan
    os.environ.setdefault("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")

    class Accepting(HttpSender):
        """The HTTP sender with the POST stubbed: every request is accepted at once."""

        def _attempt(self, body: Payload, timeout_s: float, attempt_no: int) -> Attempt:
            return Attempt(True)

    def sink() -> OtlpSink:
        return OtlpSink(
            {s: Accepting(OtlpTarget.from_env(s, "http/protobuf")) for s in ("traces", "logs")}
        )

    def emitter(kind: str) -> OtelEmitter:
        if kind == "build":
            return OtelEmitter(settings=EmitSettings(metrics=False))
        if kind == "build+encode":
            return OtelEmitter(settings=EmitSettings(metrics=False), sinks=[sink()])
        return OtelEmitter(metric_exporters=[DropMetrics()], sinks=[sink()])

    class Keep(Sink):
        """Keeps the batches the emitter hands over, to encode them on their own."""

        def __init__(self) -> None:
            self.batches: list[tuple[Any, Any]] = []

        def export(self, signal: Any, batch: Any) -> bool:
            self.batches.append((signal, batch))
            return True

        def shutdown(self) -> None:
            pass

    def built() -> list[tuple[Any, Any]]:
        keep = Keep()
        target = OtelEmitter(settings=EmitSettings(metrics=False), sinks=[keep])
        for i in range(0, len(pairs), 512):
            target.export(pairs[i : i + 512])
        target.shutdown()
        return keep.batches

    best: dict[str, float] = {}

    def note(kind: str, cpu: float) -> None:
        best[kind] = min(best.get(kind, cpu), cpu)

    for _ in range(int(passes)):
        for kind in ("build", "build+encode", "all"):
            target = emitter(kind)
            start = time.process_time()
            for i in range(0, len(pairs), 512):
                target.export(pairs[i : i + 512])
            note(kind, time.process_time() - start)
            target.shutdown()
        batches, protobuf = built(), sink()
        start = time.process_time()
        for signal, batch in batches:
            protobuf.export(signal, batch)
        note("encode", time.process_time() - start)
        batches, lines = built(), JsonLinesSink(OtlpJsonLinesFile(Path(os.devnull)))
        start = time.process_time()
        for signal, batch in batches:
            lines.export(signal, batch)
        note("encode_json", time.process_time() - start)
        lines.shutdown()
    out = {
        "source": str(Path(otel_oracles.__file__).parent),
        "results": results,
        **{f"{k}_us_per_result": round(v / results * 1e6, 1) for k, v in best.items()},
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
