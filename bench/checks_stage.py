"""The checks stage alone: what ``grade()`` costs once the subjects are mapped.

Every subject of the input is read, assembled, selected and mapped first (not timed); then
each pass grades every selected contract on every trajectory with a fresh ``Evidence`` per
trajectory, as ``GradingSession.grade`` does, and only that is timed (CPU time of this
process). The other stages do not blur the figure, so a change to the evaluator, the evidence
probes or an oracle shows at its own scale, and ``--hash`` makes a run also a check that the
verdicts did not change (durations left out).

    python bench/checks_stage.py bench/out/data-2000-c64/traces.jsonl bench/contracts
    python bench/checks_stage.py FILE CONTRACTS_DIR --passes 0 --limit 300   # setup only

With ``--passes 0`` the process does the setup only, so counting instructions of a run with
passes and one without (``valgrind --tool=cachegrind --cache-sim=no``) gives the checks'
instructions exactly, whatever the machine's load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from otel_oracles.grade import CompiledContract, Evidence, grade
from otel_oracles.mapping import map_trace
from otel_oracles.model.result import Verdict
from otel_oracles.model.step import Trajectory
from otel_oracles.session import GradeRun, GradingSession, SessionSpec
from otel_oracles.session._input import traces_from_batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("contracts", help="directory of contract files (*.yaml)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes (the best is shown)")
    parser.add_argument("--limit", type=int, default=0, help="grade the first N subjects only")
    parser.add_argument("--hash", action="store_true", help="print a hash of the verdicts")
    args = parser.parse_args()

    spec = SessionSpec(tuple(sorted(Path(args.contracts).glob("*.yaml"))))
    session = GradingSession.load(spec)
    counts = GradeRun()
    work: list[tuple[list[CompiledContract], Trajectory]] = []
    batches = session.limits.read([args.file], counts.problems)
    for trace in traces_from_batches(batches, counts.assembly, session.limits):
        if args.limit and len(work) >= args.limit:
            break
        chosen, _ = session.select(trace)
        if chosen:
            work.append((chosen, map_trace(trace, session.conventions)))
    checks = sum(len(c.checks) for chosen, _ in work for c in chosen)

    best: float | None = None
    verdicts: list[Verdict] = []
    for _ in range(args.passes):
        verdicts = []
        start = time.process_time()
        for chosen, trajectory in work:
            evidence = Evidence(trajectory)
            for compiled in chosen:
                verdicts.append(grade(compiled, trajectory, evidence=evidence))
        took = time.process_time() - start
        best = took if best is None else min(best, took)
    line = f"subjects={len(work)} checks={checks}"
    if best is not None:
        line += f" best_cpu_ms={best * 1000:.0f}"
    if args.hash and verdicts:
        digest = hashlib.sha256()
        for verdict in verdicts:
            data = verdict.model_dump(
                mode="json",
                exclude={"duration_ns": True, "results": {"__all__": {"duration_ns"}}},
            )
            digest.update(json.dumps(data, sort_keys=True).encode())
        line += f" hash={digest.hexdigest()[:16]}"
    print(line)


if __name__ == "__main__":
    main()
