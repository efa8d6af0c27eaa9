"""The built-in parsers against the corpus recorded from the Python implementations they
replaced (``tools/parser_corpus.py``): every string value of the captured and synthetic
traces, one per result shape, and seeded corner cases. A parser moved into the compiled core
must return exactly what the Python one did: the same ``repr`` (dict key order, ``int`` vs
``float``, ``True`` vs ``1``) and the very input object where it found no value."""

from __future__ import annotations

import gc
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from otel_oracles import _native
from otel_oracles.mapping.parsers import builtin_parsers

CORPUS = Path(__file__).parents[1] / "testdata" / "parsers"
REGISTRY = builtin_parsers()


def _rows(name: str) -> list[tuple[str, Any, str | None]]:
    with (CORPUS / name).open(encoding="ascii") as lines:
        return [tuple(json.loads(line)) for line in lines]


@pytest.mark.parametrize("corpus", sorted(p.name for p in CORPUS.glob("*.jsonl")))
def test_parsers_reproduce_the_recorded_results(corpus: str) -> None:
    rows = _rows(corpus)
    assert len(rows) > 1000
    wrong = []
    for parser, given, expected in rows:
        value = given["structured"] if isinstance(given, dict) else given
        try:
            with warnings.catch_warnings():
                # As in production: ``ast`` warns of invalid escapes in reprs (pytest would
                # turn the warning into an error and the text into "not a literal").
                warnings.simplefilter("ignore")
                result = REGISTRY[parser](value)
        except Exception as exc:  # noqa: BLE001 - compared with the recorded outcome
            got: str | None = f"raises {type(exc).__name__}"
        else:
            got = None if result is value else repr(result)
        if got != expected:
            wrong.append((parser, given, expected, got))
    assert not wrong, f"{len(wrong)} differ, first: {wrong[0]!r:.600}"


def test_json_parsers_are_the_compiled_cores() -> None:
    assert REGISTRY["json"] is _native.parse_json
    assert REGISTRY["json_or_text"] is _native.parse_json_or_text
    assert REGISTRY["genai_messages"] is _native.parse_genai_messages
    assert REGISTRY["openinference_messages"] is _native.parse_openinference_messages


def test_openinference_messages_read_flattened_keys_without_changing_the_values() -> None:
    content = {"k": "v"}
    flat = {
        "1.message.role": "tool",
        "1.message.contents.0.message_content.type": "text",
        "1.message.contents.0.message_content.text": '{"ok": true}',
        "1.message.contents.0.message.tool_call_id": "c1",
        "01.message.role": "assistant",
        "0.message.content": content,
        "0.message.content.x": 1,
        "\u0662.message.tool_calls.0.tool_call.function.name": "search",
    }
    assert _native.parse_openinference_messages(flat) == [
        {"role": None, "parts": [{"type": "text", "content": '{"k": "v", "x": 1}'}]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": {"ok": True}}],
        },
        {"role": "assistant", "parts": []},
        {
            "role": None,
            # No arguments attribute: the arguments are unknown, not "none".
            "parts": [{"type": "tool_call", "id": None, "name": "search"}],
        },
    ]
    assert content == {"k": "v"}
    with pytest.raises(ValueError):  # int() refuses a superscript digit
        _native.parse_openinference_messages({"\u00b2.message.role": "user"})
    no_messages: tuple[object, ...] = ({}, None, "0.message.role", [("0.message.role", "user")])
    for value in no_messages:
        assert _native.parse_openinference_messages(value) is None


def test_genai_messages_keep_the_objects_they_were_given() -> None:
    part = {"type": "text", "content": "hi", "extra": [1]}
    response = {"type": "tool_call_response", "id": "c", "result": {"r": 1}}
    messages = [{"role": "model", "parts": [part, response]}]
    parsed = _native.parse_genai_messages(messages)
    assert parsed == [
        {
            "role": "assistant",
            "parts": [part, {"type": "tool_call_response", "id": "c", "response": {"r": 1}}],
        }
    ]
    assert parsed is not None
    assert parsed[0] is not messages[0]
    assert parsed[0]["parts"][0] is part
    assert parsed[0]["parts"][1]["response"] is response["result"]


def test_genai_messages_raise_where_the_python_parser_raised() -> None:
    with pytest.raises(TypeError):
        _native.parse_genai_messages('[{"role": "ai", "content": null, "tool_calls": 3}]')
    with pytest.raises(TypeError):  # json.dumps of bytes, as the text of a text part
        _native.parse_genai_messages([{"parts": [{"type": "text", "text": {"b": b"x"}}]}])
    deep = '{"json": ' + "[" * 255 + "]" * 255 + "}"
    with pytest.raises(TypeError):  # past orjson.dumps's 254 levels
        _native.parse_genai_messages('[{"parts": [' + deep + "]}]")


def _outcome(parse: Any, value: Any) -> str:
    try:
        return repr(parse(value))
    except Exception as exc:  # noqa: BLE001 - compared between the two paths
        return f"raises {type(exc).__name__}"


KEPT_TEXTS = [
    "[]",
    '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
    '{"role": "assistant", "parts": [], "finish_reason": "stop"}',
    '[{"role": 3, "parts": [{"type": 7}, {"type": "tool_call", "arguments": {"q": 1}}],'
    ' "name": "n"}, {"role": "Critic", "parts": [{"type": "tool_call_response",'
    ' "result": 1, "response": 2}]}]',
    '[{"role": "user", "role": "tool", "parts": []}]',
]
NORMALISED_TEXTS = [
    '[{"role": "Assistant", "parts": []}]',
    '[{"role": "ai", "parts": []}]',
    '[{"parts": [], "role": "user"}]',
    '[{"role": "user", "parts": [], "name": "n", "finish_reason": "stop"}]',
    '[{"role": "user", "parts": [], "finish_reason": null}]',
    '[{"role": "user", "parts": [], "extra": 1}]',
    '[{"role": "user", "parts": {"type": "text"}}]',
    '[{"role": "user"}]',
    '[{"role": "user", "parts": [1]}]',
    '[{"role": "user", "parts": [{"type": "text", "text": "t"}]}]',
    '[{"role": "user", "parts": [{"content": "c"}]}]',
    '[{"role": "user", "parts": [{"type": null}]}]',
    '[{"role": "user", "parts": [{"type": "thinking", "thinking": "t"}]}]',
    '[{"role": "user", "parts": [{"type": "tool_call", "arguments": "{\\"a\\": 1}"}]}]',
    '[{"role": "user", "parts": [{"type": "tool_call_response", "result": 1}]}]',
    '[{"role": "user", "parts": []}, 5]',
    '{"role": "user", "content": "c"}',
]


@pytest.mark.parametrize("text", KEPT_TEXTS + NORMALISED_TEXTS)
def test_genai_messages_text_reads_as_its_structured_value(text: str) -> None:
    # JSON text the normaliser gives back whole is made into objects straight from the
    # text, any other goes through the normaliser: either way the result is that of the
    # value already parsed (which never takes the shortcut), key order included.
    value = json.loads(text)
    expected = _outcome(_native.parse_genai_messages, value)
    assert _outcome(_native.parse_genai_messages, text) == expected
    assert _outcome(_native.parse_genai_messages, f" {text}\n".encode()) == expected
    whole = value if isinstance(value, list) else [value]
    assert (expected == repr(whole)) == (text in KEPT_TEXTS)


def test_genai_messages_text_reads_as_its_structured_value_across_the_corpus() -> None:
    compared = 0
    for parser, given, _ in _rows("genai_messages.jsonl"):
        if parser != "genai_messages" or not isinstance(given, str):
            continue
        value = _native.parse_json(given)  # the core's reading of JSON text, its corners too
        if not isinstance(value, (list, dict)):
            continue
        got = _outcome(_native.parse_genai_messages, given)
        assert got == _outcome(_native.parse_genai_messages, value), given
        compared += 1
    assert compared > 500


def test_genai_messages_read_no_list_or_object_as_no_value() -> None:
    for value in (None, 1, "text", "[1", "\ud800[]", b"\xff", ("a",), '"[]"'):
        assert _native.parse_genai_messages(value) is None
    assert _native.parse_genai_messages(b' {"role": "human"}\n') == [{"role": "user", "parts": []}]


@pytest.mark.parametrize("parse", [_native.parse_json, _native.parse_json_or_text])
def test_values_that_are_no_json_text_come_back_as_given(parse: Any) -> None:
    for value in (None, 1, 1.5, True, {"a": "[1]"}, ["[1]"], "[1", "\ud800[1]", "[\ud800]"):
        assert parse(value) is value


def test_json_numbers_keep_pythons_kinds() -> None:
    parsed = _native.parse_json("[-0, -0.0, 1.0, 1E2, 18446744073709551615, 18446744073709551616]")
    assert repr(parsed) == "[0, -0.0, 1.0, 100.0, 18446744073709551615, 1.8446744073709552e+19]"
    for text in ("NaN", "[Infinity]", "1e400", '"\\ud800"', "[1] x", "01"):
        assert _native.parse_json(text) is text


def test_decimal_fractions_are_the_floats_json_makes() -> None:
    """Decimal fractions of up to 15 digits are read by the core's own short path, longer
    ones and exponents by serde_json: every one is the float ``json.loads`` makes (the
    nearest to the decimal), its sign kept, for whole and fraction parts of every length."""
    rng = random.Random(20261207)
    tokens = ["0.0", "-0.0", "0.1", "-0.5", "0.30000000000000004", "9007199254740993.0"]
    for whole in range(1, 18):
        for fraction in range(1, 19):
            for _ in range(8):
                digits = "".join(rng.choice("0123456789") for _ in range(whole + fraction))
                if whole > 1 and digits[0] == "0":
                    digits = "1" + digits[1:]
                sign = rng.choice(("", "-"))
                tokens.append(f"{sign}{digits[:whole]}.{digits[whole:]}")
    text = "[" + ", ".join(tokens) + "]"
    assert repr(_native.parse_json(text)) == repr(json.loads(text))


_LONG = "a long enough plain value, past the sixteen bytes shared through the cache"


@pytest.mark.parametrize(
    "document",
    [
        {"text": _LONG, "k": [_LONG[:17], _LONG[:16], _LONG + " 2"], "n": {"x": _LONG[3:]}},
        {"caf\u00e9": _LONG, "t": [_LONG + " caf\u00e9", _LONG]},
        {"k": "\u6f22\u5b57", "t": [_LONG, _LONG + " \u6f22"]},
        {"k": "\U0001f600", "t": [_LONG, _LONG + " \U0001f600"]},
        {"esc": _LONG + ' "quoted" \\ ' + _LONG, "t": _LONG},
    ],
)
def test_long_strings_are_the_texts_read(document: Any) -> None:
    """A string value read without escapes is made from the parsed ``str`` itself when that
    is ASCII (cut at its offsets); any other text, a ``str`` subclass, surrounding
    whitespace, ``bytes`` and the documents serde_json reads (nested past the fast reader's
    depth) give the same values, each an exact ``str``."""
    text = json.dumps(document, ensure_ascii=False)
    deep = "[" * 200 + text + "]" * 200

    class Text(str):
        pass

    for given in (text, f" \n {text}\t ", Text(text), text.encode(), deep):
        for parse in (_native.parse_json, _native.parse_json_or_text):
            if parse is _native.parse_json_or_text and isinstance(given, bytes):
                continue
            parsed = parse(given)
            if given is deep:
                for _ in range(200):
                    parsed = parsed[0]
            assert parsed == document
            for value in _strings(parsed):
                assert type(value) is str
    part = {"type": "text", "content": [s for s in _strings(document) if len(s) > 16]}
    messages = json.dumps([{"role": "user", "parts": [part]}], ensure_ascii=False)
    structured = _native.parse_genai_messages(json.loads(messages))
    assert structured == [{"role": "user", "parts": [part]}]
    assert _native.parse_genai_messages(messages) == structured
    assert _native.parse_genai_messages(messages.encode()) == structured


def _strings(value: Any) -> list[Any]:
    """The strings in a parsed value, keys included."""
    if isinstance(value, dict):
        return [*value, *(s for item in value.values() for s in _strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("parse", [_native.parse_json, _native.parse_json_or_text])
def test_repeated_keys_keep_their_first_position_and_last_value(parse: Any) -> None:
    text = '{"a": 1, "b": {"x": 1, "y": 0, "x": [2]}, "a": 3, "\\u0061": 4, "c\\n": {}}'
    parsed = parse(text)
    assert parsed == json.loads(text) == {"a": 4, "b": {"x": [2], "y": 0}, "c\n": {}}
    assert list(parsed) == ["a", "b", "c\n"]
    assert list(parsed["b"]) == ["x", "y"]


def test_objects_of_the_same_keys_are_each_the_dict_json_makes() -> None:
    """Parsed objects share their keys' and short texts' ``str`` objects (the key cache), yet
    each is its own dict, in key order, tracked by the garbage collector as the dict
    ``json.loads`` makes, whether its keys were met before or not, and what a reader does to
    one result changes no later one."""
    texts = [
        '{"a": 1, "b": "x"}',
        '{"a": [1], "b": {"c": null}}',
        '{"b": 1, "a": 2}',
        '{"a": {"b": {"a": {"b": []}}}, "b": 2}',
        json.dumps({f"k{n}": n for n in range(8)}),
        json.dumps({f"k{n}": [n] for n in range(9)}),
        '[{"role": "user", "parts": []}, {"role": "assistant", "parts": [{}]}]',
    ]
    for _ in range(2):
        for text in texts:
            for parse in (_native.parse_json, _native.parse_json_or_text):
                first, second = parse(text), parse(text)
                expected = json.loads(text)
                assert repr(first) == repr(second) == repr(expected)
                assert first is not second
                for got, want in zip(_dicts(first), _dicts(expected), strict=True):
                    assert list(got) == list(want)
                    assert gc.is_tracked(got) == gc.is_tracked(want)
                for got in _dicts(first):
                    got["added"] = True
                assert repr(parse(text)) == repr(expected)
    messages = '[{"role": "assistant", "parts": [{"type": "tool_call", "arguments": {"q": 1}}]}]'
    calls = [_native.parse_genai_messages(messages) for _ in range(2)]
    calls[0][0]["parts"][0]["arguments"]["q"] = 2
    assert calls[1] == json.loads(messages) == _native.parse_genai_messages(messages)


def test_cached_keys_differing_in_any_one_byte_stay_apart() -> None:
    """The key cache tells keys of up to 16 bytes apart by their length and first and last
    words alone, and longer ones by their text too: keys of every length up to the cache's
    limit, and 32-byte keys alike in every word the cache hashes, differing in one byte at
    each position, each come back as themselves, met in turn and again."""
    keys = []
    for length in range(1, 66):
        base = "".join(chr(ord("a") + n % 26) for n in range(length))
        keys.append(base)
        keys.extend(base[:at] + "_" + base[at + 1 :] for at in range(length))
    long = "x" * 32
    keys.extend(long[:at] + "y" + long[at + 1 :] for at in range(32))
    for _ in range(2):
        for key in keys:
            text = json.dumps({key: key, "k": [key]})
            parsed = _native.parse_json(text)
            assert parsed == {key: key, "k": [key]}, key
            assert list(parsed) == [key, "k"]


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The dicts in a parsed value, outermost first."""
    if isinstance(value, dict):
        return [value] + [d for item in value.values() for d in _dicts(item)]
    if isinstance(value, list):
        return [d for item in value for d in _dicts(item)]
    return []


def test_bytes_are_stripped_of_ascii_whitespace_and_read_as_utf8() -> None:
    assert _native.parse_json(b' {"a": "\xff"}\n') == {"a": "\ufffd"}
    nbsp = b"\xc2\xa0[1]"  # a no-break space is no ASCII whitespace and no JSON whitespace
    assert _native.parse_json(nbsp) is nbsp
    assert _native.parse_json_or_text(b"[1]") == b"[1]"


def test_nesting_is_bounded_at_1024_levels() -> None:
    at, past = ("[" * n + "]" * n for n in (1024, 1025))
    deep = _native.parse_json(at)
    for _ in range(1023):
        deep = deep[0]
    assert deep == []
    assert _native.parse_json(past) is past
    hostile = "[" * 1_000_000
    assert _native.parse_json_or_text(hostile) is hostile
