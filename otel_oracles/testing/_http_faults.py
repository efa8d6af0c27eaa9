"""A real HTTP server on 127.0.0.1 that stands in for an agent's HTTP dependency and fails on cue.

The agent under test is pointed at ``server.url`` instead of its search API or model API,
and talks to it with its own HTTP client over a real socket; nothing in the client is
patched. So a ``timeout`` is the client's own timeout firing (``requests.ReadTimeout``,
``httpx.ReadTimeout``, ``openai.APITimeoutError``: whatever that client raises), a 429 is
read with the client's own header handling, and a retry is a second request the server
counts. Between faults the server answers each route with the healthy response the test
configured.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from otel_oracles.testing._faults import FaultKind, check_kind, emptied, malformed, reshaped

HOLD_SECONDS = 30.0
"""Longest a ``timeout`` fault holds a request: clients time out long before (a client
without a timeout would otherwise hang the test); the server is released at teardown."""


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request the server received, and the fault it answered with (None: healthy)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    fault: FaultKind | None

    def json(self) -> Any:
        """The request body parsed as JSON."""
        return json.loads(self.body)


@dataclass(slots=True)
class _Route:
    status: int
    body: bytes
    headers: dict[str, str]
    payload: Any  # the parsed healthy JSON, the base of empty/malformed/reshaped answers


@dataclass(slots=True)
class Injection:
    """A fault waiting to be served: ``times`` more requests (None: every one) to ``path``
    (None: any path) get it."""

    kind: FaultKind
    path: str | None
    times: int | None
    retry_after: float
    payload: Any = None
    served: int = field(default=0)

    def matches(self, path: str) -> bool:
        pending = self.times is None or self.served < self.times
        return pending and (self.path is None or self.path == path)


class HttpFaultServer:
    """The ``http_faults`` fixture's server; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, _Route] = {}
        self._injections: list[Injection] = []
        self._requests: list[ReceivedRequest] = []
        self._released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="otel-oracles-http-faults", daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, without a trailing slash."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def respond(
        self,
        path: str,
        json_body: Any = None,
        *,
        body: bytes | str | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The healthy answer for ``path`` (any method): ``json_body`` as JSON, or ``body``
        as it is. Unconfigured paths answer 404."""
        if body is None:
            raw = json.dumps(json_body).encode()
            content_type = {"Content-Type": "application/json"}
        else:
            raw = body.encode() if isinstance(body, str) else body
            content_type = {"Content-Type": "application/octet-stream"}
        with self._lock:
            self._routes[path] = _Route(status, raw, {**content_type, **(headers or {})}, json_body)

    def inject(
        self,
        kind: str,
        *,
        path: str | None = None,
        times: int | None = 1,
        retry_after: float = 1,
        payload: Any = None,
    ) -> Injection:
        """Fail the next ``times`` requests (None: all) to ``path`` (None: any) with
        ``kind`` (``timeout``, ``empty``, ``malformed_json``, ``rate_limited``,
        ``schema_invalid``); ``payload`` replaces the answer derived from the healthy one.
        Faults are served in the order injected; later requests get the healthy answer."""
        injection = Injection(check_kind(kind), path, times, retry_after, payload)
        with self._lock:
            self._injections.append(injection)
        return injection

    def faults_served(self) -> list[FaultKind]:
        """The fault each faulted request got, in order."""
        return [r.fault for r in self.requests if r.fault is not None]

    def start(self) -> HttpFaultServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Release held requests and stop; safe twice."""
        self._released.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        with self._lock:
            injection = next((i for i in self._injections if i.matches(path)), None)
            if injection is not None:
                injection.served += 1
            route = self._routes.get(path)
            kind = injection.kind if injection is not None else None
            self._requests.append(ReceivedRequest(method, path, headers, body, kind))
        if injection is None:
            if route is None:
                return _Answer.json(404, {"error": f"no response configured for {path}"})
            return _Answer(route.status, route.body, route.headers)
        return _fault_answer(injection, route)


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    body: bytes
    headers: dict[str, str]
    hold: bool = False

    @classmethod
    def json(cls, status: int, value: Any, headers: dict[str, str] | None = None) -> _Answer:
        return cls(status, json.dumps(value).encode(), _JSON | (headers or {}))


_JSON = {"Content-Type": "application/json"}


def _fault_answer(injection: Injection, route: _Route | None) -> _Answer:
    healthy = route.payload if route is not None else None
    given = injection.payload
    if injection.kind == "timeout":
        return _Answer(0, b"", {}, hold=True)
    if injection.kind == "rate_limited":
        error = {"error": {"message": "Rate limit exceeded", "type": "rate_limit_error"}}
        retry = {"Retry-After": f"{injection.retry_after:g}"}
        return _Answer.json(429, error if given is None else given, retry)
    if injection.kind == "empty":
        return _Answer.json(
            200, emptied([] if healthy is None else healthy) if given is None else given
        )
    if injection.kind == "malformed_json":
        text = malformed(healthy if given is None else given)
        return _Answer(200, text.encode(), dict(_JSON))
    return _Answer.json(200, reshaped(healthy) if given is None else given)


def _handler_for(server: HttpFaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            answer = server._answer(self.command, path, dict(self.headers.items()), body)
            if answer.hold:
                # The client's read timeout fires while the request is held; then the
                # connection is closed unanswered, as a hung upstream's load balancer does.
                server._released.wait(HOLD_SECONDS)
                self.close_connection = True
                return
            try:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest captures stderr, and a line per request would only be noise."""

    return Handler
