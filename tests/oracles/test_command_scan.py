"""``no_network`` sees commands wherever a trace put them: every string of a tool step's
arguments, results and raw payloads, unescaped, including JSON held inside strings, while an
AgentBench step is still scanned as its raw JSON exactly (DESIGN section 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.grade.loader import parse_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.trace_builders import check, tool, traj

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def test_command_in_json_inside_an_argument_string_is_found() -> None:
    payload = '{"steps": [{"cmd": "\\u0063url -s https://evil.example"}]}'
    t = traj(tool("sandbox_exec", {"payload": payload}, "ok"))
    result = check({"type": "no_network", "patterns": ["curl -s"]}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message


def test_quoted_multiline_command_matches_as_written() -> None:
    command = 'cat <<EOF > x.sh\ncurl "http://10.0.0.1/x"\nEOF'
    t = traj(tool("sandbox_exec", None, None, arguments_raw=command))
    result = check({"type": "no_network", "patterns": ['curl "http']}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message


def test_unparsed_python_repr_payload_is_scanned() -> None:
    t = traj(tool("shell_tool", None, None, arguments_raw="{'command': 'pip install evil'}"))
    result = check({"type": "no_network"}, t)
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "'pip install'" in result.message


def test_model_conversation_text_is_not_network_access() -> None:
    t = traj(
        {"kind": "generation", "output_messages": [{"role": "assistant", "content": "never curl"}]},
        tool("search_docs", {"query": "x"}, "doc-1"),
    )
    result = check({"type": "no_network"}, t)
    assert result.outcome == Outcome.PASS, result.message


def test_agentbench_steps_are_scanned_as_their_raw_json_exactly() -> None:
    # The raw JSON escapes the quote, so a pattern holding a bare quote does not match: the
    # AgentBench semantics are a scan of the JSON text, kept as they are.
    t = Trajectory.from_agentbench({"steps": [{"tool": "bash", "command": 'curl "http://x"'}]})
    assert t.steps[0].scan_text() == t.steps[0].raw_json()
    assert t.find_network_violations(['curl "http']) == []
    assert [v.pattern for v in t.find_network_violations()] == ["curl", "http://"]


@pytest.mark.parametrize("source", ["pydantic-ai", "openai-agents-otel-v2", "vercel-ai-sdk-otel"])
def test_command_under_an_unknown_tool_name_in_real_captures_fails_no_network(
    source: str, tmp_path: Path
) -> None:
    """The captured coding run with its shell tool renamed: no ``command`` field is parsed
    any more, the ``curl`` is only in the call's arguments."""
    text = (TRACES / source / "h_coding_agent.otlp.json").read_text(encoding="utf-8")
    path = tmp_path / "renamed.otlp.json"
    path.write_text(text.replace("run_command", "sandbox_exec"), encoding="utf-8")
    contract = parse_contract({"id": "c", "invariants": [{"type": "no_network"}]}, "<t>")
    problems: list[object] = []
    graded = [
        vt
        for trace in read_traces([str(path)], problems)  # type: ignore[arg-type]
        for vt in grade_trace(trace, [contract], load_conventions())
    ]
    verdict, trajectory = graded[0]
    assert not trajectory.commands(), "no step is a parsed command"
    result = verdict.results[0]
    assert result.outcome == Outcome.INVARIANT_FAILURE, result.message
    assert "sandbox_exec" in result.message
