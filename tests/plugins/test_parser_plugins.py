"""A separately installed package adds a message parser through the ``otel_oracles.parsers``
entry-point group; a mapping file names it, and spans in that vendor's format become steps
with no edit to otel-oracles. A parser plug-in that fails to load is an error only where a
mapping file names it.

As for oracle plug-ins, the package is pip-installed into a throwaway ``--target`` directory
that only the subprocesses see (via PYTHONPATH), so the shared environment is never modified.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugins.test_plugin_entry_points import _setuptools_builds_wheels, otel_oracles

HERE = Path(__file__).resolve().parent
DATA = HERE / "parser_testdata"
TRACE = DATA / "acme.otlp.json"


@pytest.fixture(scope="module")
def parser_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("parser-plugin-site")
    offline = ["--no-index", "--no-build-isolation"] if _setuptools_builds_wheels() else []
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *offline,
        "--target", str(site), str(HERE / "acme_parser"),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(site.glob("otel_oracles_acme_parser-*.dist-info/entry_points.txt"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return env


def test_installed_parser_maps_its_vendors_messages(parser_env: dict[str, str]) -> None:
    proc = otel_oracles(
        "inspect", TRACE, "--conventions", DATA / "acme.yaml", "--json", env=parser_env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (trajectory,) = json.loads(proc.stdout)["trajectories"]
    generation, call = trajectory["steps"]
    assert generation["convention"] == "acme"
    assert generation["model"] == "acme-large"
    assert [m["role"] for m in generation["input_messages"]] == ["system", "user"]
    assert generation["output_messages"][0]["parts"][1] == {
        "type": "tool_call",
        "id": "call_1",
        "name": "search_docs",
        "arguments": {"query": "refund window"},
    }
    # The requested call, seen only in the plug-in's output, is a step of its own.
    assert call["kind"] == "tool_call" and call["synthesized"] is True
    assert (call["tool"], call["call_id"]) == ("search_docs", "call_1")
    assert call["arguments"] == {"query": "refund window"}


def test_without_the_plugin_the_parser_name_is_a_located_error() -> None:
    proc = otel_oracles("inspect", TRACE, "--conventions", DATA / "acme.yaml", env=dict(os.environ))
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f"error: {DATA / 'acme.yaml'}: rules[0].fields.input_messages[0].parse: "
        "unknown parser 'acme_transcript'"
    ), proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_kept_set_whose_files_name_a_parser_no_longer_installed_is_a_located_error(
    parser_env: dict[str, str], tmp_path: Path
) -> None:
    """A warm start builds the set from its cached compiled form without reading the files
    (``load_conventions``), but the parsers every file read names are checked against those
    installed now, a file the set leaves out included (here ``acme.yaml``, replaced by a
    later file of the same name that names no plug-in parser): once the plug-in is gone,
    the error is the one a cold start gives."""
    mine = tmp_path / "mine"
    mine.mkdir()
    written = (DATA / "acme.yaml").read_text()
    (mine / "acme.yaml").write_text(written)
    (mine / "zz-acme.yaml").write_text(written.replace(", parse: acme_transcript", ""))
    cache = {"OTEL_ORACLES_CONVENTIONS_CACHE": str(tmp_path / "cache")}
    contracts = HERE.parents[1] / "examples" / "contracts"
    args = ("grade", TRACE, "-c", contracts, "--conventions", mine, "--allow-empty")
    for _ in range(2):  # written, then read
        with_plugin = otel_oracles(*args, env={**parser_env, **cache})
        assert with_plugin.returncode in (0, 1), with_plugin.stdout + with_plugin.stderr
    assert list((tmp_path / "cache").glob("set-*.json"))
    for env in ({**os.environ, **cache}, dict(os.environ)):  # warm, cold
        proc = otel_oracles(*args, env=env)
        assert proc.returncode == 2
        assert proc.stderr.startswith(
            f"error: {mine / 'acme.yaml'}: rules[0].fields.input_messages[0].parse: "
            "unknown parser 'acme_transcript'"
        ), proc.stderr


def test_parser_plugin_that_failed_to_load_is_named_with_its_reason(
    parser_env: dict[str, str],
) -> None:
    proc = otel_oracles("inspect", TRACE, "--conventions", DATA / "broken", env=parser_env)
    assert proc.returncode == 2
    assert (
        "rules[0].fields.output_messages[0].parse: parser 'acme_two_args' failed to load: "
        "otel_oracles_acme_parser:merge_transcripts (otel-oracles-acme-parser): must take "
        "exactly one positional argument"
    ) in proc.stderr, proc.stderr


def test_a_broken_parser_plugin_does_not_stop_files_that_do_not_name_it(
    parser_env: dict[str, str],
) -> None:
    proc = otel_oracles("inspect", TRACE, "--conventions", DATA / "acme.yaml", env=parser_env)
    assert proc.returncode == 0, proc.stderr
    assert "acme" in proc.stdout


def test_validate_names_an_unknown_parser_by_file_and_key_path() -> None:
    proc = otel_oracles("validate", DATA / "acme.yaml", env=dict(os.environ))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.startswith(
        f"error: {DATA / 'acme.yaml'}: rules[0].fields.input_messages[0].parse: "
        "unknown parser 'acme_transcript'"
    ), proc.stderr


def test_validate_accepts_the_mapping_file_once_the_plugin_is_installed(
    parser_env: dict[str, str],
) -> None:
    proc = otel_oracles("validate", DATA / "acme.yaml", env=parser_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok: {DATA / 'acme.yaml'}: conventions acme: 1 rule(s)" in proc.stdout


def test_a_plugin_cannot_take_a_builtin_parsers_name(parser_env: dict[str, str]) -> None:
    script = (
        "import json\n"
        "from otel_oracles.mapping import load_parsers\n"
        "registry = load_parsers()\n"
        "owners = {n: r.distribution for n, r in registry.registrations().items()}\n"
        "print(json.dumps({'owners': owners, 'broken': registry.broken()}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=parser_env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["owners"]["json"] == "otel-oracles"
    assert found["owners"]["acme_transcript"] == "otel-oracles-acme-parser"
    assert "already registered by otel-oracles" in found["broken"]["json"]
    assert "acme_two_args" in found["broken"]
