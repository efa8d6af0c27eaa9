"""Issue 18's ratios in one run: ``otel-oracles grade`` against the nearest peer (agentevals-cli
0.11) and against merely decoding and walking the same file, every job a whole process.

Jobs, on one synthetic export (``gen_traces.py``, 2,000 traces by default), run interleaved
(A B C ... A B C ...) ``--repeats`` times; the median of each job is reported:

  grade_json        ``otel-oracles grade traces.jsonl -c bench/contracts -q --json``
  grade_proto       the same on ``traces.binpb`` (the same spans as protobuf)
  agentevals        ``agentevals run -m tool_trajectory_avg_score -f otlp-json -o json`` with a
                    golden set, so the metric is scored for every trace (see below)
  agentevals_bare   the same without a golden set, as issue 18 names it: agentevals then
                    loads every trace and extracts its trajectory, but scores nothing
                    (``NOT_EVALUATED``, "no eval set provided")
  proto_walk        ``baselines.py proto_walk traces.binpb`` (parse, attributes to dicts)
  json_orjson       ``baselines.py json_orjson traces.jsonl`` (the same from OTLP/JSON)

CPU is user+sys of the process tree (``wait4``), wall is start to exit: imports, start-up and
printing the report count for every side. The ratios (I18a-c) compare CPU; wall ratios are in
the detail. Each job's output is checked for the work it claims: every trace graded (ours: a
verdict for each trace; agentevals: a result for each trace, scored where a golden set was
given), every span walked (baselines). A run that did not is an error, never a fast result.

agentevals matches a trace to a golden case by an explicit ``agentevals.eval.case.id`` or by
the first user message; the synthetic traces carry no user message, so a converter (not
timed) copies ``traces.jsonl`` with that attribute added to each resource (the service name)
and writes a golden set of one case per agent profile, expecting the profile's tools in order.

agentevals lives in its own virtualenv outside the repository (it pins its own OpenTelemetry,
protobuf and pydantic, and pulls in google-adk and litellm); install it once (needs PyPI):

    python bench/peer_agentevals.py --install-peer
    python bench/peer_agentevals.py                  # 2,000 traces, 3 repeats (~5-10 minutes)
    python bench/peer_agentevals.py --quick          # 50 traces, 1 repeat (what CI runs)

Without the peer's virtualenv the agentevals jobs are skipped with a message saying how to
install it, and the baseline ratios are still measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import gen_traces  # noqa: E402  (bench/ is a folder of scripts, not a package)
import run_goals  # noqa: E402

PEER_PACKAGE = "agentevals-cli"
PEER_SPEC = "agentevals-cli==0.11.*"
DEFAULT_PEER_VENV = Path.home() / ".cache" / "otel-oracles" / "peers" / "agentevals-0.11"
METRIC = "tool_trajectory_avg_score"
CASE_ID_KEY = "agentevals.eval.case.id"
PEER_GOAL = 15.0
WALK_GOAL = 1.0


class WorkMissing(RuntimeError):
    """A job exited as expected but its output does not show the work it was given."""


# ---- the peer's environment and input ------------------------------------------------------


def peer_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def install_peer(venv: Path) -> None:
    """A fresh virtualenv with agentevals-cli 0.11 from PyPI (the peer's own pins win there)."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [str(peer_python(venv)), "-m", "pip", "install", "--quiet", PEER_SPEC], check=True
    )


def peer_version(venv: Path) -> str | None:
    """The installed agentevals-cli version, or None when the venv or the package is absent."""
    if not peer_python(venv).exists():
        return None
    proc = subprocess.run(
        [
            str(peer_python(venv)),
            "-c",
            f"import importlib.metadata as m; print(m.version({PEER_PACKAGE!r}))",
        ],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def golden_set() -> dict[str, Any]:
    """One ADK eval case per agent profile of the generator, expecting its tools in order."""
    return {
        "eval_set_id": "otel-oracles-bench",
        "eval_cases": [
            {
                "eval_id": service,
                "conversation": [
                    {
                        "invocation_id": f"{agent}-1",
                        "user_content": {"role": "user", "parts": [{"text": f"{agent} task"}]},
                        "intermediate_data": {
                            "tool_uses": [{"name": t, "args": {}} for t in tools]
                        },
                    }
                ],
            }
            for service, agent, tools, _model in gen_traces.PROFILES
        ],
    }


def with_case_ids(source: Path, target: Path) -> None:
    """Copy an OTLP/JSON lines file, naming each resource's golden case by its service."""
    tmp = target.with_suffix(".tmp")
    with source.open("rb") as src, tmp.open("w", encoding="utf-8") as out:
        for line in src:
            request = json.loads(line)
            for rs in request.get("resourceSpans", ()):
                attrs = rs.setdefault("resource", {}).setdefault("attributes", [])
                service = next(
                    (a["value"].get("stringValue") for a in attrs if a["key"] == "service.name"),
                    None,
                )
                if service:
                    attrs.append({"key": CASE_ID_KEY, "value": {"stringValue": service}})
            out.write(json.dumps(request, separators=(",", ":")) + "\n")
    tmp.replace(target)


def peer_input(data: Path) -> tuple[Path, Path]:
    """The converted traces and the golden set beside the data set, rebuilt when older than
    the data set's OTLP/JSON file (the conversion is not part of any timed job)."""
    source = data / "traces.jsonl"
    folder = data / "agentevals"
    folder.mkdir(exist_ok=True)
    traces, evalset = folder / "traces.jsonl", folder / "evalset.json"
    if not traces.exists() or traces.stat().st_mtime < source.stat().st_mtime:
        with_case_ids(source, traces)
    evalset.write_text(json.dumps(golden_set(), indent=1))
    return traces, evalset


# ---- checking that each job did its work ---------------------------------------------------


def grade_work(stdout: str, traces: int) -> dict[str, int]:
    """``grade --json``: a verdict for every trace of the data set."""
    report = json.loads(stdout)
    verdicts = report["verdicts"]
    graded = len({v["trace_id"] for v in verdicts})
    if graded != traces or report.get("input_errors"):
        raise WorkMissing(
            f"grade graded {graded} of {traces} traces "
            f"({len(report.get('input_errors') or [])} input errors)"
        )
    return {
        "traces": graded,
        "verdicts": len(verdicts),
        "results": sum(len(v["results"]) for v in verdicts),
        "failed_verdicts": sum(1 for v in verdicts if not v["passed"]),
    }


def agentevals_work(stdout: str, traces: int, scored: bool) -> dict[str, int]:
    """``agentevals run -o json``: a result for every trace with its trajectory extracted,
    and, when a golden set was given, the metric scored for every trace."""
    report = json.loads(stdout)
    results = report.get("traces") or []
    statuses = Counter(
        m.get("eval_status")
        for r in results
        for m in r.get("metrics", ())
        if m.get("metric_name") == METRIC
    )
    extracted = sum(1 for r in results if r.get("num_invocations", 0) > 0)
    scored_n = statuses["PASSED"] + statuses["FAILED"]
    problem = None
    if report.get("errors"):
        problem = f"agentevals reported errors: {report['errors'][:3]}"
    elif len(results) != traces or extracted != traces:
        problem = f"agentevals returned {len(results)} results, {extracted} with a trajectory"
    elif scored and scored_n != traces:
        problem = f"agentevals scored {scored_n} of {traces} traces ({dict(statuses)})"
    if problem:
        raise WorkMissing(f"{problem}; expected {traces} traces")
    counts = (report.get("performance_metrics") or {}).get("counts") or {}
    return {
        "traces": len(results),
        "scored": scored_n,
        "passed": statuses["PASSED"],
        "not_evaluated": statuses["NOT_EVALUATED"],
        "tool_calls": int(counts.get("total_tool_calls", 0)),
    }


def baseline_work(stdout: str, spans: int) -> dict[str, int]:
    """``baselines.py``: every span of the data set walked."""
    walked = int(json.loads(stdout.strip().splitlines()[-1])["spans"])
    if walked != spans:
        raise WorkMissing(f"baseline walked {walked} of {spans} spans")
    return {"spans": walked}


# ---- jobs ------------------------------------------------------------------------------------


@dataclass
class Job:
    """One whole process to time; ``work`` turns its stdout into counts or raises."""

    name: str
    cmd: list[str]
    exit_codes: tuple[int, ...]
    work: Callable[[str], dict[str, int]]


def grader() -> list[str]:
    """The ``otel-oracles`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("otel-oracles")
    if not script.exists():
        raise SystemExit(f"error: {script} not found; run with the project's virtualenv python")
    return [str(script)]


def jobs_for(
    data: Path, manifest: dict[str, Any], contracts: Path, peer_venv: Path | None
) -> list[Job]:
    traces, spans = manifest["traces"], manifest["spans"]
    pb, jl = data / "traces.binpb", data / "traces.jsonl"
    grade = [*grader(), "grade", "--contracts", str(contracts), "--quiet", "--json"]
    baseline = [sys.executable, str(HERE / "baselines.py")]
    jobs = [
        Job("grade_json", [*grade, str(jl)], (0, 1), lambda out: grade_work(out, traces)),
        Job("grade_proto", [*grade, str(pb)], (0, 1), lambda out: grade_work(out, traces)),
    ]
    if peer_venv is not None:
        peer_traces, evalset = peer_input(data)
        run = [str(peer_venv / "bin" / "agentevals"), "run", "-m", METRIC, "-f", "otlp-json"]
        jobs += [
            Job(
                "agentevals",
                [*run, "-o", "json", "-e", str(evalset), str(peer_traces)],
                (0, 1),
                lambda out: agentevals_work(out, traces, scored=True),
            ),
            Job(
                "agentevals_bare",
                [*run, "-o", "json", str(jl)],
                (0, 1),
                lambda out: agentevals_work(out, traces, scored=False),
            ),
        ]
    jobs += [
        Job(
            "proto_walk",
            [*baseline, "proto_walk", str(pb)],
            (0,),
            lambda o: baseline_work(o, spans),
        ),
        Job(
            "json_orjson",
            [*baseline, "json_orjson", str(jl)],
            (0,),
            lambda o: baseline_work(o, spans),
        ),
    ]
    return jobs


def run_once(job: Job) -> dict[str, Any]:
    done = run_goals.run_process(job.cmd)
    if done.returncode not in job.exit_codes:
        raise RuntimeError(
            f"{job.name} exited {done.returncode}: {' '.join(job.cmd)}\n{done.stderr[-2000:]}"
        )
    try:
        work = job.work(done.stdout)
    except (ValueError, KeyError, TypeError) as exc:
        raise WorkMissing(
            f"{job.name} printed no report it should have ({exc}): {done.stdout[:300]!r}; "
            f"its stderr ends: {done.stderr[-1500:]}"
        ) from exc
    except WorkMissing as exc:
        raise WorkMissing(f"{job.name}: {exc}") from exc
    return {
        "cpu_s": done.cpu_s,
        "wall_s": done.wall_s,
        "maxrss_kb": done.maxrss_kb,
        "exit_code": done.returncode,
        "work": work,
    }


def measure(jobs: list[Job], repeats: int) -> dict[str, dict[str, Any]]:
    """Every job once per round, rounds repeated; medians of CPU, wall and peak RSS, and the
    last round's work counts (the same every round: the input does not change)."""
    runs: dict[str, list[dict[str, Any]]] = {job.name: [] for job in jobs}
    for rep in range(repeats):
        for job in jobs:
            run = run_once(job)
            runs[job.name].append(run)
            print(
                f"  round {rep + 1}/{repeats} {job.name:<16} {run['cpu_s']:7.2f} s CPU "
                f"{run['wall_s']:7.2f} s wall",
                file=sys.stderr,
                flush=True,
            )
    return {
        name: {
            **{k: statistics.median(r[k] for r in rs) for k in ("cpu_s", "wall_s", "maxrss_kb")},
            "work": rs[-1]["work"],
            "runs": rs,
        }
        for name, rs in runs.items()
    }


# ---- report --------------------------------------------------------------------------------


def commit() -> str:
    """The measured tree: HEAD, marked when the code under test has uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "otel_oracles", "native"],
        capture_output=True,
    ).returncode
    return (head or "unknown") + (" + uncommitted changes" if dirty else "")


def info(title: str, fig: dict[str, Any], spans: int, what: str) -> run_goals.Result:
    return run_goals.Result(
        "info",
        f"{title} (spans/s, CPU)",
        spans / fig["cpu_s"],
        "-",
        True,
        f"{fig['cpu_s']:.2f} s CPU, {fig['wall_s']:.2f} s wall, "
        f"peak RSS {fig['maxrss_kb'] / 1024:.0f} MB; {what}",
    )


def speed_ratio(
    goal: str, title: str, ours: dict[str, Any], theirs: dict[str, Any], target: float
) -> run_goals.Result:
    ratio = theirs["cpu_s"] / ours["cpu_s"]
    return run_goals.Result(
        goal,
        title,
        ratio,
        f">= {target:.2f}",
        ratio >= target,
        f"wall ratio {theirs['wall_s'] / ours['wall_s']:.2f}",
    )


def report(m: dict[str, dict[str, Any]], spans: int, peer: str | None) -> list[run_goals.Result]:
    gj, gp = m["grade_json"], m["grade_proto"]
    lines = [
        info(
            f"grade {name}",
            g,
            spans,
            f"{g['work']['verdicts']} verdicts over {g['work']['traces']} traces, "
            f"{g['work']['results']} results",
        )
        for name, g in (("OTLP/JSON", gj), ("protobuf", gp))
    ]
    if "agentevals" in m:
        ae, bare = m["agentevals"], m["agentevals_bare"]
        w, wb = ae["work"], bare["work"]
        lines += [
            info(
                f"agentevals {peer}, golden set",
                ae,
                spans,
                f"{w['traces']} traces, {w['scored']} scored ({w['passed']} passed)",
            ),
            info(
                f"agentevals {peer}, no golden set",
                bare,
                spans,
                f"{wb['traces']} trajectories, {wb['tool_calls']} tool calls, "
                f"{wb['scored']} scored ({wb['not_evaluated']} NOT_EVALUATED)",
            ),
        ]
    for name in ("proto_walk", "json_orjson"):
        lines.append(info(f"baseline {name}", m[name], spans, f"{m[name]['work']['spans']} spans"))
    if "agentevals" in m:
        peer_line = speed_ratio(
            "I18a", f"grade JSON vs agentevals {peer} (CPU)", gj, m["agentevals"], PEER_GOAL
        )
        bare = m["agentevals_bare"]
        peer_line.detail += (
            f"; vs agentevals without a golden set (scores nothing): "
            f"{bare['cpu_s'] / gj['cpu_s']:.2f} CPU, {bare['wall_s'] / gj['wall_s']:.2f} wall"
        )
    else:
        peer_line = run_goals.Result(
            "I18a",
            "grade JSON vs agentevals 0.11 (CPU)",
            None,
            f">= {PEER_GOAL:.2f}",
            None,
            f"no {PEER_PACKAGE} in the peer venv; install it with "
            "`python bench/peer_agentevals.py --install-peer` (needs PyPI)",
        )
    lines += [
        peer_line,
        speed_ratio("I18b", "grade protobuf vs proto_walk (CPU)", gp, m["proto_walk"], WALK_GOAL),
        speed_ratio("I18c", "grade JSON vs json_orjson (CPU)", gj, m["json_orjson"], WALK_GOAL),
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="50 traces, 1 repeat (CI's smoke run)")
    ap.add_argument("--traces", type=int, default=None, help="default 2000 (50 with --quick)")
    ap.add_argument("--repeats", type=int, default=None, help="default 3 (1 with --quick)")
    ap.add_argument("--concurrency", type=int, default=64, help="traces in flight in the export")
    ap.add_argument("--contracts", type=Path, default=None, help="default: bench/contracts")
    ap.add_argument("--peer-venv", type=Path, default=DEFAULT_PEER_VENV)
    ap.add_argument(
        "--install-peer", action="store_true", help=f"install {PEER_SPEC} into --peer-venv, exit"
    )
    ap.add_argument("--out", type=Path, default=HERE / "out", help="where data sets are kept")
    ap.add_argument("--json", type=Path, default=None, help="also write every figure here")
    args = ap.parse_args(argv)

    if args.install_peer:
        install_peer(args.peer_venv)
        print(f"{PEER_PACKAGE} {peer_version(args.peer_venv)} installed in {args.peer_venv}")
        return 0
    traces = args.traces or (50 if args.quick else 2000)
    repeats = args.repeats or (1 if args.quick else 3)
    contracts = run_goals.pick_contracts(args.contracts)
    peer = peer_version(args.peer_venv)
    data, manifest = run_goals.dataset(args.out, traces, args.concurrency)
    measured = commit()
    run_goals.compile_bytecode()
    print(f"machine: {run_goals.machine()}", flush=True)
    print(
        f"data: {manifest['traces']} traces, {manifest['spans']} spans, "
        f"{manifest['bytes_jsonl'] / 1e6:.0f} MB OTLP/JSON, "
        f"{manifest['bytes_binpb'] / 1e6:.0f} MB protobuf ({data}); contracts: {contracts}; "
        f"median of {repeats}; commit {measured}",
        flush=True,
    )
    if peer is None:
        print(f"peer: SKIP, no {PEER_PACKAGE} in {args.peer_venv}", flush=True)
    else:
        print(
            f"peer: {PEER_PACKAGE} {peer} ({args.peer_venv}), {METRIC}; golden set of "
            f"{len(gen_traces.PROFILES)} cases by {CASE_ID_KEY} (conversion not timed)",
            flush=True,
        )
    jobs = jobs_for(data, manifest, contracts, args.peer_venv if peer else None)
    try:
        m = measure(jobs, repeats)
    except (WorkMissing, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    results = report(m, manifest["spans"], peer)
    for r in results:
        print(r.line(), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "machine": run_goals.machine(),
                    "commit": measured,
                    "peer": peer,
                    "manifest": manifest,
                    "jobs": m,
                    "results": [r.__dict__ for r in results],
                },
                indent=2,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
