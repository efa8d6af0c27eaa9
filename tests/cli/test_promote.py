"""``otel-oracles promote`` on real captures: the fixture keeps ids and the verdict, loses
content and secrets, says what it lost, and is refused when scrubbing changes a check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
CONTRACTS = REPO / "examples" / "contracts"
TRACES = REPO / "tests" / "testdata" / "traces"
PYDANTIC_HAPPY = TRACES / "pydantic-ai" / "a_happy.otlp.json"
PYDANTIC_TRACE = "a154b36fa4bf2d3f308db66e83a68dee"
EVENTS_DEGRADED = str(TRACES / "openllmetry-openai-events" / "f_degraded*")
EVENTS_TRACE = "884645c81bfed4e01ea2e0750e9d25e0"

EMAIL = "jane.doe@example-customer.com"
API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
ANSWER_KEEP = "gen_ai.output.messages.parts.content"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def planted(tmp_path: Path) -> Path:
    """The pydantic-ai capture with a customer's email and API key in the user prompt."""
    text = PYDANTIC_HAPPY.read_text(encoding="utf-8")
    prompt = "enterprise customers?"
    assert prompt in text
    path = tmp_path / "export.otlp.json"
    path.write_text(
        text.replace(prompt, f"{prompt} I am {EMAIL}, my key is {API_KEY}"), encoding="utf-8"
    )
    return path


def ids(path: Path) -> set[tuple[str, str, str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {
        (s["traceId"], s["spanId"], s.get("parentSpanId", ""))
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    }


def test_promoted_fixture_keeps_ids_and_verdict_and_drops_content(tmp_path: Path) -> None:
    source = planted(tmp_path)
    out = tmp_path / "fixtures"
    proc = run(
        "promote", source, "--trace-id", PYDANTIC_TRACE, "--out", out, "-c", CONTRACTS,
        "--keep", ANSWER_KEEP, "--keep", "gen_ai.input.messages.parts.content",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    fixture = out / f"{PYDANTIC_TRACE}.otlp.json"
    assert f"promoted {PYDANTIC_TRACE} to {fixture} (support-rag@1 pass)" in proc.stdout
    text = fixture.read_text(encoding="utf-8")
    assert EMAIL not in text and API_KEY not in text, "secrets in kept text are replaced"
    assert "I am [redacted-" in text, "the kept prompt survives around its secrets"
    assert "You are a support assistant" not in text, "system instructions were not kept"
    assert "Enterprise customers can request a full refund" in text, "the kept answer"
    assert ids(fixture) == {(t, s, p) for t, s, p in ids(PYDANTIC_HAPPY)}
    graded = run("grade", fixture, "-c", CONTRACTS)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert f"{PYDANTIC_TRACE}  support_agent  support-rag@1  pass" in graded.stdout
    note = (out / f"{PYDANTIC_TRACE}.promote.md").read_text(encoding="utf-8")
    assert "| support-rag@1 | pass | pass |" in note
    assert "| execute_tool search_docs | gen_ai.tool.call.arguments | 1 | 24 | 0 |" in note
    assert EMAIL not in note and "refund" not in note, "the note counts, never quotes"


def test_scrubbing_that_changes_a_check_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    proc = run(
        "promote", EVENTS_DEGRADED, "--trace-id", EVENTS_TRACE, "--out", out, "-c", CONTRACTS
    )
    assert proc.returncode == 1
    assert (
        "changed by scrubbing: support-rag@1 degraded-disclosed: tolerated -> missing_evidence"
        in proc.stderr
    )
    assert "error: not promoted: scrubbing changed 4 check outcome(s)" in proc.stderr
    assert not out.exists(), "nothing is written"
    kept = run(
        "promote", EVENTS_DEGRADED, "--trace-id", EVENTS_TRACE, "--out", out, "-c", CONTRACTS,
        "--keep", "body.message.content",
    )  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    graded = run("grade", out, "-c", CONTRACTS, "--json")
    report = json.loads(graded.stdout)
    (verdict,) = report["verdicts"]
    assert (verdict["subject"], verdict["verdict"]) == (EVENTS_TRACE, "pass")
    assert {r["name"]: r["outcome"] for r in verdict["results"]}["degraded-disclosed"] == (
        "tolerated"
    )


def test_allow_verdict_change_writes_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    proc = run(
        "promote", EVENTS_DEGRADED, "--trace-id", EVENTS_TRACE, "--out", out, "-c", CONTRACTS,
        "--allow-verdict-change",
    )  # fmt: skip
    assert proc.returncode == 0
    assert "warning: written although its verdicts differ" in proc.stderr
    note = (out / f"{EVENTS_TRACE}.promote.md").read_text(encoding="utf-8")
    assert "| support-rag@1 | pass | fail |" in note
    assert "- support-rag@1 answer-captured: pass -> missing_evidence" in note


def test_mistakes_are_one_line(tmp_path: Path) -> None:
    missing = run(
        "promote", PYDANTIC_HAPPY, "--trace-id", "0" * 32, "--out", tmp_path, "-c", CONTRACTS
    )
    assert missing.returncode == 2
    assert missing.stderr == f"error: {PYDANTIC_HAPPY}: no trace {'0' * 32} in the file\n"
    bad = run("promote", PYDANTIC_HAPPY, "--trace-id", "xyz", "--out", tmp_path, "-c", CONTRACTS)
    assert bad.returncode == 2
    assert bad.stderr == "error: --trace-id: expected 32 hex digits, got 'xyz'\n"


def flags(path: Path) -> dict[str, int]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {
        s["spanId"]: int(s.get("flags", 0))
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    }


def test_promoted_fixture_keeps_which_parents_are_another_processs(tmp_path: Path) -> None:
    """An MCP server's spans continue the client's trace from another process (span flags
    768: the parent is remote); a fixture that lost the flags would read a trace whose
    client side is missing as a whole run instead of a fragment."""
    source = TRACES / "openinference-mcp" / "a_happy.otlp.json"
    trace_id = "8cb745a5ccd39e15da1da2b00f6bf37f"
    out = tmp_path / "fixtures"
    proc = run(
        "promote", source, "--trace-id", trace_id, "--out", out, "-c", CONTRACTS,
        "--allow-verdict-change",  # content is scrubbed; the answer checks cannot read it
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    kept = flags(out / f"{trace_id}.otlp.json")
    want = {span: f for span, f in flags(source).items() if span in kept}
    assert kept == want and sorted(set(kept.values())) == [256, 768]
