"""Where emission CPU goes per result, in one process, without the network (not a test).

Grades the traces once, then hands the verdicts to fresh ``OtelEmitter``s in batches of
512 pairs (as ``bench/measure.py emit`` does) three ways, several passes each, and prints
the best pass of each as µs per result:

- ``build``: the emitter with no exporters and no metrics (records and attribute runs);
- ``build+encode``: plus the fast OTLP HTTP exporters, whose POST is replaced by a no-op
  (the SDK's transport costs ~2 ms CPU per request on top, not measured here);
- ``all``: plus the metrics tally into a meter provider whose exporter drops everything.

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
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult

    import otel_oracles
    from otel_oracles.emit import EmitSettings, OtelEmitter
    from otel_oracles.emit import _fast_http as fast_http
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import discover_contract_files, load_contract
    from otel_oracles.pipeline import grade_trace, read_traces

    class DropMetrics(MetricExporter):
        def export(self, *args: Any, **kwargs: Any) -> MetricExportResult:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 0) -> bool:
            return True

        def shutdown(self, *args: Any, **kwargs: Any) -> None:
            pass

    contracts = [load_contract(f) for f in discover_contract_files([Path(contracts_dir)])]
    conventions = load_conventions([])
    pairs = [p for t in read_traces([data], []) for p in grade_trace(t, contracts, conventions)]
    results = sum(len(v.results) for v, _ in pairs)
    gc.freeze()  # the graded pairs are not emission's garbage to scan
    os.environ.setdefault("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    fast_http._http_export = lambda exporter, payload, count, what: True  # type: ignore[assignment]

    def emitter(kind: str) -> OtelEmitter:
        if kind == "build":
            return OtelEmitter(settings=EmitSettings(metrics=False))
        exporters: dict[str, Any] = {
            "span_exporters": [fast_http.FastHttpSpanExporter()],
            "log_exporters": [fast_http.FastHttpLogExporter()],
        }
        if kind == "build+encode":
            return OtelEmitter(settings=EmitSettings(metrics=False), **exporters)
        return OtelEmitter(metric_exporters=[DropMetrics()], **exporters)

    best: dict[str, float] = {}
    for _ in range(int(passes)):
        for kind in ("build", "build+encode", "all"):
            target = emitter(kind)
            start = time.process_time()
            for i in range(0, len(pairs), 512):
                target.export(pairs[i : i + 512])
            cpu = time.process_time() - start
            target.shutdown()
            best[kind] = min(best.get(kind, cpu), cpu)
    out = {
        "source": str(Path(otel_oracles.__file__).parent),
        "results": results,
        **{f"{k}_us_per_result": round(v / results * 1e6, 1) for k, v in best.items()},
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
