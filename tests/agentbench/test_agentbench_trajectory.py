"""DESIGN.md section 5, trajectory rules: write/shell tool aliases, path/content/command
fallbacks and their first-match order, path normalization, and the no_network scan."""

from __future__ import annotations

import pytest

from otel_oracles.errors import InputError
from otel_oracles.model.step import (
    DEFAULT_NETWORK_PATTERNS,
    SHELL_TOOLS,
    WRITE_TOOLS,
    StepKind,
    Trajectory,
)


def traj(*steps: dict) -> Trajectory:
    return Trajectory.from_agentbench({"steps": list(steps)}, source="t.json")


@pytest.mark.parametrize("tool", ["write_file", "edit_file", "str_replace", "Write", "StrReplace"])
def test_each_write_tool_alias_is_a_file_edit(tool: str) -> None:
    t = traj({"tool": tool, "args": {"path": "a.py", "content": "x"}})
    assert t.steps[0].kind == StepKind.FILE_EDIT, f"{tool} must be a write tool"
    assert t.file_edits() == [(0, "a.py", "x")]


def test_write_tool_set_is_exactly_the_documented_one() -> None:
    assert {"write_file", "edit_file", "str_replace", "Write", "StrReplace"} == WRITE_TOOLS


@pytest.mark.parametrize("tool", ["run_command", "shell", "bash", "Bash", "execute"])
def test_each_shell_tool_alias_is_a_command(tool: str) -> None:
    t = traj({"tool": tool, "args": {"command": "ls"}})
    assert t.steps[0].kind == StepKind.COMMAND, f"{tool} must be a shell tool"
    assert t.commands() == ["ls"]


def test_shell_tool_set_is_exactly_the_documented_one() -> None:
    assert {"run_command", "shell", "bash", "Bash", "execute"} == SHELL_TOOLS


@pytest.mark.parametrize("tool", ["WRITE_FILE", "write", "Edit", "BASH", "sh", "terminal"])
def test_tool_names_are_case_sensitive_and_not_guessed(tool: str) -> None:
    t = traj({"tool": tool, "args": {"path": "a.py", "content": "x", "command": "ls"}})
    assert t.steps[0].kind == StepKind.TOOL_CALL
    assert t.file_edits() == [] and t.commands() == []


def test_explicit_type_file_edit_without_a_tool() -> None:
    t = traj({"type": "file_edit", "path": "b.txt", "content": "y"})
    assert t.file_edits() == [(0, "b.txt", "y")]


def test_explicit_type_command_without_a_tool() -> None:
    t = traj({"type": "command", "command": "make test"})
    assert t.commands() == ["make test"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "p.py", "file_path": "f.py", "target_file": "t.py"}, "p.py"),
        ({"file_path": "f.py", "target_file": "t.py"}, "f.py"),
        ({"target_file": "t.py"}, "t.py"),
        ({"path": None, "file_path": "f.py"}, "f.py"),
    ],
)
def test_path_fallbacks_in_first_match_order(args: dict, expected: str) -> None:
    t = traj({"tool": "write_file", "args": {**args, "content": "c"}})
    assert t.file_edits()[0][1] == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"content": "from content", "new_string": "from new_string"}, "from content"),
        ({"new_string": "from new_string"}, "from new_string"),
    ],
)
def test_content_fallbacks_in_first_match_order(args: dict, expected: str) -> None:
    t = traj({"tool": "str_replace", "args": {"path": "a", **args}})
    assert t.file_edits()[0][2] == expected


def test_command_fallbacks_in_first_match_order() -> None:
    assert traj({"tool": "bash", "args": {"command": "a", "cmd": "b"}}).commands() == ["a"]
    assert traj({"tool": "bash", "args": {"cmd": "b"}}).commands() == ["b"]


def test_arguments_as_a_json_string_are_parsed() -> None:
    t = traj({"tool": "write_file", "arguments": '{"path": "s.py", "content": "z"}'})
    assert t.file_edits() == [(0, "s.py", "z")]


def test_fields_at_the_top_level_of_the_step_are_used() -> None:
    t = traj({"tool": "Write", "file_path": "top.py", "content": "q"})
    assert t.file_edits() == [(0, "top.py", "q")]


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("src\\pkg\\mod.py", "src/pkg/mod.py"),
        ("./a.py", "a.py"),
        ("src/./b.py", "src/b.py"),
        ("src//c.py", "src/c.py"),
        ("src/sub/../d.py", "src/d.py"),
    ],
)
def test_paths_are_normalized_to_forward_slashes(raw: str, normalized: str) -> None:
    t = traj({"tool": "write_file", "args": {"path": raw, "content": ""}})
    assert t.file_edits()[0][1] == normalized
    assert t.touched_file(normalized)
    assert t.touched_file(raw)


def test_escaping_paths_stay_visible_for_replay_to_refuse() -> None:
    t = traj({"tool": "write_file", "args": {"path": "..\\up.py", "content": ""}})
    assert t.file_edits()[0][1] == "../up.py"


def test_file_edits_keep_step_order_and_indexes() -> None:
    t = traj(
        {"tool": "read_file", "args": {"path": "x"}},
        {"tool": "write_file", "args": {"path": "b", "content": "1"}},
        {"tool": "bash", "args": {"command": "ls"}},
        {"tool": "edit_file", "args": {"path": "a", "content": "2"}},
    )
    assert t.file_edits() == [(1, "b", "1"), (3, "a", "2")]
    assert not t.touched_file("x"), "reading a file does not touch it"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a JSON object"),
        ({"step": []}, "steps: expected an array"),
        ({"steps": [1]}, "steps[0]: expected an object"),
        ({"steps": [{"tool": 3}]}, "steps[0].tool: expected a string"),
    ],
)
def test_invalid_trajectories_are_input_errors(data: object, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Trajectory.from_agentbench(data, source="t.json")


@pytest.mark.parametrize("pattern", DEFAULT_NETWORK_PATTERNS)
def test_each_network_pattern_is_found_case_insensitively(pattern: str) -> None:
    t = traj(
        {"tool": "bash", "args": {"command": "echo ok"}},
        {"tool": "bash", "args": {"command": f"do {pattern.upper()} thing"}},
    )
    found = t.find_network_violations()
    assert any(v.step_index == 1 and v.pattern == pattern for v in found), (
        f"{pattern!r} must be reported for step 1, got {found}"
    )
    assert all(v.step_index == 1 for v in found), "the clean step must not be reported"


def test_network_patterns_are_exactly_the_documented_list() -> None:
    assert set(DEFAULT_NETWORK_PATTERNS) == {
        "curl", "wget", "fetch(", "http://", "https://", "requests.", "urllib", "httpx",
        "socket.", "webbrowser", "pip install", "npm install", "npm ci", "pnpm install",
        "pnpm add", "yarn install", "yarn add", "bun install", "bun add", "cargo add",
        "cargo install", "go get", "go install",
    }  # fmt: skip


def test_network_scan_reads_the_whole_raw_step_not_only_commands() -> None:
    t = traj({"tool": "read_file", "args": {"path": "x"}, "result": "see https://example"})
    assert [v.pattern for v in t.find_network_violations()] == ["https://"]


def test_clean_trajectory_has_no_network_violations() -> None:
    t = traj({"tool": "bash", "args": {"command": "python -m pytest -q"}, "result": "3 passed"})
    assert t.find_network_violations() == []


@pytest.mark.parametrize("declared", ["tool_call", "tool", "action"])
def test_another_declared_type_does_not_hide_a_write_tool_call(declared: str) -> None:
    t = traj({"type": declared, "tool": "write_file", "args": {"path": "a", "content": "x"}})
    assert t.file_edits() == [(0, "a", "x")], "a write tool call is an edit whatever its type"


def test_declared_command_type_wins_over_a_write_tool_name() -> None:
    t = traj({"type": "command", "tool": "write_file", "args": {"command": "ls", "path": "a"}})
    assert t.commands() == ["ls"] and t.file_edits() == []
