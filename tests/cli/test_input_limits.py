"""The input limits docs/ingest.md tells users to raise are flags of ``grade`` (and
``inspect``): message size, decompressed size, the assembler's idle window and span cap."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
TRACES = REPO / "tests" / "testdata" / "traces" / "pydantic-ai"
CONTRACTS = REPO / "tests" / "testdata" / "pipeline" / "contracts"


def grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "grade", *args, "-c", str(CONTRACTS), "--allow-empty"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_message_and_decompressed_size_limits(tmp_path: Path) -> None:
    happy = TRACES / "a_happy.otlp.json"
    assert grade(str(happy)).returncode == 0
    small = grade(str(happy), "--max-message-bytes", "1KiB")
    assert small.returncode == 2
    assert "larger than the 1024-byte limit" in small.stderr
    packed = tmp_path / "a_happy.otlp.json.gz"
    packed.write_bytes(gzip.compress(happy.read_bytes()))
    assert grade(str(packed)).returncode == 0
    bomb = grade(str(packed), "--max-decompressed-bytes", "2KiB")
    assert bomb.returncode == 2
    assert "2048" in bomb.stderr, bomb.stderr


def _requests(path: Path) -> list[dict[str, Any]]:
    """The OTLP/JSON requests of a capture: one document, or one per line."""
    text = path.read_text()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_idle_spans_decides_when_a_trace_is_complete(tmp_path: Path) -> None:
    (happy,) = _requests(TRACES / "a_happy.otlp.json")
    spans = happy["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) >= 3
    early, late = copy.deepcopy(happy), copy.deepcopy(happy)
    early["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[:-1]
    late["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans[-1:]
    others = [r for s in ("b_tool_retry", "d_forbidden_tool", "e_fabricated_citation")
              for r in _requests(TRACES / f"{s}.otlp.json")]  # fmt: skip
    between = sum(
        len(ss["spans"]) for r in others for rs in r["resourceSpans"] for ss in rs["scopeSpans"]
    )
    export = tmp_path / "unsorted.jsonl"
    export.write_text("\n".join(json.dumps(r) for r in [early, *others, late]) + "\n")

    tight = grade(str(export), "--idle-spans", str(between // 4), "--keep-going")
    assert "1 late spans" in tight.stdout, tight.stdout
    roomy = grade(str(export), "--idle-spans", str(between * 2))
    assert "late spans" not in roomy.stdout
    capped = grade(str(export), "--max-buffered-spans", "2", "--keep-going")
    assert "graded incomplete to stay under the span buffer limit" in capped.stdout
