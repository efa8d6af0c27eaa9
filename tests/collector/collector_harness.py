"""Real processes for the collector end-to-end tests: the OpenTelemetry Collector built by
``build.sh``, ``otel-oracles serve`` subprocesses, Debian's Prometheus, and the instrumented
agent program. Every server binds 127.0.0.1 on a port from ``tests.support.ports``, picked
outside the kernel's ephemeral range, because other test sessions run on the same machine at
the same time and their client sockets take ephemeral ports.

The collector runs the repository's own configuration files, merged with a small overlay
(collector ``--config`` files merge, lists are replaced) that changes only what a user
changes too: listen addresses, where the grader is, and which backend exporter to use (the
``file`` exporter, so the tests can read what reached the backend).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.ports import free_port

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BUILD_SH = HERE / "build.sh"
AGENT = HERE / "agent_program.py"
CONTRACTS = HERE / "contracts"
MAIN_CONFIG = REPO / "collector-config.yaml"
LB_CONFIG = REPO / "docs" / "collector-loadbalancing.yaml"

GRADE_SPAN = "grade support-agent-tools"
EVAL_EVENT = "gen_ai.evaluation.result"

INSTALL_GO = (
    "the Go toolchain is not installed; the collector e2e tests build a real collector "
    "with it: install Go 1.26 or newer (https://go.dev/doc/install), "
    "then run tests/collector/build.sh"
)
INSTALL_PROMETHEUS = (
    "Prometheus is not installed; the metrics e2e test runs a real one: "
    "apt-get install --no-install-recommends prometheus"
)


def wait_until(
    predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.1
) -> Any:
    """Poll ``predicate`` until it returns something truthy; AssertionError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """(status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


# ---- the collector binary --------------------------------------------------------------------


def collector_binary() -> Path:
    """The cached collector, built now if needed (minutes when cold); skip without Go."""
    if shutil.which("go") is None:
        pytest.skip(INSTALL_GO)
    proc = subprocess.run(
        ["bash", str(BUILD_SH)], capture_output=True, text=True, timeout=3600, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"tests/collector/build.sh failed:\n{proc.stderr[-4000:]}")
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path.is_file(), path
    return path


def prometheus_binary() -> Path:
    found = shutil.which("prometheus")
    if found is None:
        pytest.fail(INSTALL_PROMETHEUS)
    return Path(found)


# ---- processes -------------------------------------------------------------------------------


@dataclass
class Proc:
    """A subprocess whose output goes to a log file, stopped gently then firmly."""

    name: str
    args: list[str]
    log: Path
    env: dict[str, str] | None = None
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Proc:
        fh = self.log.open("ab")
        self.popen = subprocess.Popen(
            self.args,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
        )
        fh.close()
        return self

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        return self.popen.returncode

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def check_alive(self) -> None:
        if not self.running:
            raise AssertionError(f"{self.name} exited early:\n{self.output()[-4000:]}")


def _started(proc: Proc, ready: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait until ``ready``; a process that never gets there is stopped, not leaked."""
    try:
        wait_until(ready, timeout, f"{what} (log: {proc.log})")
    except BaseException:
        proc.stop(timeout=10)
        raise


@dataclass
class Collector:
    """A collector running a repository config plus a test overlay."""

    binary: Path
    workdir: Path
    configs: list[Path]
    overlay: dict[str, Any]
    name: str = "collector"
    proc: Proc | None = None
    health_port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    telemetry_port: int = field(default_factory=free_port)
    prometheus_port: int = field(default_factory=free_port)
    """For the overlay's ``prometheus`` exporter (the result metrics)."""

    @property
    def backend_files(self) -> list[Path]:
        """What the tests' file exporters wrote (traces and logs)."""
        return [self.workdir / f"{self.name}-{signal}.jsonl" for signal in ("traces", "logs")]

    def full_overlay(self) -> dict[str, Any]:
        base: dict[str, Any] = {
            "extensions": {
                "health_check": {"endpoint": f"127.0.0.1:{self.health_port}"},
                # collector-config.yaml's persistent queue, in this collector's workdir
                "file_storage/oracles": {
                    "directory": str(self.workdir / f"{self.name}-queue"),
                    "create_directory": True,
                },
            },
            "receivers": {
                "otlp": {
                    "protocols": {
                        "grpc": {"endpoint": f"127.0.0.1:{self.grpc_port}"},
                        "http": {"endpoint": f"127.0.0.1:{self.http_port}"},
                    }
                }
            },
            "service": {
                "telemetry": {
                    "logs": {"level": "info"},
                    "metrics": {
                        "readers": [
                            {
                                "pull": {
                                    "exporter": {
                                        "prometheus": {
                                            "host": "127.0.0.1",
                                            "port": self.telemetry_port,
                                        }
                                    }
                                }
                            }
                        ]
                    },
                }
            },
        }
        return _merge(base, self.overlay)

    def start(self, timeout: float = 30.0) -> Collector:
        overlay = self.workdir / f"{self.name}-overlay.yaml"
        overlay.write_text(yaml.safe_dump(self.full_overlay(), sort_keys=False))
        args = [str(self.binary)]
        for cfg in [*self.configs, overlay]:
            args += ["--config", str(cfg)]
        self.proc = Proc(self.name, args, self.workdir / f"{self.name}.log").start()
        _started(self.proc, self._ready, timeout, f"{self.name} health_check")
        return self

    def _ready(self) -> bool:
        assert self.proc is not None
        self.proc.check_alive()
        return http_get(f"http://127.0.0.1:{self.health_port}/")[0] == 200

    @property
    def otlp_grpc(self) -> str:
        return f"http://127.0.0.1:{self.grpc_port}"

    @property
    def otlp_http(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def stop(self) -> int | None:
        return self.proc.stop() if self.proc else None

    def log(self) -> str:
        return self.proc.output() if self.proc else ""


def validate(binary: Path, *configs: Path) -> subprocess.CompletedProcess[str]:
    args = [str(binary), "validate"]
    for cfg in configs:
        args += ["--config", str(cfg)]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)


def file_exporter(path: Path) -> dict[str, Any]:
    """The ``file`` exporter as a backend the tests can read (flushed often)."""
    return {"path": str(path), "flush_interval": "100ms"}


@dataclass
class Serve:
    """``otel-oracles serve`` as a real subprocess, exporting its results over OTLP/HTTP."""

    workdir: Path
    results_endpoint: str
    """OTLP/HTTP base URL the grader sends grade spans, events and metrics to."""
    name: str = "serve"
    decision_wait: str = "3s"
    """Above the collector's batch timeout (1 s) plus the agent's export delays, so a
    trace's log records, batched apart from its spans, still join it on a loaded machine."""
    instance: str = "serve-0"
    join_window: str | None = None
    """``assembly.join_window`` (None: serve's default). Every verdict waits it out, so a test
    that must catch the grader mid-stream turns it off."""
    extra_args: list[str] = field(default_factory=list)
    contracts: Path = CONTRACTS
    """A contract file or directory (the collector e2e contract by default)."""
    grpc_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    proc: Proc | None = None

    def start(self, timeout: float = 60.0) -> Serve:
        env = dict(os.environ)
        for key in list(env):
            if key.startswith(("OTEL_", "OTEL_ORACLES_")):
                del env[key]
        env.update(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": self.results_endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                "OTEL_RESOURCE_ATTRIBUTES": f"service.instance.id={self.instance}",
                "OTEL_METRIC_EXPORT_INTERVAL": "1000",
                "OTEL_BSP_SCHEDULE_DELAY": "200",
                "OTEL_BLRP_SCHEDULE_DELAY": "200",
                # One write-ahead spool per replica (a restart of the same one reuses it).
                "OTEL_ORACLES_SERVE_SPOOL_PATH": str(self.workdir / f"{self.name}-spool"),
            }
        )
        config: list[str] = []
        if self.join_window is not None:
            path = self.workdir / f"{self.name}.yaml"
            path.write_text(f"assembly:\n  join_window: {self.join_window}\n", encoding="utf-8")
            config = ["--config", str(path)]
        args = [
            sys.executable,
            "-c",
            "from otel_oracles.cli import main; main()",
            "serve",
            *config,
            "--contracts",
            str(self.contracts),
            "--grpc-endpoint",
            f"127.0.0.1:{self.grpc_port}",
            "--http-endpoint",
            f"127.0.0.1:{self.http_port}",
            "--decision-wait",
            self.decision_wait,
            "--shutdown-timeout",
            "15s",
            "--log-format",
            "text",
            *self.extra_args,
        ]
        self.proc = Proc(self.name, args, self.workdir / f"{self.name}.log", env=env).start()
        _started(self.proc, self._ready, timeout, f"{self.name} /readyz")
        return self

    def _ready(self) -> bool:
        assert self.proc is not None
        self.proc.check_alive()
        return http_get(f"http://127.0.0.1:{self.http_port}/readyz")[0] == 200

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def stats(self) -> dict[str, Any]:
        status, body = http_get(f"http://127.0.0.1:{self.http_port}/stats")
        assert status == 200, f"{self.name} /stats answered {status}"
        return dict(json.loads(body))

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        return self.proc.stop(sig) if self.proc else None

    def log(self) -> str:
        return self.proc.output() if self.proc else ""


@dataclass
class Prometheus:
    """Debian's Prometheus on 127.0.0.1, scraping the given targets every second."""

    binary: Path
    workdir: Path
    targets: list[str]
    port: int = field(default_factory=free_port)
    proc: Proc | None = None

    def start(self, timeout: float = 60.0) -> Prometheus:
        cfg = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {"job_name": "otelcol-results", "static_configs": [{"targets": self.targets}]}
            ],
        }
        path = self.workdir / "prometheus.yml"
        path.write_text(yaml.safe_dump(cfg))
        args = [
            str(self.binary),
            f"--config.file={path}",
            f"--storage.tsdb.path={self.workdir / 'prometheus-data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--web.enable-lifecycle",
        ]
        self.proc = Proc("prometheus", args, self.workdir / "prometheus.log").start()
        _started(self.proc, self._ready, timeout, "prometheus /-/ready")
        return self

    def _ready(self) -> bool:
        assert self.proc is not None
        self.proc.check_alive()
        return http_get(f"http://127.0.0.1:{self.port}/-/ready")[0] == 200

    def query(self, promql: str) -> list[dict[str, Any]]:
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}
        )
        status, body = http_get(url, timeout=5)
        assert status == 200, f"PromQL {promql!r} answered {status}: {body[:300]!r}"
        doc = json.loads(body)
        assert doc["status"] == "success", doc
        return list(doc["data"]["result"])

    def scalar(self, promql: str) -> float | None:
        """The single value of an instant query, None when it has no sample."""
        result = self.query(promql)
        if not result:
            return None
        assert len(result) == 1, result
        return float(result[0]["value"][1])

    def stop(self) -> int | None:
        return self.proc.stop() if self.proc else None


def run_agent(
    endpoint: str,
    out: Path,
    *,
    repeat: int = 1,
    seed: int = 1,
    scenarios: tuple[str, ...] = (),
    pause: float = 0.0,
    background: bool = False,
) -> list[dict[str, Any]] | subprocess.Popen[bytes]:
    """Run the instrumented agent; its rows (trace id, scenario, expectations), or the
    running process when ``background``."""
    args = [sys.executable, str(AGENT), "--endpoint", endpoint, "--out", str(out)]
    args += ["--repeat", str(repeat), "--seed", str(seed), "--pause", str(pause)]
    for s in scenarios:
        args += ["--scenario", s]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if background:
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return read_rows(out)


def read_rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


# ---- reading what reached the backend (file exporter, OTLP/JSON lines) -----------------------


def _value(any_value: dict[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in any_value:
            return any_value[key]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    if "arrayValue" in any_value:
        return [_value(v) for v in any_value["arrayValue"].get("values", [])]
    if "kvlistValue" in any_value:
        return _attrs(any_value["kvlistValue"].get("values", []))
    return None


def _attrs(kvs: list[dict[str, Any]]) -> dict[str, Any]:
    return {kv["key"]: _value(kv.get("value", {})) for kv in kvs}


@dataclass
class BackendSpan:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    events: list[tuple[str, dict[str, Any]]]
    end_ns: int = 0


@dataclass
class BackendLog:
    trace_id: str
    span_id: str
    event_name: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str


@dataclass
class Backend:
    """Everything the file exporter wrote: spans and log records, decoded."""

    spans: list[BackendSpan] = field(default_factory=list)
    logs: list[BackendLog] = field(default_factory=list)

    def spans_by_trace(self) -> dict[str, list[BackendSpan]]:
        out: dict[str, list[BackendSpan]] = defaultdict(list)
        for s in self.spans:
            out[s.trace_id].append(s)
        return out

    def grade_spans(self) -> list[BackendSpan]:
        return [s for s in self.spans if s.scope == "otel_oracles" and s.name == GRADE_SPAN]

    def eval_logs(self) -> list[BackendLog]:
        return [
            rec
            for rec in self.logs
            if rec.event_name == EVAL_EVENT or rec.attributes.get("event.name") == EVAL_EVENT
        ]


def read_backend(paths: list[Path]) -> Backend:
    backend = Backend()
    lines = [ln for p in paths if p.exists() for ln in p.read_text().splitlines()]
    for line in lines:
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line the exporter is still writing
        for rs in doc.get("resourceSpans", []):
            res = _attrs(rs.get("resource", {}).get("attributes", []))
            for ss in rs.get("scopeSpans", []):
                scope = ss.get("scope", {}).get("name", "")
                for sp in ss.get("spans", []):
                    backend.spans.append(
                        BackendSpan(
                            trace_id=sp.get("traceId", ""),
                            span_id=sp.get("spanId", ""),
                            parent_span_id=sp.get("parentSpanId", ""),
                            name=sp.get("name", ""),
                            attributes=_attrs(sp.get("attributes", [])),
                            resource=res,
                            scope=scope,
                            events=[
                                (e.get("name", ""), _attrs(e.get("attributes", [])))
                                for e in sp.get("events", [])
                            ],
                            end_ns=int(sp.get("endTimeUnixNano", 0)),
                        )
                    )
        for rl in doc.get("resourceLogs", []):
            res = _attrs(rl.get("resource", {}).get("attributes", []))
            for sl in rl.get("scopeLogs", []):
                scope = sl.get("scope", {}).get("name", "")
                for lr in sl.get("logRecords", []):
                    backend.logs.append(
                        BackendLog(
                            trace_id=lr.get("traceId", ""),
                            span_id=lr.get("spanId", ""),
                            event_name=lr.get("eventName", ""),
                            attributes=_attrs(lr.get("attributes", [])),
                            resource=res,
                            scope=scope,
                        )
                    )
    return backend


def graded_summary(backend: Backend) -> dict[str, list[dict[str, Any]]]:
    """Per trace id: what each grade span says (verdict, four numbers, per-check outcomes
    from its span events), in a form two pipelines' results can be compared by."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in backend.grade_spans():
        checks = sorted(
            (
                str(attrs.get("gen_ai.evaluation.name")),
                str(attrs.get("gen_ai.evaluation.score.label")),
                str(attrs.get("gen_ai.evaluation.score.value")),
                str(attrs.get("gen_ai.evaluation.explanation")),
            )
            for name, attrs in span.events
            if name == EVAL_EVENT
        )
        out[span.trace_id].append(
            {
                "verdict": span.attributes.get("otel_oracles.verdict"),
                "contract": (
                    span.attributes.get("otel_oracles.contract.id"),
                    span.attributes.get("otel_oracles.contract.version"),
                ),
                "numbers": tuple(
                    span.attributes.get(f"otel_oracles.{k}")
                    for k in (
                        "invariant_failures",
                        "tolerated_failures",
                        "budget_exhausted",
                        "missing_evidence",
                    )
                ),
                "checks": checks,
            }
        )
    return dict(out)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def stop_all(procs: Iterator[Any] | list[Any]) -> None:
    for p in procs:
        with contextlib.suppress(Exception):  # cleanup must reach every process
            p.stop()
