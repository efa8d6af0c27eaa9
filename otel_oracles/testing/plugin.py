"""The pytest plug-in (entry point ``pytest11``): options, the trace items, the
``grade_trace`` fixture and the failure-injection fixtures ``http_faults`` and ``tool_faults``.

pytest imports this module at every start-up of every project where otel-oracles is
installed, so it imports only pytest: the grading stages, the OpenTelemetry SDK and the
contracts are loaded when ``--oo-traces`` is given or a test asks for ``grade_trace``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from otel_oracles.testing._fixture import TraceGrader
    from otel_oracles.testing._http_faults import HttpFaultServer
    from otel_oracles.testing._tool_faults import ToolFaults


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("otel-oracles", "grading agent traces (otel-oracles)")
    group.addoption(
        "--oo-contracts",
        action="append",
        default=[],
        metavar="PATH",
        help="Contract file, or directory of them; repeat for several. Grades --oo-traces, "
        "and is what grade_trace() grades against when given no contract.",
    )
    group.addoption(
        "--oo-traces",
        action="append",
        default=[],
        metavar="PATH",
        help="OTLP trace file, directory or glob (as otel-oracles grade reads them); repeat "
        "for several. Each (contract, trace) pair a contract selects is a test item named "
        "<contract id>@<version>::<trace id>.",
    )
    group.addoption(
        "--oo-conventions",
        action="append",
        default=[],
        metavar="PATH",
        help="Extra mapping file or directory, added to the bundled conventions; repeat "
        "for several.",
    )
    group.addoption(
        "--oo-explain",
        choices=["template", "full"],
        default=None,
        help="template (default, or OTEL_ORACLES_EXPLAIN): failures show check names, "
        "outcomes, ids and tool names only; full: the checks' own messages, which may "
        "quote trace content.",
    )


def pytest_configure(config: pytest.Config) -> None:
    trace_paths = config.getoption("oo_traces")
    if not trace_paths:
        return
    if not config.getoption("oo_contracts"):
        raise pytest.UsageError("--oo-traces needs --oo-contracts: the contracts to grade by")
    from otel_oracles.testing._collect import MARKER, TraceGradingPlugin
    from otel_oracles.testing._settings import settings_for

    config.addinivalue_line("markers", f"{MARKER}: a trace graded by --oo-contracts")

    if "-" in trace_paths:
        raise pytest.UsageError("--oo-traces -: pytest keeps stdin to itself; give files")
    # As a shell reads them: relative to where pytest was started.
    cwd = config.invocation_params.dir
    paths = [str(cwd / p) for p in trace_paths]
    plugin = TraceGradingPlugin(settings_for(config), paths)
    config.pluginmanager.register(plugin, TraceGradingPlugin.NAME)


@pytest.fixture
def grade_trace(request: pytest.FixtureRequest) -> Iterator[TraceGrader]:
    """Record the test's spans and log records in memory (fresh SDK providers, global for
    the test) and grade them on call: ``grade_trace("contracts/support.yaml")`` returns a
    ``GradeResult`` (docs/pytest.md)."""
    from otel_oracles.testing._fixture import TraceGrader
    from otel_oracles.testing._recording import Recording
    from otel_oracles.testing._settings import settings_for

    settings = settings_for(request.config)
    with Recording().installed() as recording:
        yield TraceGrader(settings, recording)


@pytest.fixture
def http_faults() -> Iterator[HttpFaultServer]:
    """A real HTTP server on 127.0.0.1 to point an agent's HTTP dependency at: it answers
    each route as ``respond(path, json)`` says, and fails on cue with ``inject(kind)``
    (timeout, empty, malformed_json, rate_limited, schema_invalid); docs/pytest.md."""
    from otel_oracles.testing._http_faults import HttpFaultServer

    server = HttpFaultServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def tool_faults() -> ToolFaults:
    """Wraps a tool callable so its first calls fail as asked:
    ``tool_faults.wrap(search, "timeout", library="httpx")``; docs/pytest.md."""
    from otel_oracles.testing._tool_faults import ToolFaults

    return ToolFaults()
