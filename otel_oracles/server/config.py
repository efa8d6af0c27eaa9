"""Settings of ``otel-oracles serve``, validated when loaded, never at use time.

Precedence, lowest first: built-in defaults (the constants below), the YAML file, the
``OTEL_ORACLES_SERVE_*`` environment variables (see ``otel_oracles.server.environment``),
then command-line flags. Every error names the YAML key path and the bad value, and ``serve``
refuses to start on any of them.

Durations are written ``250ms``, ``10s``, ``5m``, ``1h`` or as a bare number of seconds and are
stored as seconds (``float``); sizes accept ``KiB``/``MiB``/``GiB`` suffixes and are stored
as bytes.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from otel_oracles.config_yaml import load_yaml, read_config_bytes
from otel_oracles.errors import OtelOraclesError
from otel_oracles.model.contract import describe_validation_error
from otel_oracles.sandbox import CommandMode, CommandPolicy

# Ports: one above the collector's OTLP defaults (4317 gRPC, 4318 HTTP) by ten, so a grader
# and a collector can share a host (the collector usually runs there, fanning out to us).
DEFAULT_GRPC_ENDPOINT = "127.0.0.1:4327"
DEFAULT_HTTP_ENDPOINT = "127.0.0.1:4328"
# gRPC's own default maximum receive size; the collector's otlp exporter batches stay below it.
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_TRACES_PER_REQUEST = 10_000
"""The default ``assembly.max_traces``: a request holding more could never be admitted next
to other buffered traces anyway. Exporters send far fewer (an SDK batch holds at most 512
spans, the collector's batch processor 8,192 by default)."""
# Same default as the collector's tail-sampling processor: long enough for a batch span
# processor (5 s schedule delay) to have exported every child after the root ended.
DEFAULT_DECISION_WAIT_S = 10.0
# Agent runs take minutes; a trace whose root never arrives is graded (incomplete) after this.
DEFAULT_MAX_TRACE_AGE_S = 300.0
DEFAULT_MAX_TRACES = 10_000
DEFAULT_MAX_SPANS_PER_TRACE = 5_000
# About 2.2 KB of RSS per buffered GenAI span with worker processes (the receiving process keeps
# the raw request bodies and a small record per span), ~4 KB with grading on threads (parsed
# requests, attributes read lazily); bench/serve_load.py -> 0.55-1 GB at most, plus ~100 MB.
DEFAULT_MAX_BUFFERED_SPANS = 250_000
DEFAULT_DECISION_CACHE_SIZE = 100_000
# Traces of one run exported by different processes (a sub-agent in a worker, a job runner)
# reach serve up to a batch span processor's schedule delay (5 s) apart even when they end
# together; each has already waited out decision_wait on its own.
DEFAULT_JOIN_WINDOW_S = 5.0
DEFAULT_JOIN_MAX_TRACES = 10_000
DEFAULT_JOIN_MAX_SPANS = 250_000
DEFAULT_RETRY_AFTER_S = 1.0
# A sweep with nothing due costs a few microseconds; 20 ms adds ~10 ms to the mean verdict latency.
DEFAULT_SWEEP_INTERVAL_S = 0.02
DEFAULT_SHUTDOWN_TIMEOUT_S = 20.0
DEFAULT_GRADE_QUEUE = 1_000
# About an hour of a busy agent fleet's traces (1 GiB of OTLP protobuf) held for a grader that
# is down or behind; the disk, not memory, pays for it.
DEFAULT_SPOOL_MAX_BYTES = 1024**3


class ConfigError(OtelOraclesError):
    """A serve setting (file, env var or flag) that does not validate."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+)\s*(B|KiB|MiB|GiB|KB|MB|GB)?\s*$")
_SIZE_UNITS = {
    None: 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
}


def parse_duration(value: Any) -> float:
    """``"250ms"`` / ``"10s"`` / ``"5m"`` / ``3`` -> seconds. Raises ValueError naming the forms."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 250ms, 10s or 5m, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and (m := _DURATION.match(value)):
        return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError(f"expected a duration like 250ms, 10s or 5m, got {value!r}")


def parse_size(value: Any) -> int:
    """``"4MiB"`` / ``1048576`` -> bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and (m := _SIZE.match(value)):
        return int(m.group(1)) * _SIZE_UNITS[m.group(2)]
    raise ValueError(f"expected a size like 4MiB or 1048576, got {value!r}")


Seconds = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]
Bytes = Annotated[int, BeforeValidator(parse_size), Field(gt=0)]


def _check_endpoint(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port (port 0 = any free port), got {value!r}")
    return value


Endpoint = Annotated[str, BeforeValidator(_check_endpoint)]


SERVE_COMMANDS_OFF = (
    "command-running checks are off in serve: set grading.commands: sandbox to run them "
    "in the sandbox (docs/security.md)"
)
"""The ``error`` message of a command-running check in ``serve`` with commands off."""


def is_loopback(endpoint: str) -> bool:
    """Whether ``host:port`` listens on loopback only (``localhost``, 127.0.0.0/8, ``::1``);
    a wildcard (``0.0.0.0``, ``::``) or any other name is not."""
    host = endpoint.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _yaml_off(value: object) -> object:
    """YAML 1.1 reads a bare ``off`` as false; ``commands: off`` means the word."""
    return "off" if value is False else value


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TLSSettings(_Settings):
    """Server TLS for both receivers (the collector's otlp exporters speak TLS by default)."""

    cert_file: Path
    """PEM certificate chain the server presents."""
    key_file: Path
    """PEM private key of ``cert_file``."""
    client_ca_file: Path | None = None
    """When set, clients must present a certificate signed by this CA (mutual TLS)."""

    @model_validator(mode="after")
    def _files_exist(self) -> TLSSettings:
        for name in ("cert_file", "key_file", "client_ca_file"):
            path = getattr(self, name)
            if path is not None and not path.is_file():
                raise ValueError(f"{name}: no such file: {path}")
        return self


class AuthSettings(_Settings):
    """Bearer-token authentication (``Authorization: Bearer <token>``) on both receivers."""

    bearer_token: str | None = Field(default=None, repr=False)
    """The token clients must send. Prefer ``bearer_token_file`` or the env var over the file."""
    bearer_token_file: Path | None = None
    """A file whose stripped content is the token (a mounted secret)."""

    @model_validator(mode="after")
    def _one_source(self) -> AuthSettings:
        if self.bearer_token is not None and self.bearer_token_file is not None:
            raise ValueError("set bearer_token or bearer_token_file, not both")
        if self.bearer_token_file is not None and not self.bearer_token_file.is_file():
            raise ValueError(f"bearer_token_file: no such file: {self.bearer_token_file}")
        if self.bearer_token is not None and not self.bearer_token.strip():
            raise ValueError("bearer_token: must not be empty")
        return self

    def token(self) -> str | None:
        """The configured token, read from its file when one is named; None = auth off."""
        if self.bearer_token_file is not None:
            return self.bearer_token_file.read_text(encoding="utf-8").strip() or None
        return self.bearer_token


class ReceiverSettings(_Settings):
    """One receiver (gRPC or HTTP)."""

    enabled: bool = True
    """Set false to not open this receiver at all."""
    endpoint: Endpoint
    """``host:port`` to listen on. Bind ``0.0.0.0`` only behind TLS and auth."""


def _grpc_default() -> ReceiverSettings:
    return ReceiverSettings(endpoint=DEFAULT_GRPC_ENDPOINT)


def _http_default() -> ReceiverSettings:
    return ReceiverSettings(endpoint=DEFAULT_HTTP_ENDPOINT)


class ConnectionSettings(_Settings):
    """What keeps slow, idle or too many clients from holding the receivers (see
    docs/serve.md, "Connections")."""

    header_timeout: Seconds = 10.0
    """An HTTP request's headers must be complete this soon after the connection opens, or
    after the first byte of a later request on it; else the connection is closed."""
    body_timeout: Seconds = 30.0
    """A request body must have arrived in full this soon after its headers; else 408 and
    the connection is closed."""
    keepalive_timeout: Seconds = 60.0
    """An idle keep-alive HTTP connection is closed after this long."""
    max_requests_per_connection: int = Field(default=1000, gt=0)
    """After this many requests an HTTP connection is answered with ``Connection: close``."""
    max_connections: int = Field(default=1000, gt=0)
    """Open HTTP connections at most; more are answered 503 and closed at once. Lowered at
    start to stay 512 descriptors below the process's fd limit (``ulimit -n``), half of the
    rest each when both receivers are on."""
    grpc_max_connections: int = Field(default=1000, gt=0)
    """Open gRPC connections at most; more are closed at once. Lowered at start as
    ``max_connections`` is. A gRPC connection that sends no HTTP/2 preface within
    ``header_timeout`` is closed."""
    grpc_max_concurrent_streams: int = Field(default=100, gt=0)
    """RPCs one gRPC connection may have open at once (HTTP/2 ``MAX_CONCURRENT_STREAMS``);
    more are refused (``REFUSED_STREAM``: clients retry)."""
    grpc_max_connection_idle: Seconds = 300.0
    """A gRPC connection with no RPC for this long is closed (GOAWAY)."""
    grpc_max_connection_age: Seconds = 1800.0
    """A gRPC connection is closed (GOAWAY) after this long, so clients rebalance and
    reconnect; RPCs in flight get ``grpc_max_connection_age_grace`` to finish."""
    grpc_max_connection_age_grace: Seconds = 30.0
    """How long RPCs in flight may run on after a connection's age is reached."""


class ReceiversSettings(_Settings):
    """Where and how OTLP arrives."""

    grpc: ReceiverSettings = Field(default_factory=_grpc_default)
    """OTLP/gRPC (``TraceService`` and ``LogsService``), gzip accepted."""
    http: ReceiverSettings = Field(default_factory=_http_default)
    """OTLP/HTTP (``POST /v1/traces``, ``/v1/logs``, protobuf or JSON, gzip), plus
    ``/healthz`` and ``/readyz`` (never behind auth)."""
    max_request_bytes: Bytes = DEFAULT_MAX_REQUEST_BYTES
    """Largest request body accepted, compressed and after decompression; larger -> 413 /
    RESOURCE_EXHAUSTED (not retried)."""
    max_inflight_bytes: Bytes = 256 * 1024 * 1024
    """Bytes the HTTP requests still arriving may hold together (each counted at its
    ``Content-Length``, or ``max_request_bytes`` without one); a request that would pass it
    is refused 429 with ``Retry-After`` before its body is read (alone, a request always
    fits). Without it, 200 slow clients each holding a 4 MB body held 870 MB."""
    max_traces_per_request: int = Field(default=DEFAULT_MAX_TRACES_PER_REQUEST, gt=0)
    """Distinct trace ids one request may hold; more -> 413 / RESOURCE_EXHAUSTED (not
    retried). Buffering costs memory per trace, so a body of many tiny traces would cost
    far more than its size (a 26 MB body of 200,000 one-span traces took ~280 MB)."""
    auth: AuthSettings = Field(default_factory=AuthSettings)
    """Bearer-token auth; off when no token is set."""
    tls: TLSSettings | None = None
    """TLS on both receivers; plaintext when omitted."""
    connections: ConnectionSettings = Field(default_factory=ConnectionSettings)
    """Timeouts and caps per connection."""
    insecure: bool = False
    """Allow listening on a non-loopback address with neither a bearer token nor TLS client
    authentication (``--insecure``). Off, ``serve`` refuses to start that way: anyone who
    can reach the port could feed it traces."""

    @model_validator(mode="before")
    @classmethod
    def _default_endpoints(cls, data: Any) -> Any:
        """A receiver given only partly (``grpc: {enabled: false}``, as ``--no-grpc`` sets)
        keeps its default endpoint."""
        if not isinstance(data, dict):
            return data
        filled = dict(data)
        for name, default in (("grpc", DEFAULT_GRPC_ENDPOINT), ("http", DEFAULT_HTTP_ENDPOINT)):
            given = filled.get(name)
            if isinstance(given, dict) and "endpoint" not in given:
                filled[name] = {**given, "endpoint": default}
        return filled

    def authenticates(self) -> bool:
        """Whether clients must prove who they are: a bearer token, or TLS client certs."""
        has_token = self.auth.bearer_token is not None or self.auth.bearer_token_file is not None
        return has_token or (self.tls is not None and self.tls.client_ca_file is not None)

    @model_validator(mode="after")
    def _open_only_with_auth(self) -> ReceiversSettings:
        if self.insecure or self.authenticates():
            return self
        for name in ("grpc", "http"):
            receiver: ReceiverSettings = getattr(self, name)
            if receiver.enabled and not is_loopback(receiver.endpoint):
                raise ValueError(
                    f"{name}.endpoint {receiver.endpoint} is not a loopback address and no "
                    "client authentication is set: set receivers.auth.bearer_token_file (or "
                    "OTEL_ORACLES_SERVE_BEARER_TOKEN) or receivers.tls.client_ca_file, or pass "
                    "--insecure (receivers.insecure: true)"
                )
        return self


class AssemblySettings(_Settings):
    """Online trace assembly: when a trace counts as complete, and memory bounds."""

    decision_wait: Seconds = DEFAULT_DECISION_WAIT_S
    """Grade a trace once its root span has ended and no span arrived for this long."""
    max_trace_age: Seconds = DEFAULT_MAX_TRACE_AGE_S
    """Grade a trace this long after its first span arrived even if not complete; its
    verdict then carries missing evidence "trace incomplete"."""
    max_traces: int = Field(default=DEFAULT_MAX_TRACES, gt=0)
    """Traces held in memory before new traces are refused with a retryable status
    (backpressure), never dropped; see ``overflow_traces`` for the exceptions."""
    overflow_traces: int | None = Field(default=None, ge=0)
    """Traces admitted beyond ``max_traces`` for requests that bring only new traces while
    the buffered traces would not make room by themselves (they wait for their root), since
    refusing could not help; default = ``max_traces``. At ``max_traces + overflow_traces``
    the oldest stuck traces are evicted (graded incomplete). Requests that continue a
    buffered trace are bounded by ``max_buffered_spans`` only."""
    max_buffered_spans: int = Field(default=DEFAULT_MAX_BUFFERED_SPANS, gt=0)
    """Spans (and log records) held in memory at once, across traces: the hard memory cap.
    Beyond it requests are refused (retryable) and, when the traces about to complete would
    not make room, the oldest open traces are evicted (graded incomplete, never dropped)."""
    max_spans_per_trace: int = Field(default=DEFAULT_MAX_SPANS_PER_TRACE, gt=0)
    """Spans kept for one trace; more are rejected permanently (partial success) and the
    trace is graded as incomplete."""
    decision_cache_size: int = Field(default=DEFAULT_DECISION_CACHE_SIZE, ge=0)
    """Trace ids remembered after grading, so late spans are counted as late instead of
    starting a new trace."""
    retry_after: Seconds = DEFAULT_RETRY_AFTER_S
    """Delay suggested to senders refused for overload (``Retry-After`` / ``RetryInfo``)."""
    sweep_interval: Seconds = DEFAULT_SWEEP_INTERVAL_S
    """How often the buffer is checked for complete traces (bounds verdict latency)."""
    join_window: Seconds = DEFAULT_JOIN_WINDOW_S
    """A complete trace waits this long for other traces of its run (a span link between
    them, or a shared ``gen_ai.conversation.id`` / ``session.id``); traces that meet are
    graded as one subject once none has joined for this long. Adds this much to every
    verdict's delay; 0 turns joining off (every trace is a subject)."""
    join_max_traces: int = Field(default=DEFAULT_JOIN_MAX_TRACES, gt=0)
    """Traces waiting out ``join_window`` at once; beyond it the group waiting longest is
    graded at once (counted in ``/stats`` ``joining.released_early``), never dropped."""
    join_max_spans: int = Field(default=DEFAULT_JOIN_MAX_SPANS, gt=0)
    """Spans and log records of the traces waiting out ``join_window``; beyond it, as for
    ``join_max_traces``."""

    @model_validator(mode="after")
    def _age_covers_wait(self) -> AssemblySettings:
        if self.max_trace_age < self.decision_wait:
            raise ValueError(
                f"max_trace_age ({self.max_trace_age}s) must be >= decision_wait "
                f"({self.decision_wait}s)"
            )
        if self.sweep_interval <= 0:
            raise ValueError("sweep_interval: must be > 0")
        return self


class GradingSettings(_Settings):
    """What is graded, and the worker pool that does it."""

    contracts: list[Path] = Field(default_factory=list)
    """Contract files or folders (YAML/JSON, AgentBench tasks too). Required."""
    conventions: list[Path] = Field(default_factory=list)
    """Extra conventions/*.yaml mapping files, added to the bundled ones."""
    processes: Annotated[int, Field(ge=0)] | Literal["auto"] = "auto"
    """Worker processes that map, grade and emit; ``auto`` = one per CPU when there are
    two or more, else 0. 0 grades on threads of the receiving process (one core at most,
    but any emitter works; an embedding program passing its own emitter gets this)."""
    workers: int = Field(default=0, ge=0)
    """Grading threads: per worker process (0 = 2), or with ``processes: 0`` in the
    receiving process (0 = 2 x CPU count, at least 2); either way a slow
    ``test_must_pass`` waiting on its subprocess holds one thread, not the others."""
    queue_size: int = Field(default=DEFAULT_GRADE_QUEUE, gt=0)
    """Complete traces waiting for a worker; while it is full the sweeper keeps them in the
    buffer, which then fills and pushes back on senders."""
    trace_timeout: Seconds = 60.0
    """Longest a trace may take to grade. Past it the trace gets an ``error`` verdict (one
    ``trace_timeout`` result per contract that selects it), its thread is replaced (the
    stuck one finishes unseen), and after more stuck threads than a worker has, the worker
    process is replaced; 0 = no limit. A hostile trace costs at most this much of one
    thread, never the other traces' latency."""
    commands: Annotated[CommandMode, BeforeValidator(_yaml_off)] = "off"
    """Checks that execute commands (``test_must_pass``) over files a received trace wrote:
    ``off`` (default: their result is ``error``), ``sandbox`` (run in the bubblewrap
    sandbox, ``error`` where it is unavailable) or ``unsafe`` (also run unsandboxed where
    no sandbox is available). See docs/security.md."""

    def command_policy(self) -> CommandPolicy:
        """The ``CommandPolicy`` that ``commands`` selects."""
        return CommandPolicy(mode=self.commands, off_reason=SERVE_COMMANDS_OFF)


class SelfTelemetrySettings(_Settings):
    """Loop safety: recognise the grader's own telemetry if a pipeline sends it back."""

    skip_service_names: list[str] = Field(default_factory=list)
    """Extra ``service.name`` values to skip (the grader's own is always skipped)."""


def grading_processes(settings: GradingSettings) -> int:
    """``grading.processes`` resolved: ``auto`` is one per CPU on a multi-core machine."""
    if settings.processes != "auto":
        return settings.processes
    cpus = os.cpu_count() or 1
    return cpus if cpus > 1 else 0


class SpoolSettings(_Settings):
    """The write-ahead spool: accepted requests kept on disk until their verdicts are out."""

    enabled: bool = True
    """Write each accepted request to the spool before answering success, and replay it on
    the next start. ``false`` trades durability for no disk writes: whatever is buffered or
    grading when the process dies (``kill -9``, OOM, power loss) is lost, though its
    senders were told it was received."""
    path: Path | None = None
    """Spool directory (created 0700); default ``$XDG_STATE_HOME/otel-oracles/spool``
    (``~/.local/state/otel-oracles/spool``). One ``serve`` per directory."""
    max_bytes: Bytes = DEFAULT_SPOOL_MAX_BYTES
    """Raw request bytes held at most; beyond it requests are refused with the retryable
    resource-exhausted / 429 status until grading frees room."""


class ServeSettings(_Settings):
    """Everything ``otel-oracles serve`` reads. See docs/serve.md for each key."""

    receivers: ReceiversSettings = Field(default_factory=ReceiversSettings)
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)
    grading: GradingSettings = Field(default_factory=GradingSettings)
    self_telemetry: SelfTelemetrySettings = Field(default_factory=SelfTelemetrySettings)
    spool: SpoolSettings = Field(default_factory=SpoolSettings)
    shutdown_timeout: Seconds = DEFAULT_SHUTDOWN_TIMEOUT_S
    """SIGTERM budget: stop accepting, grade everything buffered, flush exports, exit."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["json", "text"] = "json"
    """``json`` = one JSON object per line on stderr (structured); ``text`` for humans."""

    @model_validator(mode="after")
    def _something_listens(self) -> ServeSettings:
        if not (self.receivers.grpc.enabled or self.receivers.http.enabled):
            raise ValueError("receivers: enable at least one of grpc and http")
        return self


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """``set_path(t, "assembly.decision_wait", "1s")``: one override into a nested dict."""
    node = tree
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def read_config_file(path: Path) -> dict[str, Any]:
    """The YAML file as a dict; errors name the file and line."""
    try:
        data = load_yaml(read_config_bytes(path).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", source=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"not valid YAML: {problem}", source=where) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", source=str(path))
    return data


_FILE_KEYS = (
    ("grading", "contracts"),
    ("grading", "conventions"),
    ("receivers", "tls", "cert_file"),
    ("receivers", "tls", "key_file"),
    ("receivers", "tls", "client_ca_file"),
    ("receivers", "auth", "bearer_token_file"),
    ("spool", "path"),
)


def _resolve_paths(tree: dict[str, Any], base: Path) -> None:
    """Relative paths in a config file are relative to that file, not to the cwd."""

    def fix(value: Any) -> Any:
        if isinstance(value, str) and not Path(value).is_absolute():
            return str(base / value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    for keys in _FILE_KEYS:
        node: Any = tree
        for k in keys[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict) and keys[-1] in node:
            node[keys[-1]] = fix(node[keys[-1]])


def load_settings(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServeSettings:
    """Defaults < file < environment < ``overrides`` (dotted keys from flags), validated once.

    Raises ConfigError naming the source and the key path of every problem.
    """
    from otel_oracles.server.environment import settings_from_environment

    tree: dict[str, Any] = read_config_file(path) if path is not None else {}
    if path is not None:
        _resolve_paths(tree, path.parent)
    env_tree: dict[str, Any] = {}
    for dotted, value in settings_from_environment(os.environ if environ is None else environ):
        set_path(env_tree, dotted, value)
    flag_tree: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        set_path(flag_tree, dotted, value)
    merged = _merge(_merge(tree, env_tree), flag_tree)
    try:
        return ServeSettings.model_validate(merged)
    except ValidationError as exc:
        source = str(path) if path is not None else "serve settings"
        raise ConfigError(describe_validation_error(exc), source=source) from None
