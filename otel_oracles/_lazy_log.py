"""A module's logger, with ``logging`` imported when something is first logged.

``import logging`` (with the ``traceback`` it imports) is ~15 M instructions, over 1% of a
one-trace ``grade``, and the modules a grade imports log only on paths a healthy run never
takes: a plug-in that fails to load, a parser that raises, a trace whose grading crashed
(docs/performance-history.md, "Start-up: logging, difflib and literal tool names when
needed"). Their module-level logger is a ``LazyLogger``: the record is the one
``logging.getLogger(name)`` would make, with the caller's file and line.
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    """``logging.getLogger(name)``'s ``debug``, ``warning`` and ``error``, the logger looked
    up at each call (``logging`` imported by the first one)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _log(self, level: str, msg: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        import logging

        # Two frames up (this method, then debug/warning/error): the caller's file and line.
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
        getattr(logging.getLogger(self.name), level)(msg, *args, **kwargs)

    def debug(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._log("debug", msg, args, kwargs)

    def warning(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._log("warning", msg, args, kwargs)

    def error(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._log("error", msg, args, kwargs)
