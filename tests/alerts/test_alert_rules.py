"""The shipped alerting rules and Grafana dashboard: the rules pass ``promtool check rules``
and the series-fixture scenarios of ``otel-oracles.test.yaml`` (``promtool test rules``),
and every metric and label both name is one the grader emits, as the collector's prometheus
exporter names it (from the registry, so a renamed metric breaks this test, not a
dashboard in production). That every panel's query returns data is proven against a real
Prometheus in tests/collector/test_collector_e2e.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from otel_oracles.emit._registry import load_registry

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "alerts" / "otel-oracles.rules.yaml"
RULE_TESTS = Path(__file__).with_name("otel-oracles.test.yaml")
DASHBOARD = REPO / "dashboards" / "otel-oracles.json"

_METRIC = re.compile(r"\b(otel_oracles_[a-z_]+)\b")
_BY = re.compile(r"\bby \(([^)]*)\)")
_MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail(
            "promtool not found: it comes with Prometheus (apt-get install prometheus; "
            "scripts/test.sh installs it)"
        )
    return found


def dashboard_queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [t["expr"] for p in doc["panels"] for t in p["targets"]]


def rule_expressions() -> list[str]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [r["expr"] for g in doc["groups"] for r in g["rules"]]


def emitted_names() -> tuple[set[str], set[str]]:
    """Prometheus series names and label names of everything the grader emits."""
    registry = load_registry()
    series: set[str] = set()
    for metric in registry.metrics:
        name = metric.prometheus_name
        if metric.instrument == "histogram":
            series.update(f"{name}_{part}" for part in ("bucket", "sum", "count"))
        else:
            series.add(name)
    labels = {re.sub(r"[^A-Za-z0-9_]", "_", k) for k in registry.attribute_keys()}
    return series, labels | {"le"}


def test_promtool_checks_the_rules() -> None:
    proc = subprocess.run(
        [promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 8 rules found" in proc.stdout


def test_alerts_fire_on_their_scenarios_and_only_then() -> None:
    proc = subprocess.run(
        [promtool(), "test", "rules", RULE_TESTS.name],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=RULE_TESTS.parent,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


@pytest.mark.parametrize("source", ["dashboard", "rules"])
def test_every_name_queried_is_emitted(source: str) -> None:
    queries = dashboard_queries() if source == "dashboard" else rule_expressions()
    series, labels = emitted_names()
    used_labels = {
        label.strip()
        for q in queries
        for group in _BY.findall(q)
        for label in group.split(",")
        if label.strip()
    } | {m for q in queries for m in _MATCHER.findall(q)}
    used_series = {m for q in queries for m in _METRIC.findall(q)} - used_labels
    assert used_series and used_labels
    assert used_series - series == set(), f"not emitted: {sorted(used_series - series)}"
    assert used_labels - labels == set(), f"no such label: {sorted(used_labels - labels)}"


def test_dashboard_panels_use_the_datasource_variable() -> None:
    doc = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert [v["name"] for v in doc["templating"]["list"]] == ["datasource", "contract"]
    for panel in doc["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])
