"""The HTTP side every fake model API shares: a threaded server on 127.0.0.1 (ephemeral port)
that reads one JSON request body and answers with the JSON its scripted ``answer`` returns
(or, for a streaming API, the pre-encoded body, e.g. server-sent events, a ``Reply`` carries as
``bytes``). ``GET`` requests are answered as ``POST`` ones with an empty body, for clients
that list models before they start.

Each fake (``fake_openai.py``, ``fake_anthropic.py``, ...) only says which paths it scripts and
what the model answers there; ``with Fake(scenario) as base_url:`` serves until the block ends.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    """A scripted answer: the JSON payload and any headers the real API sends."""

    payload: Any
    """The JSON answer, or the exact body as ``bytes`` (a streamed answer sent at once)."""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    status: int = 200
    """An HTTP error status (``outage``) makes the client raise, as a real API failure does."""
    kill_after: int | None = None
    """Kill the process serving (the agent's own, ``Scenario.killed_at``) with SIGKILL after
    sending this many bytes of the body (0: before answering at all), as a crash or an OOM
    kill ends an agent mid-request: nothing of the process's shutdown runs."""


OUTAGE_MESSAGE = "The server had an error while processing your request (scripted outage)."


def outage(payload: Any | None = None) -> Reply:
    """An HTTP 500 answer (``Scenario.model_fails_from``): the model endpoint failing. The
    body is OpenAI's error object unless the fake's API words its errors otherwise; the
    client's own retries get the same answer, so the run cannot recover."""
    body = payload or {"error": {"message": OUTAGE_MESSAGE, "type": "server_error",
                                 "param": None, "code": None}}  # fmt: skip
    return Reply(body, status=500)


TRANSIENT_MESSAGE = "The server is overloaded; please retry your request (scripted transient)."


def transient_outage(payload: Any | None = None) -> Reply:
    """An HTTP 503 with ``retry-after-ms: 1`` and ``retry-after: 0`` (``u_model_retry``): the
    model endpoint overloaded for a moment, asking to be retried at once. 503 rather than 429:
    every client and framework here retries a 5xx (Spring AI's default retry treats any 4xx,
    429 included, as final), and the headers keep the wait short (the openai and anthropic
    clients and the AI SDK honour ``retry-after-ms``)."""
    body = payload or {"error": {"message": TRANSIENT_MESSAGE, "type": "server_error",
                                 "param": None, "code": None}}  # fmt: skip
    return Reply(body, headers={"retry-after-ms": "1", "retry-after": "0"}, status=503)


class FailFirst:
    """Answers the first ``count`` model requests with ``transient_outage`` (thread-safe):
    ``Scenario.model_transient_failures``. A fake asks before it picks the turn, so a failed
    request consumes no turn (a fake that answers in call order counts only served ones)."""

    def __init__(self, count: int) -> None:
        self.left = count
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Whether this request is one of the first ``count``: answer it with the failure."""
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


STREAM_CHUNK = 16
"""Characters per delta when a fake streams text or tool arguments: small enough that every
answer and every argument object arrives in several pieces, as real APIs send them, so an
instrumentation has to assemble them."""


def pieces(text: str, size: int | None = STREAM_CHUNK) -> list[str]:
    """``text`` cut into deltas of ``size`` characters (``None``: one delta); never empty."""
    if not size or not text:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event: an optional ``event:`` line and the JSON ``data:`` line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def die_after(
    handler: BaseHTTPRequestHandler, status: int, content_type: str, data: bytes, sent: int
) -> None:
    """Send the first ``sent`` bytes of the answer (none: no status line either), then
    SIGKILL the agent's process (``Reply.kill_after``): this one, where a Python driver runs
    the agent and this server in one process (never returns), or ``ScriptedServer.victim``,
    a program run apart (``external_program.run_program``; the request is then left
    unanswered)."""
    if sent > 0:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[:sent])
        handler.wfile.flush()
    if ScriptedServer.victim is not None:
        os.kill(ScriptedServer.victim, signal.SIGKILL)
        return
    os.kill(os.getpid(), signal.SIGKILL)
    threading.Event().wait()  # SIGKILL is not deliverable late; never answer regardless


Answer = Callable[[str, dict[str, Any]], "Reply | str"]
"""(request path, JSON body) -> the reply, or the 404 message for a request not scripted."""


class ScriptedServer:
    """Serves ``answer`` on 127.0.0.1; ``url_path`` is appended to the base URL handed out."""

    failures_served = 0
    """How many error answers (``Reply.status`` >= 400) any server of this process sent: a
    capture whose run ended in an error checks that the error came from the script."""

    victim: int | None = None
    """The process a killed run's reply (``Reply.kill_after``) kills when the agent runs
    apart from this server (a Node, Go or JVM program); ``None``: this process."""

    def __init__(self, answer: Answer, url_path: str = "") -> None:
        self.url_path = url_path
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                reply = answer(self.path, json.loads(raw) if raw else {})
                if isinstance(reply, str):
                    self.send_error(404, reply)
                    return
                payload = reply.payload
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                if reply.kill_after is not None:
                    die_after(self, reply.status, reply.content_type, data, reply.kill_after)
                    return
                if reply.status >= 400:
                    with lock:
                        ScriptedServer.failures_served += 1
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.url_path}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
