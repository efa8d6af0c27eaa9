"""Coverage-guided fuzzing (atheris/libFuzzer) of every decoder and configuration loader.

Usage:
    python tools/fuzz/fuzz.py --list
    python tools/fuzz/fuzz.py --target proto-body [--runs 1000000] [--seed 1]
    python tools/fuzz/fuzz.py --all [--runs N] [--max-time SECONDS] [--dir DIR]

Each target runs in its own process (libFuzzer owns the process and exits when done), with a
per-input time budget (``--timeout``) and an RSS bound (``--rss-limit-mb``): an exception
other than the project's user errors, an input slower than the budget or memory past the
bound is a finding, saved as ``crash-*``, ``timeout-*`` or ``oom-*``. libFuzzer stops at a
finding; the run then resumes (new seed, same corpus) until ``--runs`` inputs were executed,
so one campaign reports several findings. Corpora, findings and scratch files live in
``--dir`` (default ``~/.cache/otel-oracles/fuzz``), outside the work tree; ``targets.py``
says what each target feeds to which entry point, ``docs/security.md`` how to use the results.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import targets  # noqa: E402  (the sibling module, found through the path above)

DEFAULT_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "otel-oracles/fuzz"
FINDING_PREFIXES = ("crash-", "timeout-", "oom-")
_DONE = re.compile(r"^Done (\d+) runs in (\d+) second", re.M)
_STATUS = re.compile(r"^#(\d+)\s", re.M)
_MAX_LEN = {"pipeline": 4 * 1024 * 1024}
_DEFAULT_MAX_LEN = 512 * 1024
MINIMIZE_STEPS = 20


@dataclass
class Finding:
    kind: str
    """crash, timeout or oom."""
    artifact: str
    signature: str
    """The exception and the innermost project frame, to tell findings apart."""


@dataclass
class TargetReport:
    target: str
    inputs: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    @property
    def execs_per_second(self) -> float:
        return self.inputs / self.seconds if self.seconds else 0.0


# -- worker: one libFuzzer process for one target ------------------------------------------


def worker(name: str, libfuzzer_args: list[str]) -> None:
    """Instrument the project, warm the target up, and hand the process to libFuzzer."""
    import atheris

    target = targets.TARGETS[name]
    with atheris.instrument_imports(include=["otel_oracles"]):
        import otel_oracles.assemble
        import otel_oracles.decode
        import otel_oracles.mapping
        import otel_oracles.model.contract
        import otel_oracles.pipeline
        import otel_oracles.server._http
        import otel_oracles.server._service  # noqa: F401
    if target.structured:
        targets._grading()  # contracts and conventions loaded once, not per input

    mutator = None
    if target.structured:
        import mutations

        def mutator(data: bytes, max_size: int, seed: int) -> bytes:
            if seed % 4:  # three in four: a structural mutation of a trace that still parses
                out = mutations.mutate(data, seed)
                if out is not None and len(out) <= max_size:
                    return out
            return bytes(atheris.Mutate(data, max_size))

    atheris.Setup([sys.argv[0], *libfuzzer_args], target.run, custom_mutator=mutator)
    atheris.Fuzz()


# -- driver --------------------------------------------------------------------------------


def _signature(log: str) -> str:
    """``ExcType at file:line`` of the innermost otel_oracles frame in the traceback."""
    frames = re.findall(r'File "([^"]*otel_oracles[^"]*)", line (\d+)', log)
    exc = re.findall(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exceeded|Interrupt)\b.*)$", log, re.M)
    where = f"{frames[-1][0].split('otel_oracles/')[-1]}:{frames[-1][1]}" if frames else "?"
    if exc:
        what = exc[-1][:160]
    elif "libFuzzer: timeout" in log:
        what = "timeout"
    elif "out-of-memory" in log:
        what = "out of memory"
    else:
        what = "?"
    return f"{what} at {where}"


def fuzz_target(
    name: str,
    runs: int,
    *,
    seed: int,
    workdir: Path,
    timeout: int,
    rss_limit_mb: int,
    max_time: int | None,
    max_findings: int,
    log: bool,
) -> TargetReport:
    """Run ``name`` for ``runs`` inputs (or ``max_time`` seconds), resuming after findings."""
    base = workdir / name
    seeds, corpus, artifacts = base / "seeds", base / "corpus", base / "findings"
    for d in (corpus, artifacts):
        d.mkdir(parents=True, exist_ok=True)
    if not seeds.is_dir():
        targets.write_seeds(targets.TARGETS[name], seeds)
    env = {**os.environ, "OTEL_ORACLES_FUZZ_SCRATCH": str(base / "scratch")}
    report = TargetReport(name)
    started = time.monotonic()
    attempt = 0
    while report.inputs < runs and len(report.findings) < max_findings:
        left = None if max_time is None else int(max_time - (time.monotonic() - started))
        if left is not None and left <= 0:
            break
        before = {p.name for p in artifacts.iterdir()}
        args = [
            f"-runs={runs - report.inputs}",
            f"-seed={seed + attempt}",
            f"-timeout={timeout}",
            f"-rss_limit_mb={rss_limit_mb}",
            f"-max_len={_MAX_LEN.get(name, _DEFAULT_MAX_LEN)}",
            f"-artifact_prefix={artifacts}/",
            "-print_final_stats=1",
            *([f"-max_total_time={left}"] if left is not None else []),
            str(corpus),
            str(seeds),
        ]
        t0 = time.monotonic()
        proc = _run_worker(name, args, env)
        report.seconds += time.monotonic() - t0
        (base / f"log-{attempt}.txt").write_text(proc.stdout)
        done = _DONE.search(proc.stdout)
        statuses = _STATUS.findall(proc.stdout)
        executed = int(done.group(1)) if done else int(statuses[-1]) if statuses else 0
        report.inputs += executed
        new = sorted(p for p in artifacts.iterdir() if p.name not in before)
        for path in new:
            kind = path.name.split("-", 1)[0]
            report.findings.append(Finding(kind, str(path), _signature(proc.stdout)))
            if log:
                print(f"  {name}: {kind} {path} ({report.findings[-1].signature})", flush=True)
        if not new:
            if proc.returncode != 0:
                tail = proc.stdout.strip().splitlines()[-5:]
                raise RuntimeError(f"{name}: fuzzer exited {proc.returncode}: {tail}")
            break  # ran to the end (runs or time) without a finding
        if executed == 0:
            break  # crashes at start-up: resuming would repeat it
        attempt += 1
    return report


def _run_worker(
    name: str, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """libFuzzer's log and the target's traceback (atheris prints it to stdout), as one text."""
    return subprocess.run(
        [sys.executable, __file__, "--worker", name, "--", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        check=False,
    )


def minimize(name: str, crash: Path, out: Path, runs: int, workdir: Path) -> int:
    """Shrink the input ``crash`` of target ``name`` to a smaller one that still fails,
    written to ``out``. libFuzzer's own ``-minimize_crash`` re-executes ``argv[0]``, which is
    a script here, so its steps (``-minimize_crash_internal_step``: ``runs`` mutations for a
    shorter failing input) are driven from this process until a step finds none."""
    env = {**os.environ, "OTEL_ORACLES_FUZZ_SCRATCH": str(workdir / name / "scratch")}
    steps = workdir / name / "minimize"
    steps.mkdir(parents=True, exist_ok=True)
    best = crash
    for step in range(MINIMIZE_STEPS):
        candidate = steps / f"step-{step}"
        candidate.unlink(missing_ok=True)
        args = [
            "-minimize_crash_internal_step=1",
            f"-runs={runs}",
            f"-exact_artifact_path={candidate}",
            str(best),
        ]
        _run_worker(name, args, env)
        if not candidate.exists() or candidate.stat().st_size >= best.stat().st_size:
            break
        best = candidate
    if best == crash and _run_worker(name, [str(crash)], env).returncode == 0:
        print(f"{crash} does not fail target {name}", file=sys.stderr)
        return 1
    out.write_bytes(best.read_bytes())
    print(f"{crash} ({crash.stat().st_size} bytes) -> {out} ({out.stat().st_size} bytes)")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        worker(argv[1], argv[3:] if argv[2:3] == ["--"] else argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--target", action="append", choices=sorted(targets.TARGETS))
    which.add_argument("--all", action="store_true", help="every target, one after another")
    which.add_argument("--list", action="store_true", help="list the targets and exit")
    parser.add_argument(
        "--runs", type=int, default=1_000_000, help="inputs per target (default %(default)s)"
    )
    parser.add_argument("--max-time", type=int, help="seconds per target (default: no bound)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="corpora and findings")
    parser.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    parser.add_argument("--rss-limit-mb", type=int, default=2048)
    parser.add_argument("--max-findings", type=int, default=10, help="per target")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.add_argument(
        "--minimize", nargs=2, type=Path, metavar=("CRASH", "OUT"),
        help="shrink one finding of --target (runs: --runs, e.g. 5000) instead of fuzzing",
    )  # fmt: skip
    ns = parser.parse_args(argv)
    if ns.list:
        for t in targets.TARGETS.values():
            print(f"{t.name:16} {t.summary}")
        return 0
    names = sorted(n for n, t in targets.TARGETS.items() if not t.selftest) if ns.all else ns.target
    if ns.minimize:
        crash, out = ns.minimize
        return minimize(names[0], crash, out, runs=ns.runs, workdir=ns.dir)
    reports = []
    for name in names:
        r = fuzz_target(
            name,
            ns.runs,
            seed=ns.seed,
            workdir=ns.dir,
            timeout=ns.timeout,
            rss_limit_mb=ns.rss_limit_mb,
            max_time=ns.max_time,
            max_findings=ns.max_findings,
            log=not ns.json,
        )
        reports.append(r)
        if not ns.json:
            print(
                f"{name:16} inputs={r.inputs:<9} seconds={r.seconds:<8.0f} "
                f"execs/s={r.execs_per_second:<7.0f} findings={len(r.findings)}",
                flush=True,
            )
    if ns.json:
        print(json.dumps([{**asdict(r), "execs_per_second": r.execs_per_second} for r in reports]))
    return 1 if any(r.findings for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
