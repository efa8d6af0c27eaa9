"""Which oracle modules a ``grade`` imports: only those of the types its contracts name.

Importing an oracle module builds every params model in it (pydantic makes each one's
schema and validator as the class is made), so a module imported for nothing is paid by
every ``grade``, every pytest-plugin session and every ``serve`` worker. The ``budget:``
shorthand used to import ``trace_tools`` and ``trace_answers`` with the loader, whatever
the contracts named (docs/performance-history.md, "Start-up: only the oracle modules the
contracts name"). Each test runs the real command in a fresh interpreter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_startup_imports import TRACE, loaded_by, under

ORACLES = "otel_oracles.grade.oracles"


def oracle_modules(contract: str, tmp_path: Path) -> set[str]:
    """The oracle modules a ``grade`` of the fixture against ``contract`` (one YAML
    document) left in ``sys.modules`` (the package and ``base`` set aside)."""
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "one.yaml").write_text(contract, encoding="utf-8")
    code, modules = loaded_by("grade", str(TRACE), "-c", str(contracts), "-q")
    assert code in (0, 1)  # graded (pass or fail), not refused
    return set(under(modules, ORACLES)) - {ORACLES, f"{ORACLES}.base"}


ONE_CHECK = "id: one\nversion: 1\ninvariants:\n  - {type: latency, max_ms: 120000}\n"


def test_a_contract_naming_one_oracle_imports_its_module_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    found = oracle_modules(ONE_CHECK, tmp_path)
    # ``trace_common`` holds what the trace oracles share (their plans, patterns, params).
    assert found == {f"{ORACLES}.trace_budget", f"{ORACLES}.trace_common"}


@pytest.mark.parametrize(
    ("budget", "module", "not_imported"),
    [
        ("{max_tool_retries: 1}", "trace_tools", "trace_answers"),
        ("{max_tool_errors: 2}", "trace_tools", "trace_answers"),
        ("{allow_degraded_answer: false}", "trace_answers", "trace_tools"),
        ("{require_citation: true}", "trace_answers", "trace_tools"),
    ],
)
def test_a_budget_imports_the_module_of_the_checks_it_stands_for(
    budget: str,
    module: str,
    not_imported: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    found = oracle_modules(f"{ONE_CHECK}budget: {budget}\n", tmp_path)
    assert f"{ORACLES}.{module}" in found
    assert f"{ORACLES}.{not_imported}" not in found


@pytest.mark.parametrize(
    ("check", "module"),
    [
        ("{type: citations_grounded}", "trace_answers"),
        ("{type: degraded_answer}", "trace_answers"),
        ("{type: final_output, must_match: '.'}", "trace_output"),
        ("{type: schema_valid, schema: {type: object}}", "trace_output"),
    ],
)
def test_the_answer_checks_and_the_answer_shape_checks_import_apart(
    check: str, module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``final_output`` and ``schema_valid`` are ``trace_output``'s: a contract naming the
    citation or degradation checks does not build their params, nor the reverse
    (docs/performance-history.md, "Start-up: the answer's shape a module of its own")."""
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    found = oracle_modules(f"id: one\nversion: 1\ninvariants:\n  - {check}\n", tmp_path)
    assert found == {f"{ORACLES}.{module}", f"{ORACLES}.trace_common"}
