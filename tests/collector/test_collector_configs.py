"""Static checks of the shipped collector configurations (no collector binary needed).

The e2e tests prove the configurations work; these keep two promises of the issue that a
running collector cannot check: every block says why it is there, and no pipeline that
feeds a grader can loop the grader's own telemetry back into it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
CONFIGS = [REPO / "collector-config.yaml", REPO / "docs" / "collector-loadbalancing.yaml"]
SECTIONS = ("extensions", "receivers", "processors", "exporters")
GRADER_EXPORTERS = ("otlp_grpc/oracles", "load_balancing/oracles")


def _load(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text()))


def _uncommented_blocks(path: Path, names: list[str]) -> list[str]:
    """Keys (``  name:`` at their indentation) with no comment line right above them."""
    lines = path.read_text().splitlines()
    missing = []
    for name in names:
        for i, line in enumerate(lines):
            if line.strip() == f"{name}:":
                above = [ln for ln in lines[:i] if ln.strip()]
                if not above or not above[-1].lstrip().startswith("#"):
                    missing.append(name)
                break
        else:
            missing.append(f"{name} (not found as a block)")
    return missing


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_block_says_why_it_is_there(path: Path) -> None:
    cfg = _load(path)
    names = [name for section in SECTIONS for name in cfg.get(section) or {}]
    names += list(cfg["service"]["pipelines"])
    names += ["telemetry"]
    assert _uncommented_blocks(path, names) == []


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_pipelines_to_the_grader_drop_its_own_telemetry(path: Path) -> None:
    cfg = _load(path)
    graded = 0
    for name, pipe in cfg["service"]["pipelines"].items():
        if not set(pipe["exporters"]) & set(GRADER_EXPORTERS):
            continue
        graded += 1
        procs = pipe["processors"]
        assert procs[0] == "memory_limiter", name
        assert "filter/not-grader" in procs, name
        assert procs.index("filter/not-grader") < procs.index("batch"), name
    assert graded >= 1
    conditions = cfg["processors"]["filter/not-grader"]
    for signal in ("trace_conditions", "log_conditions"):
        assert 'resource.attributes["service.name"] == "otel-oracles"' in conditions[signal]
        assert 'scope.name == "otel_oracles"' in conditions[signal]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_grader_exporters_queue_and_retry(path: Path) -> None:
    exporters = _load(path)["exporters"]
    for name in GRADER_EXPORTERS:
        if name not in exporters:
            continue
        settings = exporters[name]
        if name.startswith("load_balancing"):
            assert settings["routing_key"] == "traceID"
            settings = settings["protocol"]["otlp"]
        assert settings["sending_queue"]["enabled"] is True
        assert settings["retry_on_failure"]["enabled"] is True
