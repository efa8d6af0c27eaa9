"""Shared pytest configuration. Stage-specific fixtures live next to their tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root, for tests that run the CLI on bundled examples."""
    return REPO


@pytest.fixture(autouse=True)
def _own_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own ``XDG_STATE_HOME``: ``serve`` keeps its write-ahead spool there by
    default, and a test must neither touch the user's nor replay another test's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def _own_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validated-conventions cache of ``grade`` (``mapping/_cache.py``) lives in one
    directory of this session's temporary tree: tests never write into the user's
    ``~/.cache`` (the collector binary, which takes minutes to build, stays there), and they
    share warm entries as repeated runs do."""
    directory = tmp_path_factory.getbasetemp() / "conventions-cache"
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(directory))
