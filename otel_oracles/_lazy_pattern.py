"""A module's regular expression, compiled on its first use.

A module-level ``re.compile`` runs at import, whether or not the process ever matches
anything with it: the patterns of the parsers, reports and oracles a ``grade`` does not reach
cost ~7 M instructions of a one-trace grade's start-up (docs/performance-history.md,
"Start-up: the decompressors, the emitter's settings and the module patterns when needed").
``lazy_pattern`` returns a function that compiles on the first call and returns the same
pattern on every later one; a call site reads ``_BLANKS().sub(" ", text)``. A pattern that is
invalid therefore raises where it is first used, so each one has a test that uses it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> Callable[[], re.Pattern[str]]:
    """``re.compile(pattern, flags)``, deferred to the first call and kept."""

    @functools.cache
    def compiled() -> re.Pattern[str]:
        return re.compile(pattern, flags)

    return compiled
