"""``otel-oracles gate``: the CI gate over a set of AgentBench tasks, optionally scoped by a
manifest (see ``otel_oracles.model.manifest`` and docs/agentbench.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from otel_oracles.cli._agentbench import (
    Pairing,
    display_path,
    grade_pairings,
    load_tasks,
    load_trajectory,
    max_steps_option,
)
from otel_oracles.cli._baseline import BaselineCheck, baseline_options, report_regressions
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
from otel_oracles.errors import InputError
from otel_oracles.model.contract import Contract, discover_contract_files
from otel_oracles.model.manifest import Manifest, load_manifest
from otel_oracles.model.result import RunReport, Verdict


def _find_task(name: str, tasks: list[Path], manifest: Manifest) -> Path:
    """A manifest task name, looked up in each ``--tasks`` directory (or matched against
    ``--tasks`` files by name), else in the manifest's tasks directory."""
    for base in tasks:
        if base.is_dir() and (base / name).is_file():
            return base / name
        if base.is_file() and (base.name == name or base.as_posix().endswith("/" + name)):
            return base
    where = ", ".join(str(t) for t in tasks)
    raise InputError(f"task_files: {name!r} not found in {where}", str(manifest.path))


def _task_paths(tasks: tuple[Path, ...], manifest: Manifest | None) -> tuple[list[Path], list[str]]:
    """(task files, their names as the manifest spells them)."""
    if manifest is None:
        if not tasks:
            raise click.UsageError("--tasks is required without --manifest")
        files = discover_contract_files(list(tasks))
        return files, [f.name for f in files]
    bases = list(tasks) or [manifest.tasks_dir or manifest.path.parent]
    return [_find_task(n, bases, manifest) for n in manifest.task_files], manifest.task_files


def _pairings(
    trajectories: tuple[Path, ...],
    manifest: Manifest | None,
    contracts: list[Contract],
    names: list[str],
    max_steps: int,
) -> list[Pairing]:
    if trajectories:
        paths = list(trajectories)
    elif manifest is not None and manifest.trajectories:
        paths = [Path(display_path(p)) for p in manifest.trajectories]
    else:
        raise click.UsageError("--trajectory is required (or a manifest with 'trajectories')")
    by_name = dict(zip(names, contracts, strict=True))
    out = []
    for path in paths:
        entry = manifest.trajectories.get(path.resolve()) if manifest is not None else None
        selected = contracts
        if entry is not None and entry.tasks is not None:
            unknown = [n for n in entry.tasks if n not in by_name]
            if unknown:
                raise InputError(
                    f"trajectories.{path.name}.tasks: {unknown} not among the manifest's "
                    f"task_files ({', '.join(by_name)})",
                    str(manifest.path) if manifest is not None else None,
                )
            selected = [by_name[n] for n in entry.tasks]
        out.append(
            Pairing(load_trajectory(path, max_steps), selected, entry.expect if entry else None)
        )
    return out


def _expectations(report: RunReport, expected: list[tuple[Verdict, str]]) -> int:
    """Notes for every expectation and the exit code they imply: a verdict with an
    expectation counts as good when it matches; any other verdict must pass."""
    with_expectation = {id(v) for v, _ in expected}
    unmet = 0
    for verdict, expect in expected:
        got = "pass" if verdict.passed else "fail"
        where = f"{verdict.subject} on {verdict.contract_id}@{verdict.contract_version}"
        if got != expect:
            unmet += 1
            report.notes.append(f"UNEXPECTED: expected {expect}, got {got}: {where}")
    met = len(expected) - unmet
    report.notes.append(
        f"manifest expectations: {met} of {len(expected)} met (a verdict that matches its "
        "'expect' counts as good for the exit code)"
    )
    if report.input_errors:
        return 2
    others_failed = any(not v.passed for v in report.verdicts if id(v) not in with_expectation)
    return 1 if unmet or others_failed else 0


@click.command("gate")
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    metavar="DIR_OR_FILE",
    help="Task file or directory of task files; repeatable. With --manifest: where the "
    "manifest's task_files are looked up (default: the manifest's tasks_dir, else its "
    "directory).",
)
@click.option(
    "-t",
    "--trajectory",
    "trajectories",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="AgentBench trajectory JSON; repeatable (default: the manifest's trajectories).",
)
@click.option(
    "--manifest",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Gate manifest: which tasks (task_files / task_subset) and, optionally, which "
    "trajectory goes with which tasks and what verdict it must get.",
)
@max_steps_option
@allow_empty_option
@explain_option
@unsafe_commands_option
@baseline_options
@report_options
def gate_command(
    tasks: tuple[Path, ...],
    trajectories: tuple[Path, ...],
    manifest: Path | None,
    max_steps: int,
    allow_empty: bool,
    explain: str | None,
    unsafe_commands: bool,
    baseline: Path | None,
    max_tolerated_rise: int,
    max_missing_rise: int,
    as_json: bool,
    junit: Path | None,
    html: Path | None,
    verbose: bool,
) -> None:
    """Gate trajectories against a set of tasks; exit non-zero when any task fails.

    Without --manifest every trajectory is scored against every task found in --tasks, and
    the report says which tasks each was scored against. With --manifest only the manifest's
    tasks are used, and a trajectory listed in its 'trajectories' map is scored only against
    the tasks listed for it: a trajectory recorded for one task fails every task whose
    oracles look at files it never wrote, so gating it against unrelated tasks says nothing
    about the agent. Entries with 'expect' make a known-bad trajectory a regression check:
    its verdict must match. With --baseline, pairs are keyed by task id and trajectory file
    name, and a regression against that earlier report fails the gate too. Exit code: 0 all
    passed (or matched expectations), 1 otherwise, 2 usage or input error.

    \b
    Examples:
      otel-oracles gate --tasks examples/tasks --trajectory examples/trajectories/honest_fix.json
      otel-oracles gate --manifest examples/manifest.json
      otel-oracles gate --tasks examples/tasks -t a.json -t b.json --junit gate.xml
      otel-oracles gate --manifest examples/manifest.json --baseline main-gate.json
    """
    loaded = load_manifest(manifest) if manifest is not None else None
    regression = BaselineCheck.load(baseline, max_tolerated_rise, max_missing_rise)
    paths, names = _task_paths(tasks, loaded)
    if not paths:
        raise click.UsageError("no task files (.json/.yaml/.yml) found in --tasks")
    contracts = load_tasks(paths)
    pairings = _pairings(trajectories, loaded, contracts, names, max_steps)
    report, expected = grade_pairings(pairings, command_policy(unsafe_commands))
    if loaded is not None:
        report.notes.insert(0, f"manifest {loaded.path}: {len(contracts)} task(s)")
        report.notes.extend(f"manifest key ignored: {k}" for k in loaded.unknown_keys)
    code = _expectations(report, expected) if expected else report.exit_code()
    if not report.verdicts and not allow_empty:
        code = 2
    comparison = None
    if regression is not None:
        for verdict in report.verdicts:
            regression.add(verdict)
        code, comparison = regression.judge(report.notes, code)
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
        reason = "no (task, trajectory) pair was in scope: the manifest or --tasks selected none"
        source = str(manifest) if manifest is not None else "gate"
        nothing_graded(source, reason, allow_empty)
    report_regressions(comparison)
    sys.exit(code)
