"""Generate docs/cli.md from the click commands, so the CLI reference never drifts.

Run ``python tools/gen_cli_docs.py`` after changing a command; ``tests/test_cli_docs.py``
fails when the committed file differs from what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from otel_oracles.cli import cli

HEADER = """# CLI reference

Generated from the commands' own `--help` by `python tools/gen_cli_docs.py`; do not edit by hand.

Exit codes for every command: `0` everything passed, `1` a verdict failed, `2` a usage or
input error (the message is one line on stderr, `error: <source>: <message>`; `--debug`
adds the traceback).
"""


def render() -> str:
    parts = [HEADER]
    root_ctx = click.Context(
        cli, info_name="otel-oracles", terminal_width=100, max_content_width=100
    )
    parts.append("## otel-oracles\n\n```text\n" + cli.get_help(root_ctx) + "\n```\n")
    for name in sorted(cli.list_commands(root_ctx)):
        cmd = cli.get_command(root_ctx, name)
        if cmd is None or cmd.hidden:
            continue
        ctx = click.Context(
            cmd, info_name=name, parent=root_ctx, terminal_width=100, max_content_width=100
        )
        parts.append(f"## otel-oracles {name}\n\n```text\n{cmd.get_help(ctx)}\n```\n")
    return "\n".join(parts)


def main() -> int:
    target = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
    text = render()
    if "--check" in sys.argv[1:]:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is out of date: run python tools/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
