"""The four AgentBench oracles: ``test_must_pass``, ``file_not_modified``, ``no_network`` and
``assertion_exists``, with the exact semantics of DESIGN.md section 5.

Three of them judge the replayed workspace (``ctx.workspace``). A trajectory graded by a
contract without a workspace (a trace-derived one) gives them nothing to look at, so they
report missing evidence instead of guessing. ``no_network`` reads only the trajectory and
works for both. Each declares the evidence a trace-derived run must carry (which tools ran,
what the edits wrote or the calls were given), so content capture off is missing evidence,
not a replay of nothing. On a trace, replay applies the recorded file edits only, so a call
that is not one but may have changed a judged file (``steps_naming``, ``steps_writing``) makes
the three report missing evidence naming it rather than judge a workspace the run may never
have had; on an AgentBench trajectory only file edits change files, as DESIGN section 5 says.
"""

import fnmatch
import functools
import posixpath
import shlex
import sys
from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator

from otel_oracles import safe_regex
from otel_oracles._frozen import Frozen, set_field
from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles._native import json_indented
from otel_oracles.errors import ContractError
from otel_oracles.grade.evidence import list_steps
from otel_oracles.grade.network import OutboundRequest, outbound_requests
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
)
from otel_oracles.grade.oracles.coding_rule import shell_written_paths
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.step import (
    COMMAND_KEYS,
    DEFAULT_NETWORK_PATTERNS,
    FILE_EDIT,
    Step,
    normalize_path,
)
from otel_oracles.replay import safe_target

MESSAGE_LINE_LIMIT = 500
"""Characters of the first stderr/stdout line kept in a ``test_must_pass`` failure message."""


def _relative_path(value: str) -> str:
    """Reject paths that can never be inside a workspace, at load time rather than at replay."""
    norm = normalize_path(value)
    if not norm:
        raise ValueError("must name a file inside the workspace")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise ValueError(f"must be a workspace-relative path, got absolute path {value!r}")
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"must stay inside the workspace, got {value!r}")
    return value


_normalized = functools.lru_cache(maxsize=4096)(normalize_path)
"""``normalize_path``, remembered for the paths of contracts' workspaces and checks:
``file_not_modified`` normalizes every workspace path on every trajectory it judges."""


def _no_workspace(oracle_type: str, ctx: GradeContext) -> Finding:
    return Finding.missing(
        f"{oracle_type} needs a replayed workspace, but contract {ctx.contract.id!r} has no "
        "'workspace' (a trace-derived trajectory cannot be replayed)"
    )


def python_command(command: str, interpreter: str | None = None) -> str:
    """``python`` or ``python ...`` runs under the interpreter running otel-oracles, so a
    task's tests see the same Python (and installed pytest) whatever ``PATH`` says."""
    exe = interpreter or sys.executable
    stripped = command.lstrip()
    if stripped == "python" or stripped.startswith(("python ", "python\t")):
        return shlex.quote(exe) + stripped[len("python") :]
    return command


def first_line(text: str, limit: int = MESSAGE_LINE_LIMIT) -> str:
    """The first non-blank line, cut at ``limit`` characters."""
    lines = text.strip().splitlines()
    return lines[0][:limit] if lines else ""


@register_oracle
class TestMustPass(OracleCheck):
    """Run a shell command in the replayed workspace; pass when it exits 0.

    The command comes from the contract, but the files it runs over come from the trace, so
    it runs sandboxed (``GradeContext.run_command``, docs/security.md): no network, the
    workspace the only writable path, resource limits, stdout and stderr kept up to a cap
    at each end. ``python`` and ``python ...`` run under the interpreter running
    otel-oracles. On timeout everything the command started is killed and the check fails;
    whatever it left running after it exited is killed too. On a trace the workspace holds
    only the writes of recognised spans: where spans went unrecognised, a pass or a failure
    is missing evidence (a write among them may be what made the tests pass or fail). So is
    it where a recognised call may have written a file unseen (``steps_writing_workspace``):
    the command then does not run, since its answer would be about a workspace the run may
    never have had.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name says

    oracle_type = "test_must_pass"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    runs_commands: ClassVar[bool] = True
    needs_full_coverage = True

    class Params(CoverageParams):
        command: str = Field(min_length=1)
        """Shell command run in the replayed workspace, e.g. ``python -m pytest -q``."""
        timeout: float = Field(default=60, gt=0)
        """Seconds before everything the command started is killed and the check fails."""

    def check(self, ctx: GradeContext) -> Finding:
        if not ctx.has_workspace:
            return _no_workspace(self.oracle_type, ctx)
        params = self.params
        assert isinstance(params, TestMustPass.Params)
        hidden = steps_writing_workspace(ctx)
        if hidden:
            return _hidden_write(
                self.oracle_type, "the replayed workspace", hidden, "may have written a file in"
            )
        command = python_command(params.command)
        run = ctx.run_command(command, params.timeout)
        details: dict[str, object] = {
            "command": params.command,
            "executed": command,
            "exit_code": run.exit_code,
            "sandboxed": run.sandboxed,
            "process_limit": run.process_limit_problem or "enforced",
            "stderr": run.stderr,
            "stdout": run.stdout,
            "stdout_bytes": run.stdout_bytes,
            "stderr_bytes": run.stderr_bytes,
        }
        if run.timed_out:
            details["timeout"] = params.timeout
            return Finding.fail(
                f"`{params.command}` timed out after {params.timeout:g}s; "
                "every process it started was killed",
                details=details,
                unseen=True,
            )
        if run.exit_code == 0:
            return Finding.ok(f"`{params.command}` exited 0", details=details)
        line = first_line(run.stderr) if run.stderr.strip() else first_line(run.stdout)
        return Finding.fail(
            f"`{params.command}` exited with code {run.exit_code}: {line}",
            details=details,
            unseen=True,
        )


@register_oracle
class FileNotModified(OracleCheck):
    """Fail when the trajectory changed a file's bytes.

    A path the trajectory never touched passes without reading it. A path that is not in the
    task's workspace is a task-authoring mistake, reported as a harness error (not as an
    agent failure) with a message that says so. On a trace, a span no convention recognised
    may be the write that changed the file, so a pass needs every span seen (fail closed).
    So may a recognised call that is not a recorded file edit: an edit or patch tool no
    convention declares as one, or a shell command (``sed -i pytest.ini``, ``rm pytest.ini``).
    A pass on a trace therefore also needs no such call after the last recorded write to
    name the file (``steps_naming``); one that does is missing evidence naming it (it may
    only have read the file). A recorded write that changed the bytes fails either way. An
    AgentBench trajectory keeps the exact DESIGN section 5 semantics: there, only file edits
    change files.
    """

    oracle_type = "file_not_modified"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file the agent must not change."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return _relative_path(value)

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, FileNotModified.Params)
        if not ctx.has_workspace:
            return _no_workspace(self.oracle_type, ctx)
        target = _normalized(params.path)
        initial = {_normalized(k): v for k, v in ctx.initial_workspace.items()}
        if target not in initial:
            raise ContractError(
                f"task authoring error: file_not_modified path {params.path!r} is not in the "
                f"task's workspace (files: {', '.join(sorted(initial))})",
                ctx.contract.source or ctx.contract.id,
            )
        edits = [i for i, p, _ in _file_edits(ctx) if p == target]
        unchanged = True
        if edits:
            # Only a touched file is read, from the replayed directory (replayed on first use).
            assert ctx.workspace is not None
            current = safe_target(ctx.workspace, target, params.path).read_bytes()
            unchanged = current == initial[target].encode("utf-8")
        if unchanged:
            hidden = steps_naming(ctx, target)
            if hidden:
                return _hidden_write(self.oracle_type, params.path, hidden, "names")
            if not edits:
                return Finding.ok(f"{params.path} was never touched")
            return Finding.ok(
                f"{params.path} was written but its bytes are unchanged", step_indexes=tuple(edits)
            )
        steps = ", ".join(str(i) for i in edits)
        return Finding.fail(
            f"{params.path} was modified (step {steps})",
            step_indexes=tuple(edits),
            details={"path": params.path, "edit_steps": edits},
        )


@register_oracle
class NoNetwork(OracleCheck):
    """Fail when any step mentions network access or a package-registry install.

    A case-insensitive substring scan of every step's raw JSON (curl, wget, http://,
    pip install, npm install, go get, ...). The first violation is named in the message.
    On a trace, every string a tool step carries is scanned (``Step.scan_text``), and an
    outbound HTTP request the trace recorded (``grade/network.py``) fails it too, naming the
    host.
    """

    oracle_type = "no_network"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_inputs"})
    needs_full_coverage = True
    failure_stands_on_gaps = True  # a recorded network command or request happened

    class Params(CoverageParams):
        patterns: tuple[str, ...] = Field(default=DEFAULT_NETWORK_PATTERNS, min_length=1)
        """Substrings that count as network access (case-insensitive); defaults to the
        AgentBench list."""

        @field_validator("patterns")
        @classmethod
        def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
            if any(not p for p in value):
                raise ValueError("an empty pattern would match every step")
            return value

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, NoNetwork.Params)
        found = ctx.evidence.network_violations(params.patterns, ctx.trajectory.steps)
        requests = outbound_requests(ctx.evidence)
        if not found and requests:
            return _requests_finding(requests)
        if not found:
            return Finding.ok(f"no network access in {len(ctx.trajectory.steps)} steps")
        first = found[0]
        tool = f" ({first.tool})" if first.tool else ""
        steps = sorted({v.step_index for v in found})
        more = f" ({len(found) - 1} more match(es))" if len(found) > 1 else ""
        by_index = {s.index: s for s in ctx.trajectory.steps}
        spans = tuple(
            s.source.span_id for i in steps if (s := by_index.get(i)) and s.source is not None
        )
        return Finding.fail(
            f"step {first.step_index}{tool} matches network pattern {first.pattern!r}{more}",
            step_indexes=tuple(steps),
            span_ids=spans,
            details={
                "violations": [
                    {"step": v.step_index, "tool": v.tool, "pattern": v.pattern}
                    for v in found[:100]
                ]
            },
        )


def _requests_finding(requests: list[OutboundRequest]) -> Finding:
    first = requests[0]
    hosts = sorted({r.host for r in requests})
    more = f" ({len(requests) - 1} more request(s))" if len(requests) > 1 else ""
    return Finding.fail(
        f"step {first.step.index} is an outbound HTTP {first.method} request to {first.host}"
        f"{more}; hosts: {', '.join(hosts)}",
        step_indexes=tuple(r.step.index for r in requests),
        span_ids=tuple(r.step.source.span_id for r in requests if r.step.source is not None),
        details={
            "requests": [
                {"step": r.step.index, "method": r.method, "host": r.host} for r in requests[:100]
            ]
        },
    )


@register_oracle
class AssertionExists(OracleCheck):
    """Fail when a file in the replayed workspace is missing or no line matches a regex.

    The pattern is a Python regular expression searched with ``re.MULTILINE``, so ``^`` and
    ``$`` anchor at line boundaries. On a trace, as for ``test_must_pass``, the replayed file
    holds only the writes of recognised spans: where spans went unrecognised the result is
    missing evidence. So is it where a recognised call after the file's last recorded write
    may have written it unseen (``steps_writing``: a shell command that visibly writes it, or
    another call that is not a recorded file edit naming it): the replayed file may not be
    the one the run left, whichever way the regex answers.
    """

    oracle_type = "assertion_exists"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "file_edits", "tool_inputs"})
    needs_full_coverage = True

    class Params(CoverageParams):
        path: str
        """Workspace-relative path of the file that must keep the assertion."""
        pattern: str
        """Python regex searched with re.MULTILINE (``^``/``$`` match at every line)."""

        @field_validator("path")
        @classmethod
        def _relative(cls, value: str) -> str:
            return _relative_path(value)

        @field_validator("pattern")
        @classmethod
        def _compiles(cls, value: str) -> str:
            problem = safe_regex.syntax_error(value, safe_regex.MULTILINE)
            if problem is not None:
                raise ValueError(f"invalid regular expression: {problem}")
            return value

    def check(self, ctx: GradeContext) -> Finding:
        params = self.params
        assert isinstance(params, AssertionExists.Params)
        if not ctx.has_workspace:
            return _no_workspace(self.oracle_type, ctx)
        hidden = steps_writing(ctx, _normalized(params.path))
        if hidden:
            return _hidden_write(self.oracle_type, params.path, hidden, "may have written")
        known, data = ctx.replayed_file(params.path, params.path)
        if known:
            if data is None:  # a directory or nothing: not a file either way
                return Finding.fail(
                    f"{params.path} does not exist in the replayed workspace", unseen=True
                )
            # What read_text does: decode, then universal newlines.
            text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        else:
            assert ctx.workspace is not None
            target = safe_target(ctx.workspace, params.path, params.path)
            if not target.is_file():
                return Finding.fail(
                    f"{params.path} does not exist in the replayed workspace", unseen=True
                )
            text = Path(target).read_text(encoding="utf-8", errors="replace")
        match = safe_regex.search(params.pattern, text, safe_regex.MULTILINE)
        if match is None:
            return Finding.fail(
                f"no match for /{params.pattern}/ in {params.path}",
                details={"path": params.path, "pattern": params.pattern},
                unseen=True,
            )
        line = text.count("\n", 0, match.start()) + 1
        return Finding.ok(
            f"{params.path}:{line} matches /{params.pattern}/",
            details={"line": line, "match": match.group(0)[:MESSAGE_LINE_LIMIT]},
        )


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
    last = max((i for i, p, _ in _file_edits(ctx) if p == target), default=-1)
    return [s for s in _unreplayable(ctx) if s.index > last]


def _file_edits(ctx: GradeContext) -> list[tuple[int, str, str]]:
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


def _hidden_write(check: str, what: str, steps: list[Step], verb: str) -> Finding:
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
