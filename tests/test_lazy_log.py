"""A module's logger that imports ``logging`` on first use (``otel_oracles/_lazy_log.py``).

Why: a grade that logs nothing no longer imports ``logging``; what it does log must still be
the record ``logging.getLogger(name)`` makes, at the caller's file and line, with the
traceback when asked, so handlers and ``caplog`` see no difference.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from otel_oracles._lazy_log import LazyLogger


def test_records_are_the_named_loggers_at_the_callers_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = LazyLogger("otel_oracles.test_lazy")
    with caplog.at_level(logging.DEBUG, logger="otel_oracles.test_lazy"):
        log.debug("d %s", 1)
        log.warning("w %s", 2)
        line = sys._getframe().f_lineno + 1
        log.error("e %s", 3)
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("otel_oracles.test_lazy", logging.DEBUG, "d 1"),
        ("otel_oracles.test_lazy", logging.WARNING, "w 2"),
        ("otel_oracles.test_lazy", logging.ERROR, "e 3"),
    ]
    last = caplog.records[-1]
    assert last.pathname == __file__
    assert last.lineno == line
    assert last.funcName == "test_records_are_the_named_loggers_at_the_callers_line"


def test_exc_info_keeps_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    log = LazyLogger("otel_oracles.test_lazy")
    with caplog.at_level(logging.ERROR, logger="otel_oracles.test_lazy"):
        try:
            raise ValueError("boom")
        except ValueError:
            log.error("crashed", exc_info=True)
    assert "ValueError: boom" in caplog.text


def test_logging_is_imported_by_the_first_record_only() -> None:
    probe = (
        "import sys\n"
        "from otel_oracles._lazy_log import LazyLogger\n"
        "log = LazyLogger('x')\n"
        "before = 'logging' in sys.modules\n"
        "log.warning('hello')\n"
        "print(before, 'logging' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["False", "True"]
    assert "hello" in out.stderr  # logging's last-resort handler printed it
