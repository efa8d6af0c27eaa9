"""The compiled core is the one built from this tree: a stale ``_native`` module left by an
older build would grade with old code while the Python around it is new."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from otel_oracles import _native

ROOT = Path(__file__).resolve().parents[2]


def test_core_version_matches_the_package_and_the_crate() -> None:
    crate = tomllib.loads((ROOT / "native/Cargo.toml").read_text())["workspace"]["package"]
    assert _native.core_version() == crate["version"]
    assert _native.core_version() == metadata.version("otel-oracles")


def test_the_module_is_loaded_from_this_tree() -> None:
    assert Path(_native.__file__ or "").resolve().parent == ROOT / "otel_oracles"


def test_the_wheel_includes_every_convention_file() -> None:
    """maturin does not follow the linked ``otel_oracles/conventions`` directory, so
    pyproject.toml names its files by pattern; a convention in a new subdirectory would be
    left out of wheels silently without this check."""
    maturin = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    patterns = [entry["path"] for entry in maturin["include"] if entry["format"] == "wheel"]
    package_root = ROOT / "otel_oracles"
    shipped = {p for pattern in patterns for p in ROOT.glob(pattern)}
    conventions = {
        package_root / "conventions" / p.relative_to(ROOT / "conventions")
        for p in (ROOT / "conventions").rglob("*")
        if p.is_file()
    }
    assert conventions, "no convention files found"
    assert conventions <= shipped, sorted(str(p) for p in conventions - shipped)
