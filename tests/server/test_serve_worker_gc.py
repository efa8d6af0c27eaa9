"""A grading worker process leaves start-up with the collector settings ``otel-oracles``'
``main`` gives a command (``cli.StartUpGc``): it is a spawned process, so without
``_settle_collector`` it would grade under CPython's defaults (docs/performance-history.md, "The
checks stage and serve's workers, cheaper per verdict")."""

from __future__ import annotations

import gc
import multiprocessing
from multiprocessing.connection import Connection

from otel_oracles.cli import StartUpGc
from otel_oracles.server.config import ServeSettings, load_settings
from tests.server.conftest import CONTRACTS


def _worker_then_report(conn: Connection, report: Connection, settings: ServeSettings) -> None:
    """The worker's real entry point; once it returns, what its collector was set to."""
    from otel_oracles.server._processes import worker_main

    worker_main(conn, settings, 1, {})
    report.send((gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()))


def test_a_grading_worker_collects_as_a_command_does() -> None:
    settings = load_settings(None, {"grading.contracts": [str(CONTRACTS)]}, environ={})
    ctx = multiprocessing.get_context("spawn")  # how serve starts its workers
    parent, child = ctx.Pipe()
    results, report = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_worker_then_report, args=(child, report, settings))
    proc.start()
    try:
        assert parent.poll(120), "the worker never said it was ready"
        assert parent.recv() == ("ready",)
        parent.send(("stop", 5.0))
        assert parent.poll(60) and parent.recv() == ("stopped",)
        assert results.poll(60), "the worker did not report its collector"
        enabled, frozen, thresholds = results.recv()
    finally:
        proc.join(60)
        if proc.is_alive():
            proc.kill()
    assert proc.exitcode == 0
    # On (serve runs for days: cycles must still be freed), start-up frozen out of its scans,
    # and collecting as rarely as a command does; this test process keeps CPython's default.
    assert enabled
    assert frozen > 0
    assert thresholds == StartUpGc.THRESHOLDS != gc.get_threshold()
