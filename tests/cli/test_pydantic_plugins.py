"""pydantic's plug-ins under the command line (``cli.pydantic_plugins_off``).

With no pydantic plug-in installed, ``main`` sets ``PYDANTIC_DISABLE_PLUGINS=__all__`` before
the command's models are built, so pydantic does not scan every distribution's metadata for
plug-ins that are not there. A plug-in that is installed must still see the models, and a
value the user set is theirs. Each test runs the real command in a fresh interpreter with a
private cache, so the kept entry points are read and written as in use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "testdata" / "traces" / "openai-v2" / "a_happy.otlp.json"

PROBE = """
import json, os, sys
from otel_oracles.cli import main
sys.argv = ["otel-oracles", "grade", sys.argv[1], "-c", sys.argv[2], "-q"]
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\nSEEN " + json.dumps(
    {"code": code, "setting": os.environ.get("PYDANTIC_DISABLE_PLUGINS")}) + "\\n")
"""

PLUGIN = '''
"""A pydantic plug-in that writes the name of each model pydantic builds a validator for."""
import os


class Recorder:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config,
                             plugin_settings):
        with open(os.environ["RECORDED_MODELS"], "a") as out:
            out.write(schema_type_path.name + "\\n")
        return None, None, None


plugin = Recorder()
'''


def grade_seen(env_extra: dict[str, str], tmp_path: Path) -> dict[str, object]:
    """Exit code and the variable's value in the process after ``grade`` ran there."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["OTEL_ORACLES_CACHE"] = str(tmp_path / "cache")
    env.pop("OTEL_ORACLES_CONVENTIONS_CACHE", None)
    env.update(env_extra)
    contracts = str(REPO / "bench" / "contracts")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(TRACE), contracts],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    marker = proc.stderr.rfind("\nSEEN ")
    assert marker >= 0, proc.stderr
    seen: dict[str, object] = json.loads(proc.stderr[marker + len("\nSEEN ") :])
    return seen


def installed_plugin(site: Path) -> None:
    """A distribution declaring a pydantic plug-in, laid out as pip installs one."""
    info = site / "record_models-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: record-models\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nrecord = record_models:plugin\n")
    (site / "record_models.py").write_text(PLUGIN)


def test_grade_turns_pydantic_plugins_off_when_none_is_installed(tmp_path: Path) -> None:
    for run in ("cache written", "cache read"):
        seen = grade_seen({}, tmp_path)
        assert seen["code"] == 1, f"{run}: the fixture fails one of the bench contracts"
        assert seen["setting"] == "__all__", f"{run}: no pydantic plug-in, so none to scan for"


def test_an_installed_pydantic_plugin_still_sees_the_models(tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed_plugin(site)
    recorded = tmp_path / "recorded.txt"
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    for run in ("cache written", "cache read"):
        recorded.write_text("")
        seen = grade_seen({"PYTHONPATH": path, "RECORDED_MODELS": str(recorded)}, tmp_path)
        assert seen["code"] == 1, run
        assert seen["setting"] is None, f"{run}: a plug-in is installed, so it must stay on"
        models = set(recorded.read_text().split())
        assert {"Contract", "OracleSpec"} <= models, f"{run}: the plug-in saw {sorted(models)}"


def test_a_setting_of_the_users_is_left_as_it_is(tmp_path: Path) -> None:
    seen = grade_seen({"PYDANTIC_DISABLE_PLUGINS": "logfire"}, tmp_path)
    assert seen["code"] == 1
    assert seen["setting"] == "logfire"
