"""Which attribute, left out of a capture, would turn a failing check into a pass?

A tracer that records less than the captures hold (another version, a content setting that
drops one field and keeps the rest) must never make a check that should fail pass (DESIGN
section 8): an attribute left out should make the check missing evidence, or leave its
verdict as it was. For every capture in ``tests/testdata/traces/<source>/`` whose verdict
under its example contract has a failing check (an invariant failure or an exhausted budget),
this leaves out one attribute key at a time (from every span; from every span event with
``event:``; from every log record of the capture's ``.logs.otlp.jsonl`` with ``log:``, or a
key of the log records' map bodies with ``log.body:``), grades the capture again and
prints each failing check that became a pass or a tolerated failure, with the key and the
check's message.

A line is a place to look, not a verdict: some attributes are a framework's only failure
signal (Haystack's ``haystack.tool.error``, Genkit's ``genkit:output`` holding a tool's
error), and a trace without them is one no grader could judge. The others named a gap in a
convention or in the grader; ``tests/oracles/test_partial_capture.py`` holds the fixed ones.

    python tools/partial_capture_scan.py                      # every source (about an hour)
    python tools/partial_capture_scan.py spring-ai adk-go     # some sources (a minute each)
    python tools/partial_capture_scan.py --scenario d_forbidden_tool strands
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from otel_oracles.grade.loader import load_contract  # noqa: E402
from otel_oracles.mapping import load_conventions  # noqa: E402
from otel_oracles.model.contract import Contract  # noqa: E402
from otel_oracles.model.result import Outcome, Verdict  # noqa: E402
from otel_oracles.pipeline import grade_trace, read_traces  # noqa: E402

TRACES = REPO / "tests" / "testdata" / "traces"
CONTRACTS = REPO / "examples" / "contracts"
SCENARIO_CONTRACT = {
    "c_retry_exhausted": "support-rag",
    "d_forbidden_tool": "support-rag",
    "e_fabricated_citation": "support-rag",
    "g_handoff": "multi-agent-handoff",
    "h_coding_agent": "coding-agent",
    "i_parallel_tools": "support-rag",
    "j_undisclosed_failure": "support-rag",
    "k_unfounded_uncertainty": "support-rag",
    "m_excess_calls": "support-rag",
    "n_handback": "multi-agent-handoff",
}
"""The scenarios whose expected verdicts fail a check, and the contract each is graded by."""
FAILING = frozenset({Outcome.INVARIANT_FAILURE, Outcome.BUDGET_EXHAUSTED})
PASSING = frozenset({Outcome.PASS, Outcome.TOLERATED})


def contract(name: str) -> Contract:
    """The example contract without its ``match``: every capture is graded by it."""
    return load_contract(CONTRACTS / f"{name}.yaml").model_copy(update={"match": None})


def spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for rs in doc.get("resourceSpans", [])
        for scope in rs.get("scopeSpans", [])
        for span in scope.get("spans", [])
    ]


def log_records(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log records of a ``.logs.otlp.jsonl`` file's requests."""
    return [
        record
        for doc in logs
        for rl in doc.get("resourceLogs", [])
        for scope in rl.get("scopeLogs", [])
        for record in scope.get("logRecords", [])
    ]


def _body_entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of a log record's map body (``kvlistValue``), or none."""
    entries: list[dict[str, Any]] = (record.get("body") or {}).get("kvlistValue", {}).get(
        "values"
    ) or []
    return entries


def keys_of(doc: dict[str, Any], logs: list[dict[str, Any]]) -> list[str]:
    """Every key the scan can leave out: span attributes, ``event:`` span-event attributes,
    ``log:`` log-record attributes and ``log.body:`` keys of log records' map bodies."""
    keys: dict[str, None] = {}
    for span in spans(doc):
        keys.update(dict.fromkeys(a["key"] for a in span.get("attributes", [])))
        for event in span.get("events") or []:
            keys.update(dict.fromkeys("event:" + a["key"] for a in event.get("attributes") or []))
    for record in log_records(logs):
        keys.update(dict.fromkeys("log:" + a["key"] for a in record.get("attributes") or []))
        keys.update(dict.fromkeys("log.body:" + e["key"] for e in _body_entries(record)))
    return list(keys)


_PLACES = ("event", "log", "log.body")
"""The prefixes ``keys_of`` gives keys that are not span attributes."""


def _where(key: str) -> tuple[str, str]:
    """(place, attribute key) of a key ``keys_of`` named; place "" for a span attribute."""
    place, sep, name = key.partition(":")
    return (place, name) if sep and place in _PLACES else ("", key)


def without(
    doc: dict[str, Any], logs: list[dict[str, Any]], key: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Copies of the capture's spans and log requests with ``key`` (as ``keys_of`` names
    it) left out everywhere it occurs."""
    doc_copy: dict[str, Any] = json.loads(json.dumps(doc))
    logs_copy: list[dict[str, Any]] = json.loads(json.dumps(logs))
    kind, name = _where(key)
    if kind == "log":
        for record in log_records(logs_copy):
            record["attributes"] = [a for a in record.get("attributes") or [] if a["key"] != name]
    elif kind == "log.body":
        for record in log_records(logs_copy):
            entries = _body_entries(record)
            entries[:] = [e for e in entries if e["key"] != name]
    for span in spans(doc_copy) if kind in ("", "event") else []:
        if kind == "event":
            for event in span.get("events") or []:
                event["attributes"] = [a for a in event.get("attributes") or [] if a["key"] != name]
        else:
            span["attributes"] = [a for a in span.get("attributes", []) if a["key"] != name]
    return doc_copy, logs_copy


def grade(
    doc: dict[str, Any], logs: list[dict[str, Any]], graded_by: Contract, conventions: Any
) -> list[Verdict]:
    """The verdicts of the capture's traces (one, or one per trace of a run split over
    several, as some tracers export it), its log records read with them."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.otlp.json"
        path.write_text(json.dumps(doc))
        files = [str(path)]
        if logs:
            logs_path = Path(tmp) / "trace.logs.otlp.jsonl"
            logs_path.write_text("".join(json.dumps(request) + "\n" for request in logs))
            files.append(str(logs_path))
        verdicts = [
            v
            for trace in read_traces(files, [])
            for v, _ in grade_trace(trace, [graded_by], conventions)
        ]
    return verdicts


def scan(source: str, scenarios: list[str], conventions: Any) -> int:
    found = 0
    for scenario in scenarios:
        for variant in ("", ".nocontent"):
            path = TRACES / source / f"{scenario}{variant}.otlp.json"
            if not path.exists():
                continue
            logs_path = path.with_name(f"{scenario}{variant}.logs.otlp.jsonl")
            logs = (
                [json.loads(line) for line in logs_path.read_text().splitlines() if line.strip()]
                if logs_path.exists()
                else []
            )
            graded_by = contract(SCENARIO_CONTRACT[scenario])
            doc = json.loads(path.read_text())
            failing = {
                (v.subject, r.name)
                for v in grade(doc, logs, graded_by, conventions)
                for r in v.results
                if r.outcome in FAILING
            }
            if not failing:
                continue
            for key in keys_of(doc, logs):
                for v in grade(*without(doc, logs, key), graded_by, conventions):
                    for r in v.results:
                        if (v.subject, r.name) not in failing or r.outcome not in PASSING:
                            continue
                        found += 1
                        print(
                            f"{source} {scenario}{variant}: without {key!r}, {r.name} "
                            f"{r.outcome.value}: {r.message[:160]}",
                            flush=True,
                        )
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("sources", nargs="*", help="folders of tests/testdata/traces (default: all)")
    ap.add_argument(
        "--scenario", action="append", choices=sorted(SCENARIO_CONTRACT), help="repeatable"
    )
    args = ap.parse_args(argv)
    sources = args.sources or sorted(
        p.name for p in TRACES.iterdir() if (p / "EXPECTED.md").exists()
    )
    scenarios = args.scenario or sorted(SCENARIO_CONTRACT)
    conventions = load_conventions()
    found = sum(scan(source, scenarios, conventions) for source in sources)
    print(f"{found} failing check(s) turned into a pass by leaving out one attribute key")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
