"""``tools/verdict_hash.py``, the check behind "verdicts byte-identical" claims: two real
``grade --json`` reports of the same input hash alike although their timings differ, and a
report whose outcome differs does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "verdict_hash.py"
INPUT = ROOT / "tests" / "testdata" / "traces" / "openai-v2"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]


def _grade(out: Path) -> Path:
    done = subprocess.run(
        [*CLI, "grade", str(INPUT), "-c", str(ROOT / "examples" / "contracts"), "--json", "-q"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    out.write_text(done.stdout, encoding="utf-8")
    return out


def _hash(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, paths)], capture_output=True, text=True, check=False
    )


def test_same_verdicts_hash_alike_whatever_they_took(tmp_path: Path) -> None:
    first, second = _grade(tmp_path / "a.json"), _grade(tmp_path / "b.json")
    assert "duration_ns" in first.read_text()
    done = _hash(first, second)
    assert done.returncode == 0, done.stdout
    assert len({line.split()[0] for line in done.stdout.splitlines()}) == 1


def test_a_changed_outcome_changes_the_hash(tmp_path: Path) -> None:
    first = _grade(tmp_path / "a.json")
    report = json.loads(first.read_text())
    text = json.dumps(report).replace('"pass"', '"missing_evidence"', 1)
    assert text != json.dumps(report)
    changed = tmp_path / "c.json"
    changed.write_text(text, encoding="utf-8")
    done = _hash(first, changed)
    assert done.returncode == 1
    assert len({line.split()[0] for line in done.stdout.splitlines()}) == 2
