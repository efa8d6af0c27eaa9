"""OTLP/HTTP sending with protobuf bodies on urllib3: a thread-safe connection pool, gzip or
deflate bodies, TLS from the certificate variables. The rules are ``_transport``'s.

Why urllib3: synchronous like the emitter's export call (aiohttp would need an event-loop
thread per sender), and cheap to import: ~0.07 s of CPU against ~0.26 s for aiohttp, paid
at every ``grade --export otlp`` start (bench G4's setup share)."""

from __future__ import annotations

import gzip
import time
import zlib
from email.utils import parsedate_to_datetime
from typing import Any

import urllib3
from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from otel_oracles.emit._transport import Attempt, OtlpTarget, Sender

_RETRYABLE_HTTP = frozenset({429, 502, 503, 504})


class HttpSender(Sender):
    """One POST per request to the target's URL, through one connection pool."""

    def __init__(self, target: OtlpTarget, user_agent: str = "otel-oracles") -> None:
        super().__init__(target)
        self._headers = {
            "Content-Type": "application/x-protobuf",
            "User-Agent": user_agent,
            **target.headers,
        }
        if target.compression != "none":
            self._headers["Content-Encoding"] = target.compression
        tls: dict[str, Any] = (
            {
                "ca_certs": target.certificate,
                "cert_file": target.client_certificate,
                "key_file": target.client_key,
            }
            if target.tls
            else {}
        )
        self._pool = urllib3.PoolManager(retries=False, **tls)

    def _compressed(self, payload: bytes) -> bytes:
        if self.target.compression == "gzip":
            return gzip.compress(payload, compresslevel=6)
        if self.target.compression == "deflate":
            return zlib.compress(payload)
        return payload

    def _attempt(self, body: bytes, timeout_s: float, attempt_no: int) -> Attempt:
        deadline = time.monotonic() + timeout_s
        for fresh_try in (True, False):
            try:
                response = self._pool.request(
                    "POST",
                    self.target.endpoint,
                    body=body,
                    headers=self._headers,
                    timeout=urllib3.Timeout(total=max(deadline - time.monotonic(), 0.001)),
                    retries=False,
                )
            except (NewConnectionError, ProtocolError) as error:  # before TimeoutError: a
                # refused connection is a NewConnectionError, which subclasses it
                if fresh_try and deadline > time.monotonic():  # stale pooled connection?
                    continue
                return Attempt(False, f"connection error: {error}", True)
            except Urllib3Timeout:
                return Attempt(False, f"no answer within {timeout_s:.1f}s", True)
            except HTTPError as error:
                return Attempt(False, f"{type(error).__name__}: {error}", False)
            status = response.status
            if 200 <= status < 400:
                return Attempt(True)
            retryable = status in _RETRYABLE_HTTP
            return Attempt(
                False,
                f"HTTP {status} {response.reason or ''}".strip(),
                retryable,
                _retry_after(response.headers.get("Retry-After")) if retryable else None,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def shutdown(self) -> None:
        super().shutdown()
        self._pool.clear()


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
