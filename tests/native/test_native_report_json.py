"""The JSON report's text is written by the core (``json_indented``): it must be the very
bytes ``json.dumps(value, indent=2, ensure_ascii=False)`` writes, for every verdict real
traces give and for odd and random values, and it must leave to ``json.dumps`` every value it
cannot write exactly the same (so such a value still gets Python's text or Python's error)."""

from __future__ import annotations

import enum
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from otel_oracles._native import json_indented, report_text
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions
from otel_oracles.pipeline import grade_paths
from otel_oracles.report import json_safe, report_data
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
TRACES = REPO / "tests" / "testdata" / "traces"


def python_text(value: Any, indent: int = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)


def test_every_report_of_the_captured_traces_is_written_as_python_writes_it() -> None:
    contracts = [load_contract(p) for p in sorted((REPO / "examples" / "contracts").glob("*.y*ml"))]
    session = GradingSession(contracts, load_conventions([]))
    files = sorted(str(p) for p in TRACES.glob("*/*.otlp.json"))[::7]
    report = grade_paths(files, session)
    assert len(report.verdicts) > 100
    data = report_data(report)
    assert json_indented(data, 2) == python_text(data)
    for verdict in data["verdicts"]:
        assert json_indented(verdict, 2) == python_text(verdict)


class Color(enum.IntEnum):
    RED = 7


class Label(enum.StrEnum):
    PASS = "pass"


ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    0.0,
    -0.0,
    0.1,
    1e16,
    1e-7,
    123456789.125,
    5e-324,
    1.7976931348623157e308,
    math.inf,
    -math.inf,
    math.nan,
    "",
    "plain",
    'quote " backslash \\ slash /',
    "\n\r\t\b\f\x00\x1f\x7f\x80\u2028\u2029",
    "é 日本 😀",
    [],
    {},
    (),
    [[]],
    {"": {}},
    (1, "two", [3.0]),
    {"a": [1, {"b": None}], "c": (True, False)},
    Color.RED,
    Label.PASS,
    {"nested": {"deep": [[[{"x": "y"}]]]}},
]


@pytest.mark.parametrize("number", range(len(ODD_VALUES)))
def test_odd_values_are_written_as_python_writes_them(number: int) -> None:
    value = ODD_VALUES[number]
    for indent in (0, 2, 4):
        assert json_indented(value, indent) == python_text(value, indent)
        for level in (1, 2):
            shifted = python_text(value, indent).replace("\n", "\n" + " " * indent * level)
            assert json_indented(value, indent, level) == shifted


class Listing(list[int]):
    pass


class Table(dict[str, int]):
    pass


LEFT_TO_PYTHON: list[Any] = [
    {1: "int key"},
    {None: "none key"},
    {("a",): "tuple key"},
    {"lone": "\ud800"},
    {"\udfff": "lone in a key"},
    2**64,
    -(2**70),
    Listing([1]),
    Table(a=1),
    {"a": {1, 2}},
    b"bytes",
    object(),
    [
        [
            [
                [
                    [
                        [
                            [
                                [
                                    [
                                        [
                                            [
                                                [
                                                    [
                                                        [
                                                            [
                                                                [
                                                                    [
                                                                        [
                                                                            [
                                                                                [
                                                                                    [
                                                                                        [
                                                                                            [
                                                                                                [
                                                                                                    [
                                                                                                        [
                                                                                                            [
                                                                                                                [
                                                                                                                    [
                                                                                                                        [
                                                                                                                            [
                                                                                                                                [
                                                                                                                                    [
                                                                                                                                        [
                                                                                                                                            [
                                                                                                                                                [
                                                                                                                                                    [
                                                                                                                                                        [
                                                                                                                                                            [
                                                                                                                                                                [
                                                                                                                                                                    [
                                                                                                                                                                        [
                                                                                                                                                                            [
                                                                                                                                                                                [
                                                                                                                                                                                    [
                                                                                                                                                                                        [
                                                                                                                                                                                            [
                                                                                                                                                                                                [
                                                                                                                                                                                                    [
                                                                                                                                                                                                        [
                                                                                                                                                                                                            [
                                                                                                                                                                                                                [
                                                                                                                                                                                                                    [
                                                                                                                                                                                                                        [
                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                                                []
                                                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                ]
                                                                                                                                                                                                            ]
                                                                                                                                                                                                        ]
                                                                                                                                                                                                    ]
                                                                                                                                                                                                ]
                                                                                                                                                                                            ]
                                                                                                                                                                                        ]
                                                                                                                                                                                    ]
                                                                                                                                                                                ]
                                                                                                                                                                            ]
                                                                                                                                                                        ]
                                                                                                                                                                    ]
                                                                                                                                                                ]
                                                                                                                                                            ]
                                                                                                                                                        ]
                                                                                                                                                    ]
                                                                                                                                                ]
                                                                                                                                            ]
                                                                                                                                        ]
                                                                                                                                    ]
                                                                                                                                ]
                                                                                                                            ]
                                                                                                                        ]
                                                                                                                    ]
                                                                                                                ]
                                                                                                            ]
                                                                                                        ]
                                                                                                    ]
                                                                                                ]
                                                                                            ]
                                                                                        ]
                                                                                    ]
                                                                                ]
                                                                            ]
                                                                        ]
                                                                    ]
                                                                ]
                                                            ]
                                                        ]
                                                    ]
                                                ]
                                            ]
                                        ]
                                    ]
                                ]
                            ]
                        ]
                    ]
                ]
            ]
        ]
    ],
]


@pytest.mark.parametrize("number", range(len(LEFT_TO_PYTHON)))
def test_values_it_cannot_write_exactly_are_left_to_python(number: int) -> None:
    assert json_indented(LEFT_TO_PYTHON[number], 2) is None


def test_a_cycle_is_left_to_python_which_refuses_it() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    assert json_indented(cycle, 2) is None
    with pytest.raises(ValueError, match="Circular reference"):
        python_text(cycle)


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 6 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**63), 2**63 - 1)
    if kind == 2:
        return rng.choice([rng.random() * 10 ** rng.randint(-30, 30), rng.randint(-9, 9) / 4])
    if kind in (3, 4, 5):
        alphabet = 'ab "\\\n\t\x01\x1f\x7fé日😀\u2028/'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys = [str(random_value(rng, 6)) for _ in range(rng.randrange(4))]
    return {key: random_value(rng, depth + 1) for key in keys}


def test_random_values_are_written_as_python_writes_them() -> None:
    rng = random.Random(18)
    for _ in range(3000):
        value = random_value(rng)
        assert json_indented(value, 2) == python_text(value), value


def test_short_strings_around_the_word_sizes_are_written_as_python_writes_them() -> None:
    """Strings of up to 32 UTF-8 bytes are tested and copied by overlapping words: every
    length around 4, 8, 16 and 32 bytes, with a character to escape (or a multi-byte one)
    at each place, as keys and as values, at ``indent=0`` (the stand-in text ``citations``
    searches) and 2."""
    specials = ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "日", "😀", "\u2028", "/"]
    for length in range(41):
        plain = "".join(chr(ord("a") + i % 26) for i in range(length))
        values: list[Any] = [plain, Label.PASS, {plain: plain}]
        for special in specials:
            for at in range(length + 1):
                text = plain[:at] + special + plain[at:]
                values.append({text: [text, {"id": text, "score": 0.5}]})
        for indent in (0, 2):
            for value in values:
                assert json_indented(value, indent) == python_text(value, indent), value


def report_expected(value: Any, level: int) -> bytes | type[BaseException]:
    """What the report makes of ``value`` at ``level`` by its definition (``json.dumps``,
    shifted, ``json_safe``, UTF-8 with each surrogate as its escape), or the error that
    raises."""
    try:
        text = python_text(value).replace("\n", "\n" + "  " * level)
        return json_safe(text).encode("utf-8", "backslashreplace")
    except (TypeError, ValueError, RecursionError) as err:
        return type(err)


REPORT_VALUES: list[Any] = [
    *LEFT_TO_PYTHON,
    *ODD_VALUES,
    {"message": "lone \ud800 surrogate", "n": [1, 2]},
    {"big": 2**70, "x": {}},
    {1.5: "float key", True: "true", False: "false", Color.RED: "enum key"},
    {"unsafe": "\x1b[2J\x7f\x85\u202e", "\u2066key": 1},
    Label.PASS,
]


@pytest.mark.parametrize("number", range(len(REPORT_VALUES)))
def test_the_report_writes_every_value_as_json_dumps_does(number: int) -> None:
    """``report_text``, the report's writer of what surrounds its verdicts, writes what
    ``json_indented`` leaves as ``json.dumps`` does, and refuses what it refuses."""
    value = REPORT_VALUES[number]
    for level in (0, 2):
        want = report_expected(value, level)
        if isinstance(want, bytes):
            assert report_text(value, level) == want
        else:
            with pytest.raises(want):
                report_text(value, level)


def test_the_report_refuses_a_cycle_as_json_dumps_does() -> None:
    cycle: list[Any] = [{}]
    cycle[0]["again"] = cycle
    with pytest.raises(ValueError, match="Circular reference detected"):
        report_text(cycle)


class Emptied(list[int]):
    """A list whose truth (asked by ``json.dumps`` before its items) empties ``target``."""

    def __init__(self, target: dict[str, Any]) -> None:
        super().__init__([1])
        self.target = target

    def __bool__(self) -> bool:
        self.target.clear()
        return True


def test_a_dict_changed_while_written_is_refused_as_json_dumps_refuses_it() -> None:
    data: dict[str, Any] = {"a": 1, "b": None, "c": "x"}
    data["b"] = Emptied(data)
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        python_text(data)
    data = {"a": 1, "b": None, "c": "x"}
    data["b"] = Emptied(data)
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        report_text(data)


class Swapped(list[int]):
    """A list whose truth swaps the key ``gone`` of ``target`` for a new last one: the dict
    keeps its size, but gives one pair more than it had."""

    def __init__(self, target: dict[str, Any], gone: str) -> None:
        super().__init__([1])
        self.target = target
        self.gone = gone

    def __bool__(self) -> bool:
        if self.gone in self.target:
            del self.target[self.gone]
            self.target["new"] = 0
        return True


def test_a_dict_whose_keys_changed_while_written_is_refused_as_json_dumps_refuses_it() -> None:
    for write in (python_text, report_text):
        data: dict[str, Any] = {"a": 1, "b": None, "c": "x"}
        data["b"] = Swapped(data, "a")
        with pytest.raises(RuntimeError, match="keys changed during iteration"):
            write(data)
