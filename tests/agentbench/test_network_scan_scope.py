"""no_network scans what the agent did: every AgentBench step, but only the actions of a
trace-derived trajectory (conversation text in model calls is not network access)."""

from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory


def _ref(span: str) -> SpanRef:
    return SpanRef(trace_id="0" * 32, span_id=span)


def test_trace_generation_text_mentioning_curl_is_not_a_violation() -> None:
    prompt = [{"role": "user", "parts": [{"type": "text", "content": "never use curl"}]}]
    t = Trajectory(
        steps=[
            Step(index=0, kind=StepKind.GENERATION, input_messages=prompt, source=_ref("a" * 16)),
            Step(index=1, kind=StepKind.AGENT, agent_name="curl_helper", source=_ref("b" * 16)),
        ]
    )
    assert t.find_network_violations() == []


def test_trace_command_step_with_curl_is_a_violation() -> None:
    t = Trajectory(
        steps=[
            Step(index=0, kind=StepKind.GENERATION, source=_ref("a" * 16)),
            Step(
                index=1,
                kind=StepKind.COMMAND,
                tool="run_command",
                command="curl https://example.com",
                source=_ref("c" * 16),
            ),
        ]
    )
    found = t.find_network_violations()
    assert [(v.step_index, v.pattern) for v in found] == [(1, "curl"), (1, "https://")]


def test_agentbench_non_tool_step_is_still_scanned() -> None:
    t = Trajectory.from_agentbench({"steps": [{"type": "thought", "text": "let me wget it"}]})
    assert [(v.step_index, v.pattern) for v in t.find_network_violations()] == [(0, "wget")]
