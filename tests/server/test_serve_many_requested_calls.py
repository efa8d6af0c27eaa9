"""One model call asking for thousands of tool calls costs ``serve`` a second, not the
trace's grading deadline: linking read the call's requests and the next input's results
again per request, so the 8,000 calls of this ~1 MB body (60,000 fit in a 4 MiB request)
held a grading thread past ``grading.trace_timeout`` and the trace got an ``error`` verdict
(the thread kept the interpreter busy after being replaced). Sent as raw OTLP/JSON over HTTP
next to a real protobuf capture on a real server on 127.0.0.1; both get their true verdicts.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Callable

from otel_oracles.model.result import Outcome
from tests.mapping.test_linking_cost import many_calls_document
from tests.server.agent_traces import fixture_request, rekeyed, wait_until
from tests.server.conftest import Running

CALLS = 8000


def post(url: str, body: bytes, content_type: str) -> int:
    req = urllib.request.Request(
        url, data=body, headers={"Content-Type": content_type}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return int(resp.status)


def test_a_model_call_asking_for_thousands_of_calls_is_graded_in_time(
    serve: Callable[..., Running],
) -> None:
    bg = serve(**{"grading.trace_timeout": "8s"})
    doc = many_calls_document(CALLS, ids=True)
    poisoned = os.urandom(16).hex()
    for rs in doc["resourceSpans"]:
        for scope in rs["scopeSpans"]:
            for span in scope["spans"]:
                span["traceId"] = poisoned
    assert post(bg.http_url + "/v1/traces", json.dumps(doc).encode(), "application/json") == 200
    other, other_id = rekeyed(fixture_request("d_forbidden_tool"))
    assert (
        post(bg.http_url + "/v1/traces", other.SerializeToString(), "application/x-protobuf") == 200
    )

    def graded(tid: str) -> bool:
        return any(v.trace_id == tid for v in bg.emitter.verdicts)

    wait_until(lambda: graded(poisoned) and graded(other_id), timeout=60, what="both verdicts")
    outcomes = {
        v.trace_id: [(r.name, r.outcome, r.message) for r in v.results] for v in bg.emitter.verdicts
    }
    # ``no-delete``: the 8,000 searches delete nothing; the capture calls delete_records.
    assert [o for _, o, _ in outcomes[poisoned]] == [Outcome.PASS], outcomes[poisoned]
    assert [o for _, o, _ in outcomes[other_id]] == [Outcome.INVARIANT_FAILURE]
