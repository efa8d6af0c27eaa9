"""OTLP/HTTP sending with protobuf bodies on the standard library's ``http.client``: a small
thread-safe pool of keep-alive connections, gzip or deflate bodies, TLS from the certificate
variables. The rules are ``_transport``'s.

Why ``http.client``: synchronous like the emitter's export call (aiohttp would need an
event-loop thread per sender), and the cheapest to import: a sender posts one URL with fixed
headers, which needs none of urllib3's pool manager, retries or URL handling, and urllib3's
import alone cost ~104 M instructions (of ~1.2 G for ``grade --export otlp``'s imports) at
every start. What urllib3 gave that a bare ``http.client`` does not is kept here:

- the timeout is one deadline for the attempt (urllib3's ``Timeout(total=...)``): connecting
  and sending wait at most for what is left of it, and so does every read of the answer,
  which urllib3 did not bound as a whole (a receiver dripping its answer a byte at a time
  held an attempt past its timeout there; here it ends at the deadline);
- a pooled connection the receiver has closed is noticed before it is reused (readable while
  idle: urllib3's ``is_connection_dropped``), and an attempt that fails on a connection
  error is made once more at once (the receiver may close it while the request is sent);
- TLS as urllib3 set it up: certificate and host name verified, TLS 1.2 at least, the
  system's CA certificates unless a CA file is given, a client certificate when one is.
"""

from __future__ import annotations

import http.client
import io
import select
import socket
import ssl
import threading
import time
import zlib
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from otel_oracles.emit._transport import Attempt, OtlpTarget, Payload, Sender

_RETRYABLE_HTTP = frozenset({429, 502, 503, 504})
_MAX_IDLE = 4
"""Idle connections kept per sender: one is all a sender's exporting thread reuses; the rest
serve the rare concurrent sends (a shutdown's flush beside a periodic export)."""


class HttpSender(Sender):
    """One POST per request to the target's URL, over pooled keep-alive connections."""

    def __init__(self, target: OtlpTarget, user_agent: str = "otel-oracles") -> None:
        super().__init__(target)
        self._headers = {
            "Content-Type": "application/x-protobuf",
            "User-Agent": user_agent,
            **target.headers,
        }
        if target.compression != "none":
            self._headers["Content-Encoding"] = target.compression
        url = urlsplit(target.endpoint)
        self._host = url.hostname or ""
        self._path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        self._port: int | None = None
        self._unusable: str | None = None
        """Why no request can be sent to the endpoint: each is refused, not retried."""
        try:
            self._port = url.port
        except ValueError as error:
            self._unusable = f"bad endpoint {target.endpoint!r}: {error}"
        if url.scheme not in ("http", "https") or not self._host:
            self._unusable = f"bad endpoint {target.endpoint!r}: not an http(s) URL"
        self._context = _tls_context(target) if url.scheme == "https" else None
        self._idle: list[_HttpConnection] = []
        self._lock = threading.Lock()

    def _compressed(self, payload: Payload) -> Payload:
        if self.target.compression == "gzip":
            import gzip  # only a compressing sender pays for it

            return gzip.compress(payload, compresslevel=6)
        if self.target.compression == "deflate":
            return zlib.compress(payload)
        return payload

    def _connection(self) -> _HttpConnection:
        """A live idle connection, else a new one (opened by its first request)."""
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn):
                    return conn
                conn.close()
        if self._context is not None:
            return _HttpsConnection(self._host, self._port, context=self._context)
        return _HttpConnection(self._host, self._port)

    def _release(self, conn: _HttpConnection) -> None:
        with self._lock:
            if len(self._idle) < _MAX_IDLE and not self._closed.is_set():
                self._idle.append(conn)
                return
        conn.close()

    def _attempt(self, body: Payload, timeout_s: float, attempt_no: int) -> Attempt:
        if self._unusable is not None:
            return Attempt(False, self._unusable, False)
        deadline = time.monotonic() + timeout_s
        for fresh_try in (True, False):
            conn = self._connection()
            conn.deadline = deadline
            try:
                _set_timeout(conn, deadline)  # connecting and sending
                conn.request("POST", self._path, body=body, headers=self._headers)
                response = conn.getresponse()  # read by the deadline's own reader
                response.read()  # the whole answer, so the connection can carry the next
            except TimeoutError:  # before OSError, which it subclasses
                conn.close()
                return Attempt(False, f"no answer within {timeout_s:.1f}s", True)
            except ssl.SSLError as error:  # a failed handshake: not a connection to retry
                conn.close()
                return Attempt(False, f"SSLError: {error}", False)
            except (OSError, http.client.HTTPException) as error:
                # refused, reset, closed before answering: a pooled connection may have gone
                # stale while the request was sent
                conn.close()
                if fresh_try and deadline > time.monotonic():
                    continue
                return Attempt(False, f"connection error: {_describe(error)}", True)
            if response.will_close:
                conn.close()
            else:
                self._release(conn)
            status = response.status
            if 200 <= status < 400:
                return Attempt(True)
            retryable = status in _RETRYABLE_HTTP
            return Attempt(
                False,
                f"HTTP {status} {response.reason or ''}".strip(),
                retryable,
                _retry_after(response.getheader("Retry-After")) if retryable else None,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def shutdown(self) -> None:
        super().shutdown()
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class _DeadlineReader(io.RawIOBase):
    """A response's bytes off the connection's socket, each read waiting at most for what is
    left of the attempt's deadline: the deadline bounds the whole answer, not each read."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _DeadlineResponse(http.client.HTTPResponse):
    """``HTTPResponse`` reading through a ``_DeadlineReader`` (the socket stays the
    connection's: closing the response does not close it)."""

    def __init__(self, sock: socket.socket, deadline: float, method: str | None) -> None:
        super().__init__(sock, method=method)
        self.fp.close()  # the socket's own reader, made by the base class, never read
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


class _HttpConnection(http.client.HTTPConnection):
    """A keep-alive connection whose answers are read within the current attempt's deadline,
    opened by ``_create_connection`` (below)."""

    deadline = 0.0
    """When the current attempt ends (``time.monotonic()``), set before each request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The hook ``HTTPConnection.connect`` opens its socket with (an instance attribute
        # of ``http.client``'s, kept for replacing).
        self._create_connection = _create_connection

    def response_class(  # type: ignore[override]  # called as self.response_class(sock, ...)
        self, sock: socket.socket, debuglevel: int = 0, method: str | None = None
    ) -> http.client.HTTPResponse:
        return _DeadlineResponse(sock, self.deadline, method)


class _HttpsConnection(http.client.HTTPSConnection, _HttpConnection):
    """The same over TLS (``HTTPSConnection.connect`` wraps the plain connection's socket)."""


def _tls_context(target: OtlpTarget) -> ssl.SSLContext:
    """urllib3's client context for the target's certificate variables: verified, TLS 1.2
    or later, the CA file given or else the system's certificates."""
    context = ssl.create_default_context(cafile=target.certificate if target.tls else None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if target.tls and target.client_certificate:
        context.load_cert_chain(target.client_certificate, keyfile=target.client_key)
    return context


def _create_connection(
    address: tuple[str, int], timeout: float | None, source_address: Any = None
) -> socket.socket:
    """``socket.create_connection`` with the host as the bytes the IDNA codec would make of
    it (``_resolvable``): given a ``str``, ``getaddrinfo`` encodes it with that codec, whose
    first use imports ``encodings.idna`` and, through it, ``stringprep`` and
    ``unicodedata`` (~5.8 M instructions, once a process), even for ``127.0.0.1``."""
    host, port = address
    # `getaddrinfo` takes a name's bytes as they are (its stub says `str` only)
    resolvable: Any = _resolvable(host)
    return socket.create_connection((resolvable, port), timeout, source_address)


def _resolvable(host: str) -> str | bytes:
    """``host.encode("idna")`` where the codec's ASCII fast path would give it: an ASCII
    name whose labels before the last are 1 to 63 bytes long and whose last is under 64.
    Any other name stays a ``str``, for ``getaddrinfo`` to encode (or refuse) as before."""
    if not host.isascii():
        return host
    encoded = host.encode("ascii")
    *labels, last = encoded.split(b".")
    if len(last) < 64 and all(0 < len(label) < 64 for label in labels):
        return encoded
    return host


def _set_timeout(conn: http.client.HTTPConnection, deadline: float) -> None:
    """What is left of the attempt's deadline, for the socket's next waits (a connection not
    yet opened takes it as its connect timeout)."""
    remaining = max(deadline - time.monotonic(), 0.001)
    if conn.sock is None:
        conn.timeout = remaining
    else:
        conn.sock.settimeout(remaining)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """An idle connection that is closed or readable: the receiver closed it (or sent
    something unasked), so it cannot carry a request."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        poller = select.poll()  # not select(): a descriptor past 1023 is fine
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


def _describe(error: BaseException) -> str:
    """An error's text, its type when it has none (``RemoteDisconnected`` has a text;
    ``BadStatusLine('')`` does not)."""
    text = str(error)
    return text if text.strip() and text != "''" else type(error).__name__


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), if usable."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
