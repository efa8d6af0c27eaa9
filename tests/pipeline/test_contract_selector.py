"""Contract ``match``: resource attributes, span attributes, root span name; exact or /regex/."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.errors import ContractError
from otel_oracles.grade.loader import parse_contract
from otel_oracles.grade.selector import Selector, selector_for
from otel_oracles.model.contract import Contract, MatchSpec
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"


@pytest.fixture(scope="module")
def pydantic_trace() -> Trace:
    problems: list[InputProblem] = []
    (trace,) = read_traces([str(TRACES / "pydantic-ai" / "a_happy.otlp.json")], problems)
    return trace


def selects(match: dict[str, object] | None, trace: Trace) -> bool:
    return Selector(MatchSpec.model_validate(match) if match is not None else None)(trace)


def test_no_match_selects_every_trace(pydantic_trace: Trace) -> None:
    assert selects(None, pydantic_trace)
    assert selects({}, pydantic_trace)


def test_resource_attribute_exact_and_regex(pydantic_trace: Trace) -> None:
    assert selects({"resource": {"service.name": "heldout-pydantic-ai"}}, pydantic_trace)
    assert not selects({"resource": {"service.name": "heldout"}}, pydantic_trace)
    assert selects({"resource": {"service.name": "/^heldout-/"}}, pydantic_trace)
    assert not selects({"resource": {"deployment.missing": "/.*/"}}, pydantic_trace)


def test_span_attributes_must_hold_together_on_one_span(pydantic_trace: Trace) -> None:
    assert selects({"span": {"gen_ai.tool.name": "search_docs"}}, pydantic_trace)
    both = {"gen_ai.tool.name": "search_docs", "gen_ai.operation.name": "execute_tool"}
    assert selects({"span": both}, pydantic_trace)
    apart = {"gen_ai.tool.name": "search_docs", "gen_ai.operation.name": "chat"}
    assert not selects({"span": apart}, pydantic_trace), "held by two different spans"


def test_root_name_and_all_parts_must_hold(pydantic_trace: Trace) -> None:
    assert selects({"root_name": "invoke_agent support_agent"}, pydantic_trace)
    assert selects({"root_name": "/^invoke_agent /"}, pydantic_trace)
    assert not selects(
        {"root_name": "/^invoke_agent /", "resource": {"service.name": "other"}}, pydantic_trace
    )


def test_bad_regex_is_a_contract_error_naming_the_key() -> None:
    with pytest.raises(ContractError, match=r"match\.resource\.service\.name: invalid regex"):
        Selector(MatchSpec(resource={"service.name": "/(/"}), "c.yaml")


def _contract_with_match(tmp_path: Path, match: object) -> Contract:
    data = {"id": "c", "invariants": [{"type": "max_steps", "max": 100}], "match": match}
    return parse_contract(data, str(tmp_path / "c.yaml"))


def test_a_list_of_selectors_selects_when_any_of_them_does(
    pydantic_trace: Trace, tmp_path: Path
) -> None:
    hit = [{"root_name": "agent_run"}, {"span": {"gen_ai.agent.name": "support_agent"}}]
    miss = [{"root_name": "agent_run"}, {"resource": {"service.name": "other"}}]
    assert selector_for(_contract_with_match(tmp_path, hit))(pydantic_trace)
    assert not selector_for(_contract_with_match(tmp_path, miss))(pydantic_trace)


def test_a_bad_regex_in_a_selector_list_names_its_position(tmp_path: Path) -> None:
    contract = _contract_with_match(tmp_path, [{}, {"root_name": "/(/"}])
    with pytest.raises(ContractError, match=r"match\[1\]\.root_name: invalid regex"):
        selector_for(contract)
