"""What the three AgentBench oracles that judge the replayed workspace (``test_must_pass``,
``file_not_modified``, ``assertion_exists``) share: their params' path check, the finding
for a contract without a workspace, and the calls of a trace that may have written a judged
file unseen (``steps_naming``, ``steps_writing``, ``steps_writing_workspace``)."""

import fnmatch
import functools
import posixpath

from otel_oracles._frozen import Frozen, set_field
from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles._native import json_indented
from otel_oracles.grade.evidence import list_steps
from otel_oracles.grade.oracles.base import Finding, GradeContext
from otel_oracles.grade.oracles.coding_rule import shell_written_paths
from otel_oracles.model.step import (
    COMMAND_KEYS,
    FILE_EDIT,
    Step,
    normalize_path,
)

MESSAGE_LINE_LIMIT = 500
"""Characters of the first stderr/stdout line kept in a ``test_must_pass`` failure message."""


def relative_path(value: str) -> str:
    """Reject paths that can never be inside a workspace, at load time rather than at replay."""
    norm = normalize_path(value)
    if not norm:
        raise ValueError("must name a file inside the workspace")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise ValueError(f"must be a workspace-relative path, got absolute path {value!r}")
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"must stay inside the workspace, got {value!r}")
    return value


normalized = functools.lru_cache(maxsize=4096)(normalize_path)
"""``normalize_path``, remembered for the paths of contracts' workspaces and checks:
``file_not_modified`` normalizes every workspace path on every trajectory it judges."""


def no_workspace(oracle_type: str, ctx: GradeContext) -> Finding:
    return Finding.missing(
        f"{oracle_type} needs a replayed workspace, but contract {ctx.contract.id!r} has no "
        "'workspace' (a trace-derived trajectory cannot be replayed)"
    )


def first_line(text: str, limit: int = MESSAGE_LINE_LIMIT) -> str:
    """The first non-blank line, cut at ``limit`` characters."""
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


# ---- writes a trace may hide ----------------------------------------------------------------

_TOKEN_BREAKS = lazy_pattern(r"[\s\"'`;|&<>()\[\]{},=:]+")
"""What separates path tokens in a step's inputs: whitespace, quotes, shell operators and
JSON/option punctuation (``--config=pytest.ini``, ``"file":"calc.py"``)."""

_GLOB_CHARS = ("*", "?")


def _input_strings(value: object) -> list[str]:
    """Every string value inside a step's captured inputs (not the keys), in order."""
    found: list[str] = []
    _collect_strings(value, found)
    return found


def _collect_strings(value: object, found: list[str]) -> None:
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            if isinstance(item, str):  # most arguments are flat objects of strings
                found.append(item)
            else:
                _collect_strings(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_strings(item, found)


def _step_inputs(step: Step) -> tuple[str, ...]:
    """What a step was asked to do, as text: its arguments (parsed or as captured), command
    and path. Results are left out: a listing that shows a file did not write it."""
    texts = _input_strings(step.arguments)
    texts.extend(text for text in (step.arguments_raw, step.command, step.path) if text)
    return tuple(texts)


def _inputs(ctx: GradeContext, step: Step) -> tuple[str, ...]:
    """``_step_inputs``, made once per step of the trajectory: ``file_not_modified``,
    ``assertion_exists`` and ``test_must_pass`` read the same steps' inputs for each file
    they judge."""
    texts: tuple[str, ...] = ctx.evidence.step_memoized(
        step, "agentbench_inputs", _step_inputs, step
    )
    return texts


def _token_names(token: str, name: str) -> bool:
    """Whether one token is a path to a file called ``name``: its last component (normalized
    like ``normalize_path``, so absolute, ``./`` and Windows forms count) is ``name``, or a
    glob that matches it (``*.ini``, ``*``)."""
    last = posixpath.basename(normalize_path(token).rstrip("/"))
    if last == name:
        return True
    return any(c in last for c in _GLOB_CHARS) and fnmatch.fnmatchcase(name, last)


_PLAIN_NAME = lazy_pattern(r"[ !#-\[\]-~]+")
"""A file name of printable ASCII without ``"`` or ``\\``: characters JSON writes as they are."""


def _plain_name(name: str) -> bool:
    """Whether ``name`` holds only characters JSON writes unescaped (``_PLAIN_NAME``), so
    that it occurs in a value's JSON text wherever it occurs in one of the value's strings
    (escaping only replaces characters the name does not hold)."""
    return _PLAIN_NAME().fullmatch(name) is not None


def _may_name(ctx: GradeContext, step: Step, name: str) -> bool:
    """False only when neither an input of ``step`` (``_inputs``), nor one with the command
    blanked out (``_CommandWrites.rest``), nor a path the step's command visibly writes
    (``shell_written_paths``) when the command holds no quote or backslash, can name a file
    called ``name``. Each would hold the name or a glob character (``_GLOB_CHARS``), and so
    would the step's screen (``_screen``), which holds every input string. Blanking adds no
    glob character, and the space it adds cannot make an occurrence of a name without one
    (a name with one is never a token, only a glob's match); an unquoted command's words are
    pieces of it, whose last path component ``normalize_path`` keeps as written. Most steps
    name no judged file, and each check asked every input of every step after the file's
    last write."""
    if not _plain_name(name):
        return True
    screen, globbed = _screen(ctx, step)
    return globbed or name in screen


def _screen(ctx: GradeContext, step: Step) -> tuple[str, bool]:
    """A text holding every input string of ``step`` (``_step_inputs``), and whether it
    holds a glob character, made once per step: its arguments as JSON (written by the core,
    ``json_indented``, which only escapes ``"``, ``\\`` and control characters), else the
    inputs themselves, joined with its raw arguments, command and path. It may hold a name
    no input holds (a key, across a newline): that only sends the step to the exact test."""
    made: tuple[str, bool] = ctx.evidence.step_memoized(
        step, "agentbench_screen", _make_screen, ctx, step
    )
    return made


def _make_screen(ctx: GradeContext, step: Step) -> tuple[str, bool]:
    """``_screen`` when first asked of ``step``."""
    arguments = step.arguments
    dumped = "" if arguments is None else json_indented(arguments, 0)
    if dumped is None:
        dumped = "\n".join(_inputs(ctx, step))
    texts = (dumped, step.arguments_raw, step.command, step.path)
    screen = "\n".join(text for text in texts if text)
    return screen, "*" in screen or "?" in screen


def _plain_command(step: Step) -> bool:
    """Whether the step ran no command, or one without quotes or backslashes: each word
    ``shell_written_paths`` reads of it is then a piece of it as written."""
    command = _step_command(step)
    return command is None or not any(c in command for c in "'\"\\")


def _text_names(text: str, name: str) -> bool:
    # Only a text holding the name or a glob character (``_GLOB_CHARS``) can name the file.
    if name not in text and "*" not in text and "?" not in text:
        return False
    return any(_token_names(t, name) for t in _TOKEN_BREAKS().split(text) if t)


def _step_command(step: Step) -> str | None:
    """The shell command a step ran: a command step's, or a tool call's ``command``/``cmd``
    argument (a shell tool no convention declares as one)."""
    if step.command:
        return step.command
    if step.arguments is not None:
        for key in COMMAND_KEYS:
            value = step.arguments.get(key)
            if isinstance(value, str) and value:
                return value
    return None


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class _CommandWrites(Frozen):
    """What ``steps_writing`` reads of one step, whatever file it judges: the shell command
    the step ran (``_step_command``) and the paths that command visibly writes
    (``shell_written_paths``)."""

    __slots__ = ("command", "written")
    command: str | None
    written: tuple[str, ...]

    def __init__(self, command: str | None, written: tuple[str, ...]) -> None:
        set_field(self, "command", command)
        set_field(self, "written", written)

    def rest(self, inputs: tuple[str, ...]) -> tuple[str, ...]:
        """The step's other inputs: ``inputs`` (its ``_step_inputs``) with the command
        blanked out, or all of them when it ran none. Made only for a step that may name
        the file (``_may_name``)."""
        command = self.command
        if command is None:
            return inputs
        return tuple(text.replace(command, " ") for text in inputs)


_NO_COMMAND = _CommandWrites(None, ())


def _command_writes(ctx: GradeContext, step: Step) -> _CommandWrites:
    """``_CommandWrites`` of ``step``, made once per step of the trajectory (the command
    parsed once, however many files ``steps_writing_workspace`` judges)."""

    def make() -> _CommandWrites:
        command = _step_command(step)
        if command is None:
            return _NO_COMMAND
        return _CommandWrites(command, tuple(shell_written_paths(command)))

    writes: _CommandWrites = ctx.evidence.step_memoized(step, "agentbench_writes", make)
    return writes


def _unreplayed_steps(ctx: GradeContext, target: str) -> list[Step]:
    """Trace-derived tool steps after the last recorded write of ``target`` (all of them when
    none wrote it) that replay did not apply: every call but a file edit whose path was
    captured, and a final-answer tool's (its arguments are the run's answer, not an action).
    What they did to the file is not in the replayed workspace. AgentBench steps are left
    out: there a step that is not a file edit changes nothing (DESIGN section 5)."""
    last = max((i for i, p, _ in file_edits(ctx) if p == target), default=-1)
    return [s for s in _unreplayable(ctx) if s.index > last]


def file_edits(ctx: GradeContext) -> list[tuple[int, str, str]]:
    """``trajectory.file_edits()``, made once per trajectory (read, never changed)."""
    edits: list[tuple[int, str, str]] = ctx.evidence.memoized(
        "agentbench_file_edits", ctx.trajectory.file_edits
    )
    return edits


def _unreplayable(ctx: GradeContext) -> tuple[Step, ...]:
    """The trace-derived tool steps replay does not apply (``_unreplayed_steps`` before the
    last write of a file is known), in step order, found once per trajectory."""

    def find() -> tuple[Step, ...]:
        answers = {s.index for s in ctx.evidence.final_answer_calls()}
        return tuple(
            s
            for s in ctx.trajectory.steps
            if s.raw is None
            and s.is_tool
            and s.index not in answers
            and not (s.kind == FILE_EDIT and s.path)
        )

    steps: tuple[Step, ...] = ctx.evidence.memoized("agentbench_unreplayable", find)
    return steps


def steps_naming(ctx: GradeContext, target: str) -> list[Step]:
    """Trace-derived steps that may have changed ``target`` unseen: not a recorded file edit,
    after its last recorded write, and naming it in their inputs (its workspace-relative path
    or its file name as a path token, or a glob matching it). Such a step may only have read
    the file, or may have rewritten it (``sed -i``, a redirection, ``rm``, an edit tool no
    convention declares as one); the trace cannot tell which."""
    name = posixpath.basename(target)
    return [
        s
        for s in _unreplayed_steps(ctx, target)
        if _may_name(ctx, s, name) and any(_text_names(text, name) for text in _inputs(ctx, s))
    ]


def steps_writing(ctx: GradeContext, target: str) -> list[Step]:
    """Trace-derived steps that may have written ``target`` unseen, for checks whose own
    commands name the files they judge (running ``pytest tests/test_calc.py`` names the test
    file, so naming cannot count for them): a step's shell command (a command step's, or a
    tool call's ``command``/``cmd`` argument) counts when it visibly writes the file
    (``coding_rule.shell_written_paths``: redirections, ``sed -i``, ``rm``, ``cp``/``mv``
    destinations ...), and the rest of its inputs when they name the file (an edit or patch
    tool no convention declares as a file edit, ``str_replace_editor``'s ``path``)."""
    name = posixpath.basename(target)
    found = []
    for step in _unreplayed_steps(ctx, target):
        if not _may_name(ctx, step, name) and _plain_command(step):
            continue
        writes = _command_writes(ctx, step)
        if any(_token_names(p, name) for p in writes.written) or any(
            _text_names(text, name) for text in writes.rest(_inputs(ctx, step))
        ):
            found.append(step)
    return found


def hidden_write(check: str, what: str, steps: list[Step], verb: str) -> Finding:
    """Missing evidence naming the steps that may have changed ``what`` unseen; ``verb`` is
    said of one step (``names``), and of several without its ``s``."""
    one = len(steps) == 1
    if not one and verb.endswith("names"):
        verb = verb[:-1]
    return Finding.missing(
        f"{check} cannot judge {what}: {list_steps(steps)} {verb} it and "
        f"{'is' if one else 'are'} not a recorded file edit, so replay did not apply what "
        f"{'it' if one else 'they'} did (a change to the file, or only a read)",
        step_indexes=tuple(s.index for s in steps),
        span_ids=tuple(s.source.span_id for s in steps if s.source is not None),
        details={"path": what, "steps": [s.index for s in steps[:100]]},
    )


def steps_writing_workspace(ctx: GradeContext) -> list[Step]:
    """``steps_writing`` over every file the replayed workspace holds (the task's and those
    the recorded edits created), plus shell commands that visibly write a relative path the
    workspace does not hold (a ``conftest.py`` written by ``cat >``, say: a new file may
    decide a test run as much as a changed one). Steps in index order, each once."""
    files = {normalize_path(k) for k in ctx.initial_workspace}
    files.update(p for _, p, _ in ctx.trajectory.file_edits())
    found: dict[int, Step] = {}
    for path in sorted(files):
        found.update((s.index, s) for s in steps_writing(ctx, path))
    for step in ctx.trajectory.steps:
        if step.raw is not None or not step.is_tool or step.index in found:
            continue
        if step.kind == FILE_EDIT and step.path:
            continue
        for written in _command_writes(ctx, step).written:
            norm = normalize_path(written)
            if norm and not norm.startswith(("/", "~", "../")) and norm != "..":
                found[step.index] = step
                break
    return [found[i] for i in sorted(found)]
