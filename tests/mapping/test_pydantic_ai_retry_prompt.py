"""A tool that raised ``ModelRetry``, seen only in the model's messages: pydantic-ai hands the
model the error's text followed by ``Fix the errors and try again.``, and that sentence, not
the error's wording, marks the call failed (``pydantic-ai.yaml``'s ``tool_results``). Shapes
from the ``openlit-pydantic-ai`` capture (OpenLIT records no tool span for pydantic-ai)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import holds_agent_run, read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"
CAPTURE = TRACES / "openlit-pydantic-ai" / "c_retry_exhausted.otlp.json"


def _run(path: Path) -> Trajectory:
    problems: list[Any] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == []
    conventions = load_conventions()
    (run,) = [t for t in (map_trace(tr, conventions) for tr in traces) if holds_agent_run(t)]
    return run


def _reworded(tmp_path: Path, old: str, new: str) -> Path:
    text = CAPTURE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "c_retry_exhausted.otlp.json"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_retry_prompt_marks_the_call_failed_whatever_the_error_says(tmp_path: Path) -> None:
    """The capture's error starts like an exception (``SearchBackendError: ...``), which the
    generic pattern already reads; reworded so it does not, the retry prompt still shows the
    three failed searches (the exhausted retries are never read as successes)."""
    path = _reworded(tmp_path, "SearchBackendError: upstream search", "the search")
    calls = _run(path).tool_calls()
    assert [c.tool for c in calls] == ["search_docs"] * 3
    assert [c.status for c in calls] == ["error", "error", "error"]
    assert "the search service timed out" in str(calls[0].error_message or calls[0].result)


def test_text_without_the_retry_sentence_is_no_failure(tmp_path: Path) -> None:
    """Only pydantic-ai's whole retry sentence after a blank line counts: the same text
    without it is a result like any other."""
    path = _reworded(tmp_path, "SearchBackendError: upstream search", "the search")
    text = path.read_text(encoding="utf-8")
    assert "\\\\n\\\\nFix the errors" in text
    path.write_text(text.replace("\\\\n\\\\nFix the errors", " Fix the errors"), encoding="utf-8")
    calls = _run(path).tool_calls()
    assert [c.status for c in calls] == ["ok", "ok", "ok"]
