"""Which parser a conventions file means by ``parse: <name>``: built-ins and plug-ins.

Built-in parsers live in one module per vendor or format (``BUILTIN_MODULES``), each with a
``PARSERS`` mapping of registered name -> function. Third-party parsers arrive through the
``otel_oracles.parsers`` entry-point group: the entry point's name is the name YAML uses,
its value the function (``my_pkg.parsers:parse_acme_messages``).

The registry is an object, not module state: ``load_conventions`` discovers it once and the
``ConventionSet`` it returns owns it, so what a mapping file may name depends only on what
was installed when the process first looked for plug-ins (``otel_oracles._entry_points``:
the installed entry points are read once per process). A plug-in that fails to load (import
error, not callable, wrong signature, a name already taken) is recorded with its reason and
logged; it becomes a ``ConventionError`` only when a mapping file names it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from otel_oracles._entry_points import entry_point_group
from otel_oracles._frozen import Frozen, FrozenValue, set_field
from otel_oracles._lazy_log import LazyLogger
from otel_oracles.model.contract import did_you_mean

log = LazyLogger(__name__)

ENTRY_POINT_GROUP = "otel_oracles.parsers"
"""Entry-point group of third-party parsers (name = the name YAML uses)."""

BUILTIN_DISTRIBUTION = "otel-oracles"

BUILTIN_MODULES: tuple[str, ...] = (
    "otel_oracles.mapping.parsers.scalars",
    "otel_oracles.mapping.parsers.python_literals",
    "otel_oracles.mapping.parsers.providers",
    "otel_oracles.mapping.parsers.otel_genai",
    "otel_oracles.mapping.parsers.openinference",
    "otel_oracles.mapping.parsers.openllmetry",
    "otel_oracles.mapping.parsers.vercel_ai_sdk",
    "otel_oracles.mapping.parsers.openai_agents",
    "otel_oracles.mapping.parsers.smolagents",
    "otel_oracles.mapping.parsers.langgraph",
    "otel_oracles.mapping.parsers.llama_index",
    "otel_oracles.mapping.parsers.handoffs",
    "otel_oracles.mapping.parsers.haystack",
    "otel_oracles.mapping.parsers.dspy",
    "otel_oracles.mapping.parsers.genkit",
    "otel_oracles.mapping.parsers.pydantic_ai",
    "otel_oracles.mapping.parsers.langtrace",
    "otel_oracles.mapping.parsers.openlit",
    "otel_oracles.mapping.parsers.autogen",
    "otel_oracles.mapping.parsers.ag2",
    "otel_oracles.mapping.parsers.beeai",
    "otel_oracles.mapping.parsers.any_agent",
    "otel_oracles.mapping.parsers.eino",
    "otel_oracles.mapping.parsers.azure_agents",
)
"""Modules holding built-in parsers, each with a ``PARSERS`` mapping."""


class Parser(Protocol):
    """One step of a source's ``parse:`` chain.

    Input: the raw value the source yielded (an attribute value, a dict of attributes for
    ``attrs``/``attr_prefix``, a list of ``EventRecord`` for ``event``), or what the parser
    before it returned. Output: the value in the mapper's shapes (messages in the GenAI
    parts format, see ``messages``; documents as a list of dicts; scalars as themselves), or
    ``None`` for "no value here", after which the next source is tried.

    Trace content is untrusted: a parser must not execute it, must bound its work by the
    input's size, and should return ``None`` rather than raise (an exception is logged and
    treated as "no value", so one odd span never stops a trace from being mapped).
    """

    def __call__(self, value: Any, /) -> Any: ...


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class ParserRegistration(Frozen):
    """A registered parser and the distribution it came from."""

    __slots__ = ("distribution", "parse")
    parse: Parser
    distribution: str
    """``otel-oracles`` for built-ins, else the plug-in's distribution name."""

    def __init__(self, parse: Parser, distribution: str) -> None:
        set_field(self, "parse", parse)
        set_field(self, "distribution", distribution)


class ParserRegistry:
    """Registered name -> parser, plus the plug-ins that failed to load (name -> reason).

    Immutable once built; safe to share across threads and traces."""

    __slots__ = ("_broken", "_parsers")

    def __init__(
        self, parsers: Mapping[str, ParserRegistration], broken: Mapping[str, str] | None = None
    ) -> None:
        self._parsers = dict(sorted(parsers.items()))
        self._broken = dict(broken or {})

    def __contains__(self, name: object) -> bool:
        return name in self._parsers

    def __getitem__(self, name: str) -> Parser:
        return self._parsers[name].parse

    def registrations(self) -> dict[str, ParserRegistration]:
        """Every usable parser by name, sorted."""
        return dict(self._parsers)

    def broken(self) -> dict[str, str]:
        """Plug-ins that failed to load: entry-point name -> reason."""
        return dict(self._broken)

    def problem(self, name: str) -> str | None:
        """Why ``name`` cannot be used in a ``parse:`` list, or ``None`` when it can."""
        if name in self._parsers:
            return None
        if name in self._broken:
            return f"parser {name!r} failed to load: {self._broken[name]}"
        return f"unknown parser {name!r}{did_you_mean(name, self._parsers)}"

    def chain(self, names: Iterable[str]) -> Parser | None:
        """One callable for a ``parse:`` list: the parser itself for one name (the hot path
        calls it directly), a chain for several, ``None`` for none. Raises ``KeyError`` for
        an unregistered name (mapping files are checked against the registry at load)."""
        parsers = tuple(self[name] for name in names)
        if not parsers:
            return None
        if len(parsers) == 1:
            return parsers[0]
        return ParserChain(parsers)

    def apply(self, names: Iterable[str], value: Any) -> Any:
        """Run the named parsers in order, as mapping does: ``None`` stops the chain, and a
        parser that raises is logged and gives "no value"."""
        chain = self.chain(names)
        if chain is None:
            return value
        try:
            return chain(value)
        except Exception:
            log.debug("parser chain %s failed", list(names), exc_info=True)
            return None


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class ParserChain(FrozenValue):
    """Parsers applied in order; ``None`` from one ends the chain with no value. The
    mapping's field reader runs a chain in the compiled core (``_compile._parser``: the
    core's own parsers called directly, any other through Python); this call is the same
    for every other user of ``ParserRegistry.chain``."""

    __slots__ = ("parsers",)
    parsers: tuple[Parser, ...]

    def __init__(self, parsers: tuple[Parser, ...]) -> None:
        set_field(self, "parsers", parsers)

    def __call__(self, value: Any, /) -> Any:
        for parse in self.parsers:
            if value is None:
                return None
            value = parse(value)
        return value

    @property
    def __name__(self) -> str:
        return "+".join(getattr(p, "__name__", "?") for p in self.parsers)


def _builtin() -> dict[str, ParserRegistration]:
    found: dict[str, ParserRegistration] = {}
    for module_name in BUILTIN_MODULES:
        module = importlib.import_module(module_name)
        for name, parse in module.PARSERS.items():
            if name in found:  # a bug in this package, not a user's mistake
                raise RuntimeError(f"built-in parser {name!r} is registered twice")
            found[name] = ParserRegistration(parse, BUILTIN_DISTRIBUTION)
    return found


def builtin_parsers() -> ParserRegistry:
    """The parsers that ship with otel-oracles, without plug-ins."""
    return ParserRegistry(_builtin())


def _signature_problem(obj: Any) -> str | None:
    if not callable(obj):
        return f"not callable ({type(obj).__name__})"
    try:
        inspect.signature(obj).bind(None)
    except TypeError:
        return "must take exactly one positional argument (the raw value)"
    except ValueError:  # no signature to inspect (some builtins): trust the call
        return None
    return None


def load_parsers() -> ParserRegistry:
    """Built-in parsers plus every loadable plug-in of the ``otel_oracles.parsers`` group.

    A plug-in whose name is taken (by a built-in or an earlier plug-in) is recorded as
    broken, naming both distributions: which function a name means must not depend on the
    order in which distributions are found."""
    parsers = _builtin()
    broken: dict[str, str] = {}
    for ep in entry_point_group(ENTRY_POINT_GROUP):
        dist = ep.distribution
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break mapping
            broken[ep.name] = f"{ep.value} ({dist}): {type(exc).__name__}: {exc}"
        else:
            problem = _signature_problem(obj)
            taken = parsers.get(ep.name)
            if problem is not None:
                broken[ep.name] = f"{ep.value} ({dist}): {problem}"
            elif taken is not None:
                broken[ep.name] = (
                    f"{ep.value} ({dist}): the name is already registered by {taken.distribution}"
                )
            else:
                parsers[ep.name] = ParserRegistration(obj, dist)
                continue
        log.warning("parser plug-in %s failed to load: %s", ep.name, broken[ep.name])
    for name in broken:
        if name in parsers and parsers[name].distribution != BUILTIN_DISTRIBUTION:
            # Two plug-ins claimed the name: neither wins.
            del parsers[name]
    return ParserRegistry(parsers, broken)
