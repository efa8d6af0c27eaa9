"""The checks' cheaper paths give the answers of the plain code they replace.

Each is held against the straightforward computation it stands for, on random inputs that
reach its edges: shell commands split without ``shlex`` when they hold nothing ``shlex``
treats specially; the writes a trace may hide (``steps_naming``, ``steps_writing``,
``steps_writing_workspace``) found from inputs and command parses made once per step;
``tool_sequence``'s messages written only for the pairs its alignment keeps; why a call
failed, asking whether its result was captured only when the result says it failed; and
the evaluator's fail-closed rules and outcome table, read inline.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import random
import shlex
from typing import Any

import pytest

from otel_oracles import safe_regex
from otel_oracles._native import tool_sequence_diff
from otel_oracles.grade import evaluator
from otel_oracles.grade import evidence as evidence_module
from otel_oracles.grade.compiled import CompiledContract, compile_check
from otel_oracles.grade.evaluator import outcome_for, run_compiled
from otel_oracles.grade.evidence import Evidence, absent, where
from otel_oracles.grade.loader import compile_contract, parse_contract
from otel_oracles.grade.oracles import coding_rule
from otel_oracles.grade.oracles.agentbench import (
    _workspace,
    steps_naming,
    steps_writing,
    steps_writing_workspace,
)
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck, plain_params
from otel_oracles.grade.oracles.trace_common import (
    DEFAULT_ERROR_PATTERN,
    args_mismatch,
    args_mismatch_why,
    call_failure,
    glob_any,
    result_text,
)
from otel_oracles.grade.oracles.trace_tools import SequenceItem, _assign, sequence_items
from otel_oracles.model.contract import OracleSpec
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import COMMAND_KEYS, StepKind, Trajectory, normalize_path
from otel_oracles.model.tool_name import first_match
from tests.oracles.trace_builders import gen, tool, traj

# ---- shell commands ---------------------------------------------------------------------------

_WORDS = ["sed", "-i", "rm", "cp", "mv", "tee", "touch", "x.py", "a/b.txt", "/dev/null", "2"]
_CHARS = list("ab -./*?=~$`(){}!\t\r\n\x0b\x0c\xa0\u2003é_0'\"\\#;&|<>")


def _lexed(command: str) -> list[str] | None:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def _random_command(rng: random.Random) -> str:
    parts = [
        rng.choice(_WORDS) if rng.random() < 0.5 else rng.choice(_CHARS)
        for _ in range(rng.randint(0, 10))
    ]
    return "".join(p if len(p) == 1 else f" {p} " for p in parts)


def test_plain_commands_split_as_shlex_reads_them() -> None:
    rng = random.Random(7)
    plain = 0
    for _ in range(20_000):
        command = _random_command(rng)
        words = coding_rule.shell_words(command)
        if words is None:
            assert any(c in command for c in "'\"\\#;&|<>")
            continue
        plain += 1
        assert words == _lexed(command), repr(command)
    assert plain > 2_000  # the plain path was exercised, not only the lexer's


def test_written_paths_of_plain_commands_are_the_lexers(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    commands = [_random_command(rng) for _ in range(5_000)]
    commands += ["sed -i s/a/b/ f.py g.py", "rm -rf build dist", "cp a b c", "tee\tlog.txt"]
    fast = [coding_rule.shell_written_paths(c) for c in commands]
    monkeypatch.setattr(coding_rule, "shell_words", lambda command: None)
    assert fast == [coding_rule.shell_written_paths(c) for c in commands]
    assert any(fast)


# ---- writes a trace may hide ------------------------------------------------------------------


def _plain_inputs(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _plain_inputs(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _plain_inputs(v)]
    return []


def _plain_step_inputs(step: Any) -> list[str]:
    texts = _plain_inputs(step.arguments)
    return texts + [t for t in (step.arguments_raw, step.command, step.path) if t]


def _plain_names(text: str, name: str) -> bool:
    for token in _workspace._TOKEN_BREAKS().split(text):
        if not token:
            continue
        last = posixpath.basename(normalize_path(token).rstrip("/"))
        if last == name or (any(c in last for c in "*?") and fnmatch.fnmatchcase(name, last)):
            return True
    return False


def _plain_command(step: Any) -> str | None:
    if step.command:
        return str(step.command)
    for key in COMMAND_KEYS:
        value = (step.arguments or {}).get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _plain_unreplayed(t: Trajectory, target: str, answers: set[int]) -> list[Any]:
    last = max((i for i, p, _ in t.file_edits() if p == target), default=-1)
    return [
        s
        for s in t.steps
        if s.raw is None
        and s.is_tool
        and s.index > last
        and s.index not in answers
        and not (s.kind == StepKind.FILE_EDIT and s.path)
    ]


def _plain_writing(t: Trajectory, target: str, answers: set[int]) -> list[int]:
    name = posixpath.basename(target)
    found = []
    for step in _plain_unreplayed(t, target, answers):
        command = _plain_command(step)
        texts = _plain_step_inputs(step)
        if command is not None:
            written = coding_rule.shell_written_paths(command)
            if any(_plain_names(p, name) for p in written):
                found.append(step.index)
                continue
            texts = [text.replace(command, " ") for text in texts]
        if any(_plain_names(text, name) for text in texts):
            found.append(step.index)
    return found


_PATHS = ["calc.py", "pytest.ini", "tests/test_calc.py", "docs/*.md", "./calc.py", "/w/calc.py"]
_COMMANDS = [
    "pytest -q tests/test_calc.py",
    "sed -i s/a/b/ calc.py",
    "cat pytest.ini",
    "echo x > pytest.ini",
    "rm -f tests/*.py",
    "cp calc.py backup/calc.py",
    "python -m pytest",
    "ls",
]


def _random_step(rng: random.Random) -> dict[str, Any]:
    what = rng.randrange(5)
    if what == 0:
        path = rng.choice(_PATHS[:3])
        return tool("write_file", {"path": path}, kind=StepKind.FILE_EDIT, path=path, content="x")
    if what == 1:
        command = rng.choice(_COMMANDS)
        return tool("run_shell", {"command": command}, kind=StepKind.COMMAND, command=command)
    if what == 2:
        command = rng.choice(_COMMANDS)
        return tool("bash", {"cmd": command, "cwd": rng.choice(["/w", "."])})
    if what == 3:
        path = rng.choice(_PATHS)
        nested = {"edits": [{"file": path, "lines": [1, 2]}, "note"], "n": 3, "path": path}
        return tool("edit", nested if rng.random() < 0.5 else {"path": path})
    return gen("thinking")


def test_hidden_writes_are_those_the_plain_scan_finds() -> None:
    rng = random.Random(3)
    workspace = {"calc.py": "x", "pytest.ini": "y"}
    compiled = parse_contract({"id": "c", "workspace": workspace}, "<test>")
    for _ in range(300):
        t = traj(*(_random_step(rng) for _ in range(rng.randint(0, 9))))
        ev = Evidence(t)
        ctx = GradeContext(t, compiled, initial_workspace=dict(workspace), evidence=ev)
        answers = {s.index for s in ev.final_answer_calls()}
        # Several targets on one context: the per-step inputs and parses are shared.
        for target in ("calc.py", "pytest.ini", "tests/test_calc.py", "calc.py"):
            name = posixpath.basename(target)
            assert [s.index for s in steps_writing(ctx, target)] == _plain_writing(
                t, target, answers
            )
            assert [s.index for s in steps_naming(ctx, target)] == [
                s.index
                for s in _plain_unreplayed(t, target, answers)
                if any(_plain_names(text, name) for text in _plain_step_inputs(s))
            ]
        fresh = GradeContext(t, compiled, initial_workspace=dict(workspace), evidence=Evidence(t))
        assert steps_writing_workspace(ctx) == steps_writing_workspace(fresh)


# ---- tool_sequence's messages -----------------------------------------------------------------


def _sequence_diff(mode: str, items: list[Any], tools: tuple[Any, ...], steps: list[Any]) -> Any:
    """The core's ``tool_sequence_diff`` of ``items`` (tools ``tools``) against ``steps``,
    with the Python deciders the plan hands it."""
    return tool_sequence_diff(
        mode, sequence_items(items), tools, steps, first_match, args_mismatch_why, _assign
    )


def test_sequence_notes_are_the_messages_of_the_kept_pairs() -> None:
    rng = random.Random(5)
    items = [
        SequenceItem(tool="write_file", args={"path": "calc.py"}),
        SequenceItem(tool="write_file", args_regex={"path": r"^tests/test_.*\.py$"}),
        SequenceItem(tool="run", args={"cmd": "pytest"}, args_mode="exact"),
        SequenceItem(tool="run", args_regex={"cmd": "pytest", "cwd": "^/"}),
        SequenceItem(tool="search"),
        # `args` alone in subset mode: decided by the core, worded by `args_mismatch_why`.
        SequenceItem(tool="write_file", args={"path": "calc.py", "cwd": 3.0}),
        SequenceItem(tool="run", args={}),
        SequenceItem(tool="run", args={"cmd": {"a": [1]}, "cwd": None}),
    ]
    values = ["calc.py", "tests/test_a.py", "pytest", "ls", 3, None, {"a": [1]}, "[REDACTED]", ""]
    for _ in range(300):
        calls = []
        for _ in range(rng.randint(0, 7)):
            args = {k: rng.choice(values) for k in rng.sample(["path", "cmd", "cwd"], 2)}
            shape = rng.random()
            if shape < 0.1:  # no arguments captured: an AgentBench step's own fields, or none
                raw = {"tool": "write_file", **args} if rng.random() < 0.5 else None
                call = tool(rng.choice(["write_file", "run"]), None, raw=raw)
            elif shape < 0.2:  # every value a placeholder, or none at all
                call = tool(rng.choice(["write_file", "run"]), rng.choice([{}, {"cmd": ""}]))
            else:
                call = tool(rng.choice(["write_file", "run", "search", "other"]), args)
            calls.append(call)
        steps = list(traj(*calls).steps)
        chosen = rng.sample(items, rng.randint(1, len(items)))
        if rng.random() < 0.5:  # the plan's items are plain copies of the params
            chosen = [plain_params(item) for item in chosen]
        for mode in ("in_order", "any_order"):
            tools = tuple(i.tool for i in chosen)
            answer = _sequence_diff(mode, chosen, tools, steps)
            # A tuple is read in place as a list is, any other iterable through its iterator.
            assert _sequence_diff(mode, chosen, tools, tuple(steps)) == answer  # type: ignore[arg-type]
            assert _sequence_diff(mode, chosen, tools, iter(steps)) == answer  # type: ignore[arg-type]
            _, counts, _, diff, _, _ = answer
            assert sum(counts.values()) == len(diff)
            for entry in diff:
                if entry["op"] not in ("match", "args_mismatch"):
                    continue
                item = chosen[entry["expected"]["position"]]
                call = steps[entry["actual"]["step"]]
                assert glob_any(call.tool, [item.tool]) is not None
                want = args_mismatch(item, call)
                assert entry.get("note", "") == (want or "")
                assert (entry["op"] == "match") == (want is None)


def test_subset_args_are_judged_as_args_mismatch_judges_them() -> None:
    # An item whose one constraint is `args` in subset mode is judged by the core; each
    # pair's op and note are what `args_mismatch` says of it, for the pydantic item and its
    # plain copy alike.
    nan = float("nan")
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"n": 3}, tool("f", {"n": 3.0})),  # equal across types
        ({"n": 3, "m": "x"}, tool("f", {"m": "x", "n": 3, "o": 1})),  # other keys allowed
        ({"n": 3}, tool("f", {"n": "3"})),
        ({"n": 3}, tool("f", {"m": 3})),  # absent
        ({"n": nan}, tool("f", {"n": nan})),  # nan != nan, even the same object
        ({"n": {"a": [1, 2]}}, tool("f", {"n": {"a": [1, 2]}})),
        ({"n": {"a": [1, 2]}}, tool("f", {"n": {"a": [2, 1]}})),
        ({"n": None}, tool("f", {"n": None})),  # only placeholders: not captured
        ({}, tool("f", {"n": 1})),
        ({}, tool("f", {})),  # no arguments is a real value
        ({}, tool("f", {"n": "[REDACTED]"})),  # only placeholders: not captured
        ({"n": 1}, tool("f", {"n": ""})),
        ({"n": 1}, tool("f", None)),  # not captured
        ({"n": 1}, tool("f", None, raw={"tool": "f", "n": 1})),  # the step's own fields
        ({"n": 1}, tool("f", None, raw={"tool": "f", "n": 2})),
    ]
    for args, call in cases:
        step = traj(call).steps[0]
        item = SequenceItem(tool="f", args=args)
        want = args_mismatch(item, step)
        for chosen in (item, plain_params(item)):
            _, counts, _, diff, _, _ = _sequence_diff("in_order", [chosen], ("f",), [step])
            op = "match" if want is None else "args_mismatch"
            assert [entry["op"] for entry in diff] == [op] and counts[op] == 1
            assert diff[0].get("note", "") == (want or ""), (args, call)
    assert [args_mismatch(SequenceItem(tool="f", args=a), traj(c).steps[0]) for a, c in cases] == [
        None,
        None,
        "argument 'n' is \"3\", expected 3",
        "argument 'n' absent",
        "argument 'n' is NaN, expected NaN",
        None,
        'argument \'n\' is {"a": [2, 1]}, expected {"a": [1, 2]}',
        "arguments not captured",
        None,
        None,
        "arguments not captured",
        "arguments not captured",
        "arguments not captured",
        None,
        "argument 'n' is 2, expected 1",
    ]


def test_regex_args_are_judged_as_args_mismatch_judges_them() -> None:
    # An item whose regexes the core can answer (a literal, anchors, alternations; "no match"
    # for a text lacking a literal every match needs) is judged by the core, the others by
    # `args_mismatch_why`; each pair's op and note are what `args_mismatch` says of it.
    items = [
        SequenceItem(tool="f", args_regex={"p": "pytest"}),
        SequenceItem(tool="f", args_regex={"p": r"^tests/test_.*\.py$"}),
        SequenceItem(tool="f", args_regex={"p": "^(ab|cd)$"}),
        SequenceItem(tool="f", args_regex={"p": "é$", "q": "x"}),
        SequenceItem(tool="f", args_regex={"p": r"\d+"}),  # Python answers every text
        SequenceItem(tool="f", args={"q": "x"}, args_regex={"p": "^ab"}),
        SequenceItem(tool="f", args={"q": "x"}, args_mode="exact", args_regex={"p": "ab"}),
        SequenceItem(tool="f", args_regex={"p": "ab"}, args_schema={"type": "object"}),
    ]
    values = [
        "pytest",
        "python -m pytest -q",
        "tests/test_a.py",
        "tests/test_a.py\n",  # `$` before a final newline
        "tests/test_a.pyc",
        "src/a.py",
        "ab",
        "ab\n",
        "cd\n\n",
        "abé",
        "é\n",
        "x\ud800é",  # a lone surrogate: Python's
        "",
        "12",
        3,
        None,
        ["ab"],
        {"p": "ab"},
    ]
    rng = random.Random(7)
    calls = []
    for _ in range(400):
        args = {k: rng.choice(values) for k in rng.sample(["p", "q"], rng.randint(0, 2))}
        calls.append(tool("f", args if rng.random() < 0.95 else None))
    steps = list(traj(*calls).steps)
    decided = 0
    for item in items:
        for chosen in (item, plain_params(item)):
            for step in steps:
                want = args_mismatch(item, step)
                _, counts, _, diff, _, _ = _sequence_diff("in_order", [chosen], ("f",), [step])
                op = "match" if want is None else "args_mismatch"
                assert [entry["op"] for entry in diff] == [op] and counts[op] == 1
                assert diff[0].get("note", "") == (want or ""), (item, step.arguments)
                decided += want is None
    assert decided > 100


class _Tool(str):
    """A tool name with its own formatting: a line naming it is Python's."""

    def __format__(self, spec: str) -> str:
        return f"<{str.__format__(self, spec)}>"


def _line(entry: dict[str, Any], tools: tuple[Any, ...], steps: list[Any]) -> str:
    """``entry``'s line of a failed sequence's message, as the f-strings wrote it."""
    tool = tools[entry["expected"]["position"]] if "expected" in entry else ""
    at = where(steps[entry["actual"]["step"]]) if "actual" in entry else ""
    op = entry["op"]
    if op == "match":
        return f"  = {tool:<24} {at}"
    if op == "args_mismatch":
        return f"  ~ {tool:<24} {at}: {entry['note']}"
    if op == "missing":
        return f"  - {tool:<24} (expected, not called)"
    return f"  + {'':<24} {at} (not expected)"


def test_sequence_texts_are_the_f_strings() -> None:
    # The lines written in Rust (plain texts: padded by code points, never cut) and those
    # Python formats (a name with a lone surrogate, a `str` subclass) make the text the
    # f-strings made, in order; so does the order of a sequence that holds.
    names = ["write_file", "rün", "日本語のツール", "x" * 30, "", "t\ud800", _Tool("run")]
    rng = random.Random(11)
    for _ in range(300):
        calls = []
        for _ in range(rng.randint(0, 6)):
            name = rng.choice(names)
            args = {"p": rng.choice(["a", "b", "\ud800"])}
            calls.append(tool(str(name), args) if rng.random() < 0.8 else tool(name, args))
        steps = list(traj(*calls).steps)
        chosen = [
            SequenceItem(tool=str(name), args=rng.choice([None, {"p": "a"}]))
            for name in rng.sample(names, rng.randint(1, 4))
        ]
        tools = tuple(
            rng.choice([item.tool, _Tool(item.tool)]) if rng.random() < 0.2 else item.tool
            for item in chosen
        )
        for mode in ("in_order", "exact", "any_order"):
            holds, _, actual, diff, _, text = _sequence_diff(mode, chosen, tools, steps)
            if holds:
                order = " -> ".join(t if t else "?" for t in actual)
                assert text == (order or "no calls")
            else:
                assert text == "\n".join(_line(entry, tools, steps) for entry in diff)


# ---- why a call failed -------------------------------------------------------------------------


def _plain_failure(step: Any, pattern: str | None) -> str | None:
    """``call_failure`` of a step alone as it was: the result's capture asked first, then
    what it says."""
    if step.status == "error":
        return f"status ERROR{f' ({step.error_type})' if step.error_type else ''}"
    if step.error_type:
        return f"error.type {step.error_type}"
    if step.error_message:
        return f"exception: {step.error_message[:120]}"
    if absent(step, "result"):
        return None
    result = step.result
    if isinstance(result, dict) and result.get("error"):
        return "result carries an error"
    if not pattern:
        return None
    if safe_regex.search(pattern, result_text(result)):
        return "result matches the error pattern"
    return None


def _alone(step: Any, pattern: str | None) -> str | None:
    """``call_failure`` of ``step`` judged on its own (no trajectory's table holds it)."""
    return call_failure(Evidence(Trajectory(steps=[])), step, pattern)


def test_call_failures_ask_about_capture_only_when_the_result_says_failed() -> None:
    results: list[Any] = [
        None,
        "",
        "[REDACTED]",
        "ok",
        '{"error": "x"}',
        {"error": "boom"},
        {"error": "[REDACTED]"},
        {"error": ""},
        {"error": None, "detail": "x"},
        {"detail": "<redacted>", "error": "x"},
        {"status": "error"},
        {"error": {"code": 1}},
        {},
        [],
        ["<redacted>"],
        [{"error": "x"}],
        0,
        False,
        3.5,
    ]
    patterns = [None, "", DEFAULT_ERROR_PATTERN, "error", "null|false", r"^\[|x"]
    for result in results:
        for redacted in ((), ("result",)):
            for status in ("unset", "error"):
                (step,) = traj(tool("t", {}, result, status=status, redacted=redacted)).steps
                ev = Evidence(Trajectory(steps=[step]))
                for pattern in patterns:
                    got = call_failure(ev, step, pattern)
                    assert got == _alone(step, pattern)
                    assert got == _plain_failure(step, pattern), (result, redacted, pattern)


def test_call_failures_word_denials_statuses_and_errors_as_python_does() -> None:
    """The signals the core reads before the result (``call_failures``): a denial only when
    ``attributes.denied`` is ``True`` itself, the status with its error type, the error
    type, the error message's first 120 characters (code points, as Python slices them),
    each step of a trajectory's table as it is alone."""
    from otel_oracles.grade.oracles.trace_common import DENIED, call_failures

    long_message = "é" * 119 + "\U0001f600 tail"
    cases: list[tuple[dict[str, Any], str | None]] = [
        ({"attributes": {"denied": True}, "status": "error"}, DENIED),
        ({"attributes": {"denied": 1}}, None),
        ({"attributes": {"denied": "true"}}, None),
        ({"status": "error"}, "status ERROR"),
        ({"status": "error", "error_type": "TimeoutError"}, "status ERROR (TimeoutError)"),
        ({"error_type": "ValueError", "error_message": "bad"}, "error.type ValueError"),
        ({"error_message": long_message}, "exception: " + long_message[:120]),
        ({"error_message": ""}, None),
    ]
    steps = []
    for i, (fields, _) in enumerate(cases):
        (step,) = traj(tool("t", {}, "ok")).steps
        steps.append(step.model_copy(update={"index": i, **fields}))
    ev = Evidence(Trajectory(steps=steps))
    table = call_failures(ev, DEFAULT_ERROR_PATTERN)
    for step, (fields, want) in zip(steps, cases, strict=True):
        assert table[id(step)] == want, fields
        assert _alone(step, None) == want, fields


# ---- findings --------------------------------------------------------------------------------


def test_finding_shortcuts_build_what_the_dataclass_builds() -> None:
    """``Finding.ok``/``fail``/``missing`` pass each keyword to its field, and a finding made
    without ``details`` gets a dict of its own, as the field's default factory gives."""
    makers = {"pass": Finding.ok, "fail": Finding.fail, "missing": Finding.missing}
    options: list[dict[str, Any]] = [
        {},
        {"details": {"a": 1}},
        {"span_ids": ("s1", "s2"), "step_indexes": (3, 4)},
        {"used": 2, "breach": "rule", "unseen": True},
        {"details": {}, "span_ids": ("s",), "used": 1, "unseen": False},
    ]
    for status, make in makers.items():
        for kw in options:
            assert make("m", **kw) == Finding(status, "m", **kw)  # type: ignore[arg-type]
        first, second = make("m"), make("m")
        assert first.details == {} and first.details is not second.details
    with pytest.raises(TypeError):
        Finding.ok("m", {"a": 1})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Finding.fail("m", why="no such field")  # type: ignore[call-arg]


def test_a_finding_the_shortcuts_fill_is_a_frozen_finding() -> None:
    """The shortcuts fill a finding's slots on a twin class and then give it its class: what
    they return is exactly a ``Finding``, frozen, hashed, replaced and shown as one the
    dataclass built; a subclass of ``Finding`` is built by its own ``__init__``."""
    made = Finding.fail("m", details={"a": 1}, span_ids=("s",), used=1, unseen=True)
    built = Finding("fail", "m", {"a": 1}, ("s",), (), 1, "budget", True)
    assert type(made) is Finding and repr(made) == repr(built)
    assert dataclasses.astuple(made) == dataclasses.astuple(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.message = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del made.used  # type: ignore[misc]
    assert dataclasses.replace(made, status="pass") == dataclasses.replace(built, status="pass")
    assert not hasattr(made, "__dict__")

    @dataclasses.dataclass(frozen=True, slots=True)
    class Noted(Finding):
        note: str = "n"

        def __post_init__(self) -> None:
            object.__setattr__(self, "note", self.message.upper())

    noted = Noted.ok("m", used=2)
    assert type(noted) is Noted and noted.note == "M" and noted.used == 2


def test_a_final_output_filled_on_its_twin_is_a_frozen_final_output() -> None:
    """``_output`` fills a final output's slots on a twin class, then gives it its class:
    what the answer checks read is exactly the ``FinalOutput`` the dataclass builds (equal,
    hashed alike, frozen), whichever way the answer was found."""
    from otel_oracles.grade.evidence import FinalOutput, _output

    step = traj(tool("final_answer", {"answer": "42"})).steps[0]
    made = _output("42", step, value={"answer": "42"})
    built = FinalOutput("42", step, value={"answer": "42"})
    assert type(made) is FinalOutput and made == built and repr(made) == repr(built)
    assert hash(_output("x", None, "why")) == hash(FinalOutput("x", None, "why"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.text = "other"  # type: ignore[misc]
    assert not hasattr(made, "__dict__")
    # What the evidence finds is one of these.
    found = Evidence(traj(tool("search", {"q": "x"}))).final_output()
    assert type(found) is FinalOutput and found.text is None
    assert found.missing == "final output: the trace has no model-call spans"


# ---- the evaluator's fail-closed rules and outcome table --------------------------------------


class _Fixed(OracleCheck):
    """Returns the finding it is given, with the class flags the test sets."""

    oracle_type = "fixed"

    def __init__(self, finding: Finding, holds: bool, full: bool) -> None:
        super().__init__(OracleCheck.Params())
        self.finding = finding
        self.holds_on_fragments = holds  # type: ignore[misc]
        self.needs_full_coverage = full  # type: ignore[misc]

    def check(self, ctx: GradeContext) -> Finding:
        return self.finding


def _plain_outcome(finding: Finding, oracle: OracleCheck, ctx: GradeContext, layer: Any) -> Any:
    if finding.unseen or (finding.status == "pass" and oracle.needs_full_coverage):
        finding = evaluator._fail_closed_on_fragment(finding, oracle, ctx)
        if finding.status != "missing":
            finding = evaluator._fail_closed_on_coverage(finding, oracle, ctx)
    return outcome_for(layer, finding), finding.message


def _fresh(text: str) -> Any:
    """An equal ``str`` of its own, not the interned ``text``."""
    return "".join(list(text))


def _trajectories() -> list[Trajectory]:
    steps = [gen("hi", finish=["tool_calls"], tool_calls=["search"]), tool("search", {"q": 1})]
    plain = traj(*steps, gen("done"))
    unmapped = traj(*steps, gen("done"), unmapped_spans={"custom.span": 2})
    # A model call whose input hands back a tool result no call of this trace made: the
    # trace holds only part of the run (``fragment_gap``).
    history = [
        {"role": "user", "parts": [{"type": "text", "content": "q"}]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c0", "response": "r"}],
        },
    ]
    fragment = traj(gen("done", input_messages=history))
    both = traj(gen("done", input_messages=history), unmapped_spans={"custom.span": 2})
    return [plain, unmapped, fragment, both]


@pytest.mark.parametrize("layer", ["invariant", "tolerance"])
def test_outcomes_are_the_tables_after_the_fail_closed_rules(layer: Any) -> None:
    findings = [
        Finding.ok("ok"),
        Finding.ok("ok, used", used=1),
        Finding.ok("ok, unseen", unseen=True),
        Finding.fail("fail"),
        Finding.fail("fail, rule", breach="rule"),
        Finding.fail("fail, unseen", unseen=True),
        Finding.missing("missing"),
        Finding.missing("missing, unseen", unseen=True),
        # Texts equal to the names but not the interned names themselves (a plug-in's own
        # strings): compared, not told apart by identity.
        Finding(_fresh("fail"), "own fail, rule", {}, (), (), 0, _fresh("rule"), False),
        Finding(_fresh("fail"), "own fail", {}, (), (), 0, _fresh("budget"), False),
        Finding(_fresh("pass"), "own ok, used", {}, (), (), 1, "budget", False),
        Finding(_fresh("missing"), "own missing", {}, (), (), 0, "budget", False),
    ]
    name = "pass"
    assert _fresh(name) == name and _fresh(name) is not name
    trajectories = _trajectories()
    gaps = [(Evidence(t).fragment_gap(), Evidence(t).coverage_gap()) for t in trajectories]
    assert gaps[0] == (None, None) and all(f is None and c for f, c in gaps[1:2])
    assert gaps[2][0] and gaps[3][0] and gaps[3][1]  # the fragment cases are fragments
    for lenient in (False, True):
        contract = parse_contract(
            {"id": "c", "evidence": {"coverage": "lenient" if lenient else "strict"}}, "<t>"
        )
        spec = OracleSpec(type="tool_not_called", params={"tool": ["x"]})
        for t in trajectories:
            for finding in findings:
                for holds in (False, True):
                    for full in (False, True):
                        oracle = _Fixed(finding, holds, full)
                        compiled = compile_check(layer, spec)
                        check = type(compiled)(
                            layer=layer,
                            spec=spec,
                            oracle=oracle,
                            evidence=(),
                            setup_error=None,
                            budget=None,
                            foreign=True,
                        )
                        ctx = GradeContext(t, contract, evidence=Evidence(t))
                        got = run_compiled(check, ctx)
                        want = _plain_outcome(finding, oracle, GradeContext(t, contract), layer)
                        assert (got.outcome, got.message) == want
                        # What the contract's checks would each ask, asked once for it.
                        compiled = compile_contract(contract)
                        whole = CompiledContract(contract, (check,), compiled.selector)
                        ctx = GradeContext(t, contract, evidence=Evidence(t))
                        known = evaluator._known_clear(whole, ctx)
                        assert known == (True, gaps[trajectories.index(t)] == (None, None))
                        got = run_compiled(check, ctx, *known)
                        assert (got.outcome, got.message) == want


def test_a_raising_probe_is_the_error_of_the_checks_that_ask_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The contract's evidence is asked once (``_known_clear``); a probe that raises there
    is still each asking check's own ``error``, and the other checks judge as before."""
    contract = parse_contract(
        {
            "id": "c",
            "evidence": [{"field": "final_output"}],
            "invariants": [{"type": "tool_not_called", "tool": "x"}],
        },
        "<t>",
    )
    compiled = compile_contract(contract)
    assert compiled.evidence == ("final_output", "tool_names")
    t = _trajectories()[0]

    def broken(ev: Evidence, scope: str | None) -> str | None:
        raise RuntimeError("probe broke")

    monkeypatch.setitem(evidence_module.PROBES, "final_output", broken)
    ctx = GradeContext(t, contract, evidence=Evidence(t))
    assert evaluator._known_clear(compiled, ctx) == (False, True)
    verdict = evaluator.grade(compiled, t)
    outcomes = {r.name: (r.outcome, r.message) for r in verdict.results}
    assert outcomes[compiled.checks[0].head.name] == (
        Outcome.ERROR,
        "oracle raised RuntimeError: probe broke",
    )
    assert outcomes[compiled.checks[1].head.name][0] is Outcome.PASS
