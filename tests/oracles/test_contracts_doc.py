"""docs/contracts.md documents every registered oracle type and each of its params, every
evidence name and every budget key: a new param without docs fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from otel_oracles.grade.budget import BUDGET_KEYS
from otel_oracles.grade.evidence import EVIDENCE_DESCRIPTIONS
from otel_oracles.grade.registry import BUILTIN_MODULES, registered

DOC = (Path(__file__).resolve().parents[2] / "docs" / "contracts.md").read_text(encoding="utf-8")
AGENTBENCH = {"test_must_pass", "file_not_modified", "no_network", "assertion_exists"}
BUILTIN = {name for name, reg in registered().items() if reg.cls.__module__ in BUILTIN_MODULES}
"""Types shipped in the package (tests elsewhere register throwaway types at run time)."""


def section(oracle_type: str) -> str:
    match = re.search(
        rf"^### [^\n]*`{oracle_type}`[^\n]*\n(.*?)(?=^### |^## |\Z)", DOC, re.M | re.S
    )
    assert match, f"docs/contracts.md has no '### `{oracle_type}`' section"
    return match.group(1)


@pytest.mark.parametrize("oracle_type", sorted(BUILTIN))
def test_every_builtin_oracle_type_has_a_section(oracle_type: str) -> None:
    section(oracle_type)


@pytest.mark.parametrize("oracle_type", sorted(BUILTIN - AGENTBENCH))
def test_every_param_is_documented_in_its_section(oracle_type: str) -> None:
    text = section(oracle_type)
    params = registered()[oracle_type].cls.Params.model_fields
    names = [info.alias or name for name, info in params.items()]
    missing = [n for n in names if f"`{n}`" not in text]
    assert missing == [], f"{oracle_type}: params not documented: {missing}"


def test_agentbench_section_links_the_agentbench_doc() -> None:
    assert "(agentbench.md)" in section("no_network")


@pytest.mark.parametrize("name", sorted(EVIDENCE_DESCRIPTIONS))
def test_every_evidence_name_is_documented(name: str) -> None:
    assert f"`{name}" in DOC


@pytest.mark.parametrize("key", sorted(BUDGET_KEYS))
def test_every_budget_key_is_documented(key: str) -> None:
    assert f"`{key}" in DOC
