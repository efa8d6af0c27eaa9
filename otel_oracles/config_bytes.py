"""Reading a configuration file's bytes (contract, task, convention, serve config), bounded.

Apart from ``config_yaml`` because reading needs no YAML: a ``grade`` whose contracts and
mapping files all come from the cache (``_cache_dir``) never imports ``yaml``, whose import
alone is ~90 M instructions (docs/performance-history.md, "Start-up").
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""Largest contract, task, convention or serve config file read (4 MiB; the bundled
conventions are a few KB each)."""


class ConfigTooLarge(ValueError):
    """A configuration file larger than ``MAX_CONFIG_BYTES``."""

    def __init__(self) -> None:
        self.problem = (
            f"file is larger than {MAX_CONFIG_BYTES} bytes, the limit for configuration files"
        )
        super().__init__(self.problem)


def read_config_bytes(path: Path) -> bytes:
    """The file's bytes; ``ConfigTooLarge`` when it is larger than ``MAX_CONFIG_BYTES``
    (``OSError`` as from ``open``)."""
    return read_config_file(path)[0]


def read_config_file(path: Path) -> tuple[bytes, os.stat_result]:
    """``read_config_bytes``, with the file's status taken once its bytes are read (its
    ``fstat``): a change made while they were read shows in its times (the conventions
    cache's stat check, ``mapping/_cache.py``)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
        info = os.fstat(handle.fileno())
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigTooLarge
    return data, info
