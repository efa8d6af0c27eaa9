"""The package's import rules, checked on the source (docs/architecture.md, "Layering").

Why a test: layering decays one convenient import at a time, and a cycle hidden behind a
function-level import still couples the two packages. Reading the import statements with
``ast`` (never importing the modules) keeps the check exact and fast.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "otel_oracles"

FOUNDATION = frozenset(
    {
        "errors",
        "safe_regex",
        "config_yaml",
        "config_json",
        "config_bytes",
        "_cache_dir",
        "lifeline",
        "_lazy_names",
        "_lazy_log",
        "_lazy_pattern",
        "_frozen",
    }
)
"""Leaf modules every package may import: the user-facing error tree, the regex engine every
pattern over trace content must use, bounded YAML loading and the bounded read under it, JSON
documents whose every refusal is one error, the user cache's entry rules, the
worker-process lifeline, the loader of names a package imports on first use, the logger
that imports ``logging`` on first use, and the module pattern compiled on first use, the
frozen records written without generated methods.
They import nothing of the package but each other."""

MAY_IMPORT: dict[str, frozenset[str]] = {
    "model": frozenset({"_native"}),  # the core writes the text the network checks scan
    "decode": frozenset({"model", "_native"}),  # the compiled core decodes OTLP
}
"""Packages whose allowed imports are listed exhaustively (besides ``FOUNDATION``)."""

MUST_NOT_IMPORT: dict[str, frozenset[str]] = {
    "grade": frozenset({"decode", "emit", "server", "cli", "pipeline", "parallel", "session"}),
    "emit": frozenset({"grade", "server", "cli", "pipeline", "parallel"}),
    "mapping": frozenset({"grade", "emit", "server", "cli", "pipeline", "parallel"}),
    "assemble": frozenset({"mapping", "grade", "emit", "server", "cli", "pipeline", "parallel"}),
}


@dataclass(frozen=True)
class Import:
    source: str
    """Dotted module doing the import."""
    target: str
    """Dotted module imported."""
    line: int
    in_function: bool
    type_only: bool = False
    """Under ``if TYPE_CHECKING:``: it couples the packages, but never runs."""

    @property
    def source_package(self) -> str:
        return _top(self.source)

    @property
    def target_package(self) -> str:
        return _top(self.target)


def _top(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> list[Import]:
    found: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        functions = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        nested = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        type_only = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and _is_type_checking(block.test)
            for stmt in block.body
            for n in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = node.module
                # ``from otel_oracles import safe_regex`` imports a module, not a name.
                folder = PACKAGE.parent / base.replace(".", "/")
                targets = [
                    f"{base}.{a.name}"
                    if (folder / f"{a.name}.py").exists() or (folder / a.name).is_dir()
                    else base
                    for a in node.names
                ]
            for target in targets:
                if target == "otel_oracles" or target.startswith("otel_oracles."):
                    found.append(
                        Import(
                            source, target, node.lineno, id(node) in nested, id(node) in type_only
                        )
                    )
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


IMPORTS = _imports()


def _located(imp: Import) -> str:
    return f"{imp.source} (line {imp.line}) imports {imp.target}"


def test_imports_were_found() -> None:
    # The rules below are vacuous if the scan found nothing.
    assert len(IMPORTS) > 100
    assert any(i.source_package == "grade" and i.target_package == "model" for i in IMPORTS)


@pytest.mark.parametrize("module", sorted(FOUNDATION))
def test_foundation_modules_are_leaves(module: str) -> None:
    bad = [
        _located(i)
        for i in IMPORTS
        if i.source_package == module and i.target_package not in FOUNDATION
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_listed_packages_import_only_what_they_may(package: str) -> None:
    allowed = MAY_IMPORT[package] | FOUNDATION | {package}
    bad = [
        _located(i)
        for i in IMPORTS
        if i.source_package == package and i.target_package not in allowed
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("package", sorted(MUST_NOT_IMPORT))
def test_lower_stages_never_import_higher_ones(package: str) -> None:
    banned = MUST_NOT_IMPORT[package] | {"__init__"}
    bad = [
        _located(i) for i in IMPORTS if i.source_package == package and i.target_package in banned
    ]
    assert not bad, "\n".join(bad)


def test_private_modules_stay_inside_their_package() -> None:
    bad = []
    for imp in IMPORTS:
        parts = imp.target.split(".")[2:]
        private = [p for p in parts if p.startswith("_") and not p.startswith("__")]
        if private and imp.target_package != imp.source_package:
            bad.append(_located(imp))
    assert not bad, "\n".join(bad)


def _module_graph() -> dict[str, set[str]]:
    """Module -> modules its top-level statements import when it runs, counting the package
    ``__init__`` modules Python runs on the way (importing ``a.b.c`` runs ``a`` and ``a.b``
    first); imports under ``if TYPE_CHECKING:`` never run and are no edge."""
    graph: dict[str, set[str]] = {}
    for imp in IMPORTS:
        edges = graph.setdefault(imp.source, set())
        if imp.in_function or imp.type_only:
            continue
        parts = imp.target.split(".")
        edges.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    for module in list(graph):
        parts = module.split(".")
        for n in range(1, len(parts)):
            graph[module].add(".".join(parts[:n]))
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def test_no_function_level_import_hides_a_cycle() -> None:
    # A function-level import is fine for loading a heavy or optional part only when used
    # (grpc for an OTLP export, a command's stages in the CLI); it is not fine when moving
    # it to the top would make an import cycle between packages, because then two stages
    # depend on each other and the function-level import only hides it. (Inside a package,
    # a submodule loaded lazily always "reaches" its package's __init__ that re-exports it;
    # that is not a cycle between stages.)
    graph = _module_graph()
    bad = [
        _located(i)
        for i in IMPORTS
        if i.in_function
        and i.target_package != i.source_package
        and _reaches(graph, i.target, i.source)
    ]
    assert not bad, "\n".join(bad)
