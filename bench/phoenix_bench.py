"""G5: otel-oracles' offline rate against Arize Phoenix's ingest-to-queryable rate.

Not part of CI: it needs Phoenix (from PyPI) in a SEPARATE virtualenv, since Phoenix pins
its own versions of OpenTelemetry, protobuf and pydantic, and a run takes minutes:

    python3 -m venv /tmp/phoenix-venv && /tmp/phoenix-venv/bin/pip install arize-phoenix
    python bench/phoenix_bench.py --phoenix-python /tmp/phoenix-venv/bin/python --traces 250

What it does: generates ``--traces`` synthetic traces (``gen_traces.py``, one OTLP protobuf
request body per batch), starts ``phoenix serve`` bound to 127.0.0.1 on free ports with a
fresh sqlite working directory, POSTs every body to ``/v1/traces`` as an exporter would, and
polls Phoenix's GraphQL API until every span is queryable. Phoenix's rate is spans divided
by the time from the first POST to the moment the last span is queryable; its peak RSS is
read from ``/proc``. otel-oracles' rate is ``grade`` on the same file (timed section, as in
``run_goals.py``). The goal is a ratio of at least 300.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_traces  # noqa: E402  (bench/ is a folder of scripts, not a package)
import run_goals  # noqa: E402

GOAL = 300.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(url: str, body: bytes, content_type: str) -> bytes:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return bytes(resp.read())


def span_count(base: str) -> int:
    """Spans Phoenix answers queries about, summed over projects (GraphQL ``recordCount``)."""
    query = {"query": "{ projects { edges { node { name recordCount } } } }"}
    data = json.loads(_post(f"{base}/graphql", json.dumps(query).encode(), "application/json"))
    return sum(int(e["node"]["recordCount"]) for e in data["data"]["projects"]["edges"])


def tree_rss_hwm_kb(pid: int) -> int:
    """Peak RSS (VmHWM) of a process plus its children (Phoenix may start workers)."""
    total = 0
    pids = [pid]
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(k) for k in kids]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"phoenix exited with {proc.returncode}")
        try:
            span_count(base)
            return
        except (urllib.error.URLError, ConnectionError, OSError, KeyError):
            time.sleep(0.5)
    raise RuntimeError("phoenix did not become ready")


def run_phoenix(
    phoenix_python: str, bodies: list[bytes], expected: int, timeout_s: float
) -> dict[str, Any]:
    port, grpc_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="phoenix-bench-") as work:
        env = {
            **os.environ,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_WORKING_DIR": work,
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        log = open(Path(work) / "phoenix.log", "wb")  # noqa: SIM115  (closed in finally)
        proc = subprocess.Popen(
            [phoenix_python, "-m", "phoenix.server.main", "serve"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_ready(base, proc, 180)
            idle_rss = tree_rss_hwm_kb(proc.pid)
            t0 = time.perf_counter()
            for body in bodies:
                _post(f"{base}/v1/traces", body, "application/x-protobuf")
            sent = time.perf_counter() - t0
            count = 0
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                count = span_count(base)
                if count >= expected:
                    break
                time.sleep(0.2)
            elapsed = time.perf_counter() - t0
            rss = tree_rss_hwm_kb(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()
            tail = (Path(work) / "phoenix.log").read_bytes()[-1500:].decode(errors="replace")
    return {
        "spans_queryable": count,
        "post_s": sent,
        "ingest_to_queryable_s": elapsed,
        "spans_per_s": count / elapsed,
        "peak_rss_mb": rss / 1024,
        "idle_rss_mb": idle_rss / 1024,
        "complete": count >= expected,
        "log_tail": tail,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--phoenix-python", default="/tmp/phoenix-venv/bin/python")
    ap.add_argument("--traces", type=int, default=250, help="~20 spans each")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for queryable")
    ap.add_argument("--contracts", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    data = args.out / f"phoenix-{args.traces}"
    params = gen_traces.Params(traces=args.traces)
    manifest = gen_traces.generate(params, data, pb_dir=True, jsonl=False)
    bodies = [p.read_bytes() for p in sorted((data / "pb").glob("*.pb"))]
    print(f"machine: {run_goals.machine()}")
    print(f"data: {manifest['traces']} traces, {manifest['spans']} spans, {len(bodies)} requests")

    phoenix = run_phoenix(args.phoenix_python, bodies, manifest["spans"], args.timeout)
    print(
        f"phoenix: {phoenix['spans_queryable']}/{manifest['spans']} spans queryable in "
        f"{phoenix['ingest_to_queryable_s']:.1f} s (POSTs took {phoenix['post_s']:.1f} s) = "
        f"{phoenix['spans_per_s']:.0f} spans/s; peak RSS {phoenix['peak_rss_mb']:.0f} MB"
    )
    ours: dict[str, Any] = {}
    ratio = None
    if run_goals.grade_options() is not None:
        contracts = run_goals.pick_contracts(args.contracts)
        ours = run_goals.run_job(run_goals.grade_args(data / "traces.binpb", contracts))
        ours["spans_per_s"] = manifest["spans"] / ours["wall_s"]
        ratio = ours["spans_per_s"] / phoenix["spans_per_s"]
        print(
            f"otel-oracles grade: {ours['spans_per_s']:.0f} spans/s (wall, timed section), "
            f"peak RSS {ours['tree_maxrss_kb'] / 1024:.0f} MB"
        )
        verdict = "PASS" if ratio >= GOAL else "FAIL"
        print(
            f"G5   otel-oracles rate / Phoenix ingest-to-queryable rate {ratio:>9.0f}  "
            f"goal >= {GOAL:.0f}  {verdict}"
        )
    else:
        print("G5   otel-oracles rate / Phoenix rate  n/a  SKIP (no grade command yet)")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"manifest": manifest, "phoenix": phoenix, "ours": ours, "ratio": ratio},
                indent=2,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
