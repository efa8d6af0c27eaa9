"""What an injected dependency failure is, shared by the HTTP fault server and the tool wrapper.

A failure budget is only worth what the failures it was tested with are worth: an agent that
survives ``raise Exception("timeout")`` may still crash on the ``requests.ReadTimeout`` its
HTTP client really raises, or on a 429 it never reads ``Retry-After`` from. So each fault
here is the shape the real failure takes: the client library's own exception type, the
healthy payload emptied or truncated rather than an arbitrary placeholder.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Literal, get_args

FaultKind = Literal["timeout", "empty", "malformed_json", "rate_limited", "schema_invalid"]
"""``timeout``: no answer in time (over HTTP the server holds the request; a tool raises the
library's timeout exception); ``empty``: the healthy answer with every list and string
emptied; ``malformed_json``: the healthy JSON cut in half; ``rate_limited``: 429 with
``Retry-After``; ``schema_invalid``: valid JSON of another shape (the healthy answer nested
under ``"data"``, as an API version change does)."""

FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)

Library = Literal["builtin", "requests", "httpx", "openai"]
"""Whose exceptions a tool's ``timeout`` and ``rate_limited`` faults raise."""

LIBRARIES: tuple[str, ...] = get_args(Library)


class RateLimited(Exception):
    """A ``rate_limited`` fault of a tool whose library is ``builtin``: carries the
    ``retry_after`` seconds a 429 would have sent."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited; retry after {retry_after:g}s")
        self.retry_after = retry_after


class FaultUsageError(ValueError):
    """A fault asked for wrongly (unknown kind or library, a library that is not
    installed); the message is one line naming the argument."""


def check_kind(kind: str) -> FaultKind:
    """``kind`` when it is a fault kind, else ``FaultUsageError`` naming the known ones."""
    if kind not in FAULT_KINDS:
        raise FaultUsageError(f"fault: unknown kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
    return kind  # type: ignore[return-value]  # checked against the Literal's members above


def emptied(value: Any) -> Any:
    """``value`` with the same keys and no content: lists and strings empty, dicts kept with
    their values emptied, numbers and booleans as they are (a count of 0 would be a guess)."""
    if isinstance(value, dict):
        return {k: emptied(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)()
    if isinstance(value, str | bytes):
        return value[:0]
    return value


def malformed(value: Any) -> str:
    """The JSON text of ``value`` cut in half, as a dropped connection or an overlong
    response cut at a limit leaves it; always unparseable."""
    text = value if isinstance(value, str) else json.dumps(value)
    half = text[: max(1, len(text) // 2)]
    try:
        json.loads(half)
    except ValueError:
        return half
    return half + "{"  # half of a short text can still parse ("1" of "12")


def reshaped(value: Any) -> dict[str, Any]:
    """Valid JSON a client expecting ``value``'s shape cannot use: ``value`` one level
    deeper, under ``"data"``."""
    return {"data": value}


def _module(library: str) -> Any:
    try:
        return importlib.import_module(library)
    except ImportError:
        raise FaultUsageError(
            f"fault: library={library!r} is not installed; pass library='builtin' or install it"
        ) from None


def timeout_error(library: str, url: str) -> BaseException:
    """The exception ``library``'s client raises when a read times out."""
    if library == "builtin":
        return TimeoutError(f"timed out reading from {url}")
    if library == "requests":
        error: BaseException = _module("requests").exceptions.ReadTimeout(
            f"Read timed out. (url: {url})"
        )
        return error
    if library == "httpx":
        httpx = _module("httpx")
        error = httpx.ReadTimeout("The read operation timed out", request=httpx.Request("GET", url))
        return error
    if library == "openai":
        openai, httpx = _module("openai"), _module("httpx")
        error = openai.APITimeoutError(request=httpx.Request("POST", url))
        return error
    raise FaultUsageError(f"fault: unknown library {library!r}; known: {', '.join(LIBRARIES)}")


def rate_limit_error(library: str, url: str, retry_after: float) -> BaseException:
    """The exception ``library``'s client raises for a 429 with ``Retry-After``."""
    if library == "builtin":
        return RateLimited(retry_after)
    headers = {"Retry-After": f"{retry_after:g}", "Content-Type": "application/json"}
    body = json.dumps({"error": {"message": "Rate limit exceeded", "type": "rate_limit_error"}})
    if library == "requests":
        requests = _module("requests")
        response = requests.Response()
        response.status_code = 429
        response.reason = "Too Many Requests"
        response.url = url
        response.headers.update(headers)
        response._content = body.encode()  # the public constructor takes no body
        error: BaseException = requests.exceptions.HTTPError(
            f"429 Client Error: Too Many Requests for url: {url}", response=response
        )
        return error
    if library in ("httpx", "openai"):
        httpx = _module("httpx")
        request = httpx.Request("POST", url)
        response = httpx.Response(429, headers=headers, content=body.encode(), request=request)
        if library == "httpx":
            error = httpx.HTTPStatusError(
                f"Client error '429 Too Many Requests' for url '{url}'",
                request=request,
                response=response,
            )
            return error
        error = _module("openai").RateLimitError(
            "Rate limit exceeded", response=response, body=json.loads(body)
        )
        return error
    raise FaultUsageError(f"fault: unknown library {library!r}; known: {', '.join(LIBRARIES)}")
