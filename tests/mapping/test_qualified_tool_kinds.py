"""A tool name qualified by its plugin, toolset or MCP server (Semantic Kernel's
``SupportTools-write_file``) edits files or runs commands exactly like its bare name, so
coding-agent checks (file edits, commands, no network) see those calls."""

from __future__ import annotations

import json

import pytest

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Step, StepKind

TRACE = "0" * 31 + "7"


def _tool_step(name: str, arguments: dict[str, str]) -> Step:
    agent = SpanRecord(TRACE, "a" * 16, "", "invoke_agent coder", start_ns=0, end_ns=10,
                       attributes={"gen_ai.operation.name": "invoke_agent"})  # fmt: skip
    tool = SpanRecord(TRACE, "b" * 16, "a" * 16, f"execute_tool {name}", start_ns=1, end_ns=5,
                      attributes={"gen_ai.operation.name": "execute_tool",
                                  "gen_ai.tool.name": name,
                                  "gen_ai.tool.call.arguments": json.dumps(arguments)})  # fmt: skip
    traj = map_trace(build_trace(TRACE, [agent, tool]), load_conventions())
    (step,) = [s for s in traj.steps if s.tool == name]
    return step


@pytest.mark.parametrize("name", ["SupportTools-write_file", "mcp__fs__write_file", "fs.Write"])
def test_qualified_write_tool_is_a_file_edit(name: str) -> None:
    step = _tool_step(name, {"path": "./src/calc.py", "content": "x = 1\n"})
    assert step.kind == StepKind.FILE_EDIT
    assert (step.path, step.content) == ("src/calc.py", "x = 1\n")
    assert step.tool == name, "the recorded name is kept as recorded"


@pytest.mark.parametrize("name", ["SupportTools-run_command", "mcp__shell__bash"])
def test_qualified_shell_tool_is_a_command(name: str) -> None:
    step = _tool_step(name, {"command": "curl https://example.com"})
    assert step.kind == StepKind.COMMAND
    assert step.command == "curl https://example.com"


@pytest.mark.parametrize("name", ["SupportTools-search_docs", "write_file_summary"])
def test_other_tools_stay_tool_calls(name: str) -> None:
    step = _tool_step(name, {"path": "a.py", "command": "ls"})
    assert step.kind == StepKind.TOOL_CALL
    assert step.path is None and step.command is None
