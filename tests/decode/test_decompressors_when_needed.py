"""gzip and zstandard are imported only when a compressed input is met (``zstandard``'s import
is a noticeable part of grading one plain trace), so the ``except`` clauses around reads name
their errors through ``decompressor_errors``: the classes of whichever of the two is loaded.
These run in a fresh interpreter, where the decoder itself is the first to import either: a
corrupt stream must still be the decoder's problem message, never an escaped exception or a
plain read error."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

PROBE = """
import json, sys
from otel_oracles.decode import read_paths
problems = []
before = [m for m in ("gzip", "zstandard") if m in sys.modules]
spans = sum(len(b.spans) for b in read_paths([sys.argv[1]], problems))
print(json.dumps({"before": before, "spans": spans,
                  "problems": [p.message for p in problems],
                  "after": [m for m in ("gzip", "zstandard") if m in sys.modules]}))
"""

LINE = json.dumps(
    {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "name": "invoke_agent",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                            }
                        ]
                    }
                ]
            }
        ]
    }
).encode()


def probe(path: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[str, object] = json.loads(proc.stdout)
    return found


@pytest.mark.parametrize(
    ("name", "module", "packed"),
    [
        ("export.jsonl.gz", "gzip", gzip.compress(LINE + b"\n" + LINE + b"\n")),
        ("export.jsonl.zst", "zstandard", zstandard.compress(LINE + b"\n" + LINE + b"\n")),
    ],
)
def test_a_cut_stream_is_a_problem_in_a_fresh_process(
    tmp_path: Path, name: str, module: str, packed: bytes
) -> None:
    target = tmp_path / name
    target.write_bytes(packed[: len(packed) - 6])
    found = probe(target)
    assert found["before"] == []  # importing the decoder loaded neither
    assert found["after"] == [module]
    problems = found["problems"]
    assert isinstance(problems, list) and len(problems) == 1
    assert "compressed stream is corrupt or truncated" in problems[0]


def test_a_garbled_gzip_member_is_a_problem_in_a_fresh_process(tmp_path: Path) -> None:
    """``gzip.BadGzipFile`` (an ``OSError``) is named before ``OSError`` in the clause: the
    problem says the stream is corrupt, not that the file could not be read."""
    target = tmp_path / "export.jsonl.gz"
    target.write_bytes(gzip.compress(LINE + b"\n") + b"\x1f\x8b\x09garbage-not-a-member")
    found = probe(target)
    assert found["spans"] == 1
    problems = found["problems"]
    assert isinstance(problems, list) and len(problems) == 1
    assert "compressed stream is corrupt or truncated" in problems[0]


def test_a_plain_file_loads_neither(tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    target.write_bytes(LINE + b"\n")
    found = probe(target)
    assert found == {"before": [], "spans": 1, "problems": [], "after": []}
