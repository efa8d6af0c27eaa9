"""A module's regular expression compiled on first use (``otel_oracles/_lazy_pattern.py``).

Why: a pattern compiled at import costs every process that imports the module, used or not
(the parsers', reports' and oracles' patterns were ~7 M instructions of a one-trace grade).
Deferred, a typo in a pattern would surface only where it is first used, so every lazy
pattern of the package is found in the source and compiled here.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from otel_oracles._lazy_pattern import lazy_pattern

PACKAGE = Path(__file__).resolve().parents[1] / "otel_oracles"


def lazy_patterns() -> list[tuple[str, str]]:
    """(module, name) of every module-level ``NAME = lazy_pattern(...)`` in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "lazy_pattern"
            ):
                module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                found.extend((module, t.id) for t in node.targets if isinstance(t, ast.Name))
    return found


def test_the_package_defers_the_patterns_a_grade_may_not_reach() -> None:
    modules = {module for module, _ in lazy_patterns()}
    assert "otel_oracles.report._common" in modules  # the scan is not vacuous
    assert len(lazy_patterns()) >= 10


@pytest.mark.parametrize(("module", "name"), lazy_patterns())
def test_every_lazy_pattern_compiles(module: str, name: str) -> None:
    pattern = getattr(importlib.import_module(module), name)()
    assert isinstance(pattern, re.Pattern)


def test_compiled_once_on_the_first_call() -> None:
    calls = 0
    real = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        nonlocal calls
        calls += 1
        return real(pattern, flags)

    re.compile = counting  # type: ignore[assignment]
    try:
        blanks = lazy_pattern(r"\s+", re.ASCII)
        assert calls == 0
        first = blanks()
        assert blanks() is first
        assert calls == 1
    finally:
        re.compile = real
    assert first.flags & re.ASCII
    assert first.sub(" ", "a \t b") == "a b"


def test_an_invalid_pattern_raises_where_it_is_first_used() -> None:
    broken = lazy_pattern("(unclosed")
    with pytest.raises(re.error):
        broken()
