"""Shared pytest configuration. Stage-specific fixtures live next to their tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root, for tests that run the CLI on bundled examples."""
    return REPO
