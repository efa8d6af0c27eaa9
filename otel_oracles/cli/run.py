"""``otel-oracles run``: grade AgentBench tasks against trajectories, every task x every
trajectory."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from otel_oracles.cli._agentbench import (
    Pairing,
    grade_pairings,
    load_tasks,
    load_trajectory,
    max_steps_option,
)
from otel_oracles.cli._output import (
    allow_empty_option,
    emit_report,
    nothing_graded,
    report_options,
)
from otel_oracles.cli._trust import (
    command_policy,
    explain_option,
    resolve_explain,
    unsafe_commands_option,
)
from otel_oracles.model.contract import discover_contract_files


@click.command("run")
@click.argument("tasks", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-t",
    "--trajectory",
    "trajectories",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='AgentBench trajectory JSON ({"steps": [...]}); repeat for several.',
)
@max_steps_option
@allow_empty_option
@explain_option
@unsafe_commands_option
@report_options
def run_command(
    tasks: tuple[Path, ...],
    trajectories: tuple[Path, ...],
    max_steps: int,
    allow_empty: bool,
    explain: str | None,
    unsafe_commands: bool,
    as_json: bool,
    junit: Path | None,
    html: Path | None,
    verbose: bool,
) -> None:
    """Grade each TASK (task file, or directory of them) against each trajectory.

    Every task's workspace is replayed with the trajectory's file edits in a fresh temporary
    directory, then every oracle of the task runs. Exit code: 0 all passed, 1 any task
    failed, 2 usage or input error.

    \b
    Examples:
      otel-oracles run examples/tasks/calculator_fix.json \\
          --trajectory examples/trajectories/honest_fix.json
      otel-oracles run examples/tasks -t examples/trajectories/pip_install.json --junit out.xml
    """
    contracts = load_tasks(discover_contract_files(list(tasks)))
    if not contracts:
        raise click.UsageError("no task files (.json/.yaml/.yml) found in the given paths")
    pairings = [Pairing(load_trajectory(t, max_steps), contracts) for t in trajectories]
    report, _ = grade_pairings(pairings, command_policy(unsafe_commands))
    code = report.exit_code() if report.verdicts or allow_empty else 2
    emit_report(
        report,
        as_json=as_json,
        junit=junit,
        html=html,
        verbose=verbose,
        exit_code=code,
        explain=resolve_explain(explain),
    )
    if not report.verdicts:
        reason = "no task was graded against any trajectory"
        nothing_graded(", ".join(str(t) for t in trajectories), reason, allow_empty)
    sys.exit(code)
