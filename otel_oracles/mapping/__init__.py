"""MAP stage: assembled traces -> trajectories of normalized steps, driven by the declarative
mapping files in ``conventions/`` (bundled) and any directory the user adds.

    conventions = load_conventions([Path("my-conventions")])   # validated, compiled once
    trajectory = map_trace(trace, conventions)

See ``docs/conventions.md`` for the file format and how to add an instrumentation.
"""

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names
from otel_oracles.mapping._cache import ConventionCache
from otel_oracles.mapping._loader import (
    ConventionSet,
    builtin_dir,
    load_convention_file,
    load_conventions,
)
from otel_oracles.mapping._mapper import RUN_WRAPPER, map_trace
from otel_oracles.mapping.parsers import Parser, ParserRegistry, load_parsers

if TYPE_CHECKING:
    from otel_oracles.mapping.config import Condition, ConventionFile, Covers, Match, Rule, Source

_LAZY: dict[str, str] = dict.fromkeys(
    ("Condition", "ConventionFile", "Covers", "Match", "Rule", "Source"),
    "otel_oracles.mapping.config",
)
"""The schema's models, imported when one is first read: a warm start builds the compiled set
from the cache's blueprint and never uses them, and importing them (ten models and their
validators) is ~20 M instructions (docs/performance-history.md, "Start-up: the schema's models
imported when asked for")."""

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "RUN_WRAPPER",
    "Condition",
    "ConventionCache",
    "ConventionFile",
    "ConventionSet",
    "Covers",
    "Match",
    "Parser",
    "ParserRegistry",
    "Rule",
    "Source",
    "builtin_dir",
    "load_convention_file",
    "load_conventions",
    "load_parsers",
    "map_trace",
]
