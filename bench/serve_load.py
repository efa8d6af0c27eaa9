"""Load generator for the live path: ``otel-oracles serve`` under sustained OTLP/HTTP load.

Measures, each against a fresh ``serve`` subprocess grading with the bench contracts and
emitting to a counting OTLP sink in its own process (bench/sink_proc.py):

1. **throughput**: every request of the synthetic data set (bench/gen_traces.py, 512-span
   protobuf batches) sent as fast as ``--connections`` keep-alive connections allow; a 429/503
   is retried after a short pause, as an SDK or collector queue would. Reports spans/s
   received, spans/s graded end to end (first byte sent -> last verdict exported), the CPU
   of the receiving process (spans per receiving-core second: one process, one event loop)
   and of its grading worker processes, and the zero-loss check: traces sent == traces
   graded, spans refused == spans re-sent. ``threads`` runs the same with
   ``grading.processes: 0`` (grading on threads of the receiving process), side by side.
   ``receive`` runs it with a contract that selects nothing: the receive path's own cost.
   ``baseline`` sends the same requests to bench/baseline_receiver.py (one aiohttp process
   that decodes and walks every span into dicts, the issue's reference point) and the
   summary prints the receiving core's spans per CPU-second as a ratio of it.
2. **latency**: the same data paced at half the measured end-to-end rate; p50/p99 of the time
   from a trace's completion (end of its decision wait) to its verdict being exported, as the
   server measures it (``GET /stats``, ``latency_ms``).
3. **memory**: the data sent with a decision wait so long that nothing is graded; (RSS after -
   RSS before) / spans buffered = bytes per buffered span.
4. **sustained**: a steady stream, unlike throughput's burst (everything sent in ~1.4 s, then
   each trace waits out the decision wait and the join window, so the workers idle for the
   first ~6 s): requests paced at each of ``--sustained-rates`` offered spans/s for
   ``--sustained-seconds`` (longer than the windows; the data set is sent again and again,
   each pass under fresh trace ids and session ids, so passes share no run however short
   they are). Over the steady part (from ``decision_wait`` +
   ``join_window`` + 2 s after the first byte to the last request) it reports spans/s graded,
   CPU per span of the receiving process and of the workers, and the backlog (buffered spans +
   traces in the workers) growth in seconds of offered load; then every trace sent must be
   graded (zero loss). A rate is *held* with no request refused, at least 97% of it sent,
   at least 95% of it graded over the steady part and less than 2 s of load added to the
   backlog; ``sustained_max_spans_per_s`` is the highest rate held (rates above the first
   one not held are skipped; ``limit_found`` says whether one was not held).

    python bench/serve_load.py                 # 5,000 traces (~100k spans)
    python bench/serve_load.py --quick         # 300 traces, seconds (harness check)
    python bench/serve_load.py --phases latency --half-rate 1000   # one figure
    python bench/serve_load.py --phases throughput,threads   # worker processes vs threads
    python bench/serve_load.py --phases sustained --sustained-rates 8000,12000,16000

Prints one JSON object (also written to bench/out/serve_load.json). Run it on an otherwise
idle machine: the load generator and the sink share the cores with the server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_traces import Params, ensure  # noqa: E402 - bench scripts import their siblings

DECISION_WAIT_S = 1.0
"""The decision wait every phase's serve runs with (``Serve``), but the memory phase."""
JOIN_WINDOW_S = 5.0
"""serve's default ``assembly.join_window``: a complete trace waits this long for its peers."""

SERVE = [sys.executable, "-c", "from otel_oracles.cli import main; main()", "serve"]
CLK = os.sysconf("SC_CLK_TCK")


def read_bodies(path: Path) -> list[tuple[bytes, int]]:
    """(request body, span count) for every length-prefixed request in ``traces.binpb``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    out = []
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        body = data[pos + 4 : pos + 4 + n]
        req = ExportTraceServiceRequest.FromString(body)
        spans = sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
        out.append((body, spans))
        pos += 4 + n
    return out


class Sink:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "sink_proc.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.endpoint = json.loads(self.proc.stdout.readline())["endpoint"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


class Serve:
    """A ``serve`` subprocess; ports come from its ``listening`` log line."""

    def __init__(self, sink: Sink, contracts: Path, processes: int | str = "auto",
                 **assembly: str | int) -> None:  # fmt: skip
        self.dir = tempfile.TemporaryDirectory()
        cfg = Path(self.dir.name) / "serve.yaml"
        settings = {"decision_wait": f"{DECISION_WAIT_S:g}s", "max_trace_age": "120s",
                    "max_traces": 50_000, "max_buffered_spans": 2_000_000,
                    **assembly}  # fmt: skip
        cfg.write_text(
            "receivers:\n  grpc: {enabled: false, endpoint: '127.0.0.1:0'}\n"
            "  http: {endpoint: '127.0.0.1:0'}\n  max_request_bytes: 16MiB\n"
            f"assembly: {json.dumps(settings)}\n"
            f"grading: {{contracts: [{json.dumps(str(contracts))}], processes: {processes}}}\n"
            "shutdown_timeout: 60s\n"
        )
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
               "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}  # fmt: skip
        self.proc = subprocess.Popen(
            [*SERVE, "-c", str(cfg)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
            env=env, text=True,
        )  # fmt: skip
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if '"listening"' in line:
                self.port = int(json.loads(line)["http_port"])
                break
        else:
            raise RuntimeError("serve did not start")
        self._stats_conn: http.client.HTTPConnection | None = None
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def stats(self) -> dict[str, Any]:
        """``GET /stats`` over one kept-alive connection: ``wait_graded`` polls it every
        50 ms, and a new connection per poll cost the receiving process ~0.9 ms of CPU each
        (accept and its socket setup), counted in its spans per CPU-second."""
        for attempt in (1, 2):
            if self._stats_conn is None:
                self._stats_conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                self._stats_conn.request("GET", "/stats")
                return json.loads(self._stats_conn.getresponse().read())
            except (http.client.HTTPException, ConnectionError):
                self._stats_conn.close()  # closed by serve's idle timeout: once more, anew
                self._stats_conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def cpu_seconds(self) -> float:
        """CPU of the receiving process alone (its grading threads included)."""
        return _cpu_of(self.proc.pid)

    def workers_cpu_seconds(self) -> float:
        """CPU of serve's child processes (the grading workers), alive ones only."""
        total = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                total += (int(fields[11]) + int(fields[12])) / CLK
        return total

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self, kill: bool = False) -> None:
        if self._stats_conn is not None:
            self._stats_conn.close()
        self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.proc.wait(120)
        self.dir.cleanup()


def send_all(port: int, bodies: Sequence[tuple[Any, int]], connections: int,
             rate: float | None = None,
             render: Callable[[Any], bytes] | None = None) -> dict[str, int]:  # fmt: skip
    """Send every body once (retrying refusals); ``rate`` = spans/s to pace at, else max.
    ``render`` turns an item's first element into the body just before it is sent (the
    sustained phase's passes over the data, each under fresh trace ids)."""
    counts = {"refused_spans": 0, "refusals": 0, "sent_spans": 0}
    lock = threading.Lock()
    start = time.perf_counter()
    per_conn = [bodies[i::connections] for i in range(connections)]

    def worker(index: int, chunk: list[tuple[bytes, int]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Content-Type": "application/x-protobuf"}
        sent = 0
        # Paced connections are staggered by a fraction of their interval: independent
        # senders are not phase-locked, and sending the first requests of every connection
        # at the same instant would measure one burst of 4 x 512 spans, not the rate.
        offset = index * (chunk[0][1] if chunk else 0) / (rate or 1) if rate else 0.0
        for item, n in chunk:
            if rate:
                due = start + offset + (sent * connections) / rate
                if (pause := due - time.perf_counter()) > 0:
                    time.sleep(pause)
            body = render(item) if render is not None else item
            while True:
                conn.request("POST", "/v1/traces", body, headers)
                resp = conn.getresponse()
                resp.read()
                if resp.status == 200:
                    break
                if resp.status not in (429, 503):
                    raise RuntimeError(f"unexpected status {resp.status}")
                with lock:
                    counts["refused_spans"] += n
                    counts["refusals"] += 1
                time.sleep(0.05)
            sent += n
        conn.close()
        with lock:
            counts["sent_spans"] += sent

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(per_conn)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts


def wait_graded(serve: Serve, traces: int, timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = serve.stats()
        if sum(stats["graded_traces"].values()) >= traces:
            return stats
        time.sleep(0.05)
    raise RuntimeError(f"only {serve.stats()['graded_traces']} of {traces} traces graded")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--traces", type=int, default=5_000)
    ap.add_argument("--quick", action="store_true", help="300 traces: checks the harness runs")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--contracts", type=Path, default=HERE / "contracts")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "serve_load.json")
    ap.add_argument("--phases",
                    default="baseline,receive,throughput,threads,latency,memory,sustained",
                    help="comma-separated subset to run (iterating on one figure)")  # fmt: skip
    ap.add_argument("--half-rate", type=float, default=None,
                    help="spans/s for the latency phase when throughput is not run")  # fmt: skip
    ap.add_argument("--sustained-rates", default="6000,9000,12000,15000",
                    help="offered spans/s of phase 4 (sustained), lowest first")  # fmt: skip
    ap.add_argument("--sustained-seconds", type=float, default=40.0,
                    help="how long the sustained phase sends at each rate (longer than "
                         "decision wait + join window + 2 s)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=1,
                    help="run the phases this many times, interleaved; report medians")  # fmt: skip
    args = ap.parse_args(argv)
    phases = set(args.phases.split(","))
    n_traces = 300 if args.quick else args.traces
    if args.quick:  # the harness check: one modest rate, just past the windows
        args.sustained_rates, args.sustained_seconds = "400", DECISION_WAIT_S + JOIN_WINDOW_S + 8
    data = HERE / "out" / f"serve-data-{n_traces}"
    manifest = ensure(Params(traces=n_traces), data, jsonl=False)
    bodies = read_bodies(data / "traces.binpb")
    spans = sum(n for _, n in bodies)
    sink = Sink()
    result: dict[str, Any] = {"traces": n_traces, "spans": spans, "requests": len(bodies),
                              "cpus": os.cpu_count(), "connections": args.connections,
                              "repeats": args.repeats,
                              "load_average_before": os.getloadavg()}  # fmt: skip
    runs: list[dict[str, Any]] = []
    try:
        for _ in range(args.repeats):
            run: dict[str, Any] = {}
            if "baseline" in phases:
                run["baseline_receiver"] = phase_baseline(bodies, args.connections)
            if "receive" in phases:
                run["receive_only"] = phase_receive_only(sink, bodies, n_traces, args.connections)
            if "throughput" in phases:
                run["throughput"] = phase_throughput(sink, bodies, n_traces, args)
            if "threads" in phases:
                run["throughput_threads"] = phase_throughput(sink, bodies, n_traces, args, 0)
            if "latency" in phases:
                half = args.half_rate or run["throughput"]["graded_spans_per_s"] / 2
                run["latency_at_half_load"] = phase_latency(sink, bodies, n_traces, args, half)
            if "memory" in phases:
                run["memory"] = phase_memory(sink, bodies, manifest, args)
            if "sustained" in phases:
                run["sustained"] = phase_sustained(sink, bodies, n_traces, args)
            base = run.get("baseline_receiver", {}).get("spans_per_cpu_s")
            if base and "throughput" in run:
                # The goal: >= 50k spans/s per receiving core where this baseline does 63-71k.
                run["receiving_core_vs_baseline"] = round(
                    run["throughput"]["spans_per_receiving_cpu_s"] / base, 2
                )
            runs.append(run)
    finally:
        sink.close()
    result.update(_medians(runs))
    if len(runs) > 1:
        result["runs"] = runs
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    tp = result.get("throughput", {})
    th = result.get("throughput_threads", {})
    ro = result.get("receive_only", {})
    base = result.get("baseline_receiver", {}).get("spans_per_cpu_s")
    print(
        f"baseline receiver (decode + walk into dicts): {base} spans per CPU-second; serve's "
        f"receiving core with grading on: {result.get('receiving_core_vs_baseline')} x that",
        file=sys.stderr,
    )
    print(
        f"serve receive path alone: {ro.get('spans_per_receiving_cpu_s')} spans per CPU-second; "
        f"with grading: {tp.get('graded_spans_per_s')} spans/s graded end to end "
        f"({tp.get('spans_per_receiving_cpu_s')} spans per receiving-process CPU-second, "
        f"{tp.get('spans_per_total_cpu_s')} per CPU-second of all processes; threads only: "
        f"{th.get('graded_spans_per_s')} spans/s), zero loss: "
        f"{tp.get('zero_loss')}; p99 completion->verdict at half load: "
        f"{result.get('latency_at_half_load', {}).get('p99')} ms; "
        f"{result.get('memory', {}).get('bytes_per_buffered_span')} bytes per buffered span",
        file=sys.stderr,
    )
    if su := result.get("sustained"):
        held = su.get("sustained_max_spans_per_s")
        at = next((r for r in su["rates"] if r["offered_spans_per_s"] == held), {})
        print(
            f"sustained: highest offered rate held {held} spans/s (graded "
            f"{at.get('graded_spans_per_s')} spans/s over the steady part, CPU per span: "
            f"receiving {at.get('receiving_us_per_span')} us, workers "
            f"{at.get('workers_us_per_span')} us); per rate: "
            + ", ".join(f"{r['offered_spans_per_s']}: {'held' if r['held'] else 'not held'}"
                        for r in su["rates"]),
            file=sys.stderr,
        )  # fmt: skip
    sustained_lossless = all(r["zero_loss"] for r in result.get("sustained", {}).get("rates", []))
    return 0 if tp.get("zero_loss", True) and sustained_lossless else 1


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per key, the median over runs of every number (the first run's value otherwise)."""
    if len(runs) == 1:
        return runs[0]
    out: dict[str, Any] = {}
    for key, first in runs[0].items():
        values = [r[key] for r in runs if key in r]
        if isinstance(first, dict):
            out[key] = _medians(values)
        elif isinstance(first, int | float) and not isinstance(first, bool):
            out[key] = round(statistics.median(values), 3)
        else:
            out[key] = first if all(v == first for v in values) else values
    return out


def phase_baseline(bodies: list[tuple[bytes, int]], connections: int) -> dict[str, Any]:
    """The issue's reference receiver (bench/baseline_receiver.py: decode + walk into dicts,
    one process, same framework and senders), for the side-by-side ratio."""
    spans = sum(n for _, n in bodies)
    proc = subprocess.Popen([sys.executable, str(HERE / "baseline_receiver.py")],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        port = int(json.loads(proc.stdout.readline())["port"])
        cpu0, t0 = _cpu_of(proc.pid), time.perf_counter()
        send_all(port, bodies, connections)
        dt, cpu = time.perf_counter() - t0, _cpu_of(proc.pid) - cpu0
    finally:
        proc.kill()
        proc.wait(10)
    return {"received_spans_per_s": round(spans / dt), "spans_per_cpu_s": round(spans / cpu)}


def phase_receive_only(sink: Sink, bodies: list[tuple[bytes, int]], n_traces: int,
                       connections: int) -> dict[str, Any]:  # fmt: skip
    """The receive path alone: a contract that selects nothing, so traces are decoded,
    assembled, released and dropped by the selector (no mapping, checks or export)."""
    spans = sum(n for _, n in bodies)
    with tempfile.TemporaryDirectory() as none_dir:
        (Path(none_dir) / "none.yaml").write_text(
            "id: selects-nothing\nname: n\ndescription: receive-path baseline\n"
            "match: {resource: {service.name: no-such-service}}\n"
            "invariants: [{type: tool_not_called, tool: x}]\n"
        )
        serve = Serve(sink, Path(none_dir))
        cpu0, t0 = serve.cpu_seconds(), time.perf_counter()
        send_all(serve.port, bodies, connections)
        t_sent, cpu_sent = time.perf_counter(), serve.cpu_seconds() - cpu0
        wait_graded(serve, n_traces)
        cpu = serve.cpu_seconds() - cpu0
        serve.stop()
    return {
        "received_spans_per_s": round(spans / (t_sent - t0)),
        "spans_per_receiving_cpu_s": round(spans / cpu),
        # Until the last request is answered (decode, buffer, spool append) / after it (the
        # decision wait and join window, release, hand-over, results, spool settle).
        "receiving_cpu_s_while_sending": round(cpu_sent, 2),
        "receiving_cpu_s_after": round(cpu - cpu_sent, 2),
    }


def phase_throughput(sink: Sink, bodies: list[tuple[bytes, int]], n_traces: int,
                     args: argparse.Namespace,
                     processes: int | str = "auto") -> dict[str, Any]:  # fmt: skip
    """Everything sent as fast as the connections allow, grading on. ``receiving`` is the
    process the senders talk to; ``workers`` its grading processes (none with 0)."""
    spans = sum(n for _, n in bodies)
    serve = Serve(sink, args.contracts, processes)
    cpu0, w0, t0 = serve.cpu_seconds(), serve.workers_cpu_seconds(), time.perf_counter()
    sent = send_all(serve.port, bodies, args.connections)
    t_sent = time.perf_counter()
    stats = wait_graded(serve, n_traces)
    t_done, cpu = time.perf_counter(), serve.cpu_seconds() - cpu0
    wcpu = serve.workers_cpu_seconds() - w0
    graded = sum(stats["graded_traces"].values())
    serve.stop()
    return {
        "processes": processes,
        "received_spans_per_s": round(spans / (t_sent - t0)),
        "graded_spans_per_s": round(spans / (t_done - t0)),
        "receiving_cpu_s": round(cpu, 2),
        "workers_cpu_s": round(wcpu, 2),
        "spans_per_receiving_cpu_s": round(spans / cpu),
        "spans_per_total_cpu_s": round(spans / (cpu + wcpu)),
        "cores_busy": round((cpu + wcpu) / (t_done - t0), 2),
        "traces_graded": graded,
        "zero_loss": graded == n_traces
        and stats["received"].get("http.traces", 0) == spans
        and stats["rejected"].get("buffer_full", 0) == sent["refused_spans"],
        "refused_then_resent_spans": sent["refused_spans"],
        "latency_ms_at_full_load": stats["latency_ms"],
    }


def phase_latency(sink: Sink, bodies: list[tuple[bytes, int]], n_traces: int,
                  args: argparse.Namespace, half: float) -> dict[str, Any]:  # fmt: skip
    """The same data paced at ``half`` spans/s: completion -> verdict latency."""
    spans = sum(n for _, n in bodies)
    serve = Serve(sink, args.contracts)
    cpu0, t0 = serve.cpu_seconds(), time.perf_counter()
    send_all(serve.port, bodies, args.connections, rate=half)
    stats = wait_graded(serve, n_traces)
    dt, cpu = time.perf_counter() - t0, serve.cpu_seconds() - cpu0
    serve.stop()
    return {
        "offered_spans_per_s": round(half),
        "achieved_spans_per_s": round(spans / dt),
        "serve_cores_busy": round(cpu / dt, 2),
        **{k: v for k, v in stats["latency_ms"].items()},
    }


def phase_memory(sink: Sink, bodies: list[tuple[bytes, int]], manifest: dict[str, Any],
                 args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """Bytes per buffered span: a decision wait so long that nothing completes in the run."""
    spans = sum(n for _, n in bodies)
    serve = Serve(sink, args.contracts, decision_wait="600s", max_trace_age="600s")
    time.sleep(0.5)
    rss0 = serve.rss_bytes()
    send_all(serve.port, bodies, args.connections)
    time.sleep(0.5)
    stats = serve.stats()
    rss1 = serve.rss_bytes()
    serve.stop(kill=True)
    return {
        "rss_idle_mb": round(rss0 / 2**20, 1),
        "rss_buffered_mb": round(rss1 / 2**20, 1),
        "buffered_spans": stats["buffered_spans"],
        "bytes_per_buffered_span": round((rss1 - rss0) / max(stats["buffered_spans"], 1)),
        "wire_bytes_per_span": round(manifest["bytes_binpb"] / spans),
    }


SESSION_KEYS = (b"gen_ai.conversation.id", b"session.id")
"""``model.span.SESSION_ATTRIBUTES``: the span attributes serve joins runs by."""


class Passes:
    """The data set's requests sent pass after pass, each pass under its own trace ids and
    session ids, so one pass shares nothing with the last: however short a pass is at a high
    rate, no trace of it is joined to the previous pass's runs.

    A body's ids are rewritten in place from offsets found once: the pass number XORed into
    the first four bytes of every 16-byte ``trace_id`` field (links' too), and, five bits a
    byte (ASCII stays ASCII, so the string stays UTF-8 and keeps its length), into the first
    four bytes of every session attribute's string value. Rendering a ~780 KB request costs
    a copy and a few slice assignments per span, not a protobuf round trip on the sending
    threads, which share the cores with serve."""

    def __init__(self, bodies: list[tuple[bytes, int]]) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        self.bodies = bodies
        self.offsets: list[list[int]] = []
        self.session_offsets: list[list[int]] = []
        self.trace_ids: list[set[bytes]] = []
        for body, spans in bodies:
            req = ExportTraceServiceRequest.FromString(body)
            all_spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
            ids = {s.trace_id for s in all_spans}
            # Tag of field 1, length-delimited (0x0a), length 16 (0x10), then the id.
            found = [m.start() + 2 for m in re.finditer(b"\x0a\x10", body)
                     if body[m.start() + 2 : m.start() + 18] in ids]  # fmt: skip
            if len(found) < spans:
                raise RuntimeError(f"found {len(found)} trace ids in a body of {spans} spans")
            self.offsets.append(found)
            self.trace_ids.append(ids)
            self.session_offsets.append(_session_offsets(body, all_spans))

    def schedule(self, spans: float) -> list[tuple[tuple[int, int], int]]:
        """((pass, request index), span count) items, in order, totalling about ``spans``."""
        out: list[tuple[tuple[int, int], int]] = []
        total = 0
        while total < spans:
            k, i = divmod(len(out), len(self.bodies))
            out.append(((k, i), self.bodies[i][1]))
            total += self.bodies[i][1]
        return out

    def render(self, key: tuple[int, int]) -> bytes:
        k, i = key
        if k == 0:
            return self.bodies[i][0]
        body = bytearray(self.bodies[i][0])
        for off in self.offsets[i]:
            body[off : off + 4] = (int.from_bytes(body[off : off + 4]) ^ k).to_bytes(4)
        if k >= 1 << 20:
            raise ValueError(f"pass {k}: session ids are rewritten for at most 2**20 passes")
        mask = int.from_bytes(bytes((k >> shift) & 0x1F for shift in (15, 10, 5, 0)))
        for off in self.session_offsets[i]:
            body[off : off + 4] = (int.from_bytes(body[off : off + 4]) ^ mask).to_bytes(4)
        return bytes(body)

    def traces(self, items: list[tuple[tuple[int, int], int]]) -> int:
        """Distinct traces the items carry (a trace's spans span several requests)."""
        return len({(k, t) for (k, i), _ in items for t in self.trace_ids[i]})


def _session_offsets(body: bytes, spans: Sequence[Any]) -> list[int]:
    """Offsets in ``body`` of the first byte of every session attribute's string value
    (``SESSION_KEYS``), each found as its ``KeyValue``'s bytes: the key (field 1), then the
    value (field 2, an ``AnyValue`` of one ``string_value``, field 1). Raises when they are
    not all found that way or a value does not start with four ASCII bytes."""
    expected = sum(
        1
        for s in spans
        for kv in s.attributes
        if kv.key.encode() in SESSION_KEYS and kv.value.HasField("string_value")
    )
    found: list[int] = []
    for key in SESSION_KEYS:
        head = bytes([0x0A, len(key)]) + key + b"\x12"
        for m in re.finditer(re.escape(head), body):
            at = m.end()
            length = body[at + 2]  # short values: one-byte lengths
            if body[at] == length + 2 and body[at + 1] == 0x0A and length < 0x80:
                found.append(at + 3)
    if len(found) != expected or any(not body[o : o + 4].isascii() or body[o - 1] < 4
                                     for o in found):  # fmt: skip
        raise RuntimeError(f"found {len(found)} of {expected} session ids as expected")
    return sorted(found)


def phase_sustained(sink: Sink, bodies: list[tuple[bytes, int]], n_traces: int,
                    args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    """A steady stream at each offered rate (module docstring, phase 4)."""
    passes = Passes(bodies)
    spans_per_trace = sum(n for _, n in bodies) / n_traces
    warmup = DECISION_WAIT_S + JOIN_WINDOW_S + 2.0
    rates: list[dict[str, Any]] = []
    for rate in (float(r) for r in args.sustained_rates.split(",")):
        one = _sustained_at(sink, passes, rate, args, warmup, spans_per_trace)
        rates.append(one)
        if not one["held"]:
            break
    held = [r["offered_spans_per_s"] for r in rates if r["held"]]
    return {"seconds": args.sustained_seconds, "steady_from_s": warmup,
            "sustained_max_spans_per_s": max(held) if held else None,
            "limit_found": bool(rates) and not rates[-1]["held"],
            "rates": rates}  # fmt: skip


def _sustained_at(sink: Sink, passes: Passes, rate: float, args: argparse.Namespace,
                  warmup: float, spans_per_trace: float) -> dict[str, Any]:  # fmt: skip
    items = passes.schedule(rate * args.sustained_seconds)
    spans = sum(n for _, n in items)
    traces = passes.traces(items)
    # Traces cut off by the last request are released at max_trace_age: soon after it.
    serve = Serve(sink, args.contracts, max_trace_age="15s")
    samples: list[tuple[float, int, int, float, float]] = []
    done = threading.Event()

    def sample() -> None:
        stats = serve.stats()
        samples.append((
            time.perf_counter() - t0,
            sum(stats["graded_traces"].values()),
            stats["buffered_spans"] + round(stats["grading_inflight"] * spans_per_trace),
            serve.cpu_seconds(),
            serve.workers_cpu_seconds(),
        ))  # fmt: skip

    def sampler() -> None:
        while not done.wait(0.5):
            sample()

    t0 = time.perf_counter()
    sample()
    watcher = threading.Thread(target=sampler, daemon=True)
    watcher.start()
    sent = send_all(serve.port, items, args.connections, rate, passes.render)
    t_sent = time.perf_counter() - t0
    done.set()
    watcher.join()
    sample()
    final = wait_graded(serve, traces)
    serve.stop()
    steady = [s for s in samples if warmup <= s[0] <= t_sent]
    if len(steady) < 2:
        raise RuntimeError(f"--sustained-seconds {args.sustained_seconds} leaves no steady part")
    (ta, ga, ba, ca, wa), (tb, gb, bb, cb, wb) = steady[0], steady[-1]
    graded_spans = (gb - ga) * spans_per_trace
    graded_rate = graded_spans / (tb - ta)
    graded = sum(final["graded_traces"].values())
    zero_loss = (graded == traces and final["received"].get("http.traces", 0) == spans
                 and final["rejected"].get("buffer_full", 0) == sent["refused_spans"])  # fmt: skip
    sent_rate = spans / t_sent
    growth_s = (bb - ba) / rate
    per_span = 1e6 / graded_spans if graded_spans else 0.0
    held = (zero_loss and sent["refusals"] == 0 and sent_rate >= 0.97 * rate
            and graded_rate >= 0.95 * rate and growth_s < 2.0)  # fmt: skip
    return {
        "offered_spans_per_s": round(rate),
        "sent_spans_per_s": round(sent_rate),
        "graded_spans_per_s": round(graded_rate),
        "steady_seconds": round(tb - ta, 1),
        "receiving_us_per_span": round((cb - ca) * per_span, 1),
        "workers_us_per_span": round((wb - wa) * per_span, 1),
        "receiving_cores": round((cb - ca) / (tb - ta), 2),
        "workers_cores": round((wb - wa) / (tb - ta), 2),
        "backlog_spans_start_end": [ba, bb],
        "backlog_growth_s": round(growth_s, 2),
        "refused_spans": sent["refused_spans"],
        "traces_sent": traces,
        "traces_graded": graded,
        "zero_loss": zero_loss,
        "held": held,
    }


if __name__ == "__main__":
    sys.exit(main())
