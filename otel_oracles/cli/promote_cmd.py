"""``otel-oracles promote``: a production trace into a scrubbed fixture for the test suite."""

from __future__ import annotations

from pathlib import Path

import click

from otel_oracles import load_contract
from otel_oracles.cli import EXIT_FAILED, EXIT_OK
from otel_oracles.mapping import ConventionCache, load_conventions
from otel_oracles.model.contract import discover_contract_files
from otel_oracles.promote import DEFAULT_KEEP, ScrubPolicy, promote


@click.command("promote")
@click.argument("trace_file")
@click.option("--trace-id", required=True, metavar="ID", help="The trace to promote (32 hex).")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory the fixture <trace id>.otlp.json and its note <trace id>.promote.md "
    "are written to (made if missing).",
)
@click.option(
    "-c",
    "--contracts",
    "contract_paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="Contract file or directory; repeat for several. The fixture must grade to the "
    "same outcome of every check as the original under them.",
)
@click.option(
    "--conventions",
    "convention_dirs",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Extra mapping file or directory, added to the bundled conventions/; repeat for several.",
)
@click.option(
    "--keep",
    multiple=True,
    metavar="KEY",
    help="Key whose text is kept, secret-shaped parts still replaced (fnmatch pattern): an "
    "attribute key, a path into structured content (body.message.content for a log "
    "event's body, gen_ai.output.messages.parts.content inside an attribute's JSON), or "
    "status.message; repeat for several.",
)
@click.option(
    "--no-default-keep",
    is_flag=True,
    help="Keep only the --keep keys, not the default name-like attribute keys (*.name, "
    "*.model, *.id, ...).",
)
@click.option(
    "--allow-verdict-change",
    is_flag=True,
    help="Write the fixture even when scrubbing changed a check's outcome (warned).",
)
@click.pass_context
def promote_command(
    ctx: click.Context,
    trace_file: str,
    trace_id: str,
    out_dir: Path,
    contract_paths: tuple[Path, ...],
    convention_dirs: tuple[Path, ...],
    keep: tuple[str, ...],
    no_default_keep: bool,
    allow_verdict_change: bool,
) -> None:
    """Promote one trace of TRACE_FILE into a test fixture with its content scrubbed.

    TRACE_FILE is what grade reads: an OTLP file, a directory (log-event files next to
    their span files are read with them) or a glob.

    Scrubbing follows the privacy rules of what otel-oracles emits: identifier-shaped values
    (tool, model, agent names), numbers and booleans stay; other text becomes [redacted]
    (JSON inside a string value by value, so its structure stays); text under kept keys
    stays with emails, API keys and tokens replaced. Trace and span ids and timings are
    kept. The scrubbed fixture is read back and graded: when a check's outcome differs from
    the original's, nothing is written and the changed checks are listed (keep the key the
    check reads with --keep). A note <trace id>.promote.md lists what was replaced where
    (counts, never content). Exit code: 0 written, 1 refused (verdicts differ), 2 usage
    error, trace not found or graded by no contract.

    \b
    Examples:
      otel-oracles promote export.jsonl --trace-id 4bf92f3577b34da6a3ce929d0e0e4736 \\
          --out tests/fixtures -c contracts/
      otel-oracles promote export.jsonl --trace-id 4bf9... --out fixtures -c contracts/ \\
          --keep gen_ai.output.messages
    """
    files = discover_contract_files(list(contract_paths))
    contracts = [load_contract(p) for p in files]
    if not contracts:
        raise click.UsageError("no contract files (.json/.yaml/.yml) found in --contracts")
    conventions = load_conventions(list(convention_dirs), ConventionCache.from_env())
    policy = ScrubPolicy(keep=keep, names=() if no_default_keep else DEFAULT_KEEP)
    result = promote(
        trace_file,
        trace_id,
        out_dir,
        contracts,
        conventions,
        policy,
        allow_verdict_change=allow_verdict_change,
    )
    changes = result.changes()
    for line in changes:
        click.echo(f"changed by scrubbing: {line}", err=True)
    if result.fixture is None:
        click.echo(
            f"error: not promoted: scrubbing changed {len(changes)} check outcome(s) of trace "
            f"{result.trace_id}; keep the keys those checks read (--keep KEY) or pass "
            "--allow-verdict-change",
            err=True,
        )
        ctx.exit(EXIT_FAILED)
        return
    if changes:
        click.echo(
            "warning: written although its verdicts differ (--allow-verdict-change)", err=True
        )
    verdicts = ", ".join(f"{v.contract} {v.verdict}" for v in result.original)
    click.echo(
        f"promoted {result.trace_id} to {result.fixture} ({verdicts}); "
        f"{result.note.values} value(s) redacted, {result.note.secrets} secret(s) replaced; "
        f"see {result.note_file}"
    )
    ctx.exit(EXIT_OK)
