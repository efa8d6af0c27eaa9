"""Every input the fuzzers found a bug with, replayed through the same target.

``crashes/<target>/<name>`` holds one minimised input per finding; the target's ``run``
(``tools/fuzz/targets.py``) must now read it, report it or refuse it with a user error. A
finding that comes back raises here exactly as it did in the fuzzer.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem

REPO = Path(__file__).resolve().parents[2]
CRASHES = Path(__file__).resolve().parent / "crashes"
sys.path.insert(0, str(REPO / "tools" / "fuzz"))

import targets  # noqa: E402  (tools/fuzz/targets.py, through the path above)

FINDINGS = sorted(p for p in CRASHES.glob("*/*") if p.is_file())


@pytest.fixture(autouse=True)
def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """File-reading targets write their input here, not to a shared temporary directory."""
    monkeypatch.setenv("OTEL_ORACLES_FUZZ_SCRATCH", str(tmp_path))
    targets._scratch_dir.cache_clear()
    yield
    targets._scratch_dir.cache_clear()


def test_every_committed_finding_names_a_known_target() -> None:
    assert FINDINGS, "no committed findings found under tests/fuzz/crashes"
    assert {p.parent.name for p in FINDINGS} <= set(targets.TARGETS)


@pytest.mark.parametrize("finding", FINDINGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_finding_no_longer_fails_its_target(finding: Path) -> None:
    targets.TARGETS[finding.parent.name].run(finding.read_bytes())


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("zstd-reserved-block", "zstd frame 1 has a reserved block"),
        ("zstd-junk-after-frame", "bytes after zstd frame 1 are not another zstd frame"),
    ],
)
def test_a_zstd_file_the_frame_walker_refuses_is_a_located_problem(
    name: str, expected: str
) -> None:
    path = CRASHES / "file-json" / name
    problems: list[InputProblem] = []
    assert list(read_paths([str(path)], problems)) == []
    assert [(p.source, p.message) for p in problems] == [
        (
            str(path),
            f"compressed stream is corrupt or truncated: {expected}; rest of file skipped",
        )
    ]


def _nested_document(levels: int, *, tolerant: bool) -> bytes:
    """A request with one span whose attribute ``deep`` is ``levels`` arrays deep; ``tolerant``
    adds an unknown span kind, which sends the body down the tolerant decoder."""
    value = '{"arrayValue":{"values":[' * levels + '{"stringValue":"x"}' + "]}}" * levels
    kind = ',"kind":"weird"' if tolerant else ""
    span = (
        f'{{"traceId":"{"a" * 32}","spanId":"{"b" * 16}","name":"n"{kind},'
        f'"attributes":[{{"key":"deep","value":{value}}}]}}'
    )
    return f'{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{span}]}}]}}]}}'.encode()


@pytest.mark.parametrize("tolerant", [False, True], ids=["typed", "tolerant"])
def test_an_attribute_nested_past_the_bound_reads_as_null_with_a_problem(tolerant: bool) -> None:
    from otel_oracles.decode import decode
    from otel_oracles.decode.config import MAX_ANY_VALUE_DEPTH

    within = decode(_nested_document(MAX_ANY_VALUE_DEPTH, tolerant=tolerant), "application/json")
    value = within.spans[0].attributes["deep"]
    for _ in range(MAX_ANY_VALUE_DEPTH):
        (value,) = value
    assert value == "x"

    past = decode(_nested_document(MAX_ANY_VALUE_DEPTH + 1, tolerant=tolerant), "application/json")
    assert past.spans[0].attributes["deep"] is None
    assert past.problems[-1] == (
        "resourceSpans[0].scopeSpans[0].spans[0]: attribute 'deep': AnyValue nests more than "
        f"{MAX_ANY_VALUE_DEPTH} arrays/kvlists deep; read as null"
    )


def test_a_file_of_skipped_items_lists_the_first_problems_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    """Skipped input holds no memory but its problem, so the problems of one file are capped:
    a 2 MB array of a million numbers gave a million problems (~700 MB)."""
    from otel_oracles.decode.config import MAX_PROBLEMS_PER_FILE

    items = MAX_PROBLEMS_PER_FILE + 500
    path = tmp_path / "numbers.json"
    path.write_bytes(b"[" + b"1," * (items - 1) + b"1]")
    problems: list[InputProblem] = []
    assert list(read_paths([str(path)], problems)) == []
    assert len(problems) == MAX_PROBLEMS_PER_FILE + 1
    assert problems[0] == InputProblem(
        source=f"{path}:1[0]",
        message="expected an OTLP/JSON request object, got a JSON int; skipped",
    )
    assert problems[-1] == InputProblem(
        source=str(path),
        message=f"500 more problems in this file are not listed "
        f"(the first {MAX_PROBLEMS_PER_FILE} are)",
    )
    # The next file starts its own count.
    again: list[InputProblem] = []
    list(read_paths([str(path), str(path)], again))
    assert len(again) == 2 * (MAX_PROBLEMS_PER_FILE + 1)


def test_json_text_nested_past_the_encoders_recursion_is_no_string() -> None:
    """Found by the pipeline target: a tool's ``input.value`` of 1000 nested arrays parses
    (JSON text may nest 1024 levels) and then failed to encode back as the step's text."""
    import orjson

    from otel_oracles.mapping.parsers.scalars import parse_json, parse_string

    deep = parse_json("[" * 1000 + "1" + "]" * 1000)
    assert parse_string(deep) is None
    shallow = orjson.loads("[" * 20 + "1" + "]" * 20)
    assert parse_string(shallow) == "[" * 20 + "1" + "]" * 20
