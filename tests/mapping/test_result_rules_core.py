"""A tool result's rules are the core's (``native/python/src/results.rs``): held to the Python
definition they replaced (``ToolResultRules.denial_in`` / ``error_in`` / ``is_empty`` and
``_tool_results.structured`` / ``unwrap_block``, kept here as the specification), on random
results built to hit their corners: JSON and Python-repr texts, leading whitespace Python
strips and Rust would not, content blocks (``json``, ``text``, typed, LangChain's with an
``id``), MCP ``CallToolResult``s in both spellings, error objects with values that are no
text, empty objects and lists, lone surrogates, and ``dict`` / ``list`` / ``str`` subclasses
whose methods answer otherwise. Both the rules of the shipped conventions and a set with
unanchored patterns and several error keys are checked."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from otel_oracles import safe_regex
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping._tool_results import (
    PATTERN_WINDOW,
    ToolResultRules,
    _result_rules,
    structured,
    unwrap_block,
)
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import parse_json, parse_string

# ---- the specification: the Python code the core replaced -----------------------------------

_TEXT_BLOCK_KEYS = ({"type", "text"}, {"type", "text", "id"})


def spec_is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.keys() in _TEXT_BLOCK_KEYS
        and block["type"] == "text"
        and isinstance(block["text"], str)
    )


def spec_call_tool_result(result: Any) -> Any:
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return None
    failed = result.get("isError", result.get("is_error"))
    if not isinstance(failed, bool):
        return None
    content = spec_unwrap_block(result["content"])
    if failed:
        return {"error": content}
    body = result.get("structuredContent", result.get("structured_content"))
    return body if isinstance(body, dict) else content


def spec_unwrap_block(result: Any) -> Any:
    if spec_is_text_block(result):
        return result["text"]
    call_result = spec_call_tool_result(result)
    if call_result is not None:
        return call_result
    if not isinstance(result, list) or len(result) != 1 or not isinstance(result[0], dict):
        return result
    block: dict[str, Any] = result[0]
    if block.keys() == {"json"}:
        return block["json"]
    text_block = block.keys() == {"text"} or spec_is_text_block(block)
    if text_block and isinstance(block["text"], str):
        return block["text"]
    return result


def spec_structured(result: Any) -> Any:
    if isinstance(result, str) and result.lstrip()[:1] in ("{", "["):
        result = parse_python_literal(parse_json(result))
    unwrapped = spec_unwrap_block(result)
    return result if unwrapped is result else spec_structured(unwrapped)


class Spec:
    def __init__(
        self, keys: tuple[str, ...], errors: list[str], empties: list[str], denials: list[str]
    ) -> None:
        self.error_keys = keys
        self.error_patterns = [safe_regex.compile_pattern(p) for p in errors]
        self.empty_patterns = [safe_regex.compile_pattern(p) for p in empties]
        self.denied_patterns = [safe_regex.compile_pattern(p) for p in denials]

    def error_in(self, result: Any) -> str | None:
        result = spec_structured(result)
        if isinstance(result, dict):
            for key in self.error_keys:
                if result.get(key) is not None:
                    value = result[key]
                    return value if isinstance(value, str) else parse_string(value)
            return None
        if isinstance(result, str) and self.error_patterns:
            head = result[:PATTERN_WINDOW]
            if any(safe_regex.match(rx, head) for rx in self.error_patterns):
                return result
        return None

    def denial_in(self, result: Any) -> str | None:
        if not self.denied_patterns:
            return None
        result = spec_structured(result)
        if isinstance(result, dict):
            result = next((result[k] for k in self.error_keys if result.get(k)), None)
        if isinstance(result, str):
            head = result[:PATTERN_WINDOW]
            if any(safe_regex.match(rx, head) for rx in self.denied_patterns):
                return result
        return None

    def is_empty(self, result: Any) -> bool:
        result = spec_structured(result)
        if result is None:
            return False
        if result in ("", [], {}):
            return True
        if isinstance(result, dict):
            lists = [v for v in result.values() if isinstance(v, list)]
            return bool(lists) and not any(lists)
        if isinstance(result, str):
            head = result[:PATTERN_WINDOW]
            return not head.strip() or any(safe_regex.match(rx, head) for rx in self.empty_patterns)
        return False

    def judge(self, result: Any, failed: bool) -> tuple[str, Any] | None:
        """``judge_result``'s order: a refusal, then (an OK span) an error, then empty."""
        denial = self.denial_in(result)
        if denial is not None:
            return ("denied", denial)
        if not failed:
            error = self.error_in(result)
            if error is not None:
                return ("error", error)
        if self.is_empty(result):
            return ("empty", None)
        return None


# ---- random results -----------------------------------------------------------------------


class OddDict(dict[Any, Any]):
    """A dict whose ``get`` answers for keys it does not hold."""

    def get(self, key: Any, default: Any = None) -> Any:
        if key == "error" and "error" not in self:
            return "odd error"
        return super().get(key, default)


class OddList(list[Any]):
    """A list that says it is not empty."""

    def __bool__(self) -> bool:
        return True


class OddStr(str):
    """A text whose ``lstrip`` and ``strip`` leave nothing."""

    def lstrip(self, chars: str | None = None) -> str:
        return ""

    def strip(self, chars: str | None = None) -> str:
        return ""


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


TEXTS = [
    "",
    "   ",
    "\x1c\x1d",
    "\u2003",
    "x",
    "No results found",
    "  no documents were found.",
    "0 results",
    "Nothing found",
    "Error: SearchBackendError: timeout",
    "SearchBackendError: boom",
    "  KeyError : missing",
    "Error executing tool search",
    "Error calling tool: x",
    "Failed to invoke Tool `search`",
    "bad args\n\nFix the errors and try again.",
    "Tool execution was not approved.",
    "This tool call is rejected.",
    "  The tool call was denied. by policy",
    "tool cancelled by user",
    "fine error later: Error: x",
    "a" * 600 + "Error: late",
    "Error: " + "b" * 700,
    "caf\u00e9",
    "\ud800 lone",
    "text",
]

KEYS = [
    "type",
    "text",
    "id",
    "json",
    "content",
    "isError",
    "is_error",
    "structuredContent",
    "structured_content",
    "error",
    "err",
    "documents",
    "status",
]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.25:
        return atom(rng)
    if roll < 0.35:
        return text_of(rng, value(rng, depth + 1))
    if roll < 0.55:
        return block(rng, depth)
    if roll < 0.75:
        size = rng.choice([0, 1, 1, 1, 2])
        items = [value(rng, depth + 1) for _ in range(size)]
        return OddList(items) if rng.random() < 0.05 else items
    size = rng.choice([0, 1, 2, 3])
    d = {rng.choice(KEYS): value(rng, depth + 1) for _ in range(size)}
    return OddDict(d) if rng.random() < 0.05 else d


def atom(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.6:
        text = rng.choice(TEXTS)
        return OddStr(text) if rng.random() < 0.03 else text
    return rng.choice([None, True, False, 0, 1, 2.5, -1, (), ("a",), AlwaysEqual()])


def text_of(rng: random.Random, item: Any) -> Any:
    """The item as JSON or Python-repr text, perhaps after whitespace."""
    lead = rng.choice(["", "", " ", "\n\t", "\x1c", "\u2003", "\u00a0", "x"])
    try:
        body = json.dumps(item) if rng.random() < 0.6 else repr(item)
    except (TypeError, ValueError):
        body = repr(item)
    return lead + body


def block(rng: random.Random, depth: int) -> Any:
    inner = value(rng, depth + 1)
    text = rng.choice([rng.choice(TEXTS), inner])
    shapes: list[Any] = [
        {"type": "text", "text": text},
        {"type": "text", "text": text, "id": "lc_1"},
        {"type": rng.choice(["text", "image", 1]), "text": text},
        [{"json": inner}],
        [{"text": text}],
        [{"type": "text", "text": text}],
        [{"json": inner, "extra": 1}],
        {
            "content": [{"type": "text", "text": text}],
            rng.choice(["isError", "is_error"]): rng.choice([True, False, None, 1]),
        },
        {
            "content": rng.choice([[], [{"type": "text", "text": text}], "no list"]),
            "isError": rng.choice([True, False]),
            rng.choice(["structuredContent", "structured_content"]): rng.choice(
                [inner, {"documents": []}, None, [1]]
            ),
        },
    ]
    return rng.choice(shapes)


# ---- comparisons --------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down (``1 == 1.0 == True`` is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, AlwaysEqual):
        return a is b
    return bool(a == b)


def outcome_of(judge: Any, item: Any, failed: bool) -> Any:
    """What ``judge`` answers, or the class of the exception it raised."""
    try:
        return judge(item, failed)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc)


RULE_SETS = {
    "unanchored": (
        ("error", "err"),
        [r"Error:", r"\w+Error\b", "(?i)fatal"],
        ["(?i)nothing", r"^\s*$"],
        [r".*?(?:rejected|denied)\b", "(?i)tool execution"],
    ),
    "no denials": (("error",), [r"^Error"], [], []),
}


def shipped() -> Spec:
    """The shipped conventions' merged rules, as the specification reads them."""
    files = load_conventions([]).files
    keys: dict[str, None] = {}
    errors: dict[str, None] = {}
    empties: dict[str, None] = {}
    denials: dict[str, None] = {}
    for conv in files:
        declared = conv.tool_results
        keys.update(dict.fromkeys(declared.error_keys))
        for pattern, into in (
            (declared.error_pattern, errors),
            (declared.empty_pattern, empties),
            (declared.denied_pattern, denials),
        ):
            if pattern:
                into[pattern] = None
    return Spec(tuple(keys), list(errors), list(empties), list(denials))


def rule_pairs() -> list[tuple[str, Spec, ToolResultRules]]:
    pairs = [("shipped", shipped(), load_conventions([]).compiled().tool_results)]
    for name, (keys, errors, empties, denials) in RULE_SETS.items():
        rules = ToolResultRules(core=_result_rules(keys, errors, empties, denials))
        pairs.append((name, Spec(keys, errors, empties, denials), rules))
    return pairs


def test_the_shipped_rules_are_what_the_conventions_declare() -> None:
    spec = shipped()
    assert spec.error_keys == ("error",)
    assert spec.denied_patterns and spec.empty_patterns and len(spec.error_patterns) >= 5


@pytest.mark.parametrize("seed", range(8))
def test_structured_and_unwrap_block_are_the_python_definition(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        item = value(rng)
        for core, spec in ((structured, spec_structured), (unwrap_block, spec_unwrap_block)):
            got, want = core(item), spec(item)
            assert same(got, want), (item, got, want)
            assert (got is item) == (want is item), item


@pytest.mark.parametrize("seed", range(8))
def test_judge_is_the_python_definition(seed: int) -> None:
    rng = random.Random(1000 + seed)
    pairs = rule_pairs()
    outcomes: dict[str, int] = {}
    for _ in range(3000):
        item = value(rng)
        if item is None:
            continue
        failed = rng.random() < 0.3
        for name, spec, rules in pairs:
            want = outcome_of(spec.judge, item, failed)
            got = outcome_of(rules.judge, item, failed)
            if isinstance(want, type):  # the definition raised: the core raises the same
                assert got is want, (name, item, failed, got, want)
                continue
            assert (got is None) == (want is None), (name, item, failed, got, want)
            if got is not None and want is not None:
                assert got[0] == want[0] and same(got[1], want[1]), (name, item, got, want)
                outcomes[f"{name}:{got[0]}"] = outcomes.get(f"{name}:{got[0]}", 0) + 1
    # The corpus reaches every outcome under every rule set (the comparisons are not vacuous).
    for name, _, _ in pairs:
        for what in ("error", "empty"):
            assert outcomes.get(f"{name}:{what}", 0) > 10, (name, what, outcomes)
        if name != "no denials":
            assert outcomes.get(f"{name}:denied", 0) > 10, (name, outcomes)


def test_a_subclass_answers_through_its_own_methods() -> None:
    rules = ToolResultRules(core=_result_rules(("error",), [], [], []))
    # ``get`` answers for "error", which ``[...]`` then does not hold: a KeyError, as before.
    with pytest.raises(KeyError):
        rules.judge(OddDict({"documents": ["d"]}), False)
    assert rules.judge(OddDict({"error": "e"}), False) == ("error", "e")
    assert rules.judge({"documents": OddList()}, False) is None  # says it is not empty
    assert rules.judge({"documents": []}, False) == ("empty", None)
    # Its first characters are a plain ``str`` (what slicing makes): its own ``strip`` is
    # never asked.
    assert rules.judge(OddStr("not blank"), False) is None
    assert structured(OddStr('{"a": 1}')) == '{"a": 1}'  # lstrip leaves nothing: no JSON


def test_an_error_value_that_is_no_text_is_its_json() -> None:
    rules = ToolResultRules(core=_result_rules(("error",), [], [], []))
    assert rules.judge({"error": {"code": 500, "message": "down"}}, False) == (
        "error",
        '{"code": 500, "message": "down"}',
    )
    assert rules.judge({"error": 0}, False) == ("error", "0")
    assert rules.judge({"error": None, "documents": []}, False) == ("empty", None)
    # A failed span keeps its own error; what the result says beyond it is still read.
    assert rules.judge({"error": "x", "documents": []}, True) == ("empty", None)


def test_a_pattern_over_its_budget_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safe_regex, "BUDGET_S", 0.05)
    rules = ToolResultRules(core=_result_rules((), [r"(a|aa)+c"], [], []))
    # The text holds the "c" a match needs, so the engine backtracks (as in test_rule_table).
    with pytest.raises(safe_regex.RegexBudgetExceeded):
        rules.judge("a" * 40 + "bc", False)
