"""Plug-ins that make grading crash for real, installed the way any plug-in is (a
distribution on the path with entry points), and traces that reach them. Shared by the
offline tests here and ``tests/server/test_serve_grading_crash.py``.

- oracle ``crash_test_exit`` raises ``SystemExit`` from its check: that check's ``error``;
- oracle ``crash_test_hold`` writes the pid of the process grading it into a FIFO the test
  reads (the handshake: the test knows which process is mid-grade, and that it is), then
  blocks opening a FIFO nobody writes, so the test can SIGKILL it there as the OOM killer
  would;
- parser ``crash_test_exit`` raises ``SystemExit`` while a trace is mapped, which no
  per-check handling covers: the whole trace's grading crashes (``CRASH_CONVENTION`` names
  it for spans carrying ``crash.parse``).
"""

from __future__ import annotations

import json
import os
import select
from pathlib import Path
from typing import Any

PLUGIN = '''
"""Test plug-ins that make grading crash (see tests/parallel/crash_plugins.py)."""

import os

from otel_oracles import Finding, GradeContext, OracleCheck, OracleParams


class Exit(OracleCheck):
    oracle_type = "crash_test_exit"

    class Params(OracleParams):
        pass

    def check(self, ctx: GradeContext) -> Finding:
        raise SystemExit("plug-in called sys.exit")


class Hold(OracleCheck):
    oracle_type = "crash_test_hold"

    class Params(OracleParams):
        ready: str
        release: str

    def check(self, ctx: GradeContext) -> Finding:
        with open(self.params.ready, "w") as f:
            f.write(str(os.getpid()))
        with open(self.params.release) as f:  # blocks until a writer opens it: never
            f.read()
        return Finding.ok("released")


def exit_parser(value):
    raise SystemExit("parser plug-in called sys.exit")
'''

CRASH_CONVENTION = """\
name: crash-test
description: Spans carrying crash.parse are read by a parser plug-in that calls sys.exit.
priority: 90
rules:
  - id: crash
    step: generation
    match:
      all: [{attr: crash.parse, exists: true}]
    fields:
      input_messages: {attr: crash.parse, parse: crash_test_exit}
"""


def install_plugins(site: Path) -> dict[str, str]:
    """The plug-ins as an installed distribution (module + dist-info with its entry points)
    in ``site``; the variable that puts it on a subprocess's path."""
    site.mkdir()
    (site / "crash_test_oracles.py").write_text(PLUGIN)
    info = site / "crash_test_oracles-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: crash-test-oracles\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[otel_oracles.oracles]\n"
        "crash_test_exit = crash_test_oracles:Exit\n"
        "crash_test_hold = crash_test_oracles:Hold\n"
        "[otel_oracles.parsers]\n"
        "crash_test_exit = crash_test_oracles:exit_parser\n"
    )
    return {
        "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    }


def agent_trace(
    trace_id: str,
    service: str,
    tools: list[str],
    extra: dict[str, str] | None = None,
    second: int = 0,
) -> dict[str, Any]:
    """One OTLP/JSON ``resourceSpans`` entry: an ``invoke_agent`` root with a chat span
    (carrying ``extra`` attributes) and one ``execute_tool`` span per tool, starting
    ``second`` seconds after a fixed instant."""

    def attrs(values: dict[str, str]) -> list[dict[str, Any]]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    base = 1_800_000_000_000_000_000 + second * 1_000_000_000
    root = "a" * 16
    spans = [
        {
            "traceId": trace_id,
            "spanId": root,
            "name": "invoke_agent support",
            "kind": 1,
            "startTimeUnixNano": str(base),
            "endTimeUnixNano": str(base + 10_000_000),
            "attributes": attrs(
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
            ),
        },
        {
            "traceId": trace_id,
            "spanId": "b" * 16,
            "parentSpanId": root,
            "name": "chat gpt-4o-mini",
            "kind": 3,
            "startTimeUnixNano": str(base + 1_000_000),
            "endTimeUnixNano": str(base + 2_000_000),
            "attributes": attrs(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4o-mini",
                    **(extra or {}),
                }
            ),
        },
    ]
    for i, tool in enumerate(tools):
        spans.append(
            {
                "traceId": trace_id,
                "spanId": f"{i + 1:016x}",
                "parentSpanId": root,
                "name": f"execute_tool {tool}",
                "kind": 1,
                "startTimeUnixNano": str(base + 3_000_000 + i),
                "endTimeUnixNano": str(base + 4_000_000 + i),
                "attributes": attrs(
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": f"call_{i}",
                    }
                ),
            }
        )
    return {
        "resource": {"attributes": attrs({"service.name": service})},
        "scopeSpans": [{"scope": {"name": "agent-test"}, "spans": spans}],
    }


def write_export(path: Path, traces: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"resourceSpans": traces}))
    return path


def read_pid(fifo: int, timeout: float) -> int:
    """The pid a ``crash_test_hold`` check writes into the FIFO opened (non-blocking, before
    any writer) as ``fifo``: returns once the check has written it and closed its end, at
    most ``timeout`` seconds after the check starts. (On Linux a FIFO no writer opened yet
    is not readable, so ``select`` waits for the check itself.)"""
    data = b""
    while True:
        ready, _, _ = select.select([fifo], [], [], timeout)
        if not ready:
            raise AssertionError(f"no grading process reached the hold check in {timeout}s")
        chunk = os.read(fifo, 64)
        if not chunk:
            return int(data)
        data += chunk
