"""Writes a trace can hide from replay: ``file_not_modified``, ``assertion_exists`` and
``test_must_pass`` on trace-derived trajectories
(otel_oracles/grade/oracles/agentbench/_workspace.py).

Replay applies recorded file edits only. A call that is not one (an edit or patch tool no
convention declares as a file edit, a shell command such as ``sed -i pytest.ini``) may have
changed a file unseen, so the workspace checks report missing evidence naming it instead of
judging a workspace the run may never have had. AgentBench trajectories keep DESIGN section 5
exactly: there only file edits change files.

Found on Qwen Code 0.24 captures (tests/testdata/traces/qwen-code-0.24), whose ``edit`` tool
no convention declares a file edit: a contract protecting calc.py passed "never touched" on
runs that rewrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.grade.oracles.agentbench import steps_naming, steps_writing
from otel_oracles.grade.oracles.base import GradeContext
from otel_oracles.model.result import OracleResult, Outcome
from otel_oracles.model.step import StepKind, Trajectory
from tests.oracles.test_contracts_on_real_traces import TRACES, grade_files
from tests.oracles.trace_builders import tool, traj

MISSING = Outcome.MISSING_EVIDENCE
INI = "[pytest]\ntestpaths = tests\n"
CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
WORKSPACE = {"calc.py": CALC, "pytest.ini": INI}


def contract(*invariants: dict[str, Any]) -> Any:
    return parse_contract(
        {"id": "c", "workspace": WORKSPACE, "invariants": list(invariants)}, "<test>"
    )


def only(spec: dict[str, Any], trajectory: Trajectory) -> OracleResult:
    (result,) = grade(contract(spec), trajectory).results
    return result


def write(path: str, content: str) -> dict[str, Any]:
    return tool(
        "write_file",
        {"path": path, "content": content},
        kind=StepKind.FILE_EDIT,
        path=path,
        content=content,
    )


def shell(command: str) -> dict[str, Any]:
    return tool("run_command", {"command": command}, kind=StepKind.COMMAND, command=command)


UNTOUCHED = {"type": "file_not_modified", "path": "pytest.ini"}


@pytest.mark.parametrize(
    "step",
    [
        shell("sed -i 's/tests/src/' pytest.ini"),
        shell("echo '[pytest]' > pytest.ini"),
        shell("rm ./pytest.ini"),
        shell("rm -f /tmp/ws/pytest.ini"),
        shell("sed -i 's/a/b/' *.ini"),
        tool("apply_patch", {"input": "*** Update File: pytest.ini\n@@\n-testpaths = tests"}),
        tool("str_replace_editor", {"command": "str_replace", "path": "/ws/pytest.ini"}),
        tool("edit", {"filePath": "C:\\ws\\pytest.ini", "oldString": "a", "newString": "b"}),
        tool("shell", arguments_raw="{'cmd': ['bash', '-lc', 'truncate -s0 pytest.ini']}"),
    ],
    ids=["sed-i", "redirect", "rm", "rm-abs", "glob", "patch", "editor", "win", "repr"],
)
def test_a_call_that_names_the_file_is_missing_evidence_not_a_pass(step: dict[str, Any]) -> None:
    result = only(UNTOUCHED, traj(write("calc.py", FIXED), step))
    assert result.outcome == MISSING, result.message
    assert "step 1 (" in result.message and "span s1" in result.message
    assert list(result.span_ids) == ["s1"]


@pytest.mark.parametrize(
    "step",
    [
        shell("python -m pytest -q tests/test_calc.py"),
        shell("cat pytest.ini.bak setup.cfg"),
        tool("read_file", {"path": "mypytest.ini"}),
        tool("search", {"query": "how to configure pytest"}),
    ],
)
def test_a_call_that_names_another_file_leaves_the_pass(step: dict[str, Any]) -> None:
    result = only(UNTOUCHED, traj(write("calc.py", FIXED), step))
    assert result.outcome == Outcome.PASS, result.message
    assert result.message == "pytest.ini was never touched"


def test_a_call_whose_inputs_were_not_captured_may_have_written_it() -> None:
    result = only(UNTOUCHED, traj(write("calc.py", FIXED), tool("edit")))
    assert result.outcome == MISSING
    assert "tool inputs (arguments) not captured" in result.message


def test_only_calls_after_the_last_recorded_write_count() -> None:
    """A whole-file write decides the bytes whatever came before it; a recorded write that
    changed them fails whatever comes after (a recorded modification is the violation)."""
    before = traj(shell("sed -i s/a/b/ pytest.ini"), write("pytest.ini", INI))
    result = only(UNTOUCHED, before)
    assert result.outcome == Outcome.PASS, result.message
    assert "bytes are unchanged" in result.message
    after = traj(write("pytest.ini", INI), shell("sed -i s/a/b/ pytest.ini"))
    assert only(UNTOUCHED, after).outcome == MISSING
    changed = traj(write("pytest.ini", "[pytest]\n"), shell("cat pytest.ini"))
    assert only(UNTOUCHED, changed).outcome == Outcome.INVARIANT_FAILURE


def test_a_final_answer_naming_the_file_is_not_an_action() -> None:
    answer = tool("final_answer", {"answer": "I left pytest.ini alone"})
    result = only(UNTOUCHED, traj(answer, final_answer_tools=("final_answer",)))
    assert result.outcome == Outcome.PASS, result.message


def test_agentbench_trajectories_keep_design_section_5() -> None:
    """On an AgentBench trajectory a command changes nothing: never touched is a pass."""
    trajectory = Trajectory.from_agentbench(
        {"steps": [{"tool": "run_command", "args": {"command": "sed -i s/a/b/ pytest.ini"}}]}
    )
    assert only(UNTOUCHED, trajectory).message == "pytest.ini was never touched"
    asserts = {"type": "assertion_exists", "path": "calc.py", "pattern": "a - b"}
    rewritten = Trajectory.from_agentbench(
        {"steps": [{"tool": "bash", "args": {"command": "echo x > calc.py"}}]}
    )
    assert only(asserts, rewritten).outcome == Outcome.PASS


ASSERTS = {"type": "assertion_exists", "path": "tests/test_calc.py", "pattern": r"^\s*assert add\("}


def test_assertion_exists_cannot_judge_a_file_a_command_rewrote() -> None:
    written = write("tests/test_calc.py", TEST)
    ran = traj(written, shell("python -m pytest -q tests/test_calc.py"))
    assert only(ASSERTS, ran).outcome == Outcome.PASS  # running the tests names them
    removed = traj(written, shell("sed -i '/assert/d' tests/test_calc.py"))
    result = only(ASSERTS, removed)
    assert result.outcome == MISSING, result.message
    assert "step 1 (run_command, span s1)" in result.message
    created = traj(shell("cat > tests/test_calc.py <<'EOF'\nassert add(2, 3) == 5\nEOF"))
    assert only(ASSERTS, created).outcome == MISSING  # was a "does not exist" failure
    editor = traj(written, tool("str_replace_editor", {"path": "tests/test_calc.py"}))
    assert only(ASSERTS, editor).outcome == MISSING


TESTS_PASS = {"type": "test_must_pass", "command": "python -m pytest -q tests/test_calc.py"}


def test_test_must_pass_does_not_run_over_a_workspace_a_command_changed() -> None:
    fixed = (write("calc.py", FIXED), write("tests/test_calc.py", TEST))
    ran = traj(*fixed, shell("python -m pytest -q tests/test_calc.py"))
    assert only(TESTS_PASS, ran).outcome == Outcome.PASS
    broken = traj(*fixed, shell("sed -i 's/a + b/a - b/' calc.py"))
    result = only(TESTS_PASS, broken)
    assert result.outcome == MISSING, result.message
    assert "step 2 (run_command, span s2)" in result.message
    conftest = traj(*fixed, shell("echo 'collect_ignore = [\"tests\"]' > conftest.py"))
    assert only(TESTS_PASS, conftest).outcome == MISSING
    outside = traj(*fixed, shell("echo x > /tmp/elsewhere.log 2>&1"))
    assert only(TESTS_PASS, outside).outcome == Outcome.PASS


# ---- real captures --------------------------------------------------------------------------

QWEN = TRACES / "qwen-code-0.24"
QWEN_EDITS_CALC = ("clean_fix", "curl", "rm_outside")
"""Qwen sessions that rewrote calc.py with ``edit`` (EXPECTED.md: "calc.py fixed: True")."""


def protecting_calc() -> Any:
    return contract(
        {"type": "file_not_modified", "path": "calc.py", "name": "calc-untouched"},
        {"type": "file_not_modified", "path": "pytest.ini", "name": "ini-untouched"},
    )


@pytest.mark.parametrize("session", QWEN_EDITS_CALC)
def test_qwen_edit_of_calc_is_not_never_touched(session: str) -> None:
    """Qwen Code's ``edit`` tool is a plain tool call; its arguments name calc.py by absolute
    path. Before: "calc.py was never touched" (a false pass). Now missing evidence naming the
    read and the edit; pytest.ini, which no call names, still passes."""
    ((verdict, trajectory),) = grade_files(
        sorted((QWEN / f"{session}.raw").glob("traces-*")), protecting_calc()
    )
    got = {r.name: r for r in verdict.results}
    assert got["ini-untouched"].outcome == Outcome.PASS, got["ini-untouched"].message
    calc = got["calc-untouched"]
    assert calc.outcome == MISSING, calc.message
    edit = next(s for s in trajectory.steps if s.tool == "edit")
    assert edit.kind == StepKind.TOOL_CALL and edit.source is not None
    assert edit.source.span_id in calc.span_ids
    assert f"({edit.tool}, span {edit.source.span_id})" in calc.message


@pytest.mark.parametrize(
    ("folder", "reader"),
    [("copilot-cli-1.0", "view"), ("opencode-1.18", "read"), ("qwen-code-0.24", "read_file")],
)
def test_coding_cli_reads_name_the_file_by_absolute_path(folder: str, reader: str) -> None:
    """Each CLI's read tool names calc.py by its absolute path in the capture tree. Replay
    cannot tell a read from a write of a tool no convention declares a file edit, so both
    rules count it; pytest.ini, which no call names, is judged."""
    files = sorted((TRACES / folder / "clean_fix.raw").glob("traces-*"))
    graded = grade_files(files, protecting_calc())
    ((_, trajectory),) = [(v, t) for v, t in graded if t.tool_calls()]
    ctx = GradeContext(trajectory, protecting_calc(), initial_workspace=WORKSPACE)
    named = {s.tool for s in steps_naming(ctx, "calc.py")}
    assert reader in named, named
    assert reader in {s.tool for s in steps_writing(ctx, "calc.py")}
    assert steps_naming(ctx, "pytest.ini") == []


H_SOURCES = ("langgraph-openinference", "pydantic-ai", "strands", "openai-agents-otel-v2")


@pytest.mark.parametrize("source", H_SOURCES)
def test_running_the_tests_names_them_without_writing_them(source: str) -> None:
    """In the h_coding_agent captures ``run_command`` runs ``pytest tests/test_calc.py`` after
    writing it: it names the test file (``steps_naming``) but does not visibly write it
    (``steps_writing``), so ``test-asserts`` and ``tests-pass`` still judge the replay."""
    found = [
        p for p in (TRACES / source).glob("h_coding_agent.otlp.json*") if ".logs." not in p.name
    ]
    ((_, trajectory),) = grade_files(found, protecting_calc())
    ctx = GradeContext(trajectory, protecting_calc(), initial_workspace=WORKSPACE)
    named = steps_naming(ctx, "tests/test_calc.py")
    assert [s.command for s in named] == ["python -m pytest -q tests/test_calc.py"]
    assert steps_writing(ctx, "tests/test_calc.py") == []
    assert steps_naming(ctx, "pytest.ini") == []


def test_the_capture_tree_paths_are_absolute() -> None:
    """What makes basename matching necessary: the CLIs name files by absolute path."""
    files = sorted((QWEN / "clean_fix.raw").glob("traces-*"))
    ((_, trajectory),) = grade_files(files, protecting_calc())
    edit = next(s for s in trajectory.steps if s.tool == "edit")
    assert edit.arguments is not None
    assert Path(edit.arguments["file_path"]).is_absolute()


ASSERTED = {"type": "assertion_exists", "path": "calc.py", "pattern": "def add"}


@pytest.mark.parametrize(
    "step",
    [
        shell('echo x > ca"lc.p"y'),
        shell("echo x > calc\\.py"),
        tool("edit", {"changes": [{"file": {"name": "calc.py"}, "lines": [1, 2]}]}),
        tool("shell", {"cmd": "sed -i s/a/b/ *.py"}),
    ],
    ids=["quoted", "escaped", "nested", "glob"],
)
def test_the_screen_of_a_step_misses_no_write(step: dict[str, Any]) -> None:
    """Each step is screened on one text of its inputs (``agentbench._workspace._may_name``) before
    its inputs and command are read one by one; a file named only once the shell unquotes
    the command, or deep in the arguments, or by a glob, still makes the check missing."""
    result = only(ASSERTED, traj(write("calc.py", FIXED), step))
    assert result.outcome == MISSING, result.message


def test_a_name_json_escapes_is_not_screened() -> None:
    """A file name holding a character JSON escapes (a control character) is looked for in
    each input as written: the screen, the arguments as JSON, would not hold it."""
    odd = "we\x01ird.ini"
    spec = parse_contract(
        {
            "id": "c",
            "workspace": {**WORKSPACE, odd: INI},
            "invariants": [{"type": "file_not_modified", "path": odd}],
        },
        "<test>",
    )
    (result,) = grade(spec, traj(tool("read_file", {"path": odd}))).results
    assert result.outcome == MISSING, result.message
    (clean,) = grade(spec, traj(tool("read_file", {"path": "calc.py"}))).results
    assert clean.outcome == Outcome.PASS, clean.message
