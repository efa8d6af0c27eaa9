"""Synthetic, realistic GenAI agent traces for the benchmarks.

Why synthetic: the real fixtures under ``tests/testdata`` are a handful of traces; a speed or
memory claim needs hundreds of thousands of spans shaped like a production export. The shapes
follow the current OpenTelemetry GenAI conventions (``invoke_agent`` root, ``chat`` spans with
``gen_ai.provider.name``/``gen_ai.request.model``/``gen_ai.usage.*``, ``execute_tool`` spans with
``gen_ai.tool.call.arguments`` of ~300 bytes and ``gen_ai.tool.call.result`` of ~1 KB), with the
irregularities a grader must survive: failed tool calls with an ``exception`` event and a retry,
a forbidden tool now and then, handoffs to a sub-agent, and fabricated citations.

Export order is what an SDK's batch processor produces: spans are written when they *end*,
so the spans of concurrently running traces interleave across batches (``--concurrency``
traces in flight). Each batch is one ``ExportTraceServiceRequest`` of ``--batch`` spans,
grouped by resource and scope as an exporter groups them.

Outputs (in ``--out``):
  ``traces.binpb``   the collector file exporter's ``format: proto`` (each message preceded
                     by its 4-byte big-endian length);
  ``traces.jsonl``   the same batches as OTLP/JSON lines (collector file exporter ``format: json``);
  ``pb/*.pb``        optionally (``--pb-dir``) one request body per file, as an exporter POSTs it;
  ``manifest.json``  the parameters and counts, so the harness can reuse an identical data set.

Generation is deterministic for a given ``--seed`` and size. Protobuf messages are built with
the ``opentelemetry.proto`` classes directly (no SDK, which would cost ~100 µs per span).

Example:
    python bench/gen_traces.py --traces 10000 --out bench/out/data-10k
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import struct
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

BASE_TIME_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z: fixed, so output is reproducible
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_ERROR = 2
FORMAT_VERSION = 1
"""Bump when the generated shape changes, so cached data sets are regenerated."""

WORDS = (  # noqa: SIM905  (one readable sentence beats 72 quoted words)
    "refund policy enterprise customer invoice order shipping delay warranty account plan "
    "upgrade downgrade billing cycle discount region latency outage incident report summary "
    "document search index cache timeout retry backoff quota limit token window context user "
    "request response payload schema field value record table query filter page cursor batch "
    "deploy release version config feature flag rollout metric trace span event log alert "
    "support ticket escalation priority owner team review approval audit compliance export"
).split()

# agent profile: (service.name, agent name, tools, model)
PROFILES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("support-agent", "support", ("search_docs", "get_order", "lookup_customer"), "gpt-4o-mini"),
    ("coding-agent", "coder", ("read_file", "write_file", "run_command", "search_code"), "gpt-4o"),
    (
        "research-agent",
        "researcher",
        ("search_docs", "fetch_page", "summarize_doc"),
        "claude-sonnet-4-5",
    ),
    ("billing-agent", "billing", ("get_invoice", "get_order", "issue_credit"), "gpt-4o-mini"),
)
PROVIDER = {"gpt-4o-mini": "openai", "gpt-4o": "openai", "claude-sonnet-4-5": "anthropic"}
SUB_AGENT = ("research_assistant", ("search_docs", "summarize_doc"))
FORBIDDEN_TOOL = "delete_records"
SCOPES: tuple[tuple[str, str], ...] = (
    ("opentelemetry.instrumentation.openai_v2", "2.1b0"),  # chat spans
    ("agent-framework", "1.4.0"),  # invoke_agent and execute_tool spans
)
ERROR_TYPES = ("TimeoutError", "SearchBackendError", "ConnectionResetError", "RateLimitError")


@dataclass(slots=True)
class GenSpan:
    """Format-neutral span: both the protobuf and the JSON writers read this."""

    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    name: str
    kind: int
    start: int
    end: int
    attrs: list[tuple[str, Any]]
    status: int = 0
    status_message: str = ""
    events: list[tuple[str, int, list[tuple[str, Any]]]] = field(default_factory=list)
    resource: int = 0
    scope: int = 0


@dataclass
class Params:
    traces: int = 10_000
    seed: int = 7
    batch: int = 512
    concurrency: int = 64
    """Traces in flight at any moment of the export (what an offline grader must hold)."""
    rounds: int = 0
    """Tool rounds per trace (one model call and its tool calls each, ~2.1 spans); 0 = 5 to 12
    at random (~20 spans per trace). ``trace_size.py`` sets it to grade the same spans as
    few large traces."""

    def key(self) -> dict[str, int]:
        key = {
            "traces": self.traces,
            "seed": self.seed,
            "batch": self.batch,
            "concurrency": self.concurrency,
            "format_version": FORMAT_VERSION,
        }
        if self.rounds:
            key["rounds"] = self.rounds
        return key


class TraceFactory:
    """Builds one trace at a time from a seeded RNG."""

    def __init__(self, seed: int, rounds: int = 0) -> None:
        self.rng = random.Random(seed)
        self.rounds = rounds
        rng = self.rng
        # Pools of pre-built text keep generation fast and output realistic in size.
        self.sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
            for _ in range(400)
        ]
        self.stack = "Traceback (most recent call last):\n" + "".join(
            f'  File "/app/agent/tools/{w}.py", line {rng.randint(10, 400)}, in {w}\n'
            f"    result = await client.{w}(**arguments)\n"
            for w in rng.sample(WORDS, 5)
        )

    def _id(self, nbytes: int) -> bytes:
        return self.rng.getrandbits(nbytes * 8).to_bytes(nbytes, "big")

    def _text(self, approx: int) -> str:
        out: list[str] = []
        size = 0
        while size < approx:
            s = self.rng.choice(self.sentences)
            out.append(s)
            size += len(s) + 1
        return " ".join(out)

    def _arguments(self, tool: str) -> str:
        rng = self.rng
        if tool in ("write_file",):
            args: dict[str, Any] = {
                "path": f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py",
                "content": self._text(230),
            }
        elif tool == "run_command":
            args = {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py", "timeout": 60}
            args["env"] = {"PYTHONHASHSEED": "0", "CI": "1", "NOTE": self._text(150)}
        else:
            args = {
                "query": self._text(90),
                "filters": {"region": rng.choice(("eu", "us", "apac")), "since": "2025-10-01"},
                "top_k": rng.randint(3, 10),
                "request_context": self._text(120),
            }
        return json.dumps(args, separators=(",", ":"))

    def _result(self, tool: str) -> tuple[str, list[str]]:
        """A ~1 KB JSON result, and the document ids it returned (for citations)."""
        rng = self.rng
        doc_ids = [f"doc-{rng.randint(1, 999)}" for _ in range(3)]
        docs = [
            {
                "id": d,
                "title": self._text(30),
                "score": round(rng.random(), 3),
                "text": self._text(230),
            }
            for d in doc_ids
        ]
        return json.dumps({"tool": tool, "documents": docs}, separators=(",", ":")), doc_ids

    def trace(self, start: int, index: int) -> list[GenSpan]:
        """One agent run: root ``invoke_agent``, alternating chat and tool spans, ~20 spans."""
        rng = self.rng
        profile = index % len(PROFILES)
        _service, agent, tools, model = PROFILES[profile]
        trace_id = self._id(16)
        root_id = self._id(8)
        conversation = f"conv_{self._id(6).hex()}"
        spans: list[GenSpan] = []
        cited: list[str] = []
        seen_docs: list[str] = []
        usage = [0, 0]
        t = start + rng.randint(1, 5) * 1_000_000
        rounds = self.rounds or rng.randint(5, 12)
        forbidden_round = rng.randrange(rounds) if rng.random() < 0.02 else -1
        handoff_round = rng.randrange(rounds) if rng.random() < 0.10 else -1

        def chat(parent: bytes, t0: int, tool_calls: list[tuple[str, str, str]], final: str) -> int:
            dur = rng.randint(400, 3000) * 1_000_000
            inp, out = rng.randint(300, 4000), rng.randint(20, 400)
            usage[0] += inp
            usage[1] += out
            if tool_calls:
                parts = [
                    {"type": "tool_call", "id": cid, "name": name, "arguments": json.loads(args)}
                    for cid, name, args in tool_calls
                ]
                finish = "tool_calls"
            else:
                parts = [{"type": "text", "content": final}]
                finish = "stop"
            output = json.dumps(
                [{"role": "assistant", "parts": parts, "finish_reason": finish}],
                separators=(",", ":"),
            )
            attrs: list[tuple[str, Any]] = [
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.provider.name", PROVIDER[model]),
                ("gen_ai.request.model", model),
                ("gen_ai.request.temperature", 0.2),
                ("gen_ai.request.max_tokens", 1024),
                ("gen_ai.response.model", model + "-2025-08-07"),
                ("gen_ai.response.id", "chatcmpl-" + self._id(12).hex()),
                ("gen_ai.response.finish_reasons", [finish]),
                ("gen_ai.usage.input_tokens", inp),
                ("gen_ai.usage.output_tokens", out),
                ("gen_ai.conversation.id", conversation),
                (
                    "server.address",
                    "api.openai.com" if PROVIDER[model] == "openai" else "api.anthropic.com",
                ),
                ("server.port", 443),
                ("gen_ai.output.messages", output),
            ]
            spans.append(
                GenSpan(
                    trace_id,
                    self._id(8),
                    parent,
                    f"chat {model}",
                    KIND_CLIENT,
                    t0,
                    t0 + dur,
                    attrs,
                    scope=0,
                )
            )
            return t0 + dur

        def tool_span(parent: bytes, t0: int, name: str, cid: str, args: str, fail: bool) -> int:
            dur = rng.randint(30, 1500) * 1_000_000
            attrs: list[tuple[str, Any]] = [
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", name),
                ("gen_ai.tool.type", "function"),
                ("gen_ai.tool.call.id", cid),
                ("gen_ai.tool.call.arguments", args),
                ("gen_ai.agent.name", agent),
                ("gen_ai.conversation.id", conversation),
            ]
            span = GenSpan(
                trace_id,
                self._id(8),
                parent,
                f"execute_tool {name}",
                KIND_INTERNAL,
                t0,
                t0 + dur,
                attrs,
                scope=1,
            )
            if fail:
                err = rng.choice(ERROR_TYPES)
                msg = f"{err}: upstream {name} call failed after {dur // 1_000_000} ms"
                attrs.append(("error.type", err))
                attrs.append(("gen_ai.tool.call.result", msg))
                span.status, span.status_message = STATUS_ERROR, msg
                span.events.append(
                    (
                        "exception",
                        t0 + dur,
                        [
                            ("exception.type", err),
                            ("exception.message", msg),
                            ("exception.stacktrace", self.stack + f"{err}: {msg}\n"),
                            ("exception.escaped", False),
                        ],
                    )
                )
            else:
                result, ids = self._result(name)
                seen_docs.extend(ids)
                attrs.append(("gen_ai.tool.call.result", result))
            spans.append(span)
            return t0 + dur

        def run_rounds(parent: bytes, t0: int, n: int, toolset: tuple[str, ...], top: bool) -> int:
            t = t0
            for r in range(n):
                if top and r == handoff_round:
                    sub_id = self._id(8)
                    sub_start = t
                    t = run_rounds(sub_id, t + 2_000_000, 2, SUB_AGENT[1], False)
                    t = chat(sub_id, t, [], self._text(120))
                    spans.append(
                        GenSpan(
                            trace_id,
                            sub_id,
                            parent,
                            f"invoke_agent {SUB_AGENT[0]}",
                            KIND_INTERNAL,
                            sub_start,
                            t + 1_000_000,
                            [
                                ("gen_ai.operation.name", "invoke_agent"),
                                ("gen_ai.provider.name", PROVIDER[model]),
                                ("gen_ai.agent.name", SUB_AGENT[0]),
                                ("gen_ai.agent.id", "asst_" + SUB_AGENT[0]),
                                ("gen_ai.conversation.id", conversation),
                            ],
                            scope=1,
                        )
                    )
                    t += 2_000_000
                    continue
                name = FORBIDDEN_TOOL if (top and r == forbidden_round) else rng.choice(toolset)
                calls = [(f"call_{self._id(9).hex()}", name, self._arguments(name))]
                t = chat(parent, t, calls, "")
                for cid, tname, args in calls:
                    fails = 0
                    while rng.random() < 0.06 and fails < 3:  # transient failure, then a retry
                        t = tool_span(parent, t + 1_000_000, tname, cid, args, True)
                        cid = f"call_{self._id(9).hex()}"
                        fails += 1
                    t = tool_span(parent, t + 1_000_000, tname, cid, args, False)
            return t

        t = run_rounds(root_id, t, rounds, tools, True)
        if seen_docs:
            cited = [rng.choice(seen_docs)]
        if rng.random() < 0.03:
            cited = ["doc-1000"]  # fabricated: no tool ever returns ids above 999
        answer = self._text(200) + " " + " ".join(f"[{d}]" for d in cited)
        t = chat(root_id, t, [], answer)
        end = t + rng.randint(1, 20) * 1_000_000
        root_attrs: list[tuple[str, Any]] = [
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.provider.name", PROVIDER[model]),
            ("gen_ai.request.model", model),
            ("gen_ai.agent.name", agent),
            ("gen_ai.agent.id", f"asst_{agent}"),
            ("gen_ai.conversation.id", conversation),
            ("gen_ai.usage.input_tokens", usage[0]),
            ("gen_ai.usage.output_tokens", usage[1]),
            (
                "gen_ai.output.messages",
                json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}],
                    separators=(",", ":"),
                ),
            ),
        ]
        spans.append(
            GenSpan(
                trace_id,
                root_id,
                b"",
                f"invoke_agent {agent}",
                KIND_INTERNAL,
                start,
                end,
                root_attrs,
                scope=1,
            )
        )
        for s in spans:
            s.resource = profile
        return spans


def resources() -> list[list[tuple[str, Any]]]:
    return [
        [
            ("service.name", service),
            ("service.version", "2.3.1"),
            ("service.instance.id", f"{service}-7f9c{i}"),
            ("deployment.environment.name", "production"),
            ("telemetry.sdk.language", "python"),
            ("telemetry.sdk.name", "opentelemetry"),
            ("telemetry.sdk.version", "1.45.0"),
            ("host.name", f"ip-10-0-{i}-17"),
        ]
        for i, (service, *_rest) in enumerate(PROFILES)
    ]


def time_ordered(
    params: Params, stats: InFlight | None = None, totals: dict[bytes, int] | None = None
) -> Iterator[GenSpan]:
    """Spans in end-time order across interleaved traces, streaming (bounded memory).

    Trace ``i`` starts at ``i * interval``; a span can be released once no trace that has not
    been generated yet could produce an earlier end time, i.e. once its end precedes the
    start of the next trace.
    """
    factory = TraceFactory(params.seed, params.rounds)
    interval = 20_000_000_000 // max(1, params.concurrency)  # mean trace lasts ~20 s
    heap: list[tuple[int, int, GenSpan]] = []
    seq = 0
    for i in range(params.traces):
        start = BASE_TIME_NS + i * interval + factory.rng.randint(0, interval // 2)
        while heap and heap[0][0] < start:
            yield heapq.heappop(heap)[2]
        trace = factory.trace(start, i)
        if stats is not None and totals is not None:
            stats.expect(trace[0].trace_id, len(trace))
            totals[trace[0].trace_id] = len(trace)
        for s in trace:
            heapq.heappush(heap, (s.end, seq, s))
            seq += 1
    while heap:
        yield heapq.heappop(heap)[2]


# ---- protobuf ------------------------------------------------------------------------------


def _set_any(v: AnyValue, value: Any) -> None:
    if isinstance(value, str):
        v.string_value = value
    elif isinstance(value, bool):
        v.bool_value = value
    elif isinstance(value, int):
        v.int_value = value
    elif isinstance(value, float):
        v.double_value = value
    elif isinstance(value, list):
        for item in value:
            _set_any(v.array_value.values.add(), item)
    else:
        raise TypeError(type(value))


def _kvs(target: Any, attrs: list[tuple[str, Any]]) -> None:
    for key, value in attrs:
        kv: KeyValue = target.add()
        kv.key = key
        _set_any(kv.value, value)


def _groups(batch: list[GenSpan]) -> dict[tuple[int, int], list[GenSpan]]:
    groups: dict[tuple[int, int], list[GenSpan]] = {}
    for s in batch:
        groups.setdefault((s.resource, s.scope), []).append(s)
    return groups


def to_proto(batch: list[GenSpan], res: list[list[tuple[str, Any]]]) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    by_resource: dict[int, Any] = {}
    for (r, sc), spans in _groups(batch).items():
        rs = by_resource.get(r)
        if rs is None:
            rs = by_resource[r] = req.resource_spans.add()
            _kvs(rs.resource.attributes, res[r])
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = SCOPES[sc]
        for g in spans:
            p = ss.spans.add()
            p.trace_id = g.trace_id
            p.span_id = g.span_id
            if g.parent_id:
                p.parent_span_id = g.parent_id
            p.name = g.name
            p.kind = g.kind  # type: ignore[assignment]  # enum field takes its int
            p.start_time_unix_nano = g.start
            p.end_time_unix_nano = g.end
            _kvs(p.attributes, g.attrs)
            for name, ts, eattrs in g.events:
                ev = p.events.add()
                ev.name = name
                ev.time_unix_nano = ts
                _kvs(ev.attributes, eattrs)
            if g.status:
                p.status.code = g.status  # type: ignore[assignment]
                p.status.message = g.status_message
    return req


# ---- OTLP/JSON -----------------------------------------------------------------------------


def _json_any(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP/JSON: 64-bit integers are decimal strings
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_json_any(v) for v in value]}}
    raise TypeError(type(value))


def _json_kvs(attrs: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _json_any(v)} for k, v in attrs]


def to_json(batch: list[GenSpan], res: list[list[tuple[str, Any]]]) -> dict[str, Any]:
    by_resource: dict[int, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for (r, sc), spans in _groups(batch).items():
        rs = by_resource.get(r)
        if rs is None:
            rs = by_resource[r] = {"resource": {"attributes": _json_kvs(res[r])}, "scopeSpans": []}
            out.append(rs)
        js = []
        for g in spans:
            d: dict[str, Any] = {
                "traceId": g.trace_id.hex(),
                "spanId": g.span_id.hex(),
                "name": g.name,
                "kind": g.kind,
                "startTimeUnixNano": str(g.start),
                "endTimeUnixNano": str(g.end),
                "attributes": _json_kvs(g.attrs),
            }
            if g.parent_id:
                d["parentSpanId"] = g.parent_id.hex()
            if g.events:
                d["events"] = [
                    {"timeUnixNano": str(ts), "name": n, "attributes": _json_kvs(a)}
                    for n, ts, a in g.events
                ]
            d["status"] = {"code": g.status, "message": g.status_message} if g.status else {}
            js.append(d)
        name, version = SCOPES[sc]
        rs["scopeSpans"].append({"scope": {"name": name, "version": version}, "spans": js})
    return {"resourceSpans": out}


# ---- driver --------------------------------------------------------------------------------


class InFlight:
    """Counts what an export forces a streaming reader to hold: spans of traces whose first
    span has been written and whose last has not (the lower bound for offline memory)."""

    def __init__(self) -> None:
        self.remaining: dict[bytes, int] = {}
        self.open_spans = 0
        self.max_open_spans = 0
        self.max_open_traces = 0

    def expect(self, trace_id: bytes, spans: int) -> None:
        self.remaining[trace_id] = spans

    def seen(self, span: GenSpan, total: dict[bytes, int]) -> None:
        left = self.remaining[span.trace_id] - 1
        if left:
            self.remaining[span.trace_id] = left
            self.open_spans += 1
        else:
            del self.remaining[span.trace_id]
            self.open_spans -= total.pop(span.trace_id) - 1
        self.max_open_spans = max(self.max_open_spans, self.open_spans)


def batches(params: Params, stats: InFlight | None = None) -> Iterator[list[GenSpan]]:
    batch: list[GenSpan] = []
    totals: dict[bytes, int] = {}
    open_traces: set[bytes] = set()
    for span in time_ordered(params, stats, totals):
        batch.append(span)
        if stats is not None:
            open_traces.add(span.trace_id)
            stats.seen(span, totals)
            if span.trace_id not in stats.remaining:
                open_traces.discard(span.trace_id)
            stats.max_open_traces = max(stats.max_open_traces, len(open_traces))
        if len(batch) == params.batch:
            yield batch
            batch = []
    if batch:
        yield batch


def generate(params: Params, out: Path, pb_dir: bool = False, jsonl: bool = True) -> dict[str, Any]:
    """Write the data set; return the manifest (also written to ``out/manifest.json``)."""
    out.mkdir(parents=True, exist_ok=True)
    res = resources()
    spans = requests = 0
    pb_path, json_path = out / "traces.binpb", out / "traces.jsonl"
    if pb_dir:
        (out / "pb").mkdir(exist_ok=True)
    t0 = time.perf_counter()
    stats = InFlight()
    with open(pb_path, "wb") as fpb, open(json_path if jsonl else "/dev/null", "wb") as fjs:
        for batch in batches(params, stats):
            body = to_proto(batch, res).SerializeToString()
            fpb.write(struct.pack(">I", len(body)))
            fpb.write(body)
            if pb_dir:
                (out / "pb" / f"{requests:06d}.pb").write_bytes(body)
            if jsonl:
                fjs.write(orjson.dumps(to_json(batch, res)))
                fjs.write(b"\n")
            spans += len(batch)
            requests += 1
    manifest: dict[str, Any] = {
        "params": params.key(),
        "spans": spans,
        "traces": params.traces,
        "requests": requests,
        "bytes_binpb": pb_path.stat().st_size,
        "bytes_jsonl": json_path.stat().st_size if jsonl else 0,
        "max_open_spans": stats.max_open_spans,
        "max_open_traces": stats.max_open_traces,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def ensure(params: Params, out: Path, jsonl: bool = True) -> dict[str, Any]:
    """Generate unless ``out`` already holds exactly this data set (generation takes a while)."""
    mf = out / "manifest.json"
    if mf.exists():
        manifest: dict[str, Any] = json.loads(mf.read_text())
        if manifest.get("params") == params.key() and (not jsonl or manifest.get("bytes_jsonl")):
            return manifest
    return generate(params, out, jsonl=jsonl)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--traces", type=int, default=10_000, help="number of traces (~20 spans each)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--batch", type=int, default=512, help="spans per ExportTraceServiceRequest")
    ap.add_argument("--concurrency", type=int, default=64, help="traces in flight in the export")
    ap.add_argument("--out", type=Path, default=Path("bench/out/data"))
    ap.add_argument("--pb-dir", action="store_true", help="also write one .pb body per request")
    ap.add_argument("--no-jsonl", action="store_true", help="skip the OTLP/JSON lines file")
    ap.add_argument(
        "--rounds", type=int, default=0, help="tool rounds per trace (default: 5-12 at random)"
    )
    args = ap.parse_args(argv)
    params = Params(args.traces, args.seed, args.batch, args.concurrency, args.rounds)
    manifest = generate(params, args.out, pb_dir=args.pb_dir, jsonl=not args.no_jsonl)
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
