"""A separately installed package adds an oracle type through the ``otel_oracles.oracles``
entry-point group, with no edit to otel-oracles; a broken plug-in is listed, not fatal.

The plug-ins are pip-installed into a throwaway ``--target`` directory that only the
subprocesses see (via PYTHONPATH), so the shared environment is never modified.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _setuptools_builds_wheels() -> bool:
    try:
        from importlib.metadata import version

        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except Exception:  # noqa: BLE001 - absent or odd version: let pip build in isolation
        return False
    return (major, minor) >= (70, 1)


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("plugin-site")
    # Offline and fast when the environment's setuptools can build wheels by itself;
    # otherwise pip builds in isolation and fetches a recent setuptools from the registry.
    offline = ["--no-index", "--no-build-isolation"] if _setuptools_builds_wheels() else []
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *offline,
        "--target", str(site), str(HERE / "max_lines"), str(HERE / "broken_oracle"),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(site.glob("otel_oracles_max_lines-*.dist-info/entry_points.txt"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return env


def otel_oracles(*args: str | Path, env: dict[str, str], cwd: Path | None = None):
    script = Path(sys.executable).with_name("otel-oracles")
    argv = [str(script)] if script.exists() else [
        sys.executable, "-c", "from otel_oracles.cli import main; main()"]  # fmt: skip
    return subprocess.run(
        [*argv, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def _task(tmp_path: Path, oracles: list[dict]) -> Path:
    task = {
        "id": "short-file",
        "name": "keep notes.txt short",
        "description": "plug-in test",
        "prompt": "edit notes.txt",
        "workspace": {"notes.txt": "one\ntwo\n"},
        "oracles": oracles,
    }
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    return path


def _trajectory(tmp_path: Path, name: str, lines: int) -> Path:
    content = "".join(f"line {i}\n" for i in range(lines))
    steps = [{"tool": "write_file", "args": {"path": "notes.txt", "content": content}}]
    path = tmp_path / name
    path.write_text(json.dumps({"steps": steps}))
    return path


def test_plugin_oracle_is_listed_with_its_distribution(plugin_env: dict[str, str]) -> None:
    proc = otel_oracles("oracles", "--json", env=plugin_env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_type = {o["type"]: o for o in data["oracles"]}
    assert by_type["max_lines"]["distribution"] == "otel-oracles-max-lines"
    assert [p["name"] for p in by_type["max_lines"]["params"]] == ["path", "max"]
    assert by_type["test_must_pass"]["distribution"] == "otel-oracles"


def test_broken_plugin_is_listed_with_its_error(plugin_env: dict[str, str]) -> None:
    proc = otel_oracles("oracles", env=plugin_env)
    assert proc.returncode == 0, proc.stderr
    assert "broken plug-ins" in proc.stdout
    assert "broken_thing: otel_oracles_broken_example:DoesNotExist" in proc.stdout
    assert "otel-oracles-broken-example" in proc.stdout


def test_contract_uses_the_plugin_oracle(plugin_env: dict[str, str], tmp_path: Path) -> None:
    task = _task(tmp_path, [{"type": "max_lines", "path": "notes.txt", "max": 3}])
    short = _trajectory(tmp_path, "short.json", 3)
    long = _trajectory(tmp_path, "long.json", 5)
    ok = otel_oracles("run", task, "-t", short, env=plugin_env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # --explain full: the plug-in's own message (reports show a template by default).
    bad = otel_oracles("run", task, "-t", long, "--json", "--explain", "full", env=plugin_env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    (result,) = json.loads(bad.stdout)["verdicts"][0]["results"]
    assert result["message"] == "notes.txt has 5 lines, more than 3"
    assert result["params"] == {"path": "notes.txt", "max": 3}


def test_plugin_params_are_validated_from_its_params_model(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    task = _task(tmp_path, [{"type": "max_lines", "path": "notes.txt"}])
    proc = otel_oracles("validate", task, env=plugin_env)
    assert proc.returncode == 1
    assert "oracles[0].max: field required for oracle type 'max_lines'" in proc.stderr


def test_contract_using_a_broken_plugin_fails_validation_naming_the_cause(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    task = _task(tmp_path, [{"type": "broken_thing"}])
    proc = otel_oracles("validate", task, env=plugin_env)
    assert proc.returncode == 1
    assert "oracle type 'broken_thing' failed to load" in proc.stderr
    assert "AttributeError" in proc.stderr


def test_without_the_plugin_installed_the_type_is_unknown(tmp_path: Path) -> None:
    task = _task(tmp_path, [{"type": "max_lines", "path": "notes.txt", "max": 3}])
    proc = otel_oracles("validate", task, env=dict(os.environ))
    assert proc.returncode == 1
    assert "unknown oracle type 'max_lines'" in proc.stderr


def test_the_kept_entry_points_follow_a_plugin_installed_and_removed(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    """The plug-in groups are kept between runs (``otel_oracles._entry_points``); the same
    path and cache, with a plug-in installed and then removed between runs, must show it
    only while it is there (a cache keyed by the path alone would hide both changes)."""
    installed = Path(plugin_env["PYTHONPATH"].split(os.pathsep)[0])
    site = tmp_path / "site"
    site.mkdir()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    env["OTEL_ORACLES_CONVENTIONS_CACHE"] = str(tmp_path / "cache")
    kept = tmp_path / "cache" / "entry-points.json"

    def types() -> set[str]:
        proc = otel_oracles("oracles", "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        return {o["type"] for o in json.loads(proc.stdout)["oracles"]}

    assert "max_lines" not in types()
    assert kept.is_file()
    before = kept.read_bytes(), kept.stat().st_ino
    assert "max_lines" not in types()
    assert (kept.read_bytes(), kept.stat().st_ino) == before  # read, not written again
    for child in installed.iterdir():
        if child.name.startswith("otel_oracles_max_lines"):
            if child.is_dir():
                shutil.copytree(child, site / child.name)
            else:
                shutil.copy2(child, site / child.name)
    assert "max_lines" in types()
    assert kept.read_bytes() != before[0]
    assert "max_lines" in types()
    for child in site.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
    assert "max_lines" not in types()
