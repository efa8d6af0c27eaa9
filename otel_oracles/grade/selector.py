"""Contract selection: which traces a contract's ``match`` applies to.

``match`` has three optional parts, all of which must hold (omitted = every trace):

- ``resource``: attributes of the root span's resource (``service.name`` ...);
- ``span``: attributes that one span of the trace carries together (every listed key/value on
  the same span), e.g. ``{gen_ai.agent.name: support}``. ``gen_ai.agent.name`` is the agent's
  identity whichever attribute an instrumentation put it in: when no span carries it, the
  agent name a convention mapped for a span (``agent.name``, a graph node id, a run span's
  name) stands in for it, so one selector selects the agent across instrumentations;
- ``root_name``: the root span's name.

``match`` may also be a list of such selectors: the contract grades a trace when any of
them selects it (e.g. the same agent instrumented by two libraries).

A value is an exact value, or a regex when written between slashes (``/^support-.*/``,
searched with ``re.search`` in the string form of the attribute). Regexes are compiled once
per contract (``Selector``), so selecting is cheap per trace.

A trace some of whose spans never arrived (``Trace.orphans``: a run killed mid-way, a lost
batch) cannot always answer a selector: the span a ``span`` selector keys on, or the root a
``root_name`` selector names, may be the part that is missing (an SDK exports a span when it
ends, and a killed run's agent span never ends). ``could_select`` says whether the missing
part could make the contract select the trace, and why; the session then grades the trace
against that contract rather than let the run vanish from the report (fail closed). A
``resource`` selector is decided by the spans that arrived: the spans of one trace sent by
one process carry its one resource, and a parent in another process is a root, not an
orphan (``build_trace``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from otel_oracles import safe_regex
from otel_oracles.errors import ContractError
from otel_oracles.model.contract import Contract, MatchSpec
from otel_oracles.model.span import Trace

ValueTest = tuple[Any, Callable[[Any], bool] | None]
"""A compiled selector value: the value, and its regex's test when written as a regex."""

AGENT_NAME = "gen_ai.agent.name"
"""The span attribute that stands for the agent's identity in ``span`` selectors."""

MappedAgents = Callable[[], Mapping[str, str]]
"""Span id -> the agent name conventions mapped for that span (computed on demand: only a
selector on ``gen_ai.agent.name`` that no span carries asks)."""

_MISSING = object()


def _value_test(expected: Any, where: str, source: str | None) -> ValueTest:
    """A selector value as ``(expected, regex test)``: the regex test for a value written
    between slashes, else ``None`` (an exact value, compared in place by ``_holds`` and
    ``Selector.__call__``: a lambda called per contract per trace cost a Python frame each
    time, more than the comparison)."""
    if isinstance(expected, str) and len(expected) >= 2 and expected[0] == expected[-1] == "/":
        try:
            rx = safe_regex.compile_pattern(expected[1:-1])
        except safe_regex.RegexSyntaxError as exc:
            raise ContractError(f"{where}: invalid regex {expected!r}: {exc}", source) from None
        return (
            expected,
            lambda v: (
                v is not _MISSING and v is not None and safe_regex.search(rx, str(v)) is not None
            ),
        )
    return expected, None


def _holds(test: ValueTest, value: Any) -> bool:
    """Whether ``value`` (``_MISSING`` when absent) satisfies the selector value ``test``."""
    expected, search = test
    if search is not None:
        return search(value)
    return value is not _MISSING and value == expected


def _pairs(
    spec: Mapping[str, Any], where: str, source: str | None
) -> list[tuple[str, Any, Callable[[Any], bool] | None]]:
    """``(key, expected, regex test or None)`` per ``key: value`` of ``spec``."""
    return [(k, *_value_test(v, f"{where}.{k}", source)) for k, v in spec.items()]


class Selector:
    """A compiled ``match``: ``selector(trace)`` says whether the contract grades the trace."""

    __slots__ = ("_by_agent", "_resource", "_root_name", "_span", "always")

    def __init__(
        self, match: MatchSpec | None, source: str | None = None, where: str = "match"
    ) -> None:
        self.always = match is None or (
            not match.resource and not match.span and match.root_name is None
        )
        self._resource = _pairs(match.resource, f"{where}.resource", source) if match else []
        self._span = _pairs(match.span, f"{where}.span", source) if match else []
        self._by_agent = any(pair[0] == AGENT_NAME for pair in self._span)
        self._root_name = (
            _value_test(match.root_name, f"{where}.root_name", source)
            if match is not None and match.root_name is not None
            else None
        )

    def __call__(
        self, trace: Trace, agents: MappedAgents | None = None, root: Any = _MISSING
    ) -> bool:
        """Whether the contract grades ``trace``; ``root`` is ``trace.root`` when the caller
        read it already (``Session.select`` reads it once for all its contracts)."""
        # Plain loops, not ``all``/``any`` over generators, and exact values compared in
        # place: this runs for every contract on every trace, and a generator made and
        # resumed per pair, or a test's lambda called per pair, cost more than the tests.
        if self.always:
            return True
        if root is _MISSING:
            root = trace.root
        if self._root_name is not None and not _holds(
            self._root_name, root.name if root else _MISSING
        ):
            return False
        if self._resource:
            resource = root.resource if root is not None else {}
            for key, expected, search in self._resource:
                value = resource.get(key, _MISSING)
                if search is not None:
                    if not search(value):
                        return False
                elif value is _MISSING or value != expected:
                    return False
        if self._span:
            pairs = self._span
            for span in trace.spans:
                attributes = span.attributes
                for key, expected, search in pairs:
                    value = attributes.get(key, _MISSING)
                    if search is not None:
                        if not search(value):
                            break
                    elif value is _MISSING or value != expected:
                        break
                else:
                    return True
            return self._by_agent and agents is not None and self._mapped_agent(trace, agents())
        return True

    def could_select(self, trace: Trace) -> str | None:
        """For a trace this selector does not select and whose spans name parents that never
        arrived: why the missing spans could make it select the trace, or ``None`` when the
        spans that arrived rule it out (a ``resource`` or, under a root that arrived,
        ``root_name`` part that does not hold)."""
        if self.always or not trace.orphans:
            return None
        root = trace.root
        if root is not None and root.parent_span_id:
            root = None  # the earliest orphan stands in for the root: its name is no root's
        reasons: list[str] = []
        if self._root_name is not None:
            if root is not None:
                if not _holds(self._root_name, root.name):
                    return None
            else:
                reasons.append("names the root span, which never arrived")
        if self._resource:
            resource = trace.resource
            if not all(
                _holds((expected, search), resource.get(key, _MISSING))
                for key, expected, search in self._resource
            ):
                return None
        if self._span:
            reasons.append("reads span attributes that a span which never arrived may carry")
        return "its match " + " and ".join(reasons) if reasons else None

    def _mapped_agent(self, trace: Trace, agents: Mapping[str, str]) -> bool:
        by_id = {span.span_id: span for span in trace.spans}
        for span_id, name in agents.items():
            span = by_id.get(span_id)
            attributes = span.attributes if span is not None else {}
            if all(
                _holds(
                    (expected, search),
                    name if key == AGENT_NAME else attributes.get(key, _MISSING),
                )
                for key, expected, search in self._span
            ):
                return True
        return False


class AnySelector:
    """A list of selectors: a trace is selected when any of them selects it."""

    __slots__ = ("_parts", "always")

    def __init__(self, parts: list[Selector]) -> None:
        self._parts = parts
        self.always = any(p.always for p in parts)

    def __call__(
        self, trace: Trace, agents: MappedAgents | None = None, root: Any = _MISSING
    ) -> bool:
        """Whether any part selects ``trace`` (``root``: ``Selector.__call__``)."""
        return self.always or any(part(trace, agents, root) for part in self._parts)

    def could_select(self, trace: Trace) -> str | None:
        """``Selector.could_select`` of the first part that could select the trace."""
        return next((why for p in self._parts if (why := p.could_select(trace))), None)


TraceSelector = Selector | AnySelector
"""What ``selector_for`` returns: call it with a trace."""


def selector_for(contract: Contract) -> TraceSelector:
    """Compile a contract's ``match`` (raises ``ContractError`` for a bad regex)."""
    match = contract.match
    if isinstance(match, list):
        return AnySelector(
            [Selector(m, contract.source, where=f"match[{i}]") for i, m in enumerate(match)]
        )
    return Selector(match, contract.source)


def selects(contract: Contract, trace: Trace) -> bool:
    """One-off check; compile with ``selector_for`` when selecting many traces."""
    return selector_for(contract)(trace)
