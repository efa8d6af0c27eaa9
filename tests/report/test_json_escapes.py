"""``grade --json`` and ``inspect --json`` are read by people too: in a terminal, a pager, a
reviewer's diff of a committed results file. JSON requires only C0 controls to be escaped,
so DEL, the C1 controls (``\\x9b`` is CSI on terminals that take 8-bit controls) and the
bidirectional overrides a trace put in its names came out raw: valid JSON that a terminal
obeys and a diff view shows reordered. The writers escape them as ``\\uXXXX``: the document
stays valid and parses to the same values.

Run through the real CLI in a subprocess, over a real capture whose names were made hostile
(``test_terminal_escapes.hostile_trace``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report.test_terminal_escapes import HOSTILE, hostile_trace, run

RAW = "\x7f\x85\x9b\u202e\u2066"
"""DEL, NEL, 8-bit CSI, right-to-left override, left-to-right isolate: none of them is an
escape JSON requires."""

UNSAFE = set("\x7f" + "".join(map(chr, range(0x80, 0xA0))) + "\u202a\u202b\u202c\u202d\u202e")
UNSAFE |= set("\u2066\u2067\u2068\u2069")


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = hostile_trace(tmp_path_factory.mktemp("json-escapes") / "hostile.otlp.json")
    path.write_text(path.read_text().replace(json.dumps(HOSTILE)[1:-1], json.dumps(RAW)[1:-1]))
    return path


def assert_escaped(text: str) -> None:
    found = sorted({f"{ord(c):#x}" for c in text if c in UNSAFE})
    assert not found, f"raw control or bidi characters in the JSON: {found}"
    assert "\\u007f\\u0085\\u009b\\u202e\\u2066" in text  # there, as escapes


def test_grade_json(trace: Path, tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "id: c\nversion: 1\ninvariants: [{type: tool_not_called, tool: 'delete_records"
        + json.dumps(RAW)[1:-1]
        + "'}]\n"
    )
    result = run("grade", str(trace), "-c", str(contract), "--json", "--explain", "full")
    assert result.returncode in (0, 1), result.stderr
    assert_escaped(result.stdout)
    data = json.loads(result.stdout)  # still JSON, and the same values
    assert "support_agent" + RAW in json.dumps(data, ensure_ascii=False)


def test_inspect_json(trace: Path) -> None:
    result = run("inspect", str(trace), "--json")
    assert result.returncode == 0, result.stderr
    assert_escaped(result.stdout)
    data = json.loads(result.stdout)
    assert "support_agent" + RAW in json.dumps(data, ensure_ascii=False)


def test_ascii_text_with_del_is_escaped_too() -> None:
    """Text that is all ASCII (most verdicts) is only searched for DEL."""
    from otel_oracles.report import json_safe

    assert json_safe('{"a": "x\x7fy"}') == '{"a": "x\\u007fy"}'
    assert json.loads(json_safe('{"a": "x\x7fy"}')) == {"a": "x\x7fy"}
    assert json_safe('{"a": "plain"}') == '{"a": "plain"}'
