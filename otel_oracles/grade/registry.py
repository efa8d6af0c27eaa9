"""The oracle registry: built-ins register themselves, plug-ins arrive by entry point.

No code path depends on someone remembering an import: the registry imports the built-in
modules itself on first use, then loads the ``otel_oracles.oracles`` entry-point group.
A plug-in that fails to load is recorded with its error (``otel-oracles oracles`` lists it);
it becomes a ``ContractError`` only when a contract uses its type (``grade.loader``).
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TypeVar

from otel_oracles.errors import PluginError
from otel_oracles.grade.oracles.base import OracleCheck, OracleParams

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "otel_oracles.oracles"

BUILTIN_MODULES: tuple[str, ...] = (
    "otel_oracles.grade.oracles.agentbench",
    "otel_oracles.grade.oracles.trace_evidence",
    "otel_oracles.grade.oracles.trace_tools",
    "otel_oracles.grade.oracles.trace_budget",
    "otel_oracles.grade.oracles.trace_answers",
    "otel_oracles.grade.oracles.network_access",
    "otel_oracles.grade.oracles.package_install",
    "otel_oracles.grade.oracles.destructive_command",
    "otel_oracles.grade.oracles.write_outside_root",
    "otel_oracles.grade.oracles.protected_path_edit",
    "otel_oracles.grade.oracles.secret_in_command",
)
"""Modules holding built-in oracles; each registers its classes on import."""


# No generated eq, repr (compared by identity, never printed): each generated method is
# compiled from source at every start (docs/performance.md, "Start-up: fewer generated methods").
@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Registration:
    cls: type[OracleCheck]
    distribution: str
    """``otel-oracles`` for built-ins, else the plug-in's distribution name."""


_REGISTRY: dict[str, Registration] = {}
_BROKEN: dict[str, str] = {}
_loaded = False
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
    existing = _REGISTRY.get(oracle_type)
    if existing is not None and existing.cls is not cls:
        raise PluginError(
            f"oracle type {oracle_type!r} from {_loading_dist} is already registered by "
            f"{existing.distribution} ({existing.cls.__module__}.{existing.cls.__qualname__})",
            oracle_type,
        )
    _REGISTRY[oracle_type] = Registration(cls, _loading_dist)
    return cls


def _ensure_loaded() -> None:
    global _loaded, _loading_dist
    if _loaded:
        return
    _loaded = True
    try:
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
    except BaseException:
        # A broken built-in is a bug: raise on every use rather than grade with a partial
        # registry after the first failure.
        _loaded = False
        raise
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else ep.value
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
    """Every registered oracle type, sorted by name."""
    _ensure_loaded()
    return dict(sorted(_REGISTRY.items()))


def broken_plugins() -> dict[str, str]:
    _ensure_loaded()
    return dict(_BROKEN)


def oracle_class(oracle_type: str) -> type[OracleCheck]:
    _ensure_loaded()
    reg = _REGISTRY.get(oracle_type)
    if reg is None:
        raise KeyError(oracle_type)
    return reg.cls
