"""A short, seeded fuzzing run of every target (``tools/fuzz/fuzz.py``): a few thousand
coverage-guided inputs each, in a bounded time, must find nothing.

The long campaign (a million inputs per target) is run by hand; see docs/security.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FUZZ = REPO / "tools" / "fuzz" / "fuzz.py"
sys.path.insert(0, str(FUZZ.parent))

import targets  # noqa: E402  (tools/fuzz/targets.py, through the path above)

RUNS = 3000
SECONDS = 45
"""Per target: on a loaded machine the run stops here, having executed at least its seeds."""


def fuzz(name: str, workdir: Path) -> dict[str, Any]:
    """One seeded, bounded run of ``name``; its report."""
    proc = subprocess.run(
        [
            sys.executable,
            str(FUZZ),
            "--target",
            name,
            "--runs",
            str(RUNS),
            "--seed",
            "7",
            "--max-time",
            str(SECONDS),
            "--dir",
            str(workdir),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    (report,) = json.loads(proc.stdout)
    assert isinstance(report, dict)
    return report


def test_a_failing_input_is_reported_as_a_finding(tmp_path: Path) -> None:
    report = fuzz("canary", tmp_path)
    assert [(f["kind"], Path(f["artifact"]).read_bytes()) for f in report["findings"]] == [
        ("crash", targets.CANARY)
    ]
    assert report["findings"][0]["signature"].startswith("ValueError: the canary input")


@pytest.mark.parametrize("name", sorted(n for n, t in targets.TARGETS.items() if not t.selftest))
def test_a_short_fuzzing_run_finds_nothing(name: str, tmp_path: Path) -> None:
    report = fuzz(name, tmp_path)
    logs = "\n".join(p.read_text()[-3000:] for p in sorted((tmp_path / name).glob("log-*.txt")))
    assert report["findings"] == [], logs
    seeds = len(list((tmp_path / name / "seeds").iterdir()))
    assert seeds > 0
    assert report["inputs"] >= min(RUNS, seeds), logs


def test_a_finding_is_minimised_to_a_shorter_input_that_still_fails(tmp_path: Path) -> None:
    crash = tmp_path / "crash"
    crash.write_bytes(targets.CANARY + b" and forty bytes of tail that do not matter")
    out = tmp_path / "minimised"
    proc = subprocess.run(
        [
            sys.executable,
            str(FUZZ),
            "--target",
            "canary",
            "--minimize",
            str(crash),
            str(out),
            "--runs",
            "2000",
            "--dir",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    minimised = out.read_bytes()
    assert minimised.startswith(targets.CANARY)
    assert len(minimised) < crash.stat().st_size
