"""The oracle registry imports a built-in oracle's module when a contract first names its
type (``registry.BUILTIN_TYPES``), and refuses a class that takes a built-in's type whether
or not that module was imported yet (docs/performance-history.md, "Start-up: contracts without
YAML")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from otel_oracles.grade.registry import BUILTIN_MODULES, BUILTIN_TYPES, registered

REPO = Path(__file__).resolve().parents[2]


def test_the_type_table_is_what_the_builtin_modules_register() -> None:
    builtin = {
        name: reg.cls.__module__
        for name, reg in registered().items()
        if reg.cls.__module__ in BUILTIN_MODULES
    }
    assert builtin == BUILTIN_TYPES
    assert all(reg.distribution == "otel-oracles" for reg in registered().values()
               if reg.cls.__module__ in BUILTIN_MODULES)  # fmt: skip


PROBE = """
import json, sys
from otel_oracles.grade import compile_contract
from otel_oracles.grade.registry import BUILTIN_MODULES
compile_contract(sys.argv[1])
shared = "otel_oracles.grade.oracles.agentbench._workspace"  # what three AgentBench ones share
print(json.dumps(sorted(m for m in (*BUILTIN_MODULES, shared) if m in sys.modules)))
"""


def _builtin_modules_after_loading(contract: dict[str, object], tmp_path: Path) -> list[str]:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(contract))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return [m.rsplit(".", 1)[-1] for m in json.loads(proc.stdout)]


def test_a_contract_imports_the_oracle_modules_it_names(tmp_path: Path) -> None:
    # The budget shorthand's params come with its checks, not with the loader (grade.budget:
    # docs/performance-history.md, "Start-up: only the oracle modules the contracts name").
    assert _builtin_modules_after_loading(
        {"id": "c", "invariants": [{"type": "max_steps", "max": 3}]}, tmp_path
    ) == ["trace_tools"]
    assert _builtin_modules_after_loading(
        {"id": "c", "invariants": [{"type": "secret_in_command"}], "evidence": ["steps"]}, tmp_path
    ) == ["secret_in_command", "trace_evidence"]
    budget = {"id": "c", "invariants": [{"type": "latency", "max_ms": 1}]}
    assert _builtin_modules_after_loading(budget, tmp_path) == ["trace_budget"]
    budget["budget"] = {"require_citation": True}
    assert _builtin_modules_after_loading(budget, tmp_path) == ["trace_answers", "trace_budget"]
    # The answer's shape apart from the answer checks (docs/performance-history.md, "Start-up:
    # the answer's shape a module of its own").
    shape = {"id": "c", "invariants": [{"type": "final_output", "must_match": "x"}]}
    assert _builtin_modules_after_loading(shape, tmp_path) == ["trace_output"]


def test_a_contract_naming_one_agentbench_oracle_imports_that_one(tmp_path: Path) -> None:
    """The four AgentBench oracles are a module each (docs/performance-history.md, "Start-up:
    frozen values without generated methods, the AgentBench oracles a module each"):
    ``no_network`` needs nothing of what the three workspace oracles share."""
    no_network = {"id": "c", "invariants": [{"type": "no_network"}]}
    assert _builtin_modules_after_loading(no_network, tmp_path) == ["no_network"]
    unmodified = {"id": "c", "invariants": [{"type": "file_not_modified", "path": "a.py"}]}
    assert _builtin_modules_after_loading(unmodified, tmp_path) == [
        "_workspace",
        "file_not_modified",
    ]


CLASH = """
from typing import ClassVar
from otel_oracles.errors import PluginError
from otel_oracles.grade import Finding, OracleCheck, register_oracle

class Mine(OracleCheck):
    oracle_type: ClassVar[str] = "package_install"

    def check(self, ctx):
        return Finding.ok("")

try:
    register_oracle(Mine)
except PluginError as exc:
    print(exc)
"""


def test_a_builtin_type_is_refused_before_its_module_was_imported() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CLASH], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "'package_install'" in proc.stdout
    assert "already registered by otel-oracles" in proc.stdout
