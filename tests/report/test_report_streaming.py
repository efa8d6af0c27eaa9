"""``grade`` renders verdicts as they are graded instead of keeping them (memory must not
grow with the input): what it prints and writes must be the very bytes the whole-report
renderers produce, whether the spooled text stays in memory or spills to disk."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.emit import SHOWN_FILTER
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import (
    Counts,
    InputProblem,
    OracleResult,
    Outcome,
    RunReport,
    Verdict,
    count_outcomes,
)
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_paths
from otel_oracles.report import (
    HtmlWriter,
    JsonWriter,
    JUnitWriter,
    _common,
    json_safe,
    render_console,
    render_html,
    render_junit,
    report_data,
)
from otel_oracles.report._json import _VERDICT_JSON
from otel_oracles.session import GradingSession, SessionSpec
from tests.support.shown import shown_copy

REPO = Path(__file__).resolve().parent.parent.parent
CONTRACTS = REPO / "tests" / "testdata" / "pipeline" / "contracts"
EXAMPLES = REPO / "examples" / "traces"
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]


def kept_report(paths: list[str]) -> RunReport:
    contracts = [load_contract(p) for p in sorted(CONTRACTS.iterdir())]
    return grade_paths(paths, GradingSession(contracts, load_conventions([])))


def timeless(text: str) -> str:
    """Grading time differs between two runs; everything else must not."""
    text = re.sub(r'"duration_ns": ?\d+', '"duration_ns": 0', text)
    return re.sub(r'time="[0-9.]+"', 'time="0"', text)


def grade(*args: str) -> subprocess.CompletedProcess[str]:
    """``grade`` with ``--explain full``, so its reports show the results exactly as kept
    (the default template explanations are tested in test_report_privacy.py)."""
    return subprocess.run(
        [*CLI, "grade", *args, "-c", str(CONTRACTS), "--explain", "full"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_streamed_grade_output_equals_the_whole_report_rendered(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")  # an input error, so every section is present
    report = kept_report([str(EXAMPLES), missing])
    assert len(report.verdicts) > 8 and report.input_errors and report.notes
    junit, html = tmp_path / "r.xml", tmp_path / "r.html"
    proc = grade(str(EXAMPLES), missing, "--json", "--junit", str(junit), "--html", str(html))
    assert proc.returncode == 2, proc.stderr
    expected = json.dumps(report_data(report), indent=2, ensure_ascii=False) + "\n"
    assert timeless(proc.stdout) == timeless(expected)
    assert timeless(junit.read_text(encoding="utf-8")) == timeless(render_junit(report).decode())
    assert html.read_text(encoding="utf-8") == render_html(report)
    table = grade(str(EXAMPLES), missing, "--verbose", "--keep-going")
    assert table.returncode == 1
    assert table.stdout == render_console(report, show_passing_details=True)


def test_writers_spilling_to_disk_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    report = kept_report([str(EXAMPLES)])
    report = report.model_copy(
        update={"input_errors": [InputProblem(source="x.jsonl:2", message="bad <json>")]}
    )
    in_memory = (render_console(report), render_junit(report), render_html(report))
    json_in_memory = json.dumps(report_data(report, 5), indent=2, ensure_ascii=False) + "\n"
    monkeypatch.setattr(_common, "SPOOL_MEMORY_BYTES", 16)
    from otel_oracles.report import render_json

    assert (render_console(report), render_junit(report), render_html(report)) == in_memory
    assert render_json(report, 5) == json_in_memory


def test_grade_paths_can_leave_verdicts_to_the_callback() -> None:
    seen: list[Verdict] = []

    def collect(graded: list[tuple[Verdict, Trajectory]]) -> None:
        seen.extend(v for v, _ in graded)

    contracts = [load_contract(p) for p in sorted(CONTRACTS.iterdir())]
    streamed = grade_paths(
        [str(EXAMPLES)],
        GradingSession(contracts, load_conventions([])),
        on_graded=collect,
        keep_verdicts=False,
    )
    assert streamed.verdicts == []
    kept = kept_report([str(EXAMPLES)]).verdicts
    assert len(seen) == len(kept) > 8
    assert [timeless(v.model_dump_json()) for v in seen] == [
        timeless(v.model_dump_json()) for v in kept
    ]


def test_workers_stream_the_same_report_in_input_order(tmp_path: Path) -> None:
    """--workers spools verdicts to disk and replays them in input order: the printed report
    equals the one built from the verdicts grade_paths_parallel keeps."""
    from otel_oracles.parallel import grade_paths_parallel

    spec = SessionSpec(tuple(sorted(CONTRACTS.iterdir())))
    kept = grade_paths_parallel([str(EXAMPLES)], spec, workers=2)
    streamed: list[Verdict] = []
    empty = grade_paths_parallel([str(EXAMPLES)], spec, workers=2, on_verdict=streamed.append)
    assert empty.verdicts == [] and empty.notes == kept.notes
    assert [timeless(v.model_dump_json()) for v in streamed] == [
        timeless(v.model_dump_json()) for v in kept.verdicts
    ]
    junit = tmp_path / "w.xml"
    proc = grade(str(EXAMPLES), "--workers", "2", "--json", "--junit", str(junit))
    assert proc.returncode == 1, proc.stderr
    expected = json.dumps(report_data(kept), indent=2, ensure_ascii=False) + "\n"
    assert timeless(proc.stdout) == timeless(expected)
    assert timeless(junit.read_text(encoding="utf-8")) == timeless(render_junit(kept).decode())


def test_streamed_default_output_equals_the_scrubbed_report_rendered() -> None:
    """By default (``--explain template``) the JSON and the table read each result's shown
    message and details while rendering it, without a scrubbed copy of the verdict: the
    bytes must be those of the whole report's shown copy (``shown_copy``) rendered."""
    report = kept_report([str(EXAMPLES)])
    scrubbed = report.model_copy(update={"verdicts": [shown_copy(v) for v in report.verdicts]})
    # Not vacuous: scrubbing changes messages and drops or replaces details here.
    pairs = [
        (r, s)
        for v, w in zip(report.verdicts, scrubbed.verdicts, strict=True)
        for r, s in zip(v.results, w.results, strict=True)
    ]
    assert any(r.message != s.message for r, s in pairs)
    assert any(r.details != s.details for r, s in pairs)
    command = [*CLI, "grade", str(EXAMPLES), "-c", str(CONTRACTS)]
    as_json = subprocess.run(
        [*command, "--json"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    expected = json.dumps(report_data(scrubbed), indent=2, ensure_ascii=False) + "\n"
    assert timeless(as_json.stdout) == timeless(expected)
    for verbose in (False, True):
        table = subprocess.run(
            [*command, *(["--verbose"] if verbose else [])],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert table.stdout == render_console(scrubbed, show_passing_details=verbose)


def test_writers_with_the_privacy_filter_write_the_scrubbed_copy() -> None:
    """Details of every kind the privacy boundary handles (kept numbers, NaN, tuples,
    identifiers, secret-shaped and free text, name -> count maps, names shown alike) come
    out of the JSON writer, which scrubs them as it writes, as ``model_dump`` dumps them in a
    scrubbed copy; so do the messages, and JUnit's and HTML's text of both."""
    details: dict[str, Any] = {
        "calls": 3,
        "ratio": float("nan"),
        "big": 1e16,
        "neg": -0.0,
        "flag": True,
        "tool": "search_docs",
        "tools": ("lookup", "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "x" * 80, 7),
        "unclassified_spans": {"chat gpt-4o": 2, "db.query": 1, "bad": "n", "a b": 5},
        "evidence": ["span_ids", "a@b.io"],
        "kind": "sk-abcdefghijklmnopqrstuvwxyz",
        "argument": "alice.customer@example.com wrote this",
        "status": Outcome.PASS,
        "not an identifier": 1,
    }
    results = [
        OracleResult(
            oracle_type=kind,
            name=kind,
            outcome=outcome,
            passed=outcome is Outcome.PASS,
            message=f"{kind} said something about alice.customer@example.com",
            details=details,
            step_indexes=[1, 2],
            used=1,
            budget=2,
        )
        for kind, outcome in (
            ("tool_not_called", Outcome.PASS),
            ("max_tool_calls", Outcome.TOLERATED),
            ("tokens", Outcome.ERROR),
        )
    ]
    verdict = Verdict(
        contract_id="c",
        subject="s",
        passed=False,
        results=results,
        counts=count_outcomes(results),
    )
    copied, shown = JsonWriter(), JsonWriter()
    copied.add(shown_copy(verdict))
    shown.add(verdict, SHOWN_FILTER)
    text = "".join(shown.chunks([], []))
    assert text == "".join(copied.chunks([], []))
    assert "alice" not in text and "sk-" not in text and "a@b.io" not in text
    # JUnit and HTML ask the filter as they lay each result out: the copy's bytes too.
    junit_copied, junit_shown = JUnitWriter(), JUnitWriter()
    junit_copied.add(shown_copy(verdict))
    junit_shown.add(verdict, SHOWN_FILTER)
    xml = b"".join(junit_shown.chunks([]))
    assert xml == b"".join(junit_copied.chunks([]))
    assert b"alice" not in xml and b"said something" not in xml
    html_copied, html_shown = HtmlWriter(), HtmlWriter()
    html_copied.add(shown_copy(verdict))
    html_shown.add(verdict, SHOWN_FILTER)
    page = b"".join(html_shown.chunks([], [])).decode()
    assert page == b"".join(html_copied.chunks([], [])).decode()
    assert "alice" not in page and "sk-" not in page and "search_docs" in page
    # The plain details (no NaN, no enum member) are written as they are scrubbed.
    plain = {k: v for k, v in details.items() if k not in ("ratio", "status")}
    verdict = verdict.model_copy(
        update={"results": [r.model_copy(update={"details": plain}) for r in results]}
    )
    copied, shown = JsonWriter(), JsonWriter()
    copied.add(shown_copy(verdict))
    shown.add(verdict, SHOWN_FILTER)
    assert "".join(shown.chunks([], [])) == "".join(copied.chunks([], []))


def test_each_verdicts_text_is_its_model_dump() -> None:
    """The JSON writer reads each verdict's fields instead of dumping it through pydantic:
    what it writes must be ``json.dumps`` of ``model_dump(mode="json")`` (keys in the same
    order), for the verdicts graded from the example traces and for details and params that
    are not plain JSON data (NaN, infinities, tuples, sets, enum members, dates, non-string
    keys, nested in lists and dicts), which go through pydantic."""
    odd: dict[str, Any] = {
        "nan": float("nan"),
        "inf": [1.5, float("-inf")],
        "pair": (1, "a"),
        "set": {3},
        "outcome": Outcome.TOLERATED,
        "day": date(2026, 12, 2),
        "keys": {1: "one", None: "none"},
        "nested": {"deep": [{"x": (2,)}, "plain", -0.0, 10**30]},
        "plain": {"calls": 3, "tools": ["a", "b"], "ratio": 0.5, "none": None, "ok": True},
    }
    results = [
        OracleResult(
            oracle_type="tool_retries",
            name=f"check {key}",
            outcome=Outcome.PASS,
            passed=True,
            message="m",
            details={key: value},
            params={key: value},
        )
        for key, value in odd.items()
    ]
    odd_verdict = Verdict(
        contract_id="c",
        subject="s",
        passed=True,
        results=results,
        counts=count_outcomes(results),
    )
    # A result whose field values are held in another order (however it was made) is
    # dumped by pydantic: the keys must still come out in declaration order.
    shuffled = results[0].model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(shuffled.__dict__.items())))
    shuffled_verdict = odd_verdict.model_copy(update={"results": [shuffled, *results[1:]]})
    verdicts = [*kept_report([str(EXAMPLES)]).verdicts, odd_verdict, shuffled_verdict]
    assert len(verdicts) > 5
    for verdict in verdicts:
        expected = {**verdict.model_dump(mode="json"), "verdict": verdict.verdict}
        text = json.dumps(expected, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        assert _VERDICT_JSON.write(verdict) == json_safe(text).encode("utf-8")


def test_json_text_and_bytes_are_one_document_whatever_the_block_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The spool holds UTF-8 bytes read back in blocks that may end inside a character (a
    message with non-ASCII text here): ``chunks()`` decodes them to the same document."""
    report = kept_report([str(EXAMPLES)])
    result = report.verdicts[0].results[0].model_copy(update={"message": "naïve … 日本語 ✓"})
    verdict = report.verdicts[0].model_copy(update={"results": [result]})
    report = report.model_copy(update={"verdicts": [verdict, *report.verdicts]})
    expected = json.dumps(report_data(report, 1), indent=2, ensure_ascii=False) + "\n"
    from otel_oracles.report import _json

    for block in (1, 7, 1 << 20):
        monkeypatch.setattr(_json, "SPOOL_READ_BYTES", block)
        for memory in (16, 1 << 20):
            monkeypatch.setattr(_common, "SPOOL_MEMORY_BYTES", memory)
            texts, blobs = JsonWriter(), JsonWriter()
            for v in report.verdicts:
                texts.add(v)
                blobs.add(v)
            assert "".join(texts.chunks([], report.notes, 1)) == expected
            assert b"".join(blobs.byte_chunks([], report.notes, 1)) == expected.encode()


@pytest.mark.parametrize("utf8", [True, False])
def test_grade_prints_the_same_json_as_bytes_or_as_text(
    monkeypatch: pytest.MonkeyPatch, utf8: bool
) -> None:
    """``grade --json`` prints the spooled bytes as they are to a UTF-8 stdout, and decodes
    them for click to encode otherwise: the same document either way."""
    from click.testing import CliRunner

    from otel_oracles.cli import _output, cli

    monkeypatch.setattr(_output, "_prints_utf8", lambda: utf8)
    result = CliRunner().invoke(
        cli, ["grade", str(EXAMPLES), "-c", str(CONTRACTS), "--json", "--explain", "full"]
    )
    assert result.exit_code == 1, result.output
    expected = json.dumps(report_data(kept_report([str(EXAMPLES)])), indent=2, ensure_ascii=False)
    assert timeless(result.stdout_bytes.decode()) == timeless(expected + "\n")


@pytest.mark.parametrize(
    ("encoding", "expected"), [("utf-8", True), ("UTF8", True), ("latin-1", False)]
)
def test_json_is_printed_as_bytes_only_to_a_utf8_stdout(
    monkeypatch: pytest.MonkeyPatch, encoding: str, expected: bool
) -> None:
    import io

    from otel_oracles.cli import _output

    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding=encoding))
    assert _output._prints_utf8() is expected


@pytest.mark.parametrize("verbose", [False, True])
def test_table_rows_gathered_or_written_one_by_one_give_the_same_table(
    monkeypatch: pytest.MonkeyPatch, verbose: bool
) -> None:
    """The table's rows are gathered before each write to the spool: written one by one
    (a block of 1 character), gathered whole, or spilled to disk, the table is the same."""
    from otel_oracles.report import _console

    report = kept_report([str(EXAMPLES)])
    tables = []
    for block, memory in ((1, 16), (1, 1 << 20), (1 << 30, 16), (1 << 30, 1 << 20)):
        monkeypatch.setattr(_console, "SPOOL_WRITE_CHARS", block)
        monkeypatch.setattr(_common, "SPOOL_MEMORY_BYTES", memory)
        tables.append(render_console(report, show_passing_details=verbose))
    assert len(set(tables)) == 1
    assert tables[0].count("\n") > len(report.verdicts)


def test_the_stream_counts_each_verdict_once_for_all_its_writers(tmp_path: Path) -> None:
    """The JSON, HTML and table writers read the stream's one tally (numbering verdicts and
    summing them by it) instead of counting for themselves: each verdict is counted once."""
    from otel_oracles.cli._output import ReportStream

    report = kept_report([str(EXAMPLES)])
    passed = sum(v.passed for v in report.verdicts)
    assert 0 < passed < len(report.verdicts)
    html = tmp_path / "r.html"
    for as_json in (True, False):
        stream = ReportStream(as_json=as_json, junit=tmp_path / "r.xml", html=html, verbose=False)
        try:
            for v in report.verdicts:
                stream.add(v)
            assert (stream.tally.verdicts, stream.tally.passed) == (len(report.verdicts), passed)
            stream.finish([], [], stream.exit_code([]))
        finally:
            stream.close()
        page = html.read_text(encoding="utf-8")
        assert f"<p>{len(report.verdicts)} verdict(s), {passed} passed.</p>" in page
        assert f'id="v{len(report.verdicts) - 1}"' in page
        assert f'id="v{len(report.verdicts)}"' not in page


@pytest.mark.parametrize(
    ("passed", "counts", "kind"),
    [
        (True, Counts(), "pass"),
        (False, Counts(invariant_failures=1, errors=1), "fail"),
        (False, Counts(errors=2), "error"),
    ],
)
def test_the_stream_counts_by_the_verdict_its_json_text_derived(
    passed: bool, counts: Counts, kind: str
) -> None:
    """The JSON writer derives each verdict's ``verdict`` for its text and hands it back;
    the stream's tally counts by it as by the property, and without it asks the property."""
    from otel_oracles.report import verdict_reports

    verdict = Verdict(contract_id="c", subject="s", passed=passed, results=[], counts=counts)
    assert verdict.verdict == kind
    *_, derived = verdict_reports(json=True, junit=False, html=False).write(verdict, 0)
    assert derived == kind
    tallies = []
    for given in (derived, None):
        tally = _common.Tally()
        tally.add(verdict, given)
        tallies.append((tally.verdicts, tally.passed, tally.errors))
    assert tallies[0] == tallies[1] == (1, int(kind == "pass"), int(kind == "error"))
