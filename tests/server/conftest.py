"""Fixtures for the serve tests: real servers on 127.0.0.1:0 with short decision waits."""

from __future__ import annotations

import json
import os
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.emit import InMemoryEmitter
from otel_oracles.server import BackgroundServer, create_server, load_settings
from tests.support.otlp_sink import OtlpSink

HERE = Path(__file__).resolve().parent
TESTDATA = HERE / "testdata"
CONTRACTS = TESTDATA / "contracts"


def serve_overrides(**over: Any) -> dict[str, Any]:
    """Settings for tests: ephemeral ports, 0.2 s decision wait, no joining, the test
    contracts, a spool of its own (under the test's ``XDG_STATE_HOME``: a test may run several
    servers)."""
    base: dict[str, Any] = {
        "spool.path": str(Path(os.environ["XDG_STATE_HOME"]) / f"spool-{uuid.uuid4().hex}"),
        "receivers.grpc.endpoint": "127.0.0.1:0",
        "receivers.http.endpoint": "127.0.0.1:0",
        "assembly.decision_wait": "0.2s",
        # Off: these tests send copies of one capture (one conversation id) as distinct
        # runs; test_serve_joining.py turns it on.
        "assembly.join_window": "0s",
        "assembly.sweep_interval": "20ms",
        "grading.contracts": [str(CONTRACTS)],
        "grading.workers": 2,
        "shutdown_timeout": "10s",
    }
    base.update(over)
    return base


class Running(BackgroundServer):
    emitter: InMemoryEmitter

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.http_url + "/stats", timeout=5) as resp:
            return json.loads(resp.read())


@pytest.fixture
def serve() -> Iterator[Callable[..., Running]]:
    """``serve(**dotted_overrides)`` starts a server in-process (own event-loop thread) with
    an InMemoryEmitter; every server is drained at the end of the test."""
    started: list[Running] = []

    def make(**over: Any) -> Running:
        emitter = InMemoryEmitter()
        settings = load_settings(overrides=serve_overrides(**over), environ={})
        bg = Running(create_server(settings, emitter=emitter))
        bg.emitter = emitter
        bg.start()
        started.append(bg)
        return bg

    yield make
    for bg in started:
        bg.shutdown(10)


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    """A real OTLP sink (gRPC and HTTP on 127.0.0.1) that records what it receives."""
    with OtlpSink() as s:
        yield s
