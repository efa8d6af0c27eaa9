"""Comparing a run with a baseline run: what regressed, what changed, which checks flipped.

A run is reduced to one ``PairRecord`` per (contract, subject) as verdicts arrive, so
``grade`` can compare without holding its verdicts. Pairs are keyed by contract id and
subject: the trace id for a trace, the trajectory's file name for a trajectory (a path
differs between a laptop and a CI checkout; the file name is what the gate was given).

What counts as a regression (any one fails the run):

- a pair that passed in the baseline and does not pass now;
- a pair graded in the baseline that this run did not grade (a gate that silently stopped
  grading a trace has not passed it);
- per contract, tolerated failures or missing evidence (summed over its pairs) rising by more
  than the stated margin.

A contract whose version differs from the baseline's is reported as changed and not compared:
a new version is a new promise, and holding it to the old one's results says nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field

from otel_oracles.model.result import Counts, Verdict

VERDICTS = ("pass", "fail", "error")
NUMBERS = ("invariant_failures", "tolerated_failures", "budget_exhausted", "missing_evidence")
"""The four numbers a contract reports, in the order the console table shows them."""

ABSENT = "absent"
"""The outcome shown for a check one side did not run."""


def subject_key(verdict: Verdict) -> str:
    """The trace id for a trace; the file name for a trajectory (its subject is a path)."""
    if verdict.trace_id is not None:
        return verdict.subject
    return PurePath(verdict.subject).name or verdict.subject


@dataclass(frozen=True, slots=True)
class PairRecord:
    """What the comparison needs of one verdict."""

    contract_id: str
    contract_version: int
    subject: str
    verdict: str
    counts: Counts
    checks: dict[str, str]
    """Check name -> outcome; a repeated name gets ``#2``, ``#3`` in order."""

    @classmethod
    def of(cls, verdict: Verdict) -> PairRecord:
        checks: dict[str, str] = {}
        for result in verdict.results:
            name, n = result.name, 1
            while name in checks:
                n += 1
                name = f"{result.name}#{n}"
            checks[name] = result.outcome.value
        return cls(
            contract_id=verdict.contract_id,
            contract_version=verdict.contract_version,
            subject=subject_key(verdict),
            verdict=verdict.verdict,
            counts=verdict.counts,
            checks=checks,
        )

    @property
    def label(self) -> str:
        return f"{self.contract_id}@{self.contract_version} on {self.subject}"


@dataclass(slots=True)
class RunRecord:
    """Every pair of one run, added one verdict at a time."""

    pairs: dict[tuple[str, str], PairRecord] = field(default_factory=dict)

    @classmethod
    def of(cls, verdicts: Iterable[Verdict]) -> RunRecord:
        record = cls()
        for verdict in verdicts:
            record.add(verdict)
        return record

    def add(self, verdict: Verdict) -> None:
        pair = PairRecord.of(verdict)
        self.pairs[(pair.contract_id, pair.subject)] = pair

    def by_contract(self) -> dict[str, list[PairRecord]]:
        out: dict[str, list[PairRecord]] = {}
        for pair in self.pairs.values():
            out.setdefault(pair.contract_id, []).append(pair)
        return out


@dataclass(frozen=True, slots=True)
class Margins:
    """How much each per-contract count may rise before it is a regression."""

    tolerated: int = 0
    missing: int = 0


class Side(BaseModel):
    """One contract's totals in one run."""

    model_config = ConfigDict(extra="forbid")

    versions: list[int]
    pairs: int
    verdicts: dict[str, int]
    """``pass`` / ``fail`` / ``error`` -> number of pairs."""
    counts: dict[str, int]
    """The four numbers, summed over the contract's pairs."""


class ContractChange(BaseModel):
    """One contract in the baseline, the candidate, or both."""

    model_config = ConfigDict(extra="forbid")

    contract_id: str
    baseline: Side | None
    candidate: Side | None
    compared: bool
    """False when the version changed or one side lacks the contract."""


class CheckFlip(BaseModel):
    """A check whose outcome differs between the runs, on a pair graded in both."""

    model_config = ConfigDict(extra="forbid")

    contract_id: str
    contract_version: int
    subject: str
    check: str
    old: str
    new: str


class Comparison(BaseModel):
    """The result of comparing a candidate run with a baseline run."""

    model_config = ConfigDict(extra="forbid")

    contracts: list[ContractChange] = Field(default_factory=list)
    flips: list[CheckFlip] = Field(default_factory=list)
    regressions: list[str] = Field(default_factory=list)
    """One line per regression; non-empty means the candidate fails."""
    notes: list[str] = Field(default_factory=list)
    """What changed without being a regression (new contracts, new pairs, new versions)."""
    margins: dict[str, int] = Field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)


def _side(pairs: list[PairRecord]) -> Side:
    verdicts = dict.fromkeys(VERDICTS, 0)
    counts = dict.fromkeys(NUMBERS, 0)
    for pair in pairs:
        verdicts[pair.verdict] = verdicts.get(pair.verdict, 0) + 1
        for name in NUMBERS:
            counts[name] += getattr(pair.counts, name)
    versions = sorted({p.contract_version for p in pairs})
    return Side(versions=versions, pairs=len(pairs), verdicts=verdicts, counts=counts)


def _version(side: Side) -> str:
    return "/".join(str(v) for v in side.versions)


def compare(
    baseline: RunRecord, candidate: RunRecord, margins: Margins | None = None
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` by the rules in the module docstring."""
    margins = margins or Margins()
    out = Comparison(margins={"tolerated": margins.tolerated, "missing": margins.missing})
    old_by, new_by = baseline.by_contract(), candidate.by_contract()
    for contract_id in sorted(old_by.keys() | new_by.keys()):
        old_pairs, new_pairs = old_by.get(contract_id, []), new_by.get(contract_id, [])
        old = _side(old_pairs) if old_pairs else None
        new = _side(new_pairs) if new_pairs else None
        compared = old is not None and new is not None and old.versions == new.versions
        out.contracts.append(
            ContractChange(contract_id=contract_id, baseline=old, candidate=new, compared=compared)
        )
        if old is None and new is not None:
            out.notes.append(
                f"new: {contract_id}@{_version(new)} graded {new.pairs} pair(s), "
                "none in the baseline"
            )
        elif old is not None and new is None:
            out.regressions.append(
                f"{contract_id}@{_version(old)}: graded {old.pairs} pair(s) in the baseline, "
                "none in this run"
            )
        elif old is not None and new is not None and not compared:
            out.notes.append(
                f"changed: {contract_id}@{_version(old)} -> @{_version(new)}: not compared "
                "with the baseline (a new version is a new promise)"
            )
        elif old is not None and new is not None:
            _compare_contract(old_pairs, new_pairs, old, new, candidate, margins, out)
    return out


def _compare_contract(
    old_pairs: list[PairRecord],
    new_pairs: list[PairRecord],
    old: Side,
    new: Side,
    candidate: RunRecord,
    margins: Margins,
    out: Comparison,
) -> None:
    """One contract graded at the same version in both runs (its pairs on either side)."""
    contract_id = old_pairs[0].contract_id
    seen = {p.subject for p in old_pairs}
    added = sum(1 for p in new_pairs if p.subject not in seen)
    for before in old_pairs:
        now_pair = candidate.pairs.get((contract_id, before.subject))
        if now_pair is None:
            out.regressions.append(
                f"{before.label}: graded in the baseline ({before.verdict}), missing from this run"
            )
            continue
        flips = _flips(before, now_pair)
        out.flips.extend(flips)
        if before.verdict == "pass" and now_pair.verdict != "pass":
            changed = ", ".join(f"{f.check}: {f.old} -> {f.new}" for f in flips if f.new != "pass")
            out.regressions.append(
                f"{now_pair.label}: passed in the baseline, now {now_pair.verdict}"
                + (f" ({changed})" if changed else "")
            )
    for name, margin, flag in (
        ("tolerated_failures", margins.tolerated, "--max-tolerated-rise"),
        ("missing_evidence", margins.missing, "--max-missing-rise"),
    ):
        rise = new.counts[name] - old.counts[name]
        if rise > margin:
            out.regressions.append(
                f"{contract_id}@{_version(new)}: {name.replace('_', ' ')} rose from "
                f"{old.counts[name]} to {new.counts[name]} (+{rise}; {flag} {margin})"
            )
    if added:
        out.notes.append(
            f"{contract_id}@{_version(new)}: {added} pair(s) graded that the baseline did not have"
        )


def _flips(before: PairRecord, now: PairRecord) -> list[CheckFlip]:
    names = list(before.checks) + [n for n in now.checks if n not in before.checks]
    return [
        CheckFlip(
            contract_id=now.contract_id,
            contract_version=now.contract_version,
            subject=now.subject,
            check=name,
            old=before.checks.get(name, ABSENT),
            new=now.checks.get(name, ABSENT),
        )
        for name in names
        if before.checks.get(name, ABSENT) != now.checks.get(name, ABSENT)
    ]
