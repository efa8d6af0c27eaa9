"""docs/cli.md is generated from the commands; a stale copy misleads users."""

import subprocess
import sys

import click

from otel_oracles.cli import cli


def test_cli_reference_matches_the_commands(repo_root) -> None:
    proc = subprocess.run(
        [sys.executable, "tools/gen_cli_docs.py", "--check"],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_every_command_help_has_an_example() -> None:
    ctx = click.Context(cli, info_name="otel-oracles")
    missing = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        help_text = cmd.get_help(click.Context(cmd, info_name=name, parent=ctx))
        if (
            "otel-oracles " + name not in help_text.split("Examples:")[-1]
            or "Examples:" not in help_text
        ):
            missing.append(name)
    assert missing == [], (
        f"commands whose --help lacks an 'Examples:' block using the command: {missing}"
    )
