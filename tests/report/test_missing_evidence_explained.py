"""Through the privacy boundary (the default for reports and telemetry), a missing-evidence
result still says what was missing: evidence names and unrecognised span names are
identifiers, shown; trace content is not."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.emit import shown_message
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.pipeline import grade_trace, read_traces
from tests.support.unknown_spans import with_unknown_leaf

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"
TRACES = REPO / "tests" / "testdata" / "traces"


def _messages(*paths: Path) -> dict[str, str]:
    contract = load_contract(CONTRACT).model_copy(update={"match": None})
    problems: list[object] = []
    ((verdict, _),) = [
        vt for t in read_traces([str(p) for p in paths], problems)
        for vt in grade_trace(t, [contract], load_conventions())
    ]  # fmt: skip
    return {r.name: shown_message(r) for r in verdict.results}


def test_content_off_names_the_missing_evidence() -> None:
    messages = _messages(TRACES / "openinference-openai" / "a_happy.nocontent.otlp.jsonl")
    assert messages["answer-captured"].endswith("evidence=[final_output]")
    assert "evidence=[tool_names]" in messages["no-destructive-tools"]


def test_unrecognised_spans_are_named(tmp_path: Path) -> None:
    derived = with_unknown_leaf(TRACES / "pydantic-ai" / "a_happy.otlp.json", tmp_path / "t.jsonl")
    messages = _messages(derived)
    assert "unclassified_spans={lookup_customer x1}" in messages["no-destructive-tools"]
    assert "Enterprise customers" not in "".join(messages.values()), "no answer text"
