"""A run whose graded traces hold spans no convention recognised says so in its notes (the
same with worker processes), and ``inspect`` names those spans."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.parallel import grade_paths_parallel
from otel_oracles.pipeline import grade_paths
from otel_oracles.session import GradingSession, SessionSpec
from tests.support.unknown_spans import with_unknown_leaf

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"
NOTE = (
    "coverage: 2 graded trace(s) hold 2 span(s) no convention recognised (lookup_customer x2); "
    "checks that need every span report missing evidence there (see otel-oracles inspect)"
)


@pytest.fixture(scope="module")
def raw_client(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Two raw-client captures (one with its log records), each with one span no convention
    knows beside the recognised steps."""
    out = tmp_path_factory.mktemp("raw")
    return [
        str(with_unknown_leaf(TRACES / "openai-v2" / "a_happy.otlp.json", out / "v2.jsonl")),
        str(TRACES / "openai-v2" / "a_happy.logs.otlp.jsonl"),
        str(
            with_unknown_leaf(
                TRACES / "openinference-openai" / "a_happy.otlp.jsonl", out / "oi.jsonl"
            )
        ),
    ]


def _coverage_notes(notes: list[str]) -> list[str]:
    return [n for n in notes if n.startswith("coverage:")]


def test_grade_notes_name_the_unclassified_spans_of_graded_traces(raw_client: list[str]) -> None:
    report = grade_paths(raw_client, GradingSession([load_contract(CONTRACT)], load_conventions()))
    assert _coverage_notes(report.notes) == [NOTE], report.notes


def test_fully_recognised_traces_add_no_coverage_note() -> None:
    paths = [str(TRACES / "pydantic-ai" / "a_happy.otlp.json")]
    report = grade_paths(paths, GradingSession([load_contract(CONTRACT)], load_conventions()))
    assert report.verdicts and _coverage_notes(report.notes) == []


def test_workers_report_the_same_coverage_note(raw_client: list[str]) -> None:
    report = grade_paths_parallel(raw_client, SessionSpec((CONTRACT,)), workers=2)
    sequential = grade_paths(
        raw_client, GradingSession([load_contract(CONTRACT)], load_conventions())
    )
    assert _coverage_notes(report.notes) == _coverage_notes(sequential.notes) == [NOTE]


def test_inspect_names_the_unclassified_spans(raw_client: list[str]) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from otel_oracles.cli import main; main()",
            "inspect",
            raw_client[2],
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert (
        "unrecognised 1 (lookup_customer x1): checks that need every span report missing "
        "evidence" in proc.stdout
    ), proc.stdout
