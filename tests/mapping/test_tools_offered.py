"""``Step.tools_offered``: the tools each model call offered the model, read by the
conventions' ``tools_offered`` sources through the core's ``tool_names`` and
``request_tool_names`` parsers (native/python/src/tools.rs), from real captures.

``None`` means the trace does not say: an attribute written only when tools were offered (or
hidden with the content) says nothing by its absence; ``()`` is a recorded request that
offered none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from otel_oracles._native import parse_request_tool_names, parse_tool_names
from otel_oracles.mapping import ConventionSet, load_conventions, map_trace
from otel_oracles.model.step import Step, StepKind, Trajectory
from otel_oracles.pipeline import holds_agent_run, read_traces
from tests.support.cpu_cost import cpu_seconds

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


@pytest.fixture(scope="module")
def conventions() -> ConventionSet:
    return load_conventions()


def generations(source: str, file: str, conventions: ConventionSet) -> list[Step]:
    runs: list[Trajectory] = [
        map_trace(t, conventions) for t in read_traces([str(TRACES / source / file)], [])
    ]
    runs = [t for t in runs if holds_agent_run(t)]
    assert len(runs) == 1
    return [s for s in runs[0].steps if s.kind == StepKind.GENERATION]


@pytest.mark.parametrize(
    ("value", "names"),
    [
        # GenAI gen_ai.tool.definitions (flat and OpenAI chat shapes), as text or structured
        ('[{"type": "function", "name": "a"}, {"name": "b"}]', ("a", "b")),
        ([{"type": "function", "function": {"name": "a", "parameters": {}}}], ("a",)),
        # Bedrock Converse's toolSpec; Mastra's bare names; Langtrace's texts of lists
        ([{"toolSpec": {"name": "a"}}], ("a",)),
        ('["a", "b"]', ("a", "b")),
        (['[{"type": "function", "function": {"name": "a"}}]', '[{"name": "b"}]'], ("a", "b")),
        # OpenInference's flattened llm.tools (json_schema, or a name beside a bare schema),
        # OpenLLMetry's llm.request.functions, in index order (10 after 9)
        (
            {
                "1.tool.json_schema": '{"type": "function", "function": {"name": "b"}}',
                "0.tool.json_schema": '{"name": "a"}',
            },
            ("a", "b"),
        ),
        ({"0.tool.name": "a", "0.tool.json_schema": '{"type": "object"}'}, ("a",)),
        ({f"{i}.name": f"t{i}" for i in (10, 9)}, ("t9", "t10")),
        ("[]", ()),
        # no list of named definitions: the trace does not say
        ({"0.tool.json_schema": '{"type": "object", "title": "a_input"}'}, None),
        ([{"name": "a"}, {"description": "no name"}], None),
        ("HIDDEN:non-empty", None),
        ("search_docs,delete_records", None),
        (None, None),
        (4, None),
    ],
)
def test_tool_names_reads_every_recorded_shape(value: Any, names: tuple[str, ...] | None) -> None:
    assert parse_tool_names(value) == names


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ('{"model": "m", "tools": [{"type": "function", "function": {"name": "a"}}]}', ("a",)),
        ({"model": "m", "functions": [{"name": "a"}]}, ("a",)),
        # a recorded request without tools offered none
        ('{"model": "m", "stream": false}', ()),
        ({"tools": None}, ()),
        ({"tools": []}, ()),
        ('{"tools": [{"description": "no name"}]}', None),
        ("not json", None),
        ("[1]", None),
    ],
)
def test_request_tool_names_reads_a_recorded_request(
    value: Any, names: tuple[str, ...] | None
) -> None:
    assert parse_request_tool_names(value) == names


@pytest.mark.parametrize(
    "source",
    [
        "crewai-openinference",  # llm.invocation_parameters (litellm), content on and off
        "langgraph-openinference",  # llm.invocation_parameters (LangChain)
        "autogen-openinference",  # llm.tools.N.tool.json_schema (content on only)
        "pydantic-ai",  # gen_ai.tool.definitions
        "openllmetry-openai-legacy",  # llm.request.functions.N.name
        "openinference-bedrock",  # Converse toolSpec in llm.tools
    ],
)
def test_the_support_tools_are_read_from_each_convention(
    source: str, conventions: ConventionSet
) -> None:
    offered = [g.tools_offered for g in generations(source, "a_happy.otlp.json", conventions)]
    assert offered and all("search_docs" in (o or ()) for o in offered), offered


@pytest.mark.parametrize(
    ("source", "content"),
    [("crewai-openinference", True), ("crewai-openinference", False)],
)
def test_a_request_recorded_without_tools_offered_none(
    source: str, content: bool, conventions: ConventionSet
) -> None:
    """CrewAI's forced final answer past its iteration limit (litellm's recorded request
    keeps every keyword, content capture or not): the last call offered no tools, every
    earlier one the agent's."""
    file = "q_turn_limit.otlp.json" if content else "q_turn_limit.nocontent.otlp.json"
    offered = [g.tools_offered for g in generations(source, file, conventions)]
    assert offered[-1] == ()
    assert all(o is not None and "search_docs" in o for o in offered[:-1]), offered


def test_hidden_tools_are_unknown_never_none_offered(conventions: ConventionSet) -> None:
    """smolagents under OpenInference with content off: ``llm.tools`` goes with the inputs,
    so no call says which tools it offered (``None``), the forced last one included."""
    gens = generations("smolagents-openinference", "q_turn_limit.nocontent.otlp.json", conventions)
    assert [g.tools_offered for g in gens] == [None] * len(gens)


def test_tools_offered_is_no_behaviour_in_the_scan_text(conventions: ConventionSet) -> None:
    """The tools a call was offered are its framework's configuration: they are not in the
    text the command and network checks search."""
    gens = generations("crewai-openinference", "a_happy.otlp.json", conventions)
    step = gens[0]
    assert step.tools_offered
    without = step.model_copy(update={"tools_offered": None})
    assert step.raw_json() == without.raw_json()
    assert json.loads(step.model_dump_json())["tools_offered"] == list(step.tools_offered)


def test_a_flattened_list_costs_the_same_per_entry_however_long() -> None:
    """An ``attr_prefix`` list of tool definitions (``llm.tools.N.tool.name``) as long as a
    span makes it: the core looked each entry's index up among those seen (40,000 entries
    took 0.26 s, 640,000 over a minute); now it sorts them. CPU time of 8 times the entries,
    side by side: about 8 times, never the 64 of the lookup; the names stay in index order,
    whatever the order of the keys."""
    costs = []
    for n in (20_000, 160_000):
        value = {f"{i}.tool.name": f"t{i}" for i in reversed(range(n))}
        assert parse_tool_names(value) == tuple(f"t{i}" for i in range(n))
        costs.append(cpu_seconds(lambda value=value: parse_tool_names(value)))
    assert costs[1] < 20 * costs[0], costs
