"""A ``Comparison`` as text (terminal), JSON (machines) or Markdown (a pull-request comment)."""

from __future__ import annotations

import json

from otel_oracles.regression._compare import NUMBERS, VERDICTS, Comparison, ContractChange, Side

REGRESSION_PREFIX = "REGRESSION: "
"""How a regression reads in a report's notes and on stderr."""

_SHORT = {
    "invariant_failures": "invariant",
    "tolerated_failures": "tolerated",
    "budget_exhausted": "budget exhausted",
    "missing_evidence": "missing evidence",
}


def _change(old: int | None, new: int | None) -> str:
    """``3 -> 5 (+2)``, ``4`` when equal, ``- -> 2`` when one side has no value."""
    if old is None or new is None:
        return f"{'-' if old is None else old} -> {'-' if new is None else new}"
    if old == new:
        return str(new)
    return f"{old} -> {new} ({new - old:+d})"


def _value(side: Side | None, table: str, name: str) -> int | None:
    if side is None:
        return None
    values: dict[str, int] = side.verdicts if table == "verdicts" else side.counts
    return values.get(name, 0)


def _versions(change: ContractChange) -> str:
    def one(side: Side | None) -> str:
        return "-" if side is None else "/".join(str(v) for v in side.versions)

    old, new = one(change.baseline), one(change.candidate)
    return f"@{new}" if old == new else f"@{old} -> @{new}"


def _pairs(change: ContractChange) -> str:
    return _change(
        change.baseline.pairs if change.baseline else None,
        change.candidate.pairs if change.candidate else None,
    )


def _status(comparison: Comparison) -> str:
    n = len(comparison.regressions)
    return f"{n} regression(s)" if n else "no regression"


def render_text(comparison: Comparison) -> str:
    lines: list[str] = []
    for change in comparison.contracts:
        old, new = change.baseline, change.candidate
        note = "" if change.compared else "  (not compared)"
        lines.append(f"{change.contract_id}{_versions(change)}: pairs {_pairs(change)}{note}")
        verdicts = ", ".join(
            f"{v} {_change(_value(old, 'verdicts', v), _value(new, 'verdicts', v))}"
            for v in VERDICTS
        )
        numbers = ", ".join(
            f"{_SHORT[n]} {_change(_value(old, 'counts', n), _value(new, 'counts', n))}"
            for n in NUMBERS
        )
        lines += [f"  verdicts: {verdicts}", f"  counts:   {numbers}"]
    if comparison.flips:
        lines.append("flipped checks:")
        lines += [
            f"  {f.contract_id}@{f.contract_version} on {f.subject}: {f.check}: {f.old} -> {f.new}"
            for f in comparison.flips
        ]
    lines += [f"note: {n}" for n in comparison.notes]
    lines += [REGRESSION_PREFIX + r for r in comparison.regressions]
    lines.append(_status(comparison))
    return "\n".join(lines) + "\n"


def render_json(comparison: Comparison) -> str:
    data = comparison.model_dump(mode="json")
    data["regressed"] = comparison.regressed
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    """Table-safe: a pipe or a line break in a check name or subject must not split a row."""
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(comparison: Comparison) -> str:
    status = "**" + _status(comparison) + "**"
    lines = [f"### otel-oracles: {status}", ""]
    header = ["contract", "pairs", *VERDICTS, *(_SHORT[n] for n in NUMBERS)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for change in comparison.contracts:
        old, new = change.baseline, change.candidate
        name = f"`{_cell(change.contract_id)}{_versions(change)}`"
        if not change.compared:
            name += " (not compared)"
        cells = [name, _pairs(change)]
        cells += [_change(_value(old, "verdicts", v), _value(new, "verdicts", v)) for v in VERDICTS]
        cells += [_change(_value(old, "counts", n), _value(new, "counts", n)) for n in NUMBERS]
        lines.append("| " + " | ".join(c.replace("->", "→") for c in cells) + " |")
    if comparison.regressions:
        lines += ["", "Regressions:", ""]
        lines += [f"- {_cell(r)}" for r in comparison.regressions]
    if comparison.flips:
        lines += ["", "| pair | check | before | now |", "|---|---|---|---|"]
        for f in comparison.flips:
            pair = f"`{_cell(f.contract_id)}@{f.contract_version}` on `{_cell(f.subject)}`"
            lines.append(f"| {pair} | {_cell(f.check)} | {f.old} | {f.new} |")
    if comparison.notes:
        lines += [""] + [f"- {_cell(n)}" for n in comparison.notes]
    return "\n".join(lines) + "\n"
