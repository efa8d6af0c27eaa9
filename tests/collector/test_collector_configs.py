"""Static checks of the shipped collector configurations (no collector binary needed).

The e2e tests prove the configurations work; these keep two promises that a running
collector cannot check: every block says why it is there, and no pipeline that feeds a
grader drops records before grading (a collector filter can match only the grader's
markers, which any sender can forge; ``serve`` itself skips only records marked and shaped
as its own output, DESIGN.md section 8).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
CONFIGS = [REPO / "collector-config.yaml", REPO / "docs" / "collector-loadbalancing.yaml"]
GRADING_CONFIGS = [*CONFIGS, REPO / "docs" / "collector-tail-sampling.yaml"]
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


@pytest.mark.parametrize("path", GRADING_CONFIGS, ids=lambda p: p.name)
def test_pipelines_to_the_grader_drop_nothing(path: Path) -> None:
    """A ``filter`` (or sampler) in front of the grader would drop records the grader never
    sees: a tool span dressed in the grader's scope or service.name would vanish and its run
    pass. The grader's own output comes back through these pipelines and ``serve`` skips it
    (tests/collector/test_collector_e2e.py proves it end to end)."""
    cfg = _load(path)
    graded = 0
    for name, pipe in cfg["service"]["pipelines"].items():
        if not set(pipe["exporters"]) & set(GRADER_EXPORTERS):
            continue
        graded += 1
        procs = pipe["processors"]
        assert procs == ["memory_limiter", "batch"], (name, procs)
    assert graded >= 1
    kinds = {name.split("/")[0] for name in cfg.get("processors") or {}}
    assert "filter" not in kinds, sorted(kinds)


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
