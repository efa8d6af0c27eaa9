"""Run ONE measured job in this (fresh) process and print its figures as one JSON line.

``run_goals.py`` starts this script in a subprocess per measurement, so every job starts with
a clean heap (peak RSS means something) and imports are not charged to the timed section.
The parent reads CPU time and peak RSS of the whole process tree from ``os.wait4``; this
script reports the timed section only (``wall_s``, ``cpu_s``: user+sys of this process and
of any worker processes it waited for).

Usage:
    python bench/measure.py baseline proto_walk FILE
    python bench/measure.py cli -- grade FILE... --contracts DIR [--workers N]
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
