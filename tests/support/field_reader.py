"""A core ``FieldReader`` of read plans written out by hand: each field with its sources in
place and each source with what the reader runs (``None``, the name of one of the core's own
parsers, a list of them and Python callables for a chain, or a Python callable), as tests
state them; made into the set's numbered sources and ``parse:`` names the reader takes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from otel_oracles._native import FieldReader
from otel_oracles.mapping._compile import _first_group

HandSource = tuple[str, Any, Any, Any, str | None]
"""``(tag, a, b, parser, key)``: ``parser`` what the reader runs, ``None`` for none."""


def plan_reader(
    plans: Sequence[Sequence[tuple[str, bool, Sequence[HandSource]]]],
    placeholders: frozenset[str],
    failed: Callable[[str, BaseException], None] = lambda name, exc: None,
) -> FieldReader:
    """The reader of ``plans`` (per plan, per field ``(name, content, sources)``): every
    source numbered, its parser registered under a name of its own."""
    sources: list[tuple[str, Any, Any, list[str], str | None]] = []
    parsers: dict[str, Any] = {}
    numbered: list[list[tuple[str, bool, list[int]]]] = []
    for plan in plans:
        fields: list[tuple[str, bool, list[int]]] = []
        for name, content, field_sources in plan:
            numbers: list[int] = []
            for tag, a, b, parser, key in field_sources:
                names: list[str] = []
                if parser is not None:
                    names.append(f"p{len(parsers)}")
                    parsers[names[0]] = parser
                numbers.append(len(sources))
                sources.append((tag, a, b, names, key))
            fields.append((name, content, numbers))
        numbered.append(fields)
    return FieldReader(sources, numbered, parsers.__getitem__, _first_group, placeholders, failed)
