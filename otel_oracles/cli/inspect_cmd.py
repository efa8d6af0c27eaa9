"""``otel-oracles inspect``: show each trace's trajectory as the graders see it.

This is how a user debugs a mapping: every step with its kind, tool or model, status,
duration and source span, and per trace which mapping file recognised how many spans and
which span names nothing recognised.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from otel_oracles.cli._output import input_limit_options, input_limits, report_input_problems
from otel_oracles.mapping import ConventionCache, load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.step import Step, Trajectory
from otel_oracles.pipeline import read_traces
from otel_oracles.report import json_safe, terminal_safe


def _duration(step: Step) -> str:
    ns = step.duration_ns
    if ns is None:
        return "-"
    if ns >= 1_000_000_000:
        return f"{ns / 1e9:.2f}s"
    return f"{ns / 1e6:.1f}ms"


def _label(step: Step) -> str:
    if step.kind == "handoff":
        return f"{step.from_agent or '?'} -> {step.to_agent or '?'}"
    if step.kind == "agent":
        return step.agent_name or "-"
    if step.kind == "generation":
        return step.model or "-"
    return step.tool or ("<not captured>" if "tool" in step.redacted else "-")


def _coverage(t: Trajectory) -> str:
    mapped = ", ".join(f"{name} {n}" for name, n in sorted(t.conventions.items())) or "none"
    unrecognised = sum(t.unmapped_spans.values())
    line = f"coverage: {mapped}; unrecognised {unrecognised}"
    if t.unmapped_spans:
        names = ", ".join(f"{name} x{n}" for name, n in sorted(t.unmapped_spans.items()))
        # Named so a reader knows which spans a convention must map (contracts.md, Coverage).
        line += f" ({names}): checks that need every span report missing evidence"
    if t.orphan_spans:
        line += f"; orphan spans {len(t.orphan_spans)}"
    return line


_LIMIT_NOTES = (
    ("values_cut_at", "values cut at {} chars"),
    ("attributes_dropped", "span dropped {} attributes"),
    ("events_dropped", "span dropped {} events"),
)
"""What an SDK's span limits took from a step (``mapping/_limits.py``), as ``inspect`` notes."""


def _limit_notes(step: Step) -> list[str]:
    """Why content of ``step`` is missing when SDK limits took it: a cut length, or how many
    attributes or events its span lost."""
    return [
        text.format(step.attributes[key]) for key, text in _LIMIT_NOTES if key in step.attributes
    ]


def render_trajectory(t: Trajectory) -> str:
    """The text block ``inspect`` prints for one trace."""
    lines = [
        f"trace {t.trace_id}  root {t.root_name!r}  service {t.service_name or '-'}  "
        f"agent {t.agent_name or '-'}  spans {t.span_count}"
        + ("  INCOMPLETE" if t.incomplete else "")
    ]
    rows = [["#", "KIND", "TOOL/MODEL", "STATUS", "DURATION", "SPAN", "CONVENTION", "NOTES"]]
    for s in t.steps:
        notes = []
        if s.synthesized:
            notes.append("from model messages")
        if s.redacted:
            notes.append("redacted: " + ",".join(s.redacted))
        notes.extend(_limit_notes(s))
        if s.kind in ("file_edit",) and s.path:
            notes.append(s.path)
        if s.kind == "command" and s.command:
            notes.append(s.command)
        if s.kind == "handoff" and s.tool:
            notes.append(f"via {s.tool}")
        if s.error_type:
            notes.append(s.error_type)
        rows.append(
            [
                str(s.index),
                s.kind.value,
                _label(s),
                s.status,
                _duration(s),
                s.source.span_id if s.source else "-",
                s.convention or "-",
                "; ".join(notes),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)] + [r[-1]]
        lines.append("  " + "  ".join(cells).rstrip())
    inp, out = t.token_usage()
    shown = ["-" if n is None else str(n) for n in (inp, out)]
    lines.append(f"  tokens (leaf model calls): input {shown[0]}, output {shown[1]}")
    lines.append("  " + _coverage(t))
    return "\n".join(lines)


@click.command("inspect")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--conventions",
    "convention_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Extra mapping file or directory, added to the bundled conventions/.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the trajectories as JSON.")
@input_limit_options
def inspect_command(
    paths: tuple[str, ...],
    convention_dirs: tuple[Path, ...],
    as_json: bool,
    max_message_bytes: int | None,
    max_decompressed_bytes: int | None,
    idle_spans: int | None,
    max_buffered_spans: int | None,
) -> None:
    """Show the trajectory each trace in PATHS maps to, as the graders see it.

    Per step: index, kind, tool/model, status, duration, source span id and the mapping file
    that produced it (steps marked "from model messages" were seen only inside a model's
    messages). Per trace: a coverage line naming how many spans each mapping file
    recognised, and the spans no file recognised. Exit code 2 when an input was unreadable.

    \b
    Examples:
      otel-oracles inspect examples/traces/pydantic-ai-b_tool_retry.otlp.json
      otel-oracles inspect export.jsonl --conventions my-conventions/ --json
    """
    conventions = load_conventions(list(convention_dirs), ConventionCache.from_env())
    problems: list[InputProblem] = []
    trajectories = [
        map_trace(t, conventions)
        for t in read_traces(
            paths,
            problems,
            limits=input_limits(
                max_message_bytes, max_decompressed_bytes, idle_spans, max_buffered_spans
            ),
        )
    ]
    if as_json:
        data = {
            "trajectories": [t.model_dump(mode="json") for t in trajectories],
            "input_errors": [p.model_dump(mode="json") for p in problems],
        }
        click.echo(json_safe(json.dumps(data, indent=2, ensure_ascii=False)))
    else:
        text = "\n\n".join(render_trajectory(t) for t in trajectories)
        click.echo(terminal_safe(text) or "no traces found")
    report_input_problems(problems)
    sys.exit(2 if problems else 0)
