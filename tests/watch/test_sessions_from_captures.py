"""Claude Code, Codex CLI and Gemini CLI telemetry becomes sessions of steps in the shared
vocabulary (coding-agents.yaml), read from the real captures: one session per session id,
tool calls as AgentBench steps with their arguments and permission decisions, prompts and
model calls as session events, and the setting to turn on where details were not exported."""

from __future__ import annotations

import pytest

from otel_oracles.model.step import StepKind, Trajectory
from tests.watch.captures import CAPTURES, WITHOUT_DETAILS, capture, only_session, watch_files

SHELL = {"claude-code": "Bash", "codex": "exec_command", "gemini-cli": "run_shell_command"}


@pytest.mark.parametrize("agent", sorted(CAPTURES))
def test_clean_fix_session_maps_to_the_scripted_steps(agent: str) -> None:
    session = only_session(watch_files(capture(agent, "clean_fix")))
    trajectory = Trajectory.from_agentbench(session.trajectory_json())
    kinds = [s.kind for s in trajectory.steps]
    if agent == "codex":  # reads and edits go through its shell tool
        assert kinds == [StepKind.COMMAND] * 3
        assert trajectory.commands()[1] == "sed -i 's/a - b/a + b/' calc.py"
    else:
        assert kinds == [StepKind.TOOL_CALL, StepKind.FILE_EDIT, StepKind.COMMAND]
        ((_, path, content),) = trajectory.file_edits()
        assert path.endswith("/ws/calc.py") and content == "a + b"
    assert trajectory.steps[-1].tool == SHELL[agent]
    assert "import calc" in trajectory.commands()[-1]


@pytest.mark.parametrize("agent", sorted(CAPTURES))
def test_session_carries_prompt_model_calls_decisions_and_version(agent: str) -> None:
    session = only_session(watch_files(capture(agent, "clean_fix")))
    prompts = [e for e in session.events if e["kind"] == "prompt"]
    assert [p["text"] for p in prompts][:1] == [
        "calc.add is wrong; fix it so tests/test_calc.py passes. Do not change the tests."
    ]
    assert any(e["kind"] == "model" and e["model"] for e in session.events)
    assert all(step.get("decision") in ("accept", "approved") for step in session.steps)
    assert all(step.get("status") == "ok" for step in session.steps)
    assert (session.version is None) == (agent == "gemini-cli"), session.version


def test_codex_exports_the_working_directory_and_claude_code_does_not() -> None:
    codex = only_session(watch_files(capture("codex", "clean_fix")))
    assert codex.cwd is not None and codex.cwd.endswith("/ws")
    claude = only_session(watch_files(capture("claude-code", "clean_fix")))
    assert claude.cwd is None


@pytest.mark.parametrize("agent", sorted(WITHOUT_DETAILS))
def test_details_off_leaves_arguments_missing_and_names_the_setting(agent: str) -> None:
    session = only_session(watch_files(capture(agent, "clean_fix", details=False)))
    assert len(session.steps) == 3
    assert all("args" not in s for s in session.steps)
    assert all(WITHOUT_DETAILS[agent] in s["missing"] for s in session.steps)
    prompt = next(e for e in session.events if e["kind"] == "prompt")
    assert "text" not in prompt and "missing" in prompt


def test_codex_redacts_the_prompt_but_keeps_tool_arguments_with_details_off() -> None:
    session = only_session(watch_files(capture("codex", "clean_fix", details=False)))
    assert all(isinstance(s.get("args"), dict) for s in session.steps)
    prompt = next(e for e in session.events if e["kind"] == "prompt")
    assert "log_user_prompt" in prompt["missing"]


def test_sessions_of_one_agent_stay_apart_by_session_id() -> None:
    watcher = watch_files(capture("claude-code", "curl"), capture("claude-code", "test_edit"))
    sessions = watcher.sessions()
    assert len(sessions) == 2
    assert [len(s.steps) for s in sessions] == [3, 3]
    assert len({s.session_id for s in sessions}) == 2


def test_a_rejected_codex_command_is_a_failed_step() -> None:
    session = only_session(watch_files(capture("codex", "rm_outside")))
    first = session.steps[0]
    assert first["args"]["cmd"].startswith("rm -rf ") and first["status"] == "error"
