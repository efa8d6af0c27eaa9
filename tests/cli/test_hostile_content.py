"""Message and argument content a sender controls, read by the real CLI as a subprocess.

Tool arguments recorded as a Python ``repr`` are parsed as data (``python_literal``). A hex
literal of a few thousand digits is a valid Python integer, but one that Python cannot
write in decimal (more than 4,300 digits): kept as the argument's value, it made every
later ``json.dumps`` of the step raise, so ``inspect --json`` ended in a traceback and the
checks that serialise arguments (``no_network``) gave ``error`` instead of judging.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.genai_otlp import agent_run

CLI = str(Path(sys.executable).with_name("otel-oracles"))


def agent_trace(arguments: str) -> dict[str, object]:
    """A GenAI agent run with one ``search_docs`` call whose arguments are ``arguments``."""
    return agent_run([("search_docs", arguments)])


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "literal",
    ["0x" + "f" * 4000, "0o" + "7" * 6000, "0b" + "1" * 15000],
    ids=["hex", "octal", "binary"],
)
def test_an_integer_python_cannot_write_is_no_argument_value(tmp_path: Path, literal: str) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(agent_trace("{'query': " + literal + "}")))
    shown = run("inspect", "--json", str(trace))
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "Traceback" not in shown.stderr
    steps = json.loads(shown.stdout)["trajectories"][0]["steps"]
    call = next(s for s in steps if s["tool"] == "search_docs")
    assert call["arguments"] is None, "no value: the same number in decimal is no literal"

    contract = tmp_path / "c.yaml"
    contract.write_text(
        "id: c\ninvariants:\n  - {type: no_network, name: no-net}\n"
        "  - {type: tool_not_called, tool: delete_records, name: no-delete}\n"
    )
    graded = run("grade", "-q", "--json", "-c", str(contract), str(trace))
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
    results = json.loads(graded.stdout)["verdicts"][0]["results"]
    assert {r["name"]: r["outcome"] for r in results} == {"no-net": "pass", "no-delete": "pass"}


def test_a_small_big_integer_is_still_read(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(agent_trace("{'query': 0x" + "f" * 64 + "}")))
    shown = run("inspect", "--json", str(trace))
    assert shown.returncode == 0, shown.stderr[-2000:]
    steps = json.loads(shown.stdout)["trajectories"][0]["steps"]
    call = next(s for s in steps if s["tool"] == "search_docs")
    assert call["arguments"] == {"query": 16**64 - 1}


def test_an_object_repr_holding_such_an_integer_is_no_value() -> None:
    from otel_oracles.mapping.parsers import builtin_parsers

    parse = builtin_parsers()["python_repr"]
    with pytest.raises(ValueError, match="too long to write in decimal"):
        parse("ToolCall(name='search_docs', arguments={'query': 0x" + "f" * 4000 + "})")
    assert parse("ToolCall(name='x', n=0x" + "f" * 40 + ")") == {
        "__type__": "ToolCall",
        "name": "x",
        "n": 16**40 - 1,
    }
