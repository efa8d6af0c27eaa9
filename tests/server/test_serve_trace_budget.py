"""A hostile trace never delays the others in ``serve``: past ``grading.trace_timeout`` it is
an ``error`` verdict, and a fresh grading thread takes the stuck one's place.

Real OTel SDK exporters send every trace. There is one grading thread, so without the budget
every normal trace would queue behind the hostile one (ten catastrophic regexes, each run to
its one-second budget). The test asserts behaviour: the normal traces' verdicts are all in
while the hostile trace's grading is still running.
"""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.server.agent_traces import send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS

HOSTILE_ANSWER = "Your code is " + "a" * 40 + "."


def send_hostile_trace(endpoint: str) -> str:
    provider = TracerProvider(resource=Resource.create({"service.name": "hostile-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(HttpExporter(endpoint=endpoint)))
    tracer = provider.get_tracer("agent-test")
    output = [{"role": "assistant", "parts": [{"type": "text", "content": HOSTILE_ANSWER}]}]
    with (
        tracer.start_as_current_span(
            "invoke_agent hostile",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "hostile"},
        ) as root,
        tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.output.messages": json.dumps(output),
            },
        ),
    ):
        pass
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def test_a_stuck_trace_is_an_error_and_normal_traces_are_graded_meanwhile(
    serve, tmp_path: Path
) -> None:
    hostile = tmp_path / "hostile.yaml"
    checks = "".join(
        f"  - {{name: stall{i}, type: final_output, must_match: '(a|aa)+b{i}'}}\n"
        for i in range(10)
    )
    hostile.write_text(
        "id: hostile\nmatch: {resource: {service.name: hostile-agent}}\ninvariants:\n" + checks
    )
    bg = serve(
        **{
            "grading.contracts": [str(CONTRACTS), str(hostile)],
            "grading.workers": 1,
            "grading.trace_timeout": "300ms",
        }
    )
    pool = bg.server.backend.pool
    endpoint = bg.http_url + "/v1/traces"
    hostile_id = send_hostile_trace(endpoint)
    wait_until(lambda: pool.stuck == 1, timeout=30, what="the hostile trace to be given up on")
    ids, forbidden = send_agent_traces(HttpExporter(endpoint=endpoint), 4)

    def verdicts() -> dict[str, list[object]]:
        out: dict[str, list[object]] = {}
        for v in bg.emitter.verdicts:
            out.setdefault(v.trace_id, []).append(v)
        return out

    wait_until(lambda: set(ids) <= set(verdicts()), timeout=30, what="the normal verdicts")
    assert pool.stuck == 1, "the normal traces did not wait for the stuck one"
    normal = verdicts()
    assert {tid for tid in ids if not all(v.passed for v in normal[tid])} == set(forbidden)
    (error,) = [v for v in normal[hostile_id] if v.contract_id == "hostile"]
    assert error.verdict == "error"
    assert [r.name for r in error.results] == ["trace_timeout"]
    assert "grading.trace_timeout" in error.results[0].message
    assert all(v.verdict == "error" for v in normal[hostile_id]), "every contract's verdict"
