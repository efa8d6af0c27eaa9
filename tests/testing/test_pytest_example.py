"""examples/pytest, the suite a user copies, runs green as shipped: a real pydantic-ai agent
with its own instrumentation, failures injected through ``http_faults``, graded by
``grade_trace``. Run as a user would, from its own folder with its own pytest.ini."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pytest"


def test_the_example_suite_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    for name in (
        "test_answers_from_the_docs",
        "test_one_search_timeout_costs_one_tolerated_retry",
        "test_search_down_gives_a_disclosed_degraded_answer",
        "test_empty_search_is_disclosed_not_invented",
        "test_the_contract_fails_a_run_that_never_searched",
    ):
        assert f"test_support_agent.py::{name} PASSED" in proc.stdout, proc.stdout[-3000:]
