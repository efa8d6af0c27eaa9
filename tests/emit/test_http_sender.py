"""The OTLP/HTTP sender (emit/_http_sender.py) against real HTTP/1.1 receivers on 127.0.0.1
that misbehave on purpose: keep-alive connections reused, a connection the receiver closed
while idle or while the request was sent replaced at once (no back-off), the timeout one
deadline for an attempt that gets no answer, ``Retry-After`` obeyed, and TLS verified with
the CA file given, refused without it, and a client certificate presented when asked."""

from __future__ import annotations

import logging
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.emit._http_sender import _resolvable
from otel_oracles.emit._transport import OtlpTarget, sender_for


class _Receiver(ThreadingHTTPServer):
    """Answers each POST by the next scripted action ("ok" once the script is spent):

    - ``ok``: 200 and the connection kept open;
    - ``ok-close``: 200, then the connection closed without saying so (an idle timeout);
    - ``drop``: the request read, the connection closed with no answer;
    - ``hang``: the request read, no answer until the test ends;
    - ``drip``: the status line, then a header a byte every 0.1 s until the test ends;
    - an ``int``: that status, with ``Retry-After: 0`` for 503.
    """

    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.tls = tls
        self.script: list[str | int] = []
        self.connections = 0
        self.closed = 0
        self.bodies: list[bytes] = []
        self.changed = threading.Condition()
        self.release = threading.Event()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.server_address[1]}/v1/traces"

    def next_action(self, body: bytes) -> str | int:
        with self.changed:
            self.bodies.append(body)
            self.changed.notify_all()
            return self.script.pop(0) if self.script else "ok"

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is not None:  # the handshake in the handler's thread
            with self.tls.wrap_socket(request, server_side=True) as wrapped:
                self._count_and_handle(wrapped, client_address)
        else:
            self._count_and_handle(request, client_address)

    def _count_and_handle(self, request: Any, client_address: Any) -> None:
        with self.changed:
            self.connections += 1
        super().finish_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        with self.changed:
            self.closed += 1
            self.changed.notify_all()

    def wait_closed(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.closed >= count, timeout=10)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # refused handshakes are the point of some tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        action = self.server.next_action(body)
        if action == "drop":
            self.close_connection = True
            return
        if action == "hang":
            self.server.release.wait(30)
            self.close_connection = True
            return
        if action == "drip":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not self.server.release.wait(0.1):  # the receiver's pace, not a wait on it
                self.wfile.write(b"z")
                self.wfile.flush()
            self.close_connection = True
            return
        status = 200 if action in ("ok", "ok-close") else int(action)
        self.send_response(status)
        if status == 503:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", "0")
        self.end_headers()
        if action == "ok-close":
            self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def _serve(tls: ssl.SSLContext | None = None) -> Iterator[_Receiver]:
    receiver = _Receiver(tls)
    thread = threading.Thread(target=receiver.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        receiver.shutdown()
        receiver.server_close()
        thread.join(10)


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    yield from _serve()


def _target(url: str, timeout_s: float = 5.0, **tls: Any) -> OtlpTarget:
    return OtlpTarget(
        signal="traces",
        protocol="http/protobuf",
        endpoint=url,
        timeout_s=timeout_s,
        tls=url.startswith("https:"),
        **tls,
    )


def _timed_send(target: OtlpTarget, payloads: int = 1) -> tuple[list[bool], float]:
    sender = sender_for(target)
    start = time.monotonic()
    try:
        sent = [sender.send(b"\x0a\x00" * (i + 1)) for i in range(payloads)]
    finally:
        sender.shutdown()
    return sent, time.monotonic() - start


def test_one_kept_alive_connection_carries_every_request(receiver: _Receiver) -> None:
    sent, _ = _timed_send(_target(receiver.url), payloads=3)
    assert sent == [True, True, True]
    assert receiver.bodies == [b"\x0a\x00", b"\x0a\x00" * 2, b"\x0a\x00" * 3]
    assert receiver.connections == 1


def test_a_connection_closed_while_idle_is_replaced_at_once(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = ["ok-close"]
    sender = sender_for(_target(receiver.url))
    try:
        with caplog.at_level(logging.WARNING, logger="otel_oracles.emit._transport"):
            assert sender.send(b"first")
            receiver.wait_closed(1)  # the pooled connection is now closed by the receiver
            assert sender.send(b"second")
    finally:
        sender.shutdown()
    assert receiver.bodies == [b"first", b"second"] and receiver.connections == 2
    assert not caplog.records, "a new connection at once, no failed attempt, no back-off"


def test_a_connection_closed_unanswered_is_tried_once_more_at_once(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = ["ok", "drop"]
    with caplog.at_level(logging.WARNING, logger="otel_oracles.emit._transport"):
        sent, _ = _timed_send(_target(receiver.url), payloads=2)
    assert sent == [True, True]
    assert len(receiver.bodies) == 3, "the dropped request is sent again"
    assert receiver.bodies[1] == receiver.bodies[2] and receiver.connections == 2
    assert not caplog.records, "retried at once, not after a back-off (which is logged)"


def test_connections_closed_unanswered_twice_are_a_retryable_failure(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = ["drop"] * 10
    with caplog.at_level(logging.WARNING, logger="otel_oracles.emit._transport"):
        sent, elapsed = _timed_send(_target(receiver.url, timeout_s=0.8))
    assert sent == [False] and elapsed < 0.8 and "transient" not in caplog.text
    assert len(receiver.bodies) == 2, "once, then once more at once; a 1 s back-off won't fit"
    assert "connection error" in caplog.text


def test_the_timeout_is_one_deadline_for_an_unanswered_attempt(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = ["hang"]
    with caplog.at_level(logging.ERROR, logger="otel_oracles.emit._transport"):
        sent, elapsed = _timed_send(_target(receiver.url, timeout_s=0.6))
    assert sent == [False]
    assert 0.6 <= elapsed < 2.0, f"given up at the deadline, took {elapsed:.2f}s"
    assert "no answer within 0.6s" in caplog.text


def test_the_deadline_bounds_an_answer_that_trickles_in(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = ["drip"]
    with caplog.at_level(logging.ERROR, logger="otel_oracles.emit._transport"):
        sent, elapsed = _timed_send(_target(receiver.url, timeout_s=0.6))
    assert sent == [False]
    assert 0.6 <= elapsed < 2.0, f"every read within the one deadline, took {elapsed:.2f}s"
    assert "no answer within 0.6s" in caplog.text


def test_a_receiver_that_never_accepts_times_out_at_the_deadline() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # nobody accepts: the handshake completes, the request sits unread
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/traces"
        sent, elapsed = _timed_send(_target(url, timeout_s=0.5))
    finally:
        listener.close()
    assert sent == [False] and 0.5 <= elapsed < 2.0


def test_retry_after_is_obeyed_and_a_client_error_is_not_retried(
    receiver: _Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.script = [503, 400]
    with caplog.at_level(logging.WARNING, logger="otel_oracles.emit._transport"):
        sent, elapsed = _timed_send(_target(receiver.url))
    assert sent == [False], "400 after the retried 503: refused for good"
    assert len(receiver.bodies) == 2 and "retrying in 0.00s: HTTP 503" in caplog.text
    assert elapsed < 0.8, "Retry-After: 0 means at once, not the 1 s back-off"


def test_a_refused_connection_is_a_retryable_failure() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1/traces"  # bound, not listening
    sent, elapsed = _timed_send(_target(url, timeout_s=0.5))
    assert sent == [False] and elapsed < 0.5, "tried twice at once; a back-off won't fit"


def test_an_endpoint_that_is_no_http_url_refuses_every_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="otel_oracles.emit._transport"):
        sent, _ = _timed_send(_target("ftp://127.0.0.1/v1/traces"))
    assert sent == [False] and "not an http(s) URL" in caplog.text
    assert "transient" not in caplog.text, "refused, not retried"


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "::1", "localhost", "collector.example.", "a" * 63 + ".b", "b." + "a" * 63, ""],
)
def test_a_host_the_idna_codec_takes_as_ascii_is_its_bytes(host: str) -> None:
    assert _resolvable(host) == host.encode("idna")


@pytest.mark.parametrize("host", ["bücher.example", "a..b", ".a", "a" * 64 + ".b", "b." + "a" * 64])
def test_any_other_host_is_left_to_getaddrinfo(host: str) -> None:
    """A name the codec's fast path would not give: a ``str`` still, so ``getaddrinfo``
    encodes it (or refuses it with the codec's error) as it did before."""
    assert _resolvable(host) == host and isinstance(_resolvable(host), str)


_IDNA_PROBE = """
import sys
from otel_oracles.emit._transport import OtlpTarget, sender_for
target = OtlpTarget(signal="traces", protocol="http/protobuf", endpoint=sys.argv[1], timeout_s=5.0)
sender = sender_for(target)
sent = sender.send(b"probe")
sender.shutdown()
print(sent, "encodings.idna" in sys.modules)
"""


def test_sending_to_an_address_does_not_import_the_idna_codec(receiver: _Receiver) -> None:
    """``getaddrinfo`` given a ``str`` host imports ``encodings.idna`` (and ``stringprep``,
    ``unicodedata``) at its first use: the sender resolves the host's bytes instead."""
    probe = subprocess.run(
        [sys.executable, "-c", _IDNA_PROBE, receiver.url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.split() == ["True", "False"], probe.stderr
    assert receiver.bodies == [b"probe"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A self-signed server certificate for 127.0.0.1 and a self-signed client one."""
    d = tmp_path_factory.mktemp("pki")
    files = {}
    for name, cn in (("server", "localhost"), ("client", "otel-oracles-client")):
        cert, key = d / f"{name}.pem", d / f"{name}.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={cn}",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
            check=True, capture_output=True,
        )  # fmt: skip
        files[name], files[f"{name}_key"] = cert, key
    return files


def _server_tls(pki: dict[str, Path], require_client: bool) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server"], pki["server_key"])
    if require_client:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki["client"])
    return context


def test_tls_with_the_ca_file_given(pki: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    for receiver in _serve(_server_tls(pki, require_client=False)):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", str(pki["server"]))
        target = OtlpTarget.from_env("traces", "http/protobuf")
        assert target.tls and target.certificate == str(pki["server"])
        sent, _ = _timed_send(target, payloads=2)
        assert sent == [True, True] and receiver.connections == 1


def test_tls_refuses_a_receiver_it_cannot_verify(
    pki: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    for receiver in _serve(_server_tls(pki, require_client=False)):
        with caplog.at_level(logging.ERROR, logger="otel_oracles.emit._transport"):
            sent, _ = _timed_send(_target(receiver.url))  # the system's CAs only
        assert sent == [False] and not receiver.bodies
        assert "transient" not in caplog.text, "a failed verification is not retried"
        assert "SSLError" in caplog.text and "CERTIFICATE_VERIFY_FAILED" in caplog.text


def test_tls_presents_the_client_certificate(pki: dict[str, Path]) -> None:
    for receiver in _serve(_server_tls(pki, require_client=True)):
        with_cert = _target(
            receiver.url,
            certificate=str(pki["server"]),
            client_certificate=str(pki["client"]),
            client_key=str(pki["client_key"]),
        )
        assert _timed_send(with_cert)[0] == [True]
        without = _target(receiver.url, timeout_s=0.5, certificate=str(pki["server"]))
        assert _timed_send(without)[0] == [False]
        assert len(receiver.bodies) == 1, "only the request with the certificate got in"
