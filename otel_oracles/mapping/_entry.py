"""A conventions cache entry's model (``mapping/_cache.py``), in a module of its own.

It names the schema's ``ConventionFile``, and importing the schema (``config.py``: ten models,
their validators) is ~20 M instructions that a warm start does not need: it builds the
compiled set from its kept blueprint and reads no file's entry (docs/performance-history.md,
"Start-up: the schema's models imported when asked for"). So ``ConventionCache`` imports this
module when it first reads or writes a file's entry.
"""

from pydantic import BaseModel, ConfigDict

from otel_oracles.mapping.config import CHECKED, ConventionFile


class Entry(BaseModel):
    """A cache entry as written. Built when first used (as the files' models are): a warm
    start keys the entries by their bytes and validates none."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    key: str
    file: ConventionFile


WRITTEN_CHECKED = {CHECKED: True}
"""An entry passed every check when it was written, under the schema and engine in its key."""
