"""Issue 18's linearity target: grading costs the same per span whatever the trace size.

The same number of spans is graded as many small traces and as a few large ones, each data set
a time-ordered export from ``gen_traces.py`` (``--rounds`` sets the tool rounds per trace):

  small    2,000 traces of ~20 spans  (5-12 rounds at random, the other benchmarks' data)
  medium   20 traces of ~2,000 spans  (970 rounds each)
  large    2 traces of ~20,000 spans  (9,700 rounds each)

Each job is a whole process, ``otel-oracles grade FILE -c bench/contracts --quiet --json`` on
the protobuf file, checked for a verdict per trace; jobs run interleaved (small medium large,
small medium large, ...) and the median of ``--repeats`` is reported. CPU per span of the
largest against the cheapest is the goal (<= 1.5x): a step that does work per pair of spans
(matching each tool call against every later step, say) shows up as the large traces costing
far more per span, which is also a trace an attacker can send to stall grading.

Fixed costs (interpreter start, imports, loading contracts) are in every job and the same in
each, since the span counts are equal; per-trace costs (a verdict per contract and trace, a
report line) make small traces dearer per span, so the ratio is taken against the cheapest
size, whichever it is.

Examples:
    python bench/trace_size.py                     # 3 repeats, ~40k spans per size
    python bench/trace_size.py --quick             # 1 repeat, ~4k spans per size (CI smoke)
    python bench/trace_size.py --repeats 5 --json bench/out/trace-size.json
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_traces  # noqa: E402  (bench/ is a folder of scripts, not a package)
import peer_agentevals  # noqa: E402
import run_goals  # noqa: E402

LINEAR_GOAL = 1.5
"""Issue 18: 20-, 2,000- and 20,000-span traces cost the same per span within 1.5x."""

SIZES: tuple[tuple[str, int, int], ...] = (
    ("small", 2000, 0),
    ("medium", 20, 970),
    ("large", 2, 9700),
)
"""(name, traces, rounds per trace; 0 = 5-12 at random): about 40,000 spans each."""


def datasets(out: Path, scale: float) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each size's data set, generated once into ``out`` and reused while its parameters
    match; ``scale`` shrinks the rounds (large traces) or the trace count (small ones)."""
    found = {}
    for name, traces, rounds in SIZES:
        if rounds:
            params = gen_traces.Params(traces=traces, rounds=max(1, int(rounds * scale)))
        else:
            params = gen_traces.Params(traces=max(1, int(traces * scale)))
        path = out / f"size-{name}-{params.traces}x{params.rounds or 'r'}"
        found[name] = (path, gen_traces.ensure(params, path, jsonl=False))
    return found


def jobs_for(
    sets: dict[str, tuple[Path, dict[str, Any]]], contracts: Path
) -> list[peer_agentevals.Job]:
    grade = [*peer_agentevals.grader(), "grade", "--contracts", str(contracts), "--quiet", "--json"]
    return [
        peer_agentevals.Job(
            name,
            [*grade, str(path / "traces.binpb")],
            (0, 1),
            functools.partial(peer_agentevals.grade_work, traces=manifest["traces"]),
        )
        for name, (path, manifest) in sets.items()
    ]


def report(
    m: dict[str, dict[str, Any]], sets: dict[str, tuple[Path, dict[str, Any]]]
) -> list[run_goals.Result]:
    per_span = {name: m[name]["cpu_s"] / sets[name][1]["spans"] * 1e6 for name in m}
    lines = [
        run_goals.Result(
            "info",
            f"{name}: {man['traces']} traces, {man['spans'] // man['traces']} spans each (µs/span)",
            per_span[name],
            "-",
            True,
            f"{m[name]['cpu_s']:.2f} s CPU, {m[name]['wall_s']:.2f} s wall, peak RSS "
            f"{m[name]['maxrss_kb'] / 1024:.0f} MB, {m[name]['work']['verdicts']} verdicts",
        )
        for name, (_path, man) in sets.items()
    ]
    cheapest = min(per_span, key=lambda n: per_span[n])
    dearest = max(per_span, key=lambda n: per_span[n])
    ratio = per_span[dearest] / per_span[cheapest]
    lines.append(
        run_goals.Result(
            "I18d",
            "CPU per span, dearest size / cheapest size",
            ratio,
            f"<= {LINEAR_GOAL:.2f}",
            ratio <= LINEAR_GOAL,
            f"{dearest} {per_span[dearest]:.0f} µs vs {cheapest} {per_span[cheapest]:.0f} µs",
        )
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="a tenth of the spans, 1 repeat")
    ap.add_argument("--repeats", type=int, default=None, help="default 3 (1 with --quick)")
    ap.add_argument("--contracts", type=Path, default=None, help="default: bench/contracts")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="where data sets are kept")
    ap.add_argument("--json", type=Path, default=None, help="also write every figure here")
    args = ap.parse_args(argv)

    repeats = args.repeats or (1 if args.quick else 3)
    contracts = run_goals.pick_contracts(args.contracts)
    sets = datasets(args.out, 0.1 if args.quick else 1.0)
    run_goals.compile_bytecode()
    print(f"machine: {run_goals.machine()}", flush=True)
    for name, (path, man) in sets.items():
        print(f"data {name}: {man['traces']} traces, {man['spans']} spans ({path})", flush=True)
    print(f"contracts: {contracts}; median of {repeats}; commit {peer_agentevals.commit()}")
    measured = peer_agentevals.measure(jobs_for(sets, contracts), repeats)
    lines = report(measured, sets)
    for line in lines:
        print(line.line(), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "sets": {n: man for n, (_p, man) in sets.items()},
                    "jobs": {
                        n: {k: v for k, v in f.items() if k != "runs"} for n, f in measured.items()
                    },
                    "results": [vars(r) for r in lines],
                },
                indent=2,
            )
        )
    return 0 if all(r.passed is not False for r in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
