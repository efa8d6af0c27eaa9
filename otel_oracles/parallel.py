"""Offline grading on several processes: ``grade --workers N``.

Why processes, and why this split: grading is CPU-bound Python, so threads do not scale; and
traces are independent once grouped, so the work splits by trace id. Every worker reads the
whole input but keeps only the spans of its share of trace ids (a hash of the id, stable
across processes) before assembly, then maps and grades those traces exactly as
``pipeline.grade_paths`` does. Re-reading is cheap next to grading: decoding keeps
attributes lazy (a few µs per span), while mapping and grading cost two orders of magnitude
more. Nothing but the verdicts crosses process boundaries: no span is pickled, and no
coordinator has to hold traces.

Workers load the contracts and conventions from the same files the caller loaded (and
validated) them from, so the compiled convention rules never need pickling. On Linux the
workers are forked, inheriting the imported modules.

Verdicts come back in the order of each trace's first span in the input, whatever the
number of workers (the sequential path lists them in the order traces complete).
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from otel_oracles.decode import DecodedBatch, read_paths
from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.pipeline import GradeRun

log = logging.getLogger(__name__)

_SHARD_HEX_DIGITS = 8
"""Trace ids are random; their last 32 bits spread traces evenly over any worker count."""


def shard_of(trace_id: str, workers: int) -> int:
    """The worker that owns ``trace_id`` (records without a trace id go to worker 0)."""
    if not trace_id:
        return 0
    try:
        return int(trace_id[-_SHARD_HEX_DIGITS:], 16) % workers
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class _ShardJob:
    paths: tuple[str, ...]
    contract_files: tuple[Path, ...]
    convention_dirs: tuple[Path, ...]
    shard: int
    workers: int


@dataclass(slots=True)
class _ShardResult:
    verdicts: list[tuple[int, int, Verdict]] = field(default_factory=list)
    """(position of the trace's first span in the input, index within the trace, verdict)."""
    problems: list[InputProblem] = field(default_factory=list)
    traces: int = 0
    traces_unselected: int = 0
    spans: int = 0


def _grade_shard(job: _ShardJob) -> _ShardResult:
    """One worker: read everything, keep this shard's traces, grade them."""
    from otel_oracles.assemble import assemble_offline
    from otel_oracles.mapping import load_conventions
    from otel_oracles.model.contract import load_contract
    from otel_oracles.pipeline import grade_trace

    contracts = [load_contract(p) for p in job.contract_files]
    conventions = load_conventions(list(job.convention_dirs))
    out = _ShardResult()
    first_seen: dict[str, int] = {}
    position = 0

    def mine() -> Iterator[DecodedBatch]:
        nonlocal position
        shard, workers = job.shard, job.workers
        for batch in read_paths(list(job.paths), out.problems):
            kept = []
            for span in batch.spans:
                tid = span.trace_id
                if shard_of(tid, workers) == shard:
                    kept.append(span)
                    if tid not in first_seen:
                        first_seen[tid] = position
                position += 1
            batch.spans = kept
            batch.logs = [r for r in batch.logs if shard_of(r.trace_id, workers) == shard]
            yield batch

    for trace in assemble_offline(mine()):
        out.traces += 1
        out.spans += len(trace.spans)
        graded = grade_trace(trace, contracts, conventions)
        if not graded:
            out.traces_unselected += 1
        # A trace split by a late span has no first-seen entry left: it sorts as "now".
        order = first_seen.pop(trace.trace_id, position)
        out.verdicts.extend((order, i, v) for i, (v, _) in enumerate(graded))
    return out


def grade_paths_parallel(
    paths: Sequence[str],
    contract_files: Sequence[Path],
    convention_dirs: Sequence[Path],
    *,
    workers: int,
    run: GradeRun | None = None,
) -> RunReport:
    """``pipeline.grade_paths`` over ``workers`` processes; same report, same notes.

    ``contract_files``/``convention_dirs`` must be the files the caller already loaded
    successfully (workers reload them; a file changed in between is the caller's race).
    ``paths`` must not contain ``-``: stdin cannot be read by several processes.
    Input problems found by every worker while reading are reported once. A worker that
    crashes (a bug, never bad input) re-raises its exception here.
    """
    if "-" in paths:
        raise ValueError("stdin ('-') cannot be graded with several workers")
    stats = run if run is not None else GradeRun()
    jobs = [
        _ShardJob(tuple(paths), tuple(contract_files), tuple(convention_dirs), k, workers)
        for k in range(workers)
    ]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        shards = list(pool.map(_grade_shard, jobs))
    seen: set[tuple[str, str]] = set()
    for shard in shards:
        stats.traces += shard.traces
        stats.traces_unselected += shard.traces_unselected
        stats.spans += shard.spans
        for problem in shard.problems:
            key = (problem.source, problem.message)
            if key not in seen:
                seen.add(key)
                stats.problems.append(problem)
    merged = sorted((item for s in shards for item in s.verdicts), key=_order)
    verdicts = [v for _, _, v in merged]
    notes = [f"{stats.traces} trace(s), {stats.spans} span(s) read"]
    if stats.traces_unselected:
        notes.append(f"{stats.traces_unselected} trace(s) matched no contract's selector")
    return RunReport(verdicts=verdicts, input_errors=list(stats.problems), notes=notes)


def _order(item: tuple[int, int, Verdict]) -> tuple[int, int]:
    return item[0], item[1]
