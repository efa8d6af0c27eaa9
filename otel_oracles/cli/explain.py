"""``otel-oracles explain CONTRACT``: the contract in plain words, for reviewers who should
not have to read YAML to know what is forbidden, what is tolerated and why."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from otel_oracles.grade.evidence import EVIDENCE_DESCRIPTIONS
from otel_oracles.grade.loader import load_contract
from otel_oracles.grade.registry import oracle_class
from otel_oracles.model.contract import Contract, MatchSpec, OracleSpec

Phrase = Callable[[dict[str, Any]], str]


def _tools(value: Any) -> str:
    items = value if isinstance(value, list) else [value]
    return " or ".join(f"`{t}`" for t in items) if items else "any tool"


def _times(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _args(p: dict[str, Any]) -> str:
    parts = []
    if p.get("args") is not None:
        how = "exactly" if p.get("args_mode") == "exact" else "including"
        parts.append(f"arguments {how} {json.dumps(p['args'], sort_keys=True)}")
    for key, rx in (p.get("args_regex") or {}).items():
        parts.append(f"argument `{key}` matching /{rx}/")
    if p.get("args_schema") is not None:
        parts.append("arguments valid against a JSON Schema")
    return (" with " + ", ".join(parts)) if parts else ""


def _evidence(p: dict[str, Any]) -> str:
    if p.get("attribute"):
        return f"the attribute `{p['attribute']}` is recorded somewhere in the trace"
    what = EVIDENCE_DESCRIPTIONS.get(p.get("field") or "", p.get("field") or "?")
    what = what.split(" (scope:")[0]  # the scope hint is for authors, not readers
    return f"the trace records {what}" + (f" (tools {p['tool']})" if p.get("tool") else "")


def _sequence(p: dict[str, Any]) -> str:
    names = " -> ".join(i["tool"] + _args(i) for i in p["expected"])
    how = {
        "exact": "exactly this sequence of tool calls",
        "in_order": "these tool calls in this order (others may be interleaved)",
        "any_order": "exactly these tool calls, in any order",
        "superset": "at least these tool calls, in any order",
        "subset": "no tool calls other than these",
    }[p["mode"]]
    ignored = f", ignoring {_tools(p['ignore'])}" if p.get("ignore") else ""
    return f"{how}: {names}{ignored}"


def _latency(p: dict[str, Any]) -> str:
    scope = {
        "trace": "the whole trace",
        "tool": f"each call of {_tools(p.get('tools') or [])}",
        "generation": "each model call",
    }[p["scope"]]
    allow = f" ({_times(p['max'], 'slow call')} allowed)" if p.get("max") else ""
    return f"{scope} takes at most {p['max_ms']:g} ms{allow}"


def _tokens(p: dict[str, Any]) -> str:
    limits = [
        f"{kind} tokens <= {p[f'max_{kind}_tokens']}"
        for kind in ("input", "output", "total")
        if p.get(f"max_{kind}_tokens") is not None
    ]
    return "token use over leaf model calls: " + ", ".join(limits)


def _degraded(p: dict[str, Any]) -> str:
    deps = _tools(p.get("dependencies") or [])
    if not p.get("allowed", True):
        return f"no degraded answers: {deps} must not end errored, timed out or empty"
    disclose = (
        f"and the answer must disclose it (match /{p['must_disclose']}/)"
        if p.get("must_disclose")
        else "with no disclosure required"
    )
    attr = f" or `{p['degraded_attribute']}` says so" if p.get("degraded_attribute") else ""
    return (
        f"an answer may be degraded (when {deps} last errored, timed out or came back empty"
        f'{attr}) {disclose}; "I do not know"-style uncertainty without degraded evidence fails'
    )


def _handoff(p: dict[str, Any]) -> str:
    def fmt(t: dict[str, Any]) -> str:
        return f"{t.get('from', '*')} -> {t.get('to', '*')}"

    parts = []
    if p.get("required"):
        parts.append("required transfers: " + ", ".join(fmt(t) for t in p["required"]))
    if p.get("forbidden"):
        parts.append("forbidden transfers: " + ", ".join(fmt(t) for t in p["forbidden"]))
    return "; ".join(parts) or "agent transfers (none required or forbidden)"


def _globs(globs: list[str], shown: int = 6) -> str:
    listed = ", ".join(f"`{g}`" for g in globs[:shown])
    return listed + (f" and {len(globs) - shown} more" if len(globs) > shown else "")


PHRASES: dict[str, Phrase] = {
    "evidence": _evidence,
    "tool_called": lambda p: (
        f"{_tools(p['tool'])} is called at least {_times(p['min'], 'time')}"
        + (f" and at most {p['max']}" if p.get("max") is not None else "")
        + _args(p)
    ),
    "tool_not_called": lambda p: (
        f"{_tools(p['tool'])} is never called"
        if not p.get("max")
        else f"{_tools(p['tool'])} is called at most {_times(p['max'], 'time')}"
    ),
    "tool_sequence": _sequence,
    "tool_retries": lambda p: (
        f"at most {_times(p['max'], 'retry')} after failed tool calls"
        + (f" (at most {p['max_per_tool']} per tool)" if p.get("max_per_tool") is not None else "")
        + (f" of {_tools(p['tools'])}" if p.get("tools") else "")
    ),
    "loop_detected": lambda p: (
        f"no tool is called {p['threshold']}+ times with the same arguments"
        + (f" ({_times(p['max'], 'loop')} tolerated)" if p.get("max") else "")
    ),
    "tool_errors": lambda p: f"at most {_times(p['max'], 'failed tool call')}",
    "max_tool_calls": lambda p: f"at most {_times(p['max'], 'tool call')}",
    "max_steps": lambda p: f"at most {_times(p['max'], 'step')} ({', '.join(p['kinds'])})",
    "latency": _latency,
    "tokens": _tokens,
    "citations_grounded": lambda p: (
        f"every id the answer cites (/{p['pattern']}/) was returned by an earlier tool or "
        "retrieval in the same trace (no fabricated sources)"
    ),
    "citation_required": lambda p: (
        f"the answer cites at least {p['min']} source(s) matching /{p['pattern']}/"
        + (" unless the run was really degraded" if p.get("unless_degraded") else "")
    ),
    "degraded_answer": _degraded,
    "final_output": lambda p: "; ".join(
        [f"the answer matches /{rx}/" for rx in p.get("must_match", [])]
        + [f"the answer never matches /{rx}/" for rx in p.get("must_not_match", [])]
    ),
    "schema_valid": lambda p: (
        f"{p['target'].replace('_', ' ')} "
        + (f"of {_tools(p['tools'])} " if p.get("tools") else "")
        + "validate(s) against a JSON Schema"
    ),
    "handoff": _handoff,
    "test_must_pass": lambda p: f"`{p['command']}` exits 0 in the replayed workspace",
    "file_not_modified": lambda p: f"`{p['path']}` is left unmodified",
    "no_network": lambda p: "no step reaches for the network or a package registry",
    "assertion_exists": lambda p: f"`{p['path']}` contains a line matching /{p['pattern']}/",
    "network_access": lambda p: f"no command or web tool reaches the network ({p['severity']})",
    "package_install": lambda p: f"no command installs packages ({p['severity']})",
    "destructive_command": lambda p: (
        f"no command destroys files or history, such as `rm -rf` ({p['severity']})"
    ),
    "write_outside_root": lambda p: (
        "nothing is written outside "
        + (f"`{p['root']}`" if p.get("root") else "the session's working directory")
        + f" ({p['severity']})"
    ),
    "protected_path_edit": lambda p: (
        "no protected path is edited ("
        + (_globs(p["paths"]) if p.get("paths") else "tests, CI config, lockfiles, .env")
        + f") ({p['severity']})"
    ),
    "secret_in_command": lambda p: (
        f"no command carries a secret such as an API key ({p['severity']})"
    ),
}


def phrase(spec: OracleSpec) -> str:
    """One sentence for a check; plug-in types fall back to their summary and params."""
    fn = PHRASES.get(spec.type)
    if fn is not None:
        try:
            return fn(spec.params)
        except (KeyError, TypeError):
            pass
    try:
        doc = inspect.getdoc(oracle_class(spec.type)) or spec.type
    except KeyError:
        doc = spec.type
    params = ", ".join(
        f"{k}={json.dumps(v)}" for k, v in spec.params.items() if v not in (None, [], {})
    )
    return f"{doc.splitlines()[0].rstrip('.')}" + (f" ({params})" if params else "")


def _match(contract: Contract) -> str:
    m = contract.match
    if m is None:
        return "every trace"
    specs = m if isinstance(m, list) else [m]
    described = [_one_match(spec) for spec in specs]
    if any(d is None for d in described):
        return "every trace"
    return "traces with " + ", or with ".join(d for d in described if d)


def _one_match(m: MatchSpec) -> str | None:
    parts = [f"resource {k} = {v}" for k, v in m.resource.items()]
    parts += [f"a span with {k} = {v}" for k, v in m.span.items()]
    if m.root_name:
        parts.append(f"root span named {m.root_name}")
    return " and ".join(parts) if parts else None


def _coverage_line(contract: Contract) -> str:
    if contract.coverage == "lenient":
        return (
            "Coverage is relaxed (evidence: {coverage: lenient}): spans no convention recognised "
            "do not stop tool_not_called, no_network, citations_grounded or handoff from passing."
        )
    return (
        "tool_not_called, no_network, citations_grounded and handoff also report missing "
        "evidence when the trace holds spans no convention recognised (coverage: strict)."
    )


def explain(contract: Contract) -> str:
    """The contract in plain words (the command's output)."""
    lines = [
        f"{contract.id} v{contract.version}" + (f" — {contract.name}" if contract.name else "")
    ]
    if contract.content_hash:
        lines.append(f"content hash {contract.content_hash}")
    if contract.description:
        lines += ["", contract.description.strip()]
    lines += ["", f"Grades: {_match(contract)}."]
    missing = (
        "fails the trace" if contract.on_missing_evidence == "fail" else "is reported as a warning"
    )

    def section(title: str, specs: list[OracleSpec], with_why: bool) -> None:
        lines.extend(["", title])
        if not specs:
            lines.append("  (none)")
        for spec in specs:
            label = f" [{spec.name}]" if spec.name else ""
            if spec.params.get("coverage"):
                label += f" (coverage {spec.params['coverage']})"
            lines.append(f"  - {phrase(spec)}.{label}  ({spec.type})")
            if spec.why:
                lines.append(f"      why: {spec.why}")
            elif with_why:
                lines.append("      why: (not given; a tolerance should say why it is acceptable)")

    section(
        f"Must be captured to judge at all (otherwise missing evidence, which {missing}):",
        contract.evidence,
        False,
    )
    section(
        "Must always hold (anything else is forbidden: a violation is an invariant failure):",
        contract.invariants,
        False,
    )
    section(
        "Tolerated, within a budget (used = tolerated; over budget = budget exhausted):",
        contract.tolerances,
        True,
    )
    lines += [
        "",
        "Every check also reports missing evidence instead of passing when the trace lacks",
        "what it needs (content capture off, spans absent, values redacted).",
        "A trace whose spans name a parent that never arrived (a run killed part-way) fails",
        "on trace_complete whatever on_missing_evidence says.",
        _coverage_line(contract),
    ]
    if contract.workspace is not None:
        lines.append(f"Replays an AgentBench workspace of {len(contract.workspace)} file(s).")
    return "\n".join(lines)


@click.command("explain")
@click.argument("contract", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def explain_command(contract: Path) -> None:
    """Print CONTRACT in plain words: what must be captured, what is forbidden, what is
    tolerated and why.

    \b
    Examples:
      otel-oracles explain examples/contracts/support-rag.yaml
      otel-oracles explain examples/tasks/calculator_fix.json
    """
    click.echo(explain(load_contract(contract)))
