"""The in-memory replay (``replay.replayed_files``) must agree with the disk replay exactly:
same files and bytes, same ``ReplayError`` message, and it must hand undecidable cases to the
disk. The evaluator relies on it to skip the temporary directory; grading results must not
depend on which of the two ran."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import pytest

from otel_oracles.errors import ReplayError
from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Step, StepKind, Trajectory, normalize_path
from otel_oracles.replay import (
    MAX_CREATED_ENTRIES,
    CreatedEntries,
    WorkspaceReplay,
    _written_workspace,
    checked_parts,
    replayed_files,
    replayed_workspace,
)


def traj(*steps: dict) -> Trajectory:
    return Trajectory.from_agentbench({"steps": list(steps)}, source="t.json")


def edit(path: str, content: str = "x") -> dict:
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def on_disk(workspace: dict[str, str], t: Trajectory) -> dict[str, bytes] | str:
    try:
        with replayed_workspace(workspace, t) as root:
            return {
                p.relative_to(root).as_posix(): p.read_bytes()
                for p in sorted(root.rglob("*"))
                if p.is_file()
            }
    except ReplayError as exc:
        return f"ReplayError: {exc.message}"


def in_memory(workspace: dict[str, str], t: Trajectory) -> dict[str, bytes] | str | None:
    try:
        return replayed_files(workspace, t)
    except ReplayError as exc:
        return f"ReplayError: {exc.message}"


CASES: list[tuple[dict[str, str], list[dict]]] = [
    ({"a.txt": "zero", "keep.txt": "k"}, [edit("a.txt", "one"), edit("a.txt", "three")]),
    ({"calc.py": "# c\n"}, [edit("sub/deep/b.py", "é\r\n"), edit("./sub//c.py"), edit("d\\e.py")]),
    ({"a": "1"}, [edit("a/b")]),  # needs directory a, but a is a file
    ({"a/b": "1"}, [edit("a")]),  # a is a directory
    ({}, [edit("/etc/passwd")]),
    ({}, [edit("C:\\x.txt")]),
    ({}, [edit("../up.txt")]),
    ({}, [edit("ok.txt"), edit("sub/../../up.txt")]),
    ({"x": "1"}, [edit("x/./")]),
    ({".": "1"}, []),
    ({"": "1"}, []),
]


@pytest.mark.parametrize(("workspace", "steps"), CASES)
def test_in_memory_replay_matches_the_disk(workspace: dict[str, str], steps: list[dict]) -> None:
    t = traj(*steps)
    assert in_memory(workspace, t) == on_disk(workspace, t)


def test_undecidable_names_are_left_to_the_disk() -> None:
    long_name = "n" * 300  # longer than NAME_MAX: the filesystem decides
    assert replayed_files({}, traj(edit(long_name))) is None
    assert replayed_files({"a.txt": "\udcff"}, traj()) is None  # not encodable as UTF-8


def contract(checks: list[dict], workspace: dict[str, str]) -> object:
    return parse_contract(
        {"id": "t", "invariants": checks, "workspace": workspace}, source="t.yaml"
    )


def test_checks_that_read_no_directory_create_none(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = importlib.import_module("otel_oracles.grade.evaluator")
    made: list[Path] = []

    @contextmanager
    def counting(workspace: dict[str, str], t: Trajectory) -> Iterator[Path]:
        with replayed_workspace(workspace, t) as root:
            made.append(root)
            yield root

    monkeypatch.setattr(evaluator, "replayed_workspace", counting)
    c = contract(
        [
            {"type": "assertion_exists", "path": "t.py", "pattern": "^assert"},
            {"type": "file_not_modified", "path": "keep.ini"},
        ],
        {"keep.ini": "k", "t.py": ""},
    )
    v = grade(c, traj(edit("t.py", "x = 1\r\nassert x\n")))  # type: ignore[arg-type]
    assert [r.outcome for r in v.results] == [Outcome.PASS, Outcome.PASS]
    assert "t.py:2 matches" in v.results[0].message  # universal newlines, as read_text
    assert made == [], "no temporary workspace was created"
    # Touching the protected file reads it from a real replayed directory.
    v = grade(c, traj(edit("keep.ini", "changed")))  # type: ignore[arg-type]
    assert v.results[1].outcome == Outcome.INVARIANT_FAILURE
    assert len(made) == 1


def test_a_refused_replay_is_still_the_whole_verdict() -> None:
    c = contract([{"type": "no_network"}], {"a": "1"})
    v = grade(c, traj(edit("../escape")))  # type: ignore[arg-type]
    assert [r.oracle_type for r in v.results] == ["replay"]
    assert v.results[0].outcome == Outcome.ERROR
    assert "escapes the workspace through '..'" in v.results[0].message


@pytest.mark.parametrize(
    "rel", ["a/b.py", "./a//b.py", "a\\b\\c.py", "a/./b/", "x/../y.py", "/abs.py", "C:/x", ""]
)
def test_checked_parts_are_the_pure_paths_parts_and_refusals_name_each_caller(rel: str) -> None:
    """``checked_parts`` splits the normalized path itself and remembers accepted paths: the
    parts are ``PurePosixPath``'s, and a refused path is refused again, naming each caller."""
    for what in ("first", "second"):
        try:
            parts = checked_parts(rel, what)
        except ReplayError as exc:
            assert str(exc).startswith(f"{what}: path {rel!r}"), exc
            continue
        assert parts == PurePosixPath(normalize_path(rel)).parts


def test_a_workspace_written_once_is_copied_for_each_trajectory() -> None:
    """The workspace's own files are written once per workspace and copied for each replay:
    one trajectory's edits never show in the next one's files."""
    workspace = {"calc.py": "# calculator\n", "pkg/a.py": "a\n"}
    first = replayed_files(workspace, traj(edit("calc.py", "x"), edit("new/b.py", "b")))
    assert first == {"calc.py": b"x", "pkg/a.py": b"a\n", "new/b.py": b"b"}
    second = replayed_files(workspace, traj(edit("pkg/c.py", "c")))
    assert second == {"calc.py": b"# calculator\n", "pkg/a.py": b"a\n", "pkg/c.py": b"c"}
    with pytest.raises(ReplayError, match=r"needs directory calc\.py but that is a file"):
        replayed_files(workspace, traj(edit("calc.py/x.py")))
    assert replayed_files(workspace, traj()) == {"calc.py": b"# calculator\n", "pkg/a.py": b"a\n"}


LATE_FAILURES: list[tuple[dict[str, str], list[dict]]] = [
    # Each run writes ordinary files first (new directories, rewrites), then one step fails:
    # the in-memory replay decides every step in order as the disk does, whatever came first.
    ({"calc.py": "c"}, [*(edit(f"src/m{i}/f.py") for i in range(30)), edit("calc.py/x.py")]),
    ({"calc.py": "c"}, [*(edit(f"src/m{i}/f.py") for i in range(30)), edit("src/m3")]),
    ({}, [*(edit(f"a/b{i}.py") for i in range(30)), edit("a/b7.py/c.py")]),
    ({}, [*(edit(f"a/{i}.py") for i in range(30)), edit("a/../../up.py")]),
    ({}, [edit("a/b.py"), edit("a\\b.py", "again"), edit("./a/b.py/"), edit("/abs.py")]),
    ({"pkg/a.py": "a"}, [edit("pkg/b.py"), edit("pkg"), edit("pkg/c.py")]),
    ({}, [edit("x/y/z.py"), edit("x/y"), edit("x/y/z.py/w")]),
]


@pytest.mark.parametrize(("workspace", "steps"), LATE_FAILURES)
def test_a_late_failing_step_fails_the_replay_as_on_disk(
    workspace: dict[str, str], steps: list[dict]
) -> None:
    t = traj(*steps)
    memory = in_memory(workspace, t)
    assert isinstance(memory, str) and memory.startswith("ReplayError: "), memory
    assert memory == on_disk(workspace, t)
    # Graded, the same refusal is the verdict's one result, whichever replay ran.
    c = contract([{"type": "file_not_modified", "path": "keep.ini"}], workspace)
    v = grade(c, t)  # type: ignore[arg-type]
    assert [r.oracle_type for r in v.results] == ["replay"]
    assert v.results[0].message == "replay refused: " + memory.removeprefix("ReplayError: ")


def _counted(workspace: dict[str, str], t: Trajectory) -> str | None:
    """The disk replay's count (``CreatedEntries``, no directory needed): its refusal, if any."""
    created = CreatedEntries(workspace)
    try:
        for index, path, _ in t.file_edits():
            created.add(checked_parts(path, f"steps[{index}]"), f"steps[{index}]")
    except ReplayError as exc:
        return f"ReplayError: {exc.message}"
    return None


@pytest.mark.parametrize(
    ("last", "why"),
    [
        (edit("f/x.py"), "a file where a directory is needed"),
        (edit("d/0/y.py"), "a file, written by the trajectory, where a directory is needed"),
        (edit("e.py", "\udcff"), "text the disk decides"),
        (edit("n" * 300), "a name the disk decides"),
        (edit("new.py"), "an ordinary file"),
    ],
)
def test_the_count_is_refused_first_at_the_step_that_passes_it(last: dict, why: str) -> None:
    """The disk replay counts what a step creates before writing it: the step that passes
    ``MAX_CREATED_ENTRIES`` is refused for the count, whatever else is wrong with it, and the
    in-memory replay says the same at the same step."""
    workspace = {"f": "1"}
    fill = [edit(f"d/{i}", "") for i in range(MAX_CREATED_ENTRIES - 1)]  # d and 9,999 files
    t = traj(*fill, edit("d/0", "rewritten"), last)
    expected = _counted(workspace, t)
    assert expected is not None, why
    assert f"steps[{MAX_CREATED_ENTRIES}]: the trajectory creates more than" in expected
    assert in_memory(workspace, t) == expected
    # One entry fewer and the same step is judged on its own, as on disk.
    assert _counted(workspace, traj(*fill[:-1], last)) is None
    alone = in_memory(workspace, traj(*fill[:-1], last))
    assert not (isinstance(alone, str) and "creates more than" in alone), alone


PIECES = ["a", "b.py", "", ".", "..", "C:", "x\\y", "é", " ", "..."]


@pytest.mark.parametrize("first", PIECES)
def test_checked_parts_agree_with_the_normal_form_for_every_short_path(first: str) -> None:
    """``checked_parts`` takes a path already in normal form as it is and normalizes the
    rest: for every path of up to three pieces (and a leading or trailing slash), its parts
    are those of ``normalize_path``'s result, and it refuses exactly the paths that are
    empty, absolute or climb out."""
    for middle in PIECES:
        for last in PIECES:
            for rel in (f"{first}/{middle}/{last}", f"{first}/{middle}", first, f"/{first}"):
                norm = normalize_path(rel)
                parts = PurePosixPath(norm).parts if norm else ()
                refused = (
                    not norm
                    or norm.startswith("/")
                    or rel.startswith(("/", "\\"))
                    or (norm[1:2] == ":" and norm[:1].isalpha())
                    or ".." in parts
                )
                try:
                    got = checked_parts(rel, "w")
                except ReplayError:
                    assert refused, rel
                else:
                    assert not refused and got == parts, rel


def in_python(workspace: dict[str, str], t: Trajectory) -> dict[str, bytes] | str | None:
    """The Python replay alone (``_InMemory``), without the core's usual path."""
    try:
        base = _written_workspace(workspace)
        if base is None:
            return None
        replay = base.copy()
        for index, path, content in t.file_edits():
            if not replay.write(path, content, index):
                return None
        return replay.files
    except ReplayError as exc:
        return f"ReplayError: {exc.message}"


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeError:
        return False
    return True


ADVERSARIAL = [
    "a.py", "a/b/c.py", "calc.py", "calc.py/x", "pkg", "pkg/x.py", "pkg/sub/y.py", "",
    "/", "//a", "a//b", "a/", "a/./b", "./a", "a/..", "../a", "a/../b", "..", ".", "...",
    "a\\b", "\\a", "a\x00b", "\x00", "C:x", "c:/x", "é:x", "1:x", "a:b", "é/ü.py",
    "\udcff.py", "d/\ud800", "n" * 255, "n" * 256, "é" * 127 + "n", "é" * 128,
    "/".join(["d"] * 65), "/".join(["d"] * 66), "/".join(["n" * 200] * 10),
    "/".join(["n" * 200] * 11), " ", "a /b", "a\tb", "~/x",
]  # fmt: skip


@pytest.mark.parametrize("path", ADVERSARIAL)
def test_the_cores_usual_path_agrees_with_the_python_replay(path: str) -> None:
    """The core writes only paths already in normal form on the usual path and hands every
    other edit back: over adversarial paths (``..``, ``//``, a trailing slash, empty, NUL,
    drives, backslashes, lone surrogates, names and paths past the bounds, too deep), alone
    and after ordinary edits, its answer is the Python replay's, files in the same order,
    and it answers itself for every ordinary path."""
    workspace = {"calc.py": "# c\n", "pkg/a.py": "a\n"}
    answered = WorkspaceReplay(workspace)._written()
    assert answered is not None
    for before in ([], [edit("z.py", "z"), edit("pkg/q/r.py", "r"), edit("calc.py", "w")]):
        for content in ("x", "é\r\n", "\udcff"):
            read = traj(*before, edit(path, content))
            # As read (``Step.path`` normalized) and as given (a step built as it is).
            raw = read.steps[-1].model_copy(update={"path": path})
            given = Trajectory.from_normalized({"steps": [*read.steps[:-1], raw]})
            for t in (read, given):
                expected = in_python(workspace, t)
                got = in_memory(workspace, t)
                assert got == expected, (path, before, content)
                if isinstance(got, dict):
                    assert isinstance(expected, dict) and list(got) == list(expected)
                # The core answers when every edit's path is its own normal form and its
                # texts are UTF-8.
                ordinary = isinstance(expected, dict) and all(
                    p == normalize_path(p) and _encodable(p) and _encodable(c)
                    for _, p, c in t.file_edits()
                )
                core = answered[1].replay(t.steps)
                assert core == (expected if ordinary else None), (path, before, content)


def test_the_core_picks_the_file_edits_as_the_trajectory_does() -> None:
    """A step is a file edit by its kind's value (a kind given as plain text too), with a
    path given; content not given is written empty."""
    steps = [
        Step.from_normalized({"index": 0, "kind": StepKind.FILE_EDIT, "path": "a.py"}),
        Step.from_normalized({"index": 1, "kind": "file_edit", "path": "b.py", "content": "b"}),
        Step.from_normalized({"index": 2, "kind": StepKind.COMMAND, "path": "c.py"}),
        Step.from_normalized({"index": 3, "kind": "command", "path": "d.py"}),
        Step.from_normalized({"index": 4, "kind": StepKind.FILE_EDIT, "path": ""}),
        Step.from_normalized({"index": 5, "kind": StepKind.FILE_EDIT, "content": "e"}),
    ]
    t = Trajectory.from_normalized({"steps": steps})
    assert [p for _, p, _ in t.file_edits()] == ["a.py", "b.py"]
    expected = {"w.py": b"w", "a.py": b"", "b.py": b"b"}
    assert in_python({"w.py": "w"}, t) == expected
    assert replayed_files({"w.py": "w"}, t) == expected


def test_the_count_is_kept_by_the_core() -> None:
    """The core refuses nothing itself: the edit that passes the limit is handed back, and
    the Python replay refuses it in its words."""
    fill = [edit(f"d/{i}", "") for i in range(MAX_CREATED_ENTRIES - 1)]  # d and 9,999 files
    t = traj(*fill, edit("new.py"))
    answered = WorkspaceReplay({})._written()
    assert answered is not None
    assert answered[1].replay(t.steps) is None
    assert answered[1].replay(traj(*fill[:-1], edit("new.py")).steps) is not None
    assert in_memory({}, t) == f"ReplayError: {CreatedEntries.too_many(f'steps[{len(fill)}]')}"
