"""Making a Python tool callable fail for a test, by wrapping it.

``tool_faults.wrap(search_docs, "timeout", library="httpx")`` returns a callable with the
tool's name, signature and docstring (agent frameworks read all three to describe the tool
to the model), sync or async as the tool is. Its first calls fail as asked; later ones call
the tool. Raising faults raise what the tool's own client would raise; the payload faults
call the real tool and return its answer emptied, cut in half, or reshaped, so the failure
has the shape of the real data.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from otel_oracles.testing._faults import (
    LIBRARIES,
    FaultKind,
    FaultUsageError,
    check_kind,
    emptied,
    malformed,
    rate_limit_error,
    reshaped,
    timeout_error,
)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a wrapped tool: its name, and the fault it got (None: it ran as is)."""

    tool: str
    fault: FaultKind | None


@dataclass(slots=True)
class _Plan:
    kind: FaultKind
    times: int | None
    library: str
    retry_after: float
    payload: Any
    url: str
    served: int = 0

    def take(self) -> bool:
        if self.times is not None and self.served >= self.times:
            return False
        self.served += 1
        return True


class ToolFaults:
    """The ``tool_faults`` fixture: wraps tools and records every call of the wrapped ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[ToolCall] = []

    @property
    def calls(self) -> list[ToolCall]:
        """Every call of every wrapped tool, in order (a copy)."""
        with self._lock:
            return list(self._calls)

    def calls_of(self, tool: str) -> list[ToolCall]:
        """The calls of the tool named ``tool``."""
        return [c for c in self.calls if c.tool == tool]

    def wrap(
        self,
        tool: F,
        kind: str,
        *,
        times: int | None = 1,
        library: str = "builtin",
        retry_after: float = 1,
        payload: Any = None,
        url: str = "http://127.0.0.1/",
    ) -> F:
        """``tool`` failing its first ``times`` calls (None: every call) with ``kind``.

        ``library`` (``builtin``, ``requests``, ``httpx``, ``openai``) chooses whose
        exception ``timeout`` and ``rate_limited`` raise (``TimeoutError`` and
        ``RateLimited`` for ``builtin``); ``url`` is the one those exceptions name.
        ``payload`` replaces the answer ``empty``, ``malformed_json`` and
        ``schema_invalid`` derive from the tool's real one.
        """
        if library not in LIBRARIES:
            raise FaultUsageError(
                f"tool_faults.wrap: unknown library {library!r}; known: {', '.join(LIBRARIES)}"
            )
        if times is not None and times < 1:
            raise FaultUsageError(f"tool_faults.wrap: times must be >= 1 or None, got {times}")
        plan = _Plan(check_kind(kind), times, library, retry_after, payload, url)
        if kind in ("timeout", "rate_limited"):
            self._raised(plan)  # a library that is not installed fails here, not mid-run
        name = getattr(tool, "__name__", type(tool).__name__)

        def faulted() -> FaultKind | None:
            with self._lock:
                fault = plan.kind if plan.take() else None
                self._calls.append(ToolCall(name, fault))
            return fault

        if inspect.iscoroutinefunction(tool):

            @functools.wraps(tool)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                fault = faulted()
                if fault in ("timeout", "rate_limited"):
                    raise self._raised(plan)
                result = await tool(*args, **kwargs)
                return result if fault is None else _transformed(plan, result)

            return cast(F, async_wrapper)

        @functools.wraps(tool)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            fault = faulted()
            if fault in ("timeout", "rate_limited"):
                raise self._raised(plan)
            result = tool(*args, **kwargs)
            return result if fault is None else _transformed(plan, result)

        return cast(F, wrapper)

    @staticmethod
    def _raised(plan: _Plan) -> BaseException:
        if plan.kind == "timeout":
            return timeout_error(plan.library, plan.url)
        return rate_limit_error(plan.library, plan.url, plan.retry_after)


def _transformed(plan: _Plan, result: Any) -> Any:
    base = result if plan.payload is None else plan.payload
    if plan.kind == "empty":
        return emptied(base) if plan.payload is None else plan.payload
    if plan.kind == "malformed_json":
        return malformed(base)
    return reshaped(base) if plan.payload is None else plan.payload
