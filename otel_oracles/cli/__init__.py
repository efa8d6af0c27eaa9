"""The ``otel-oracles`` command line. Commands live one per module in this package and only
wire stages together; ``main`` maps user errors to exit code 2 with one stderr line.

The group imports a command's module only when that command runs (or its own ``--help`` is
asked for): ``grade`` must not pay at every start for ``serve``'s HTTP and gRPC stack,
``watch``'s terminal view or ``run``'s AgentBench loader. The group's own ``--help`` lists
every command from ``COMMANDS`` below, without importing any of them; a test checks that each
entry's summary is the one its command's help starts with.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from otel_oracles.errors import OtelOraclesError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


# A plain class, not a ``NamedTuple``: ``collections.namedtuple`` compiles the source of its
# ``__new__`` at every start, and the entries are only read (by name). Not a ``_frozen``
# record either: that module imports ``dataclasses``, which importing the group does not.
class LazyCommand:
    """Where a command lives and what the group's ``--help`` says of it."""

    __slots__ = ("attr", "module", "summary")
    module: str
    attr: str
    summary: str
    """The first paragraph of the command's help (shortened by click as usual)."""

    def __init__(self, module: str, attr: str, summary: str) -> None:
        self.module = module
        self.attr = attr
        self.summary = summary


COMMANDS: dict[str, LazyCommand] = {
    "diff": LazyCommand(
        "otel_oracles.cli.diff_cmd",
        "diff_command",
        "Compare two --json reports of grade, gate or run: BASELINE (e.g. from the main "
        "branch) and CANDIDATE (the change under review).",
    ),
    "explain": LazyCommand(
        "otel_oracles.cli.explain",
        "explain_command",
        "Print CONTRACT in plain words: what must be captured, what is forbidden, what is "
        "tolerated and why.",
    ),
    "gate": LazyCommand(
        "otel_oracles.cli.gate",
        "gate_command",
        "Gate trajectories against a set of tasks; exit non-zero when any task fails.",
    ),
    "grade": LazyCommand(
        "otel_oracles.cli.grade",
        "grade_command",
        "Grade the traces in PATHS against the contracts that select them.",
    ),
    "inspect": LazyCommand(
        "otel_oracles.cli.inspect_cmd",
        "inspect_command",
        "Show the trajectory each trace in PATHS maps to, as the graders see it.",
    ),
    "oracles": LazyCommand(
        "otel_oracles.cli.oracles_cmd",
        "oracles_command",
        "List the oracle types you can use in contracts, with params and docs.",
    ),
    "promote": LazyCommand(
        "otel_oracles.cli.promote_cmd",
        "promote_command",
        "Promote one trace of TRACE_FILE into a test fixture with its content scrubbed.",
    ),
    "run": LazyCommand(
        "otel_oracles.cli.run",
        "run_command",
        "Grade each TASK (task file, or directory of them) against each trajectory.",
    ),
    "schema": LazyCommand(
        "otel_oracles.cli.schema_cmd",
        "schema_command",
        "Print the JSON Schema of the contract file format.",
    ),
    "serve": LazyCommand(
        "otel_oracles.cli.serve",
        "serve",
        "Receive OTLP traces and logs, grade each agent trace when it completes, and emit "
        "the verdicts as OpenTelemetry spans, events and metrics.",
    ),
    "validate": LazyCommand(
        "otel_oracles.cli.validate",
        "validate_command",
        "Validate contracts, AgentBench tasks, trajectories, gate manifests and mapping files.",
    ),
    "watch": LazyCommand(
        "otel_oracles.cli.watch",
        "watch_command",
        "Watch Claude Code, Codex CLI, Gemini CLI and Qwen Code sessions through their own "
        "telemetry.",
    ),
}
"""Every command of the group, by name."""


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use (see the module docstring)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            entry = COMMANDS[cmd_name]
            if StartUpGc.paused:  # ``main`` is starting this command: no model is built yet
                pydantic_plugins_off()
            command = getattr(importlib.import_module(entry.module), entry.attr)
            if not isinstance(command, click.Command):
                raise TypeError(f"{entry.module}.{entry.attr} is not a click command")
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands:`` section from ``COMMANDS``' summaries, imports nothing."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                # A stand-in with the same first paragraph is shortened exactly as the
                # command itself would be.
                stand_in = click.Command(name, help=COMMANDS[name].summary)
                rows.append((name, stand_in.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


PYDANTIC_DISABLE_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
"""pydantic's documented switch: ``__all__`` turns its plug-ins off (a list of names turns off
those)."""


def pydantic_plugins_off() -> None:
    """Set ``PYDANTIC_DISABLE_PLUGINS=__all__`` when no installed distribution declares a
    pydantic plug-in and the variable is unset: then there is nothing to turn off, and pydantic
    skips the scan of every distribution's metadata it makes at its first model (~12 M
    instructions, more than a percent of a one-trace ``grade``; docs/performance-history.md,
    "Start-up: pydantic's plug-in scan answered from the kept entry points").

    Whether one is declared is read from the plug-in groups' entries the registries read anyway
    (``_entry_points``: kept between runs, keyed by the path's distributions), so a plug-in
    installed later is seen by the next start and pydantic loads it as before. The variable
    stays in this process's environment: children started from it (``--workers``) see the same
    distributions, and a sandboxed command gets the sandbox's minimal environment, not this
    one. Only ``main`` calls it: a program that embeds the group keeps pydantic's behaviour."""
    if PYDANTIC_DISABLE_PLUGINS in os.environ:
        return
    from otel_oracles._entry_points import PYDANTIC_GROUP, entry_point_group

    if not entry_point_group(PYDANTIC_GROUP):
        os.environ[PYDANTIC_DISABLE_PLUGINS] = "__all__"


class StartUpGc:
    """The cyclic garbage collector, paused while the command starts.

    Start-up allocates almost only what lives as long as the process: modules, classes,
    pydantic schemas. The collector, run every 700 allocations, finds nothing to free in
    them and rescans them all at every full collection: a sixth of ``grade``'s start-up
    (docs/performance-history.md, "Start-up"). So ``main`` pauses it until the command's module is
    imported (the group's callback), then freezes what exists (``gc.freeze``: those objects
    are never scanned again; reference counting still frees them) and resumes it, with a
    youngest generation of ``GEN0_THRESHOLD`` allocations instead of 700: grading allocates
    a few objects per attribute, message and step, nearly all freed by reference counting,
    and at 700 the collector ran so often over the trace being graded that it cost 14% of
    grading 2,000 traces and 27% of grading two 20,000-span traces (CPU, medians of 3
    interleaved runs, peak RSS unchanged; docs/performance-history.md, "Start-up"). Only ``main``
    does this: a program that embeds the group keeps its own collector settings.

    Why a million: the threshold counts tracked objects allocated and not yet freed, and a
    trace's spans, drafts and steps stay alive until it is graded, ~15 tracked objects a
    span (~300,000 once a 20,000-span trace is mapped). A young collection scans every one
    of them and frees nothing (grading makes no reference cycles: no collection of a grade
    of the three ``bench/trace_size.py`` data sets found any), so at 50,000 a large trace
    was scanned over and over while it was mapped (12 collections, ~7% of the CPU of
    grading two 20,000-span traces; one or two for 2,000 traces of 20 spans): a cost per
    span that only large traces paid. At a million none of the three runs one; a plug-in
    that makes cycles has them freed after at most a million allocations.
    """

    GEN0_THRESHOLD = 1_000_000
    THRESHOLDS = (GEN0_THRESHOLD, 20, 100)
    """Allocations before a young collection; young collections before a middle one; middle
    ones before a full one (CPython's defaults: 700, 10, 10)."""

    paused = False
    owned = False
    """Whether ``main`` started the command (so it owns the process's collector)."""

    @classmethod
    def pause(cls) -> None:
        if gc.isenabled():
            gc.disable()
            cls.paused = True

    @classmethod
    def resume(cls) -> None:
        if cls.paused:
            cls.paused = False
            cls.owned = True
            cls.settle()
            gc.enable()

    @classmethod
    def loaded(cls) -> None:
        """A command has loaded what lives as long as it (contracts, the oracle modules they
        name, imported on first use, conventions): frozen too, when ``main`` started it, so
        no collection scans them again (the one at exit did: ~3 M instructions of a
        one-trace ``grade`` for the oracle modules alone)."""
        if cls.owned:
            gc.freeze()

    @classmethod
    def settle(cls) -> None:
        """Freeze what start-up allocated and set the grading thresholds (also for a process
        that does not start through ``main``: ``serve``'s grading workers)."""
        gc.freeze()
        gc.set_threshold(*cls.THRESHOLDS)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="otel-oracles")
@click.option("--debug", is_flag=True, help="Show tracebacks for user errors too.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Grade AI agent traces with deterministic oracles and failure budgets.

    \b
    Examples:
      otel-oracles grade traces/ --contracts examples/contracts
      otel-oracles gate --tasks examples/tasks --trajectory examples/trajectories/honest_fix.json
    """
    StartUpGc.resume()  # the command is resolved and imported: start-up is over
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main() -> None:
    """Console-script entry point."""
    debug = "--debug" in sys.argv[1:]
    StartUpGc.pause()
    try:
        # Without standalone mode click returns (not raises) a command's ``ctx.exit(code)``.
        code = cli.main(standalone_mode=False, prog_name="otel-oracles")
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_USAGE)
    except click.UsageError as exc:
        # One error convention for every command: ``error: <source>: <message>`` on stderr.
        command = exc.ctx.command_path if exc.ctx is not None else "otel-oracles"
        click.echo(f"error: {command}: {exc.format_message()} (see '{command} --help')", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except OtelOraclesError as exc:
        if debug:
            raise
        from otel_oracles.report import terminal_safe

        # One line, whatever a library (or a trace it quotes) put in the message.
        click.echo("error: " + terminal_safe(" ".join(str(exc).split())), err=True)
        sys.exit(EXIT_USAGE)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        StartUpGc.resume()  # when no command ran (a usage error, --help)
    sys.exit(code if isinstance(code, int) and not isinstance(code, bool) else EXIT_OK)
