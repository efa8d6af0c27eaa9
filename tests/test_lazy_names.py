"""Public names imported when first read (``otel_oracles/_lazy_names.py``).

Six packages name more than they import, so that ``grade``, ``serve`` and pytest's start-up
skip what they never use. Why tests: a loader that forgets to keep the value re-imports on
every read, one that swallows the ``AttributeError`` breaks ``hasattr`` and ``getattr``
defaults, and a package whose map names the wrong module fails only for the user who reads
that name.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path

import pytest

PACKAGE_MAPS = {
    "otel_oracles": "_LAZY",
    "otel_oracles.emit": "_LAZY",
    "otel_oracles.report": "_LAZY",
    "otel_oracles.testing": "_LAZY",
    "otel_oracles.sandbox": "_RUNNER",
    "otel_oracles.server": "_LAZY",
}
"""Each package built on ``lazy_names`` and the name of its public-name -> module map."""


@pytest.fixture
def toy_package(tmp_path: Path) -> Iterator[str]:
    """A real package on disk whose ``__init__`` offers ``Heavy`` from a submodule that
    counts its own imports."""
    root = tmp_path / "lazytoy"
    root.mkdir()
    (root / "__init__.py").write_text(
        "from otel_oracles._lazy_names import lazy_names\n"
        "__getattr__ = lazy_names(__name__, {'Heavy': 'lazytoy.heavy'})\n"
    )
    (root / "heavy.py").write_text(
        "import builtins\n"
        "builtins.lazytoy_imports = getattr(builtins, 'lazytoy_imports', 0) + 1\n"
        "class Heavy:\n    pass\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield "lazytoy"
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "lazytoy" or n.startswith("lazytoy.")]:
            del sys.modules[name]
        import builtins

        if hasattr(builtins, "lazytoy_imports"):
            del builtins.lazytoy_imports


def test_a_name_is_imported_on_first_read_and_then_kept(toy_package: str) -> None:
    import builtins

    package = import_module(toy_package)
    assert f"{toy_package}.heavy" not in sys.modules
    assert "Heavy" not in vars(package)

    first = package.Heavy
    assert first is sys.modules[f"{toy_package}.heavy"].Heavy
    assert vars(package)["Heavy"] is first  # later reads never reach ``__getattr__``
    assert package.Heavy is first
    assert builtins.lazytoy_imports == 1  # type: ignore[attr-defined]


def test_an_unknown_name_is_the_usual_attribute_error(toy_package: str) -> None:
    package = import_module(toy_package)
    with pytest.raises(AttributeError, match=r"module 'lazytoy' has no attribute 'Missing'"):
        _ = package.Missing
    assert not hasattr(package, "Missing")
    assert getattr(package, "Missing", "default") == "default"
    assert f"{toy_package}.heavy" not in sys.modules


def test_from_import_resolves_through_the_loader(toy_package: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {toy_package} import Heavy", namespace)
    assert namespace["Heavy"] is sys.modules[f"{toy_package}.heavy"].Heavy


@pytest.mark.parametrize("package_name", sorted(PACKAGE_MAPS))
def test_every_lazily_named_value_is_its_defining_module_s(package_name: str) -> None:
    package = import_module(package_name)
    sources: dict[str, str] = getattr(package, PACKAGE_MAPS[package_name])
    assert sources, package_name
    for name, source in sources.items():
        assert name in package.__all__, f"{package_name}.{name} is not public"
        assert getattr(package, name) is getattr(import_module(source), name), name
