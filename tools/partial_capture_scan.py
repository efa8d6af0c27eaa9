"""Which attribute, left out of a capture, would turn a check that must not pass into a pass?

A tracer that records less than the captures hold (another version, a content setting that
drops one field and keeps the rest) must never make a check pass that the truth does not
pass (DESIGN section 8): an attribute left out should make the check missing evidence, or
leave its verdict as it was. The truth is the real-trace matrix's
(``tests/oracles/test_contracts_on_real_traces.py``: ``cases`` and ``expected``, not a copy):
every check whose expected outcome is not a pass is scanned, an invariant failure or an
exhausted budget turning into a pass or a tolerated failure, a tolerated failure turning into
a pass (it hides the failure), and a missing-evidence check (content off, a run that ended in
an error, merged model calls...) turning into a pass or a tolerated failure: a silent pass.
Captures the matrix grades apart (a run split over several traces, one per turn, per agent
or per model call) take the outcomes their own tests pin, which are the graded ones.

For each such capture in ``tests/testdata/traces/<source>/`` this leaves out one attribute
key at a time (from every span; from every span event with ``event:``; from every log record
of the capture's ``.logs.otlp.jsonl`` with ``log:``, or a key of the log records' map bodies
with ``log.body:``), grades the capture again and prints each scanned check that became a
pass (or a tolerated failure), with the key, the truth, the new outcome and the message.

A line is a place to look, not a verdict: some attributes are a framework's only failure
signal (Haystack's ``haystack.tool.error``, Genkit's ``genkit:output`` holding a tool's
error), and a trace without them is one no grader could judge. The others named a gap in a
convention or in the grader; ``tests/oracles/test_partial_capture.py`` holds the fixed ones.

    python tools/partial_capture_scan.py                      # every source (~30 min; -j 2: ~16)
    python tools/partial_capture_scan.py spring-ai adk-go     # some sources (seconds each)
    python tools/partial_capture_scan.py --scenario d_forbidden_tool strands
    python tools/partial_capture_scan.py --truths failing     # failures only (the old scan)
    python tools/partial_capture_scan.py -j 2                 # sources graded in 2 processes
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Collection
from contextlib import nullcontext
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from otel_oracles.mapping import load_conventions  # noqa: E402
from otel_oracles.model.contract import Contract  # noqa: E402
from otel_oracles.model.result import Outcome, Verdict  # noqa: E402
from otel_oracles.pipeline import read_traces  # noqa: E402
from otel_oracles.session import GradingSession  # noqa: E402
from tests.oracles import test_contracts_on_real_traces as matrix  # noqa: E402

TRACES = matrix.TRACES
FAILING = frozenset({Outcome.INVARIANT_FAILURE, Outcome.BUDGET_EXHAUSTED})
NOT_PASSING = FAILING | {Outcome.MISSING_EVIDENCE, Outcome.TOLERATED}
"""The truths scanned by default: every outcome but a pass."""
HIDES = {
    Outcome.INVARIANT_FAILURE: frozenset({Outcome.PASS, Outcome.TOLERATED}),
    Outcome.BUDGET_EXHAUSTED: frozenset({Outcome.PASS, Outcome.TOLERATED}),
    Outcome.MISSING_EVIDENCE: frozenset({Outcome.PASS, Outcome.TOLERATED}),
    Outcome.TOLERATED: frozenset({Outcome.PASS}),
}
"""For each scanned truth, the outcomes that would hide it: a failure or a check the trace
cannot show that passes (or is only tolerated), a tolerated failure that passes."""

Key = tuple[str, str]
"""(contract id, check name)."""


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
    """The capture's spans and log requests with ``key`` (as ``keys_of`` names it) left out
    everywhere it occurs: the side holding the key is a copy, the other is given back as is
    (it is only read), so a key costs one copy of its own side."""
    kind, name = _where(key)
    on_spans = kind in ("", "event")
    doc_copy: dict[str, Any] = json.loads(json.dumps(doc)) if on_spans else doc
    logs_copy: list[dict[str, Any]] = logs if on_spans else json.loads(json.dumps(logs))
    if kind == "log":
        for record in log_records(logs_copy):
            record["attributes"] = [a for a in record.get("attributes") or [] if a["key"] != name]
    elif kind == "log.body":
        for record in log_records(logs_copy):
            entries = _body_entries(record)
            entries[:] = [e for e in entries if e["key"] != name]
    for span in spans(doc_copy) if on_spans else []:
        if kind == "event":
            for event in span.get("events") or []:
                event["attributes"] = [a for a in event.get("attributes") or [] if a["key"] != name]
        else:
            span["attributes"] = [a for a in span.get("attributes", []) if a["key"] != name]
    return doc_copy, logs_copy


def grade(
    doc: dict[str, Any], logs: list[dict[str, Any]], session: GradingSession
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
        return [v for trace in read_traces(files, []) for v, _ in session.grade(trace)]


def _capture_files(source: str, scenarios: list[str] | None) -> list[tuple[str, bool, Path]]:
    """(scenario, content on, path) of each capture of ``source``'s folder: its scenarios'
    ``<scenario>.otlp.json`` and ``.nocontent`` variants (other variants, such as a run
    exported without its root, are tested apart)."""
    out = []
    for path in sorted((TRACES / source).glob("*.otlp.json")):
        scenario, _, variant = path.name.removesuffix(".otlp.json").partition(".")
        if variant not in ("", "nocontent"):
            continue
        if scenarios is None or scenario in scenarios:
            out.append((scenario, variant == "", path))
    return out


def truths(
    source: str, scenarios: list[str] | None = None
) -> list[tuple[Path, dict[Key, Outcome] | None]]:
    """Each capture of ``source`` with its truth per (contract id, check), from the
    real-trace matrix (``cases`` / ``expected``); ``None`` where the matrix grades the
    capture apart (``SPLIT_AGENT_TOOL``, ``TURNS_APART``, ``FRAGMENTED``, or a source it does
    not list): the scan then takes the capture's graded outcomes, which those tests pin."""
    in_matrix: dict[tuple[str, bool], dict[Key, Outcome]] = {}
    for case_source, scenario, contract_id, content in matrix.cases():
        if case_source != source:
            continue
        want = matrix.expected(source, contract_id, scenario, content)
        held = in_matrix.setdefault((scenario, content), {})
        held.update({(contract_id, check): outcome for check, outcome in want.items()})
    return [
        (path, in_matrix.get((scenario, content)))
        for scenario, content, path in _capture_files(source, scenarios)
    ]


def contracts_of(path: Path) -> list[Contract]:
    """The contracts the matrix grades a capture's scenario by (``CONTRACTS_OF``)."""
    scenario = path.name.split(".")[0]
    names = matrix.CONTRACTS_OF.get(scenario[0], ["support-rag"])
    return [matrix.contract_named(name) for name in names]


def scan_capture(
    path: Path,
    truth: dict[Key, Outcome] | None,
    conventions: Any,
    scanned: frozenset[Outcome],
    only: Collection[str] | None = None,
) -> list[str]:
    """One line per (key left out, check whose truth is in ``scanned``) that the key's
    absence turned into an outcome hiding that truth (``HIDES``); ``only``: these keys
    (as ``keys_of`` names them) alone."""
    stem = path.name.removesuffix(".otlp.json")
    logs_path = path.with_name(f"{stem}.logs.otlp.jsonl")
    logs = (
        [json.loads(line) for line in logs_path.read_text().splitlines() if line.strip()]
        if logs_path.exists()
        else []
    )
    doc = json.loads(path.read_text())
    session = GradingSession(contracts_of(path), conventions)
    by_subject: dict[str, dict[Key, Outcome]] | None = None
    if truth is None:
        by_subject = {}
        for v in grade(doc, logs, session):
            by_subject.setdefault(v.subject, {}).update(
                {(v.contract_id, r.name): r.outcome for r in v.results}
            )
        watched = {k for held in by_subject.values() for k, o in held.items() if o in scanned}
    else:
        watched = {k for k, o in truth.items() if o in scanned}
    if not watched:
        return []
    lines = []
    source = path.parent.name
    for key in keys_of(doc, logs):
        if only is not None and key not in only:
            continue
        # A run the key's absence splits into several subjects (traces no longer joined)
        # keeps a failure any of them shows: a check is hidden when every subject hides it.
        pooled: dict[tuple[str, str, str], list[tuple[Outcome, str]]] = {}
        for v in grade(*without(doc, logs, key), session):
            held = truth if by_subject is None else by_subject.get(v.subject)
            subject = "" if by_subject is None else v.subject
            for r in v.results if held is not None else []:
                check = (v.contract_id, r.name)
                if check in watched and held.get(check) in scanned:  # type: ignore[union-attr]
                    pooled.setdefault((subject, *check), []).append((r.outcome, r.message))
        for (subject, contract_id, name), got in pooled.items():
            held = truth if by_subject is None else by_subject[subject]
            was = held[(contract_id, name)]  # type: ignore[index]
            if all(outcome in HIDES[was] for outcome, _ in got):
                outcome, message = got[0]
                lines.append(
                    f"{source} {stem} [{contract_id}]: without {key!r}, {name} "
                    f"{was.value} -> {outcome.value}: {message[:160]}"
                )
    return lines


def remember_command_runs() -> None:
    """Run each sandboxed command once per workspace content in this process.

    Every key left out of a coding capture replays the same edits into a fresh workspace and
    runs the contract's command (pytest) in the sandbox again, a second or more each time:
    most of a whole-corpus scan. A run is decided by its command, timeout, policy and the
    workspace's files, so it is remembered by those (a key that changes the files, or the
    command, still runs anew)."""
    from otel_oracles.grade.oracles import base

    run = base.run_command
    if getattr(run, "remembers", False):
        return
    runs: dict[tuple[str, float, str, str], Any] = {}

    def remembered(command: str, workspace: Path, timeout: float, policy: Any) -> Any:
        digest = hashlib.sha256()
        for path in sorted(p for p in workspace.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(workspace)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        key = (command, timeout, policy.model_dump_json(), digest.hexdigest())
        if key not in runs:
            runs[key] = run(command, workspace, timeout, policy)
        return runs[key]

    remembered.remembers = True  # type: ignore[attr-defined]
    base.run_command = remembered  # type: ignore[assignment]


def scan(
    source: str,
    scenarios: list[str] | None,
    scanned: frozenset[Outcome],
    only: Collection[str] | None = None,
) -> list[str]:
    """Every line ``scan_capture`` finds in ``source``'s captures."""
    remember_command_runs()
    conventions = _CONVENTIONS or load_conventions()
    started = time.monotonic()
    lines = [
        line
        for path, truth in truths(source, scenarios)
        for line in scan_capture(path, truth, conventions, scanned, only)
    ]
    print(f"{source}: {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)
    return lines


_CONVENTIONS: Any = None
"""The conventions ``main`` loaded once, which its worker processes inherit: one snapshot for
the whole scan, whatever changes in ``conventions/`` while it runs."""


def _scan_one(
    job: tuple[str, list[str] | None, frozenset[Outcome], Collection[str] | None],
) -> list[str]:
    return scan(*job)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("sources", nargs="*", help="folders of tests/testdata/traces (default: all)")
    ap.add_argument("--scenario", action="append", help="a scenario's name; repeatable")
    ap.add_argument(
        "--truths",
        choices=["all", "failing"],
        default="all",
        help="scan every check whose truth is not a pass (default), or the failing ones only",
    )
    ap.add_argument(
        "--key", action="append", help="leave out this key only (as lines name it); repeatable"
    )
    ap.add_argument(
        "-j", "--jobs", type=int, default=1, help="sources scanned in parallel (default 1)"
    )
    args = ap.parse_args(argv)
    sources = args.sources or sorted(
        p.name for p in TRACES.iterdir() if (p / "EXPECTED.md").exists()
    )
    scanned = FAILING if args.truths == "failing" else NOT_PASSING
    jobs = [(source, args.scenario, scanned, args.key) for source in sources]
    global _CONVENTIONS
    _CONVENTIONS = load_conventions()
    found = 0
    with multiprocessing.Pool(max(1, args.jobs)) if args.jobs > 1 else nullcontext() as pool:
        results = pool.imap(_scan_one, jobs) if pool is not None else map(_scan_one, jobs)
        for lines in results:
            found += len(lines)
            for line in lines:
                print(line, flush=True)
    print(f"{found} check(s) whose truth is not a pass turned into one by leaving out one key")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
