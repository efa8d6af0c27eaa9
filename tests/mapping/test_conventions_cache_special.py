"""The conventions cache is data (docs/security.md): an entry replaced by a FIFO (which
``open`` waits on until someone writes it, that is forever) or a device must be ignored and
written again like any bad entry, never stall ``grade``, ``serve`` or ``inspect`` at start-up.

The load runs in a subprocess: a hang is the failure this guards against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from otel_oracles.mapping import ConventionCache
from otel_oracles.mapping._loader import load_convention_file
from tests.mapping.test_conventions_cache import USER_FILE

LOAD = """
import sys
from pathlib import Path
from otel_oracles.mapping import ConventionCache
from otel_oracles.mapping._loader import load_convention_file
load_convention_file(Path(sys.argv[1]), cache=ConventionCache(Path(sys.argv[2])))
print("loaded")
"""


@pytest.mark.parametrize("special", ["fifo", "device"])
def test_a_special_file_as_entry_is_ignored_and_written_again(tmp_path: Path, special: str) -> None:
    path = tmp_path / "my-agent.yaml"
    path.write_text(USER_FILE)
    cache_dir = tmp_path / "cache"
    load_convention_file(path, cache=ConventionCache(cache_dir))
    (entry,) = cache_dir.glob("*.json")
    good = entry.read_bytes()
    entry.unlink()
    if special == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(path), str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "loaded", done.stderr
    assert entry.is_file() and not entry.is_symlink()
    assert entry.read_bytes() == good
