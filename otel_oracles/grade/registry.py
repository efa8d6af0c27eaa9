"""The oracle registry: built-ins register themselves, plug-ins arrive by entry point.

No code path depends on someone remembering an import: the registry imports a built-in
oracle's module itself, when a contract first names its type (``BUILTIN_TYPES``: a
contract set imports only the oracle modules it uses, docs/performance-history.md, "Start-up:
contracts without YAML"), or every built-in module when the whole registry is asked for
(``registered``); plug-ins from the ``otel_oracles.oracles`` entry-point group are loaded on
the first look-up of either kind. A plug-in that fails to load is recorded with its error
(``otel-oracles oracles`` lists it); it becomes a ``ContractError`` only when a contract uses
its type (``grade.loader``). A plug-in (or a class registered in code) that takes a
built-in's type is refused whether or not that built-in's module was imported yet.
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from otel_oracles._entry_points import entry_point_group
from otel_oracles._frozen import Frozen, set_field
from otel_oracles._lazy_log import LazyLogger
from otel_oracles.errors import PluginError
from otel_oracles.grade.oracles.base import OracleCheck, OracleParams

log = LazyLogger(__name__)

ENTRY_POINT_GROUP = "otel_oracles.oracles"

_ORACLES = "otel_oracles.grade.oracles."

BUILTIN_TYPES: dict[str, str] = {
    # The AgentBench four, a module each: a contract naming ``no_network`` imports only it.
    **{
        name: _ORACLES + "agentbench." + module
        for name, module in (
            ("assertion_exists", "assertion_exists"),
            ("file_not_modified", "file_not_modified"),
            ("no_network", "no_network"),
            ("test_must_pass", "must_pass"),
        )
    },
    "evidence": _ORACLES + "trace_evidence",
    **dict.fromkeys(
        (
            "loop_detected",
            "max_steps",
            "max_tool_calls",
            "tool_called",
            "tool_errors",
            "tool_not_called",
            "tool_retries",
            "tool_sequence",
        ),
        _ORACLES + "trace_tools",
    ),
    **dict.fromkeys(("latency", "tokens"), _ORACLES + "trace_budget"),
    **dict.fromkeys(
        (
            "citation_required",
            "citations_grounded",
            "degraded_answer",
            "handoff",
        ),
        _ORACLES + "trace_answers",
    ),
    **dict.fromkeys(("final_output", "schema_valid"), _ORACLES + "trace_output"),
    **{
        name: _ORACLES + name
        for name in (
            "network_access",
            "package_install",
            "destructive_command",
            "write_outside_root",
            "protected_path_edit",
            "secret_in_command",
        )
    },
}
"""Every built-in oracle type -> the module that registers it on import
(``tests/grade/test_registry.py`` holds it to what the modules register)."""

BUILTIN_MODULES: tuple[str, ...] = tuple(dict.fromkeys(BUILTIN_TYPES.values()))
"""Modules holding built-in oracles; each registers its classes on import."""


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class Registration(Frozen):
    """A registered oracle class and the distribution it came from."""

    __slots__ = ("cls", "distribution")
    cls: type[OracleCheck]
    distribution: str
    """``otel-oracles`` for built-ins, else the plug-in's distribution name."""

    def __init__(self, cls: type[OracleCheck], distribution: str) -> None:
        set_field(self, "cls", cls)
        set_field(self, "distribution", distribution)


_REGISTRY: dict[str, Registration] = {}
_BROKEN: dict[str, str] = {}
_builtins_loaded = False
_plugins_loaded = False
_loading_dist = "otel-oracles"

C = TypeVar("C", bound=type[OracleCheck])


def register_oracle(cls: C) -> C:
    """Class decorator: validate and register an oracle type."""
    oracle_type = getattr(cls, "oracle_type", None)
    if not isinstance(oracle_type, str) or not oracle_type:
        raise PluginError(f"{cls.__qualname__} must set a non-empty string oracle_type")
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, OracleParams)):
        raise PluginError(f"{cls.__qualname__}.Params must subclass OracleParams", oracle_type)
    home = BUILTIN_TYPES.get(oracle_type)
    if home is not None and cls.__module__ != home and oracle_type not in _REGISTRY:
        importlib.import_module(home)  # the built-in first: a taken type stays refused
    existing = _REGISTRY.get(oracle_type)
    # A built-in module imported while a plug-in loads (one that subclasses a built-in)
    # still registers its classes as the package's own.
    dist = "otel-oracles" if cls.__module__ == home else _loading_dist
    if existing is not None and existing.cls is not cls:
        raise PluginError(
            f"oracle type {oracle_type!r} from {dist} is already registered by "
            f"{existing.distribution} ({existing.cls.__module__}.{existing.cls.__qualname__})",
            oracle_type,
        )
    _REGISTRY[oracle_type] = Registration(cls, dist)
    return cls


def _load_builtins() -> None:
    """Every built-in oracle module (for the whole registry: listings, hints)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    for module in BUILTIN_MODULES:
        # A broken built-in is a bug: it raises on every use (the import is retried).
        importlib.import_module(module)
    _builtins_loaded = True


def _load_plugins() -> None:
    """The ``otel_oracles.oracles`` entry points, once; a broken one is recorded."""
    global _plugins_loaded, _loading_dist
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_point_group(ENTRY_POINT_GROUP):
        dist = ep.distribution
        _loading_dist = dist
        try:
            obj = ep.load()
            if isinstance(obj, type) and issubclass(obj, OracleCheck):
                register_oracle(obj)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break grading
            _BROKEN[ep.name] = f"{ep.value} ({dist}): {type(exc).__name__}: {exc}"
            log.warning("oracle plug-in %s failed to load: %s", ep.name, _BROKEN[ep.name])
        finally:
            _loading_dist = "otel-oracles"


def registered() -> dict[str, Registration]:
    """Every registered oracle type, sorted by name (every built-in module imported)."""
    _load_builtins()
    _load_plugins()
    return dict(sorted(_REGISTRY.items()))


def registration(oracle_type: str) -> Registration | None:
    """The registration of ``oracle_type``, or ``None`` when no built-in, plug-in or class
    registered in code has it; imports the built-in module of that type only."""
    _load_plugins()
    reg = _REGISTRY.get(oracle_type)
    if reg is None and oracle_type in BUILTIN_TYPES:
        importlib.import_module(BUILTIN_TYPES[oracle_type])
        reg = _REGISTRY.get(oracle_type)
    return reg


def broken_plugins() -> dict[str, str]:
    _load_plugins()
    return dict(_BROKEN)


def oracle_class(oracle_type: str) -> type[OracleCheck]:
    reg = registration(oracle_type)
    if reg is None:
        raise KeyError(oracle_type)
    return reg.cls
