"""``promote``: one production trace into a scrubbed test fixture that grades the same.

A fixture is only a regression test of the production failure if it still fails the same
way: scrubbing that removes the text a check reads (the disclosure in an answer, a cited
document id) would turn the failure into something else, silently. So the scrubbed fixture
is written to a scratch directory, read back with the same decoder and graded with the same
contracts as the original; only when every (contract, check) outcome is unchanged is it
moved to the output directory, with a note of what was replaced. Otherwise the caller is
told which checks changed, and which key to keep (``--keep``) is the usual way out.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from otel_oracles.errors import InputError
from otel_oracles.mapping import ConventionSet
from otel_oracles.model.contract import Contract
from otel_oracles.model.result import InputProblem, Verdict
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import grade_trace, read_traces
from otel_oracles.promote._otlp import otlp_request
from otel_oracles.promote._scrub import ScrubNote, ScrubPolicy, scrub_trace

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True, slots=True)
class VerdictSummary:
    """What a fixture must reproduce of one verdict: contract, verdict, each check's
    outcome."""

    contract: str
    verdict: str
    checks: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictSummary:
        return cls(
            f"{verdict.contract_id}@{verdict.contract_version}",
            verdict.verdict,
            tuple((r.name, r.outcome.value) for r in verdict.results),
        )


@dataclass(frozen=True, slots=True)
class Promotion:
    """The result: the verdicts before and after scrubbing, what was replaced, and where
    the fixture and its note were written (None when it was refused)."""

    trace_id: str
    original: tuple[VerdictSummary, ...]
    scrubbed: tuple[VerdictSummary, ...]
    note: ScrubNote
    fixture: Path | None
    note_file: Path | None

    @property
    def same_verdicts(self) -> bool:
        return self.original == self.scrubbed

    def changes(self) -> list[str]:
        """One line per check whose outcome scrubbing changed."""
        before = {(v.contract, name): outcome for v in self.original for name, outcome in v.checks}
        after = {(v.contract, name): outcome for v in self.scrubbed for name, outcome in v.checks}
        lines = []
        for key in sorted(before.keys() | after.keys()):
            if before.get(key) != after.get(key):
                contract, name = key
                lines.append(
                    f"{contract} {name}: {before.get(key, 'not graded')} -> "
                    f"{after.get(key, 'not graded')}"
                )
        return lines


def find_trace(path: str, trace_id: str) -> Trace:
    """The trace ``trace_id`` of the file at ``path`` (a trace joined into a session is
    found by any of its trace ids). Raises ``InputError`` naming what was wrong."""
    wanted = trace_id.lower()
    if not _TRACE_ID.match(wanted):
        raise InputError(f"expected 32 hex digits, got {trace_id!r}", "--trace-id")
    problems: list[InputProblem] = []
    for trace in read_traces([path], problems):
        if trace.trace_id == wanted or any(s.trace_id == wanted for s in trace.spans):
            return trace
    if problems:
        raise InputError(problems[0].message, problems[0].source)
    raise InputError(f"no trace {wanted} in the file", path)


def _grade(
    trace: Trace, contracts: Sequence[Contract], conventions: ConventionSet
) -> tuple[VerdictSummary, ...]:
    return tuple(VerdictSummary.of(v) for v, _ in grade_trace(trace, contracts, conventions))


def promote(
    path: str,
    trace_id: str,
    out_dir: Path,
    contracts: Sequence[Contract],
    conventions: ConventionSet,
    policy: ScrubPolicy,
    *,
    allow_verdict_change: bool = False,
) -> Promotion:
    """Scrub trace ``trace_id`` of ``path`` into ``out_dir/<trace id>.otlp.json`` with a note
    ``<trace id>.promote.md``, unless its verdicts under ``contracts`` change (then nothing
    is written, unless ``allow_verdict_change``). Raises ``InputError`` when the trace is
    not found or no contract grades it."""
    trace = find_trace(path, trace_id)
    original = _grade(trace, contracts, conventions)
    if not original:
        raise InputError(
            f"no contract grades trace {trace.trace_id} (no match selects it, or it holds no "
            "agent run): a fixture nothing grades proves nothing",
            "--contracts",
        )
    spans, note = scrub_trace(trace, policy)
    name = f"{trace.trace_id}.otlp.json"
    with tempfile.TemporaryDirectory(prefix="otel-oracles-promote-") as scratch:
        draft = Path(scratch) / name
        draft.write_text(json.dumps(otlp_request(spans), ensure_ascii=False), encoding="utf-8")
        scrubbed = _grade(find_trace(str(draft), trace.trace_id), contracts, conventions)
        promotion = Promotion(trace.trace_id, original, scrubbed, note, None, None)
        if not promotion.same_verdicts and not allow_verdict_change:
            return promotion
        out_dir.mkdir(parents=True, exist_ok=True)
        fixture = out_dir / name
        shutil.move(draft, fixture)
    note_file = out_dir / f"{trace.trace_id}.promote.md"
    result = Promotion(trace.trace_id, original, scrubbed, note, fixture, note_file)
    note_file.write_text(render_note(result, path, policy), encoding="utf-8")
    return result


def render_note(promotion: Promotion, source: str, policy: ScrubPolicy) -> str:
    """The note written next to a fixture: where it came from, the verdicts, and every
    place something was replaced (counts only, never the content)."""
    note = promotion.note
    lines = [
        f"# Promoted trace {promotion.trace_id}",
        "",
        f"Source: `{source}`. Scrubbed by the emitter's privacy rules: identifier-shaped "
        "values, numbers and booleans kept; other text replaced by `[redacted]` (JSON held "
        "in a string scrubbed value by value); text under kept keys kept with "
        "secret-shaped parts (emails, API keys, tokens) replaced.",
        "",
        "Kept keys: " + (", ".join(f"`{k}`" for k in policy.keep) or "none"),
        "",
        "Kept attribute names: " + (", ".join(f"`{k}`" for k in policy.names) or "none"),
        "",
        "## Verdicts",
        "",
        "| contract | original | fixture |",
        "|---|---|---|",
    ]
    scrubbed = {v.contract: v.verdict for v in promotion.scrubbed}
    for v in promotion.original:
        lines.append(f"| {v.contract} | {v.verdict} | {scrubbed.get(v.contract, 'not graded')} |")
    changes = promotion.changes()
    if changes:
        lines += ["", "Checks whose outcome the scrubbing changed:", ""]
        lines += [f"- {line}" for line in changes]
    lines += [
        "",
        "## What was replaced",
        "",
        f"{note.values} value(s) redacted, {note.secrets} secret(s) replaced.",
        "",
        "| span | name | where | values | characters | secrets |",
        "|---|---|---|---|---|---|",
    ]
    for (span_id, span_name, where), removal in note.removals.items():
        lines.append(
            f"| {span_id} | {span_name} | {where} | {removal.values} | {removal.chars} "
            f"| {removal.secrets} |"
        )
    return "\n".join(lines) + "\n"
