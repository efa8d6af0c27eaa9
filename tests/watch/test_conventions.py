"""coding-agents.yaml is validated at load: the bundled file loads, and a mistake in a copy
is one ConventionError naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.errors import ConventionError
from otel_oracles.watch._conventions import CONVENTIONS_FILE, coding_agent_conventions


def test_bundled_conventions_know_the_four_agents_and_their_shell_tools() -> None:
    conventions = coding_agent_conventions()
    assert sorted(conventions.agents) == ["claude-code", "codex", "gemini-cli", "qwen-code"]
    assert conventions.agent_for("codex_exec") is not None
    assert conventions.agent_for("my-service") is None
    tools = {name: a.tools for name, a in conventions.agents.items()}
    assert tools["claude-code"].kind_of("Bash") == "command"
    assert tools["gemini-cli"].kind_of("replace") == "file_edit"
    assert tools["qwen-code"].kind_of("edit") == "file_edit"
    assert tools["claude-code"].kind_of("mcp__github__create_issue") == "mcp"


def test_a_typo_names_the_key(tmp_path: Path) -> None:
    broken = tmp_path / "coding-agents.yaml"
    text = CONVENTIONS_FILE.read_text().replace(
        "entry: tool\n", "entry: tool\n        tool_nam: x\n", 1
    )
    broken.write_text(text)
    with pytest.raises(ConventionError) as err:
        coding_agent_conventions(broken)
    assert "agents.claude-code.events.tool_result.tool_nam" in str(err.value)
    assert str(broken) in str(err.value)
