"""``otel_oracles/_native.pyi`` is the only thing mypy knows of the compiled core, and nothing
in Python checks it against the built module: a renamed or missing function or parameter, a
class registered twice under one name (the second replacing the first), a constructor whose
arguments changed would all type-check while failing at run time. ``mypy.stubtest`` imports
the built module and compares every name, signature and class with the stub."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from otel_oracles import _native

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "otel_oracles" / "_native.pyi"


def _stubtest(package_parent: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run stubtest on ``otel_oracles._native`` as imported from ``package_parent`` (module
    and stub both), in ``cwd`` so that its cache stays out of the tree."""
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "otel_oracles._native"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_stub_matches_the_built_module(tmp_path: Path) -> None:
    assert Path(_native.__file__ or "").resolve().parent == ROOT / "otel_oracles"
    run = _stubtest(ROOT, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_stubtest_reports_a_parameter_the_module_does_not_have(tmp_path: Path) -> None:
    """The check above can fail: the same run on a copy of the package whose stub gives
    ``core_version`` a parameter the built function does not take reports it."""
    copy = tmp_path / "tree"
    shutil.copytree(
        ROOT / "otel_oracles",
        copy / "otel_oracles",
        ignore=shutil.ignore_patterns("__pycache__"),
        symlinks=True,
    )
    stub = STUB.read_text()
    assert stub.count("def core_version() -> str:") == 1
    (copy / "otel_oracles" / "_native.pyi").write_text(
        stub.replace("def core_version() -> str:", "def core_version(strict: bool) -> str:")
    )
    run = _stubtest(copy, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    expected = 'core_version is inconsistent, runtime does not have parameter "strict"'
    assert f"otel_oracles._native.{expected}" in run.stdout, run.stdout
