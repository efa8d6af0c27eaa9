"""The scan text (``Step.scan_text``, ``Step.raw_json``) and the pattern search the core makes
are exactly what the Python rules made (``tests/native/scan_reference.py``): on every step of
every captured trace, on the AgentBench fixtures, and on adversarial values built here
(deep nesting, long strings, JSON inside strings inside JSON, unicode, lone surrogates, NaN,
big integers, values pydantic converts)."""

from __future__ import annotations

import enum
import functools
import json
import math
import random
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_oracles._native import PatternSearch, ScanFields
from otel_oracles.grade.evidence import Evidence
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import (
    _SCAN_FIELDS,
    DEFAULT_NETWORK_PATTERNS,
    TOOLISH_KINDS,
    Step,
    StepKind,
    Trajectory,
    network_violations,
)
from otel_oracles.pipeline import read_traces
from tests.native import scan_reference as ref

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"

PATTERNS: tuple[str, ...] = (
    *DEFAULT_NETWORK_PATTERNS,
    "CURL",
    "curl",
    "é",
    "İ",
    "ß",
    "\u03c3",
    "\n",
    '"',
    "\\u",
    "KELVIN",
    "k",
    "\ud800",
    "x" * 40,
)
"""The default list plus patterns that reach the corners: repeated, upper-case, non-ASCII
(whose lower-casing changes length or depends on context), escapes, a lone surrogate."""

ONE_LINE_PATTERNS: tuple[str, ...] = tuple(p for p in PATTERNS if "\n" not in p)
"""The same without the line break: the search then writes only the strings the step's JSON
does not hold verbatim after it (``python/src/scan.rs``, ``Aside``), and must find the same
patterns as a search of the whole text."""

STRING_PATTERNS: tuple[str, ...] = (
    *(p for p in ONE_LINE_PATTERNS if p != '"'),
    "\u03c2",
    "\u03a3",
    "\\n",
    "\\",
    "rue x",
    "pm install",
    ":/",
    "y, z",
    "\u212a",
)
"""Patterns that occur within one string of a scan text only (``scan::within_strings``: no
quote, no line break, none made of the JSON's punctuation, numbers and literals alone): the
search then writes no JSON, only each string between quotes as the JSON writes it and the
lines of strings it lacks (``python/src/scan.rs``, ``Strings::Pieces``). Among them: both
sigmas (whose lower-casing depends on the characters around), escapes, letters next to a
space or a literal's letters, punctuation the JSON also writes."""

PIECE_PATTERNS: tuple[str, ...] = tuple(p for p in STRING_PATTERNS if "\\" not in p)
"""The same without a backslash: no pattern holds a byte the JSON escapes
(``scan::line_matches_in_piece``), so the line of a string written with escapes is left out
where its piece holds what the line would (``Writer::escaped_alone``: a string without
``\u03a3``)."""


@functools.cache
def captured_steps() -> list[Step]:
    """Every step of every trajectory mapped from the captured traces."""
    problems: list[Any] = []
    conventions = load_conventions()
    steps = [
        step
        for trace in read_traces([str(TRACES)], problems)
        for step in map_trace(trace, conventions).steps
    ]
    assert len(steps) > 1000
    return steps


def agentbench_steps() -> Iterator[Step]:
    for path in sorted((REPO / "examples" / "trajectories").glob("*.json")):
        yield from Trajectory.load(path).steps


def outcome(make: Callable[[], str]) -> tuple[str, str]:
    """What ``make`` returns, or the exception it raises (type and message)."""
    try:
        return "text", make()
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc).__name__, str(exc)


def assert_same(step: Step) -> None:
    """Same scan text, raw JSON and pattern matches as the reference (or the same error)."""
    expected = outcome(lambda: ref.scan_text(step))
    assert outcome(step.scan_text) == expected
    assert outcome(step.raw_json) == outcome(lambda: ref.raw_json(step))
    if expected[0] != "text":
        return
    t = Trajectory(steps=[step.model_copy(update={"index": 0})])
    for patterns in (PATTERNS, ONE_LINE_PATTERNS, STRING_PATTERNS, PIECE_PATTERNS):
        assert [v.pattern for v in t.find_network_violations(patterns)] == (
            [patterns[i] for i in ref.occurring(patterns, expected[1])]
            if step.raw is not None or step.is_tool
            else []
        )


def test_every_captured_step_scans_as_before() -> None:
    for step in captured_steps():
        assert_same(step)


def test_captured_steps_are_read_by_the_core_without_pydantic() -> None:
    # The fallback through ``model_dump`` is for values pydantic converts; what the mapper
    # makes of real traces is plain data the core reads itself.
    digits = sys.get_int_max_str_digits()
    for step in captured_steps():
        assert _SCAN_FIELDS.scan_text(step.__dict__, digits, True) == step.scan_text()


def test_every_agentbench_fixture_step_scans_as_before() -> None:
    steps = list(agentbench_steps())
    assert len(steps) >= 8
    for step in steps:
        assert_same(step)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Text(str):
    pass


def nest(depth: int, leaf: Any, as_dict: bool = False) -> Any:
    value = leaf
    for i in range(depth):
        value = {f"k{i}": value} if as_dict else [value]
    return value


def json_in_json(levels: int, leaf: str) -> str:
    text = json.dumps({"cmd": leaf})
    for _ in range(levels):
        text = json.dumps({"args": text, "n": [1.5, None, True]})
    return text


ODD_VALUES: list[Any] = [
    "",
    "plain curl",
    "CURL https://X",
    "é İ ß Σ ΣΑ ᾼ \u212a \u0130",
    "x\ud800y",
    "\udc00\ud83d\ude00",
    '["\\ud800", "\\ud83d\\ude00", "\\udc00\\ud800", "c\\u0075rl"]',
    '{"a": NaN, "b": Infinity, "c": -Infinity, "d": "w\\u0067et"}',
    '{"a": 1, "a": 2, "b": "x", "a": "curl"}',
    '{"k": "' + "1" * 5000 + '"}',
    "[" + "1" * 5000 + ', "wget"]',
    "[" + "1" * 4300 + ', "wget"]',
    "[1e400, -0, 0.5e-3, 1E+2]",
    ' \t\n["ok"] \r\n',
    '\u00a0["nbsp"]',
    '\ufeff["bom"]',
    "[1,]",
    "[01]",
    "{'single': 'quotes'}",
    '["\\x"]',
    '["tab\there"]',
    '["\\u12"]',
    "[-]",
    "[1.]",
    "[1e]",
    "[-Infinity, -Inf]",
    "[true, false, null, nul]",
    '{"a" "b"}',
    "[" * 850 + '"deep"' + "]" * 850,
    "[" * 5000 + "]" * 5000,
    "{" * 3 + "}",
    json_in_json(3, "curl"),
    json_in_json(16, "wget"),
    "[" + json.dumps(json.dumps(json.dumps(["c\u0075rl"]))) + "]",
    "x" * (1 << 20) + "[",
    "[" + " " * (1 << 20) + "]",
    "[" + "\u00e9" * ((1 << 20) - 3) + "]",
    "[" + json.dumps("\u00e9" * ((1 << 20) - 4)) + "]",
    '\x00\x01\x1f\x7f"\\',
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    1e-7,
    1e16,
    0.1,
    2**64,
    -(2**63) - 1,
    10**400,
    True,
    None,
    (1, "two", ("three",)),
    [None, [], {}, [[[]]]],
    {"": "", "b": {"c": ["d"]}, "a": 1},
    {"ü": 1, "u": 2, "\ud800": 3, "\ue000": 4, "😀": 5, "Z": 6},
    nest(30, "deep-list curl"),
    nest(40, "too deep"),
    nest(34, "dict", as_dict=True),
    nest(199, "x"),
    nest(230, "y", as_dict=True),
    nest(260, "z"),
    nest(33, json.dumps(["deeper"])),
    nest(31, json.dumps([["c\\u0075rl"], {"k": "wget"}])),
]
"""Values placed in a step's fields: each reaches a rule of the text (escapes, key order,
nested JSON acceptance and its bounds, float and integer spelling, depth limits)."""

CONVERTED_VALUES: list[Any] = [
    Colour.RED,
    Level.HIGH,
    Text("str subclass"),
    b"bytes curl",
    {1, 2},
    frozenset({"wget"}),
    {1: "int key", "1": "str key"},
    {None: "none key", 2.5: "float key", (1, 2): "tuple key", Colour.RED: "enum key"},
    {True: "bool key"},
    {math.nan: "nan key", "a": [math.nan]},
    [Colour.RED, {"x": b"y"}],
    1 + 2j,
]
"""Values pydantic converts (the core leaves those steps to ``model_dump``)."""


def field_steps(value: Any) -> Iterator[Step]:
    """Steps holding ``value`` in each field that can hold any value."""
    blank = Step(index=0, kind=StepKind.COMMAND, tool="bash")
    yield blank.model_copy(update={"result": value})
    yield blank.model_copy(update={"arguments": {"command": value, "curl": [value]}})
    yield blank.model_copy(update={"attributes": {"k": value}, "synthesized": True})
    yield blank.model_copy(update={"input_messages": [{"content": value}], "redacted": ("a",)})
    if isinstance(value, str):
        yield blank.model_copy(
            update={
                "command": value,
                "tool": value,
                "finish_reasons": [value],
                "arguments_raw": value,
                "start_ns": 2**70,
                "end_ns": -1,
            }
        )


@pytest.mark.parametrize("number", range(len(ODD_VALUES)))
def test_odd_values_scan_as_before(number: int) -> None:
    for step in field_steps(ODD_VALUES[number]):
        assert_same(step)


@pytest.mark.parametrize("number", range(len(CONVERTED_VALUES)))
def test_values_pydantic_converts_scan_as_before(number: int) -> None:
    for step in field_steps(CONVERTED_VALUES[number]):
        assert_same(step)


def test_fields_of_another_type_than_declared_scan_as_before() -> None:
    # pydantic converts (a bool in an int field becomes 1) or warns; the core leaves them
    # to it, so the text, and the warning, are pydantic's.
    blank = Step(index=0, kind=StepKind.TOOL_CALL, tool="t")
    for update in [
        {"input_tokens": True},
        {"status": "weird"},
        {"kind": "tool_call"},
        {"tool": 5},
        {"redacted": ["a"]},
        {"finish_reasons": ("a",)},
        {"synthesized": 1},
        {"documents": [{"a": 1}, "b"]},
    ]:
        step = blank.model_copy(update=update)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(step)


def test_values_pydantic_refuses_are_refused_as_before() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for value in (nest(300, "x"), cyclic, object(), 10**5000):
        step = Step(index=0, kind=StepKind.TOOL_CALL).model_copy(update={"result": value})
        with pytest.raises(ValueError) as before:
            ref.scan_text(step)
        with pytest.raises(ValueError) as now:
            step.scan_text()
        assert type(now.value) is type(before.value)
        assert str(now.value) == str(before.value)


AGENTBENCH_OBJECTS: list[dict[str, Any]] = [
    {"tool": "bash", "args": {"command": "curl https://x"}, "status": "ok"},
    {"tool": "bash", "arguments": '{"cmd": "w\\u0067et x"}', "result": "NaN"},
    {"type": "command", "command": "ls", "output": [math.nan, math.inf, -math.inf, 2**80]},
    {"tool": "write_file", "path": "a.py", "content": 'é\ud800\n"\\', "z": {"b": 1, "a": 2}},
    {"tool": "t", "result": {1: "int key", 2.5: "float", None: "none", False: "bool"}},
    {"tool": "t", "result": {10: "a", 9: "b"}},
    {"tool": "t", "result": (1, [2, (3,)])},
    {"tool": "t", "result": Colour.RED},
    {"tool": "t", "result": Text("sub")},
    {"tool": "t", "result": {"set": {1}}},
    {"tool": "t", "result": nest(190, "deep")},
    {"tool": "t", "result": nest(400, "deeper")},
    {"tool": "t", "result": -0.0, "x": 1e22, "y": 5e-324},
]
"""AgentBench step objects, including what no JSON file holds (non-str keys, tuples, other
objects: ``json.dumps`` converts or writes them with ``default=str``)."""


@pytest.mark.parametrize("number", range(len(AGENTBENCH_OBJECTS)))
def test_agentbench_objects_scan_as_before(number: int) -> None:
    obj = AGENTBENCH_OBJECTS[number]
    step = Step(index=0, kind=StepKind.TOOL_CALL, tool="t", raw=obj)
    assert_same(step)


def test_agentbench_keys_python_cannot_write_are_refused_as_before() -> None:
    step = Step(index=0, kind=StepKind.TOOL_CALL, raw={"r": {(1, 2): "tuple key"}})
    with pytest.raises(TypeError, match="keys must be str"):
        ref.raw_json(step)
    with pytest.raises(TypeError, match="keys must be str"):
        step.raw_json()


def random_text(rng: random.Random) -> str:
    pieces = [
        "curl",
        "WGET",
        "Https://",
        "pip  install",
        "pip install",
        "\u212a",
        "İ",
        "Σ",
        "é",
        "\ud800",
        "\\u0063",
        '"',
        "\\",
        "{",
        "[",
        "]",
        "}",
        ",",
        ":",
        " ",
        "\n",
        "1",
        "-0",
        "NaN",
        "true",
        "\x00",
        "x",
    ]
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))


def test_random_texts_scan_and_match_as_before() -> None:
    rng = random.Random(18)
    for _ in range(3000):
        text = random_text(rng)
        arguments = {"command": text, random_text(rng): [text, json.dumps(text)]}
        step = Step(index=0, kind=StepKind.COMMAND, tool="bash").model_copy(
            update={"arguments": arguments, "result": json.dumps(arguments)}
        )
        assert_same(step)


def test_evidence_searches_each_steps_own_text() -> None:
    steps = [
        Step(index=0, kind=StepKind.COMMAND, tool="bash", command="curl x"),
        Step(index=1, kind=StepKind.GENERATION, output_messages=[{"content": "curl"}]),
        Step(index=2, kind=StepKind.TOOL_CALL, tool="fetch", arguments={"u": "https://y"}),
    ]
    ev = Evidence(Trajectory(steps=steps))
    first = ev.network_violations(DEFAULT_NETWORK_PATTERNS, ev.trajectory.steps)
    # The model call is not scanned.
    assert [(v.step_index, v.pattern) for v in first] == [(0, "curl"), (2, "https://")]
    again = ev.network_violations(("HTTPS://", "curl"), steps[2:])
    assert [(v.step_index, v.pattern) for v in again] == [(2, "HTTPS://")]
    # A step from elsewhere with a trajectory step's index is searched in its own text.
    other = Step(index=2, kind=StepKind.COMMAND, tool="sh", command="wget z")
    assert [v.pattern for v in ev.network_violations(("wget",), [other])] == ["wget"]
    assert network_violations(steps, ("nothing",)) == []


def test_one_buffer_holds_one_step_at_a_time() -> None:
    # The walk writes every step into one buffer: a short step after a long one is
    # searched in its own text only, and a non-ASCII text (lower-cased by Python) between
    # ASCII ones changes neither.
    steps = [
        Step(index=0, kind=StepKind.COMMAND, tool="bash", command="x" * 5000 + " CURL"),
        Step(index=1, kind=StepKind.COMMAND, tool="bash", command="ls"),
        Step(index=2, kind=StepKind.COMMAND, tool="bash", command="\u0130 wGet \u00e9"),
        Step(index=3, kind=StepKind.COMMAND, tool="bash", command="cur"),
    ]
    patterns = ("curl", "wget", "\u00c9")
    found = network_violations(steps, patterns)
    assert [(v.step_index, v.pattern) for v in found] == [(0, "curl"), (2, "wget"), (2, "\u00c9")]
    reference = [
        (step.index, patterns[i])
        for step in steps
        for i in ref.occurring(patterns, ref.scan_text(step))
    ]
    assert [(v.step_index, v.pattern) for v in found] == reference


@pytest.mark.parametrize("patterns", [PATTERNS, STRING_PATTERNS, DEFAULT_NETWORK_PATTERNS])
def test_trajectories_scan_in_one_call_as_step_by_step(patterns: tuple[str, ...]) -> None:
    # The core's walk over whole trajectories (skipping model calls, AgentBench steps all
    # scanned, hits in step then pattern order) against the reference, step by step.
    steps = captured_steps() + list(agentbench_steps())
    reference = [
        (step.index, step.tool, pattern)
        for step in steps
        if step.raw is not None or step.is_tool
        for pattern in (patterns[i] for i in ref.occurring(patterns, ref.scan_text(step)))
    ]
    found = network_violations(steps, patterns)
    assert len(found) > 10
    assert [(v.step_index, v.tool, v.pattern) for v in found] == reference


def test_which_searches_read_the_strings_alone() -> None:
    # The usual list and STRING_PATTERNS are searched in the strings alone; a quote, a line
    # break, or a pattern the JSON around the strings may hold needs the written text.
    assert PatternSearch(DEFAULT_NETWORK_PATTERNS).strings_only
    assert PatternSearch(STRING_PATTERNS).strings_only
    assert PatternSearch(("YARN INSTALL", "", "\u0130")).strings_only
    for odd in ('"', "\n", "null", "True", "nan", "in", "1", "1E+5", ": ", ", ", "]", "{"):
        assert not PatternSearch(("curl", odd)).strings_only, odd


def assert_found_as_the_reference(
    steps: list[Step], patterns: tuple[str, ...]
) -> list[tuple[int, str]]:
    """The core's hits, step then pattern order, asserted equal to the reference's."""
    found = [(v.step_index, v.pattern) for v in network_violations(steps, patterns)]
    reference = [
        (step.index, patterns[i])
        for step in steps
        for i in ref.occurring(patterns, ref.scan_text(step))
    ]
    assert found == reference
    return found


def test_strings_are_searched_apart_from_each_other() -> None:
    # Where strings, keys and numbers meet in the JSON only punctuation and quotes stand
    # between them: no pattern found across them; escapes are searched as written (a line
    # break before "pm install" writes "\npm install"), and the unescaped string too.
    patterns = ("curl", "npm install", "null", "1e", "\u03c2", "\\")
    search = PatternSearch(patterns)
    assert not search.strings_only
    quiet = Step(index=0, kind=StepKind.COMMAND, tool="bash").model_copy(
        update={"arguments": {"cu": "rl", "x": ["np", "m install"], "n": None, "ul": "l"}}
    )
    escaped = Step(index=1, kind=StepKind.COMMAND, tool="bash").model_copy(
        update={"arguments": {"c": "\npm install", "\u03a3": "A\u03a3"}}
    )
    raw = Step(index=2, kind=StepKind.TOOL_CALL, raw={"a": {"cu": "rl", "k": "\npm install"}})
    steps = [quiet, escaped, raw]
    for chosen in (patterns, patterns[:2], patterns[4:], ("npm install", "\u03c2")):
        assert_found_as_the_reference(steps, chosen)
    found = network_violations(steps, ("npm install", "\u03c2", "cu", "rl"))
    assert [(v.step_index, v.pattern) for v in found] == [
        (0, "cu"),
        (0, "rl"),
        (1, "npm install"),
        (1, "\u03c2"),
        (2, "npm install"),
        (2, "cu"),
        (2, "rl"),
    ]


def test_pieces_are_lower_cased_as_they_are_written() -> None:
    # A search of the strings alone copies each one lower-cased as it writes it, sixteen
    # bytes at a time (eight, then one, for short strings; the last block overlapping the
    # one before): mixed-case patterns at every offset of strings of every length around
    # those sizes, next to the bytes just past `A` and `Z`, an escape or a non-ASCII
    # character (the step is then lower-cased by Python), are found as the reference finds
    # them, and `@`, `[`, `` ` ``, `{` are left as they are.
    patterns = ("CuRl", "wget", "@[", "`{", "pm install", "\u00e9", "\u03c2", "\u212a")
    assert PatternSearch(patterns).strings_only
    fillers = ("x", "@[", "`{", "\n", '"', "\u00c9", "A\u03a3", "\u212a")
    steps = []
    for length in range(0, 40):
        for at in range(0, length + 1, 3):
            for filler in fillers:
                text = ("Y" * length)[:at] + "cURL" + filler + "Y" * (length - at)
                steps.append(
                    Step(index=len(steps), kind=StepKind.COMMAND, tool="bash").model_copy(
                        update={"arguments": {text[: length // 2]: text, "w": ["WGET" + filler]}}
                    )
                )
    for chosen in (patterns, patterns[:5]):
        found = assert_found_as_the_reference(steps, chosen)
        assert {pattern for _, pattern in found} >= set(chosen[:5]) - {"pm install"}


def test_escaped_strings_are_searched_in_their_pieces() -> None:
    # Searching patterns that hold no byte the JSON escapes, a string written with escapes
    # is searched in its piece alone, unless it holds a capital sigma: its lower-casing
    # depends on the character before it, an escape's letter in the piece (`A\\n\u03a3`
    # lower-cases to `a\\n\u03c2`) and a line break in the line (`a`, a line break,
    # `\u03c3`). The strings of JSON inside a string are still searched.
    patterns = ("\u03c3", "\u03c2", "curl", "npm install", "k")
    search = PatternSearch(patterns)
    assert search.strings_only
    values = [
        "A\n\u03a3",
        'say "A\u03a3"',
        "\tcurl\\",
        "\npm install",
        json.dumps({"k\n": "cURL \u03a3"}),
        json.dumps(["\u212a\n\u03a3"]),
        "\u03a3\n",
    ]
    steps = [
        Step(index=i, kind=StepKind.COMMAND, tool="bash").model_copy(
            update={"arguments": {value: value, "v": [value]}}
        )
        for i, value in enumerate(values)
    ]
    for chosen in (patterns, patterns[:1], patterns[1:], ("\u03c3", "npm install")):
        assert_found_as_the_reference(steps, chosen)
    found = network_violations(steps, ("\u03c3",))
    assert [v.step_index for v in found] == [0, 4, 5, 6]


def test_long_keys_are_searched_each_time_they_are_met() -> None:
    # Keys past the kept keys' length limit (256 characters) are written at every meeting,
    # not kept for the search's life: met twice, at and past the limit, with a pattern at
    # each end, they are found as the reference finds them.
    keys = ["curl" + "x" * (length - 8) + "wget" for length in (255, 256, 257, 5000)]
    steps = [
        Step(index=i, kind=StepKind.TOOL_CALL, tool="t").model_copy(
            update={"arguments": {key: "v" for key in keys}}
        )
        for i in range(2)
    ]
    for chosen in (("curl", "wget"), ("wget",), ("xcurl",)):
        found = assert_found_as_the_reference(steps, chosen)
        assert len(found) == (4 if chosen == ("curl", "wget") else 2 if chosen == ("wget",) else 0)


def test_keys_met_again_hold_their_patterns_where_they_are() -> None:
    # The patterns in a key are worked out where the key object is first met and added
    # wherever it is met again (a slot a key, picked by its address): the same key objects
    # in many steps and dicts, more keys than slots, equal keys that are other objects,
    # keys with escapes, non-ASCII ones lower-cased alone.
    patterns = ("curl", "wget", "\u03c2", "\u00e9", "ey")
    keys = [f"key{i}" for i in range(200)] + ["CURL", 'c"url', "A\u03a3", "\u00c9", "wg\net"]
    rng = random.Random(38)
    steps = []
    for i in range(400):
        chosen = rng.sample(keys, 4)
        inner = {rng.choice(keys): "x", "".join(["CU", "RL"]): i}
        steps.append(
            Step(index=i, kind=StepKind.TOOL_CALL, tool="t").model_copy(
                update={"arguments": {chosen[0]: inner, chosen[1]: [{chosen[2]: chosen[3]}]}}
            )
        )
    for chosen_patterns in (patterns, patterns[1:], ("ey",)):
        assert_found_as_the_reference(steps, chosen_patterns)
    assert {v.pattern for v in network_violations(steps, patterns)} == set(patterns) - {"wget"}


NAME_PATTERNS: tuple[str, ...] = (
    "command",
    "ERROR_MESSAGE",
    "_id",
    "kind",
    "ool_c",
    "ents",
    "",
    "curl",
)
"""Patterns in the names of the fields a step may hold (and in its values): a search of the
strings alone knows beforehand which patterns each field's name holds, and writes no name."""


def name_steps() -> list[Step]:
    return [
        Step(index=0, kind=StepKind.COMMAND, tool="bash", command="ls"),
        Step(index=1, kind=StepKind.TOOL_CALL, tool="x", call_id="c1", error_message="boom"),
        Step(index=2, kind=StepKind.FILE_EDIT, path="a", content="CURL"),
        Step(index=3, kind=StepKind.TOOL_CALL, raw={"command": "x", "kind": 1}),
        Step(index=4, kind=StepKind.GENERATION, model="command"),
    ]


def test_field_names_hold_their_patterns_where_the_field_is_present() -> None:
    # A name's patterns are found in a step exactly when its field is (not None).
    search = PatternSearch(NAME_PATTERNS)
    assert search.strings_only
    steps = name_steps()
    reference = [
        (step.index, NAME_PATTERNS[i])
        for step in steps
        if step.raw is not None or step.is_tool
        for i in ref.occurring(NAME_PATTERNS, ref.scan_text(step))
    ]
    found = network_violations(steps, NAME_PATTERNS)
    assert [(v.step_index, v.pattern) for v in found] == reference
    assert (0, "command") in reference and (1, "ERROR_MESSAGE") in reference
    assert (2, "command") not in reference and (2, "ERROR_MESSAGE") not in reference


def test_field_names_are_known_for_the_fields_searched() -> None:
    # The names' patterns are worked out for the ScanFields of the first search and kept
    # for it; a search with other fields reads their own names, before or after.
    digits = sys.get_int_max_str_digits()
    fewer = ScanFields([("kind", "enum", StepKind), ("command", "str", None)])
    steps = name_steps()

    def by_fields(fields: ScanFields) -> list[tuple[int, str]]:
        texts = [fields.scan_text(vars(step), digits, True) for step in steps]
        return [
            (step.index, NAME_PATTERNS[i])
            for step, text in zip(steps, texts, strict=True)
            if step.raw is None and step.is_tool
            for i in ref.occurring(NAME_PATTERNS, text or "")
        ] + [(3, NAME_PATTERNS[i]) for i in ref.occurring(NAME_PATTERNS, ref.scan_text(steps[3]))]

    for order in ((_SCAN_FIELDS, fewer, _SCAN_FIELDS), (fewer, _SCAN_FIELDS, fewer)):
        search = PatternSearch(NAME_PATTERNS)
        for fields in order:
            hits = search.violations(steps, fields, digits, TOOLISH_KINDS, Step.scan_text)
            assert sorted((i, NAME_PATTERNS[p]) for i, _, p in hits) == sorted(by_fields(fields))
    assert (0, "ERROR_MESSAGE") not in by_fields(fewer)
    assert (1, "ERROR_MESSAGE") in by_fields(_SCAN_FIELDS)


def test_a_steps_dict_is_read_whatever_its_keys_are() -> None:
    # The core reads a step's __dict__ in one pass, expecting the names themselves in
    # declared order; equal copies of the names, another order, or a key of a str subclass
    # read the same values.
    step = Step(
        index=0, kind=StepKind.COMMAND, tool="bash", command="curl x", error_message="wget y"
    ).model_copy(update={"arguments": {"u": "https://z"}})
    patterns = (*DEFAULT_NETWORK_PATTERNS, "command", "error_m")
    expected = [patterns[i] for i in ref.occurring(patterns, ref.scan_text(step))]
    assert expected == ["curl", "wget", "https://", "command", "error_m"]
    copies = {"".join(list(key)): value for key, value in vars(step).items()}
    assert not any(a is b for a, b in zip(copies, vars(step), strict=True))
    subclassed = {Text(k) if k == "command" else k: v for k, v in vars(step).items()}
    for values in (copies, dict(reversed(vars(step).items())), subclassed):
        odd = object.__new__(Step)
        object.__setattr__(odd, "__dict__", values)
        assert odd.scan_text() == ref.scan_text(step)
        for chosen in (patterns, ("command", '"')):
            assert [v.pattern for v in network_violations([odd], chosen)] == [
                chosen[i] for i in ref.occurring(chosen, ref.scan_text(step))
            ]


def test_int_digit_limit_is_the_interpreters() -> None:
    text = "[" + "1" * 700 + ', "c\\u0075rl"]'
    step = Step(index=0, kind=StepKind.COMMAND, tool="bash", command=text)
    limit = sys.get_int_max_str_digits()
    try:
        for digits in (640, 0, 4300):
            sys.set_int_max_str_digits(digits)
            assert step.scan_text() == ref.scan_text(step)
        sys.set_int_max_str_digits(640)
        assert "\ncurl" not in step.scan_text()
        sys.set_int_max_str_digits(0)
        assert "\ncurl" in step.scan_text()
    finally:
        sys.set_int_max_str_digits(limit)
