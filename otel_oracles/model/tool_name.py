"""Tool identity: a tool name qualified by a plugin, toolset or MCP server is namespace + name.

Frameworks record the same tool under different spellings: ``delete_records`` (OpenAI Agents,
pydantic-ai), ``SupportTools-delete_records`` (Semantic Kernel plugins), ``toolset.fn`` or
``functions.fn`` (dotted toolsets), ``toolset__fn`` and ``mcp__server__fn`` (MCP clients),
``server/fn``. A contract written once must see all of them, so every oracle that takes tool
names matches through ``tool_matches`` and nothing else.

A name splits into segments at the separators in ``TOOL_NAME_SEPARATORS``; the last segment
is the name, the ones before it the namespace. A contract name (a glob) matches a recorded
name when it matches it whole, or when its segments match the recorded name's last segments
one by one, whatever the separators:

- a bare name matches every qualified form (``delete_records`` matches
  ``SupportTools-delete_records`` and ``mcp__crm__delete_records``);
- a qualified name matches exactly that namespace (``crm.delete_records`` matches
  ``mcp__crm__delete_records`` but neither ``billing-delete_records`` nor, by default, a
  bare ``delete_records``).

A recorded name with no (or a shorter) namespace cannot show which namespace it came from.
Checks that must fail closed (``tool_not_called`` and the other budgets on forbidden or
counted calls) pass ``unknown_namespace_matches=True``: there, a bare ``delete_records``
counts as a possible ``crm.delete_records``, and a bare contract name matches any segment of
a recorded name (``delete_records`` catches ``delete_records.acall``: where the name sits in
a spelling nobody has seen yet is no reason to miss a forbidden call), also where the segment
ends in it after a ``_``: ADK's, pydantic-ai's, Strands', Agno's and langchain-mcp-adapters'
MCP toolset prefixes join the toolset's name and the tool's with a single ``_``
(``docs_delete_records``), the separator tool names themselves use, so a forbidden or counted
tool is caught under any such prefix (and so is ``bulk_delete_records``: a false fail of a
fail-closed check, never a missed call). Checks that need a call to have happened do not
widen so.

A trailing Python special method (``delete_records.__call__``, as function-tracing
instrumentations name a tool's span) is the call, not part of the tool's name.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import deque
from typing import Any

from otel_oracles._frozen import FrozenValue, set_field

TOOL_NAME_SEPARATORS: tuple[str, ...] = ("__", "-", ".", "/")
"""Separators between a namespace (plugin, toolset, MCP server) and a tool name, as the
instrumentations seen so far write them (``mcp__s__fn``, ``Plugin-fn``, ``toolset.fn``,
``server/fn``). Tool names themselves use ``_`` (single), never these."""

_SPLIT = re.compile("|".join(re.escape(s) for s in TOOL_NAME_SEPARATORS))
_DUNDER_CALL = re.compile(r"\.__[a-z][a-z0-9_]*__$")
"""``.__call__``, ``.__acall__``: a method called on the tool, not a segment of its name."""
_GLOB_CLASS = re.compile(r"\[!?\]?[^\]]*\]")
"""A glob character class (``[a-z]``, ``[!-]``): separators inside it are not separators."""


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class ToolName(FrozenValue):
    """A recorded tool name taken apart: ``SupportTools-delete_records`` ->
    namespace ``("SupportTools",)``, name ``delete_records``."""

    __slots__ = ("name", "namespace")
    namespace: tuple[str, ...]
    name: str

    def __init__(self, namespace: tuple[str, ...], name: str) -> None:
        set_field(self, "namespace", namespace)
        set_field(self, "name", name)

    @property
    def segments(self) -> tuple[str, ...]:
        return (*self.namespace, self.name)


@functools.lru_cache(maxsize=8192)
def parse_tool_name(raw: str) -> ToolName:
    """Split ``raw`` at the separators (empty segments, as in ``__fn``, are dropped). Pure and
    remembered per name: a run meets the same few names on every trace."""
    parts = _segments(_DUNDER_CALL.sub("", raw) or raw, glob=False)
    if not parts:
        return ToolName((), raw)
    return ToolName(parts[:-1], parts[-1])


def _segments(text: str, *, glob: bool) -> tuple[str, ...]:
    if not glob:
        return tuple(p for p in _SPLIT.split(text) if p)
    # Keep character classes whole: ``search_[a-z]*`` is one segment.
    out: list[str] = []
    current = ""
    pos = 0
    for cls in _GLOB_CLASS.finditer(text):
        pieces = _SPLIT.split(text[pos : cls.start()])
        current += pieces[0]
        for piece in pieces[1:]:
            out.append(current)
            current = piece
        current += cls.group(0)
        pos = cls.end()
    pieces = _SPLIT.split(text[pos:])
    current += pieces[0]
    for piece in pieces[1:]:
        out.append(current)
        current = piece
    out.append(current)
    return tuple(p for p in out if p)


_GLOB_CHARS = frozenset("*?[")


def _glob_match(name: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(name, pattern)``; a pattern with no ``*``, ``?`` or ``[`` is
    compared as text, as fnmatch's regex of it would: fnmatch compiles a regex for each
    pattern (~0.45 M instructions), and most tool names in contracts and conventions are
    plain names (docs/performance-history.md, "Start-up: logging, difflib and literal tool
    names when needed")."""
    if _GLOB_CHARS.isdisjoint(pattern):
        return name == pattern
    return fnmatch.fnmatchcase(name, pattern)


@functools.lru_cache(maxsize=4096)
def _pattern_segments(pattern: str) -> tuple[str, ...]:
    return _segments(pattern, glob=True)


@functools.lru_cache(maxsize=16384)
def tool_matches(pattern: str, recorded: str, unknown_namespace_matches: bool = False) -> bool:
    """Whether the contract name or glob ``pattern`` names the recorded tool ``recorded``
    (case-sensitive, as tool names are). See the module docstring for the rules; remembered
    per (pattern, name, mode) because matching is pure and the pairs repeat across traces."""
    if _glob_match(recorded, pattern):
        return True
    want = _pattern_segments(pattern)
    have = parse_tool_name(recorded).segments
    if not want:
        return False
    if len(want) > len(have):
        if not unknown_namespace_matches:
            return False
        want = want[len(want) - len(have) :]
    tail = have[len(have) - len(want) :]
    if all(_glob_match(h, w) for h, w in zip(tail, want, strict=True)):
        return True
    # Fail closed: a bare name matches any segment of a spelling not seen before, and a
    # segment that ends in it after a ``_`` (a toolset or MCP server prefix joined by ``_``).
    return (
        unknown_namespace_matches
        and len(want) == 1
        and any(_glob_match(h, want[0]) or fnmatch.fnmatchcase(h, "*_" + want[0]) for h in have)
    )


@functools.lru_cache(maxsize=16384)
def first_match(
    recorded: str | None, patterns: tuple[str, ...], unknown_namespace_matches: bool = False
) -> str | None:
    """The first of ``patterns`` naming ``recorded``, else ``None`` (also for no name).
    Remembered like ``tool_matches``: the checks ask it of every call of a trajectory
    with the same pattern tuples (a contract's tools, the conventions' final-answer tools,
    a dozen names long), and one lookup replaces a call per pattern."""
    if recorded is None:
        return None
    for p in patterns:
        if tool_matches(p, recorded, unknown_namespace_matches):
            return p
    return None


def numbered_stem(call_id: str) -> str | None:
    """The tool name a made-up ``<tool>_<n>`` call id is built from (the part before its last
    ``_`` when only a number follows), or ``None`` for any other id. A number holds no ``_``,
    so an id names at most one tool this way: lookups by it need no scan."""
    stem, sep, number = call_id.rpartition("_")
    return stem if sep and stem and number.isdigit() else None


class OpenCalls:
    """The tool calls of a conversation not yet answered, in call order, answering results
    by id and their made-up ``<tool>_<n>`` twins (``twin``) in amortized constant
    time: a history is trace content, and one model call may carry tens of thousands of
    calls and results, which a scan per result would make quadratic."""

    __slots__ = ("_numbered", "_open", "_seq")

    def __init__(self) -> None:
        self._open: dict[str, tuple[int, Any]] = {}  # call id -> (when opened, tool name)
        self._numbered: dict[str, deque[tuple[int, str]]] = {}  # tool -> its <tool>_<n> calls
        self._seq = 0

    def __contains__(self, call_id: str) -> bool:
        return call_id in self._open

    def __bool__(self) -> bool:
        return bool(self._open)

    def open(self, call_id: str, name: Any) -> None:
        """A call requested. An id asked again keeps its first place, as in a dict."""
        entry = self._open.get(call_id)
        if entry is None:
            self._seq += 1
            seq = self._seq
        else:
            seq = entry[0]
        self._open[call_id] = (seq, name)
        if isinstance(name, str) and numbered_stem(call_id) == name:
            self._numbered.setdefault(name, deque()).append((seq, call_id))

    def first(self) -> str:
        """The earliest open call's id (the caller checks there is one)."""
        return next(iter(self._open))

    def close(self, call_id: str) -> None:
        """A call answered (or its result handed back): no longer open."""
        self._open.pop(call_id, None)

    def twin(self, response_id: str) -> str | None:
        """The open call that a tool result's id ``response_id`` stands for when the two
        differ only in a number: both the tool's name and a number (``<tool>_<n>``). Such ids
        are made up by an instrumentation for an API that has none, by counting parts, and
        counted differently in the model's message and in the results: the google-genai
        instrumentation numbers a call by its place among the parts of the model's content,
        where a thought or a text part before it shifts the number, and a result by its place
        among the results. The earliest such open call answers, as the API takes results in
        the order of the calls; ``None`` when no open call's id is so made (ids an API issued
        match exactly or not at all)."""
        stem = numbered_stem(response_id)
        queue = self._numbered.get(stem) if stem is not None else None
        while queue:
            seq, call_id = queue[0]
            entry = self._open.get(call_id)
            if entry is not None and entry[0] == seq and entry[1] == stem:
                return call_id
            queue.popleft()  # answered, or opened again later under a new place or name
        return None
