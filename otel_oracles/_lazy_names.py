"""A package's public names, each imported when it is first read (PEP 562).

Importing any ``otel_oracles.*`` module runs the package ``__init__`` files on its path, and
pytest imports the package at every start-up (the ``pytest11`` plug-in). So a package's
``__init__`` names what it offers without importing it: the SDK emitters, the HTML and JUnit
writers, the command runner with ``subprocess``, the pytest helpers each cost start-up time
that most commands never use (docs/performance-history.md, "Start-up"). Every such package
builds its module ``__getattr__`` here, so a name resolves the same way everywhere: its module
is imported on the first read, the value is then kept in the package's namespace (later
reads are plain attribute reads), and a name the package does not offer is the usual
``AttributeError``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``sources`` maps each public name to the
    dotted module that defines it. Call it from the package's own ``__init__`` (the package
    must already be in ``sys.modules``, as it is while its ``__init__`` runs)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(source), name)
        namespace[name] = value
        return value

    return __getattr__
