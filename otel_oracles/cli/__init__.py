"""The ``otel-oracles`` command line. Commands live one per module in this package and only
wire stages together; ``main`` maps user errors to exit code 2 with one stderr line."""

from __future__ import annotations

import sys

import click

from otel_oracles.errors import OtelOraclesError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main() -> None:
    """Console-script entry point."""
    debug = "--debug" in sys.argv[1:]
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
        # One line, whatever a library put in the message.
        click.echo("error: " + " ".join(str(exc).split()), err=True)
        sys.exit(EXIT_USAGE)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code if isinstance(code, int) and not isinstance(code, bool) else EXIT_OK)


from otel_oracles.cli.run import run_command  # noqa: E402 - commands import this module's group

cli.add_command(run_command)
from otel_oracles.cli.gate import gate_command  # noqa: E402 - commands import this module's group

cli.add_command(gate_command)
from otel_oracles.cli.validate import validate_command  # noqa: E402 - see above

cli.add_command(validate_command)
from otel_oracles.cli.oracles_cmd import oracles_command  # noqa: E402 - see above

cli.add_command(oracles_command)
from otel_oracles.cli.schema_cmd import schema_command  # noqa: E402 - see above

cli.add_command(schema_command)
from otel_oracles.cli.explain import explain_command  # noqa: E402 - see above

cli.add_command(explain_command)
from otel_oracles.cli.serve import serve  # noqa: E402 - see above

cli.add_command(serve)
from otel_oracles.cli.grade import grade_command  # noqa: E402 - see above

cli.add_command(grade_command)
from otel_oracles.cli.inspect_cmd import inspect_command  # noqa: E402 - see above

cli.add_command(inspect_command)
from otel_oracles.cli.diff_cmd import diff_command  # noqa: E402 - see above

cli.add_command(diff_command)
from otel_oracles.cli.promote_cmd import promote_command  # noqa: E402 - see above

cli.add_command(promote_command)
from otel_oracles.cli.watch import watch_command  # noqa: E402 - see above

cli.add_command(watch_command)
