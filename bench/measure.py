"""Run ONE measured job in this (fresh) process and print its figures as one JSON line.

``run_goals.py`` starts this script in a subprocess per measurement, so every job starts with
a clean heap (peak RSS means something) and imports are not charged to the timed section.
The parent reads CPU time and peak RSS of the whole process tree from ``os.wait4``; this
script reports the timed section only (``wall_s``, ``cpu_s``: user+sys of this process and
of any worker processes it waited for).

Usage:
    python bench/measure.py baseline proto_walk FILE
    python bench/measure.py cli -- grade FILE... --contracts DIR [--workers N]
    python bench/measure.py stage decode|decode_dicts|assemble|map|grade:CONTRACTS FILE...
    python bench/measure.py pipeline FILE... CONTRACTS_DIR [--profile OUT.prof]
    python bench/measure.py emit FILE... CONTRACTS_DIR otlp|file:PATH
    python bench/measure.py startup            # imports only: the RSS floor of a grade run
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@contextlib.contextmanager
def _stdout_to_devnull() -> Any:
    """The CLI's table is part of grading's cost, but a terminal's speed must not be."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(devnull)
        os.close(saved)


def _conventions() -> Any:
    """The bundled conventions loaded as ``grade`` loads them: from their cache
    (``ConventionCache.from_env``), so a stage's figure is mapping, not compiling YAML (a cold
    load is ~1,150 M instructions, more than a quarter of what ``map`` adds)."""
    from otel_oracles.mapping import ConventionCache, load_conventions

    return load_conventions([], ConventionCache.from_env())


def run_baseline(name: str, path: str) -> dict[str, Any]:
    from baselines import BASELINES

    fn = BASELINES[name][0]
    t0, c0 = time.perf_counter(), _cpu()
    n = fn(Path(path))
    return {"spans": n, "wall_s": time.perf_counter() - t0, "cpu_s": _cpu() - c0}


def run_cli(args: list[str]) -> dict[str, Any]:
    """Invoke the real ``otel-oracles`` click command in-process (after its imports)."""
    import click

    from otel_oracles.cli import cli

    if args:  # commands load on first use: load this one's module before the clock starts
        cli.get_command(click.Context(cli), args[0])
    t0, c0 = time.perf_counter(), _cpu()
    code: Any = 0
    with _stdout_to_devnull():
        try:
            code = cli.main(args=args, standalone_mode=False, prog_name="otel-oracles")
        except SystemExit as exc:
            code = exc.code
        except click.exceptions.Exit as exc:
            code = exc.exit_code
    return {"wall_s": time.perf_counter() - t0, "cpu_s": _cpu() - c0, "exit_code": code}


def run_stage(name: str, paths: list[str]) -> dict[str, Any]:
    """The project's own stages, timed one prefix of the pipeline at a time, so a slow
    ``grade`` can be attributed: ``decode`` (read_paths, records only), ``decode_dicts``
    (plus every attribute materialized, i.e. defeating lazy decoding), ``assemble``
    (decode plus grouping into traces), ``map`` (plus mapping every trace to steps)."""
    from otel_oracles.decode import read_paths

    problems: list[Any] = []
    t0, c0 = time.perf_counter(), _cpu()
    spans = traces = 0
    if name == "decode":
        for batch in read_paths(paths, problems):
            spans += len(batch.spans)
    elif name == "decode_dicts":
        for batch in read_paths(paths, problems):
            for span in batch.spans:
                dict(span.attributes)
                dict(span.resource)
                for ev in span.events:
                    dict(ev.attributes)
                spans += 1
    elif name == "assemble":
        from otel_oracles.assemble import assemble_offline

        for trace in assemble_offline(read_paths(paths, problems)):
            traces += 1
            spans += len(trace.spans)
    elif name == "map":
        from otel_oracles.assemble import assemble_offline
        from otel_oracles.mapping import map_trace

        conventions = _conventions()
        for trace in assemble_offline(read_paths(paths, problems)):
            map_trace(trace, conventions)
            traces += 1
            spans += len(trace.spans)
    elif name.startswith("grade:"):
        # Map and grade every trace, keeping no verdict: what grading holds in memory
        # apart from the report (``grade:CONTRACTS_DIR``).
        from otel_oracles.grade.loader import load_contract
        from otel_oracles.model.contract import discover_contract_files
        from otel_oracles.pipeline import grade_trace, read_traces

        files = discover_contract_files([name.removeprefix("grade:")])
        contracts = [load_contract(f) for f in files]
        conventions = _conventions()
        for trace in read_traces(paths, problems):
            grade_trace(trace, contracts, conventions)
            traces += 1
            spans += len(trace.spans)
    else:
        raise SystemExit(f"unknown stage {name!r}")
    return {
        "spans": spans,
        "traces": traces,
        "problems": len(problems),
        "wall_s": time.perf_counter() - t0,
        "cpu_s": _cpu() - c0,
    }


def run_pipeline(paths: list[str], contracts_dir: str, profile: str | None) -> dict[str, Any]:
    """``pipeline.grade_paths`` in-process, without the CLI around it (for profiling, and to
    tell the pipeline's cost from the CLI's rendering)."""
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.model.contract import discover_contract_files
    from otel_oracles.pipeline import grade_paths
    from otel_oracles.session import GradeRun, GradingSession

    t0, c0 = time.perf_counter(), _cpu()
    contracts = [load_contract(f) for f in discover_contract_files([contracts_dir])]
    session = GradingSession(contracts, _conventions())
    run = GradeRun()
    if profile:
        import cProfile

        prof = cProfile.Profile()
        report = prof.runcall(grade_paths, paths, session, run=run)
        prof.dump_stats(profile)
    else:
        report = grade_paths(paths, session, run=run)
    return {
        "spans": run.spans,
        "traces": run.traces,
        "verdicts": len(report.verdicts),
        "failed": sum(1 for v in report.verdicts if not v.passed),
        "wall_s": time.perf_counter() - t0,
        "cpu_s": _cpu() - c0,
    }


def run_emit(paths: list[str], contracts_dir: str, target: str) -> dict[str, Any]:
    """Grade (timed), then emit every verdict (timed separately) through the real emitter.

    ``target`` is ``otlp`` (OTLP http/protobuf to ``OTEL_EXPORTER_OTLP_ENDPOINT``, a sink in
    another process) or ``file:PATH`` (``--results-out``, no network). Both CPU figures are
    this process's user+sys, which includes the exporters' threads.
    """
    from otel_oracles.emit import build_emitter
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.model.contract import discover_contract_files
    from otel_oracles.pipeline import grade_trace, read_traces

    t0, c0 = time.perf_counter(), _cpu()
    contracts = [load_contract(f) for f in discover_contract_files([contracts_dir])]
    conventions = _conventions()
    pairs = []
    spans = 0
    for trace in read_traces(paths, []):
        spans += len(trace.spans)
        pairs.extend(grade_trace(trace, contracts, conventions))
    grade_wall, grade_cpu = time.perf_counter() - t0, _cpu() - c0
    t1, c1 = time.perf_counter(), _cpu()
    if target == "otlp":
        emitter = build_emitter(export="otlp", protocol="http/protobuf")
    else:
        emitter = build_emitter(results_out=Path(target.removeprefix("file:")))
    setup_cpu = _cpu() - c1
    for i in range(0, len(pairs), 512):  # the CLI hands verdicts over in batches too
        emitter.export(pairs[i : i + 512])
    emitter.force_flush()
    emitter.shutdown()
    stats = getattr(emitter, "stats", None)
    return {
        "spans": spans,
        "verdicts": len(pairs),
        "results": sum(len(v.results) for v, _ in pairs),
        "grade_wall_s": grade_wall,
        "grade_cpu_s": grade_cpu,
        "wall_s": time.perf_counter() - t1,
        "cpu_s": _cpu() - c1,
        "setup_cpu_s": setup_cpu,
        "spans_exported": getattr(stats, "spans_exported", -1),
        "log_records_exported": getattr(stats, "log_records_exported", -1),
        "emit_ok": bool(getattr(stats, "ok", False)),
    }


def run_startup() -> dict[str, Any]:
    import otel_oracles.cli  # noqa: F401  (the import is the measurement)

    return {"wall_s": 0.0, "cpu_s": 0.0}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    kind, rest = argv[0], argv[1:]
    if kind == "baseline":
        out = run_baseline(rest[0], rest[1])
    elif kind == "cli":
        out = run_cli(rest[1:] if rest[:1] == ["--"] else rest)
    elif kind == "stage":
        out = run_stage(rest[0], rest[1:])
    elif kind == "pipeline":
        prof = rest[rest.index("--profile") + 1] if "--profile" in rest else None
        files = [a for a in rest if a not in ("--profile", prof)]
        out = run_pipeline(files[:-1], files[-1], prof)
    elif kind == "emit":
        out = run_emit(rest[:-2], rest[-2], rest[-1])
    elif kind == "startup":
        out = run_startup()
    else:
        print(f"unknown job kind {kind!r}", file=sys.stderr)
        return 2
    out["self_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
