"""The mapping files: bundled ones are valid and self-describing; bad ones fail at load time
with the file and key path; user files add to or replace bundled ones; mapping reads only
the attributes rules ask for."""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.errors import ConventionError
from otel_oracles.mapping import RUN_WRAPPER, builtin_dir, load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import read_traces
from tests.support.unknown_spans import with_unknown_leaf

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"
EXPECTED_FILES = {
    "otel-genai", "openinference", "openllmetry", "vercel-ai-sdk", "handoffs", "pydantic-ai",
    "langgraph", "llama-index",
    "smolagents", "crewai",
    "openai-agents", "strands", "google-adk",
    "semantic-kernel",
    "mastra",
    "agno",
    "ag2",
    "autogen",
    "dspy",
    "haystack",
    "logfire",
    "litellm",
    "openlit",
    "beeai",
    "laminar",
    "langfuse",
    "langsmith",
    "langtrace",
    "mlflow",
    "generic-clients",
    "genkit",
    "mcp",
    "agentops",
    "spring-ai",
    "rig",
    "swiftide",
    "eino",
    "adk-java",
    "koog",
    "quarkus-langchain4j",
    "griptape",
    "mirascope",
    "camel",
    "qwen-agent",
    "burr",
    "voltagent",
    "agentscope",
    "upsonic",
    "any-agent",
    "qwen-code",
    "livekit",
    "pipecat",
    "github-copilot",
    "opencode",
    "instructor",
    "azure-ai-agents",
    "agency-swarm",
    "atomic-agents",
}  # fmt: skip


def test_bundled_files_load_and_state_what_they_cover() -> None:
    conventions = load_conventions()
    assert {f.name for f in conventions.files} == EXPECTED_FILES
    for f in conventions.files:
        assert f.description, f"{f.name}: header must describe the convention"
        assert f.covers.conventions or f.covers.instrumentations, f"{f.name}: covers missing"
    priorities = [f.priority for f in conventions.files]
    assert priorities == sorted(priorities, reverse=True), "tried highest priority first"


def test_bundled_files_ship_inside_the_package() -> None:
    assert (builtin_dir() / "otel-genai.yaml").is_file()
    assert builtin_dir().parent.name == "otel_oracles"
    # Where ``importlib.resources`` says the package's files are (``builtin_dir`` asks it
    # only for a package not loaded from its directory).
    assert builtin_dir() == Path(str(importlib.resources.files("otel_oracles") / "conventions"))


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("rules: [{id: x, step: tool_call, match: {all: [{attr: a, exists: true}]}, "
         "fields: {tool: {attr: a, parse: jsn}}}]", "rules[0].fields.tool[0].parse"),
        ("rules: [{id: x, step: tool_call, match: {all: [{attr: a, exists: true}]}, "
         "fields: {tols: {attr: a}}}]", "rules[0].fields"),
        ("rules: [{id: x, step: tool_call, match: {all: [{span_name: '(' }]}}]",
         "rules[0].match.all[0].span_name"),
        ("rules: [{id: x, step: tool, match: {all: [{attr: a, exists: true}]}}]",
         "rules[0].step"),
        ("rules: [{id: x, step: tool_call, match: {all: [{attr: a}]}}]",
         "rules[0].match.all[0]"),
        ("rules: [{id: x, step: tool_call, match: {}}]", "rules[0].match"),
        ("priority: high\nrules: []", "priority"),
        ("rules: [{id: x, step: agent, match: {all: [{child: {all: [{child: "
         "{all: [{attr: a, exists: true}]}}]}}]}}]", "rules[0].match.all[0]"),
    ],
)  # fmt: skip
def test_invalid_file_names_file_and_key_path(tmp_path: Path, body: str, key: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(body)
    with pytest.raises(ConventionError) as err:
        load_conventions([tmp_path])
    assert err.value.source == str(path)
    assert err.value.message.startswith(key), err.value.message


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("rules:\n  - id: [unclosed\n")
    with pytest.raises(ConventionError, match=r"invalid YAML at line \d+"):
        load_conventions([tmp_path])


def test_extends_must_name_an_existing_rule(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "rules: [{id: x, step: tool_call, extends: otel-genai/nope, "
        "match: {all: [{attr: a, exists: true}]}}]"
    )
    with pytest.raises(ConventionError, match=r"rules\[0\]\.extends: no rule 'otel-genai/nope'"):
        load_conventions([tmp_path])


def test_user_file_with_a_bundled_name_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "name: openai-agents\nrules: [{id: only, step: none, "
        "match: {all: [{attr: never.set, exists: true}]}}]"
    )
    conventions = load_conventions([tmp_path])
    replaced = conventions.file("openai-agents")
    assert replaced is not None and [r.id for r in replaced.rules] == ["only"]
    assert len(conventions.files) == len(EXPECTED_FILES)


def _read(path: Path) -> Any:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == []
    return traces


class CountingMapping(Mapping[str, Any]):
    """Attributes that record which values were read (decoders may convert lazily)."""

    def __init__(self, data: Mapping[str, Any], reads: set[str]) -> None:
        self._data = data
        self._reads = reads

    def __getitem__(self, key: str) -> Any:
        self._reads.add(key)
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._data:
            return self[key]
        return default

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_mapping_reads_only_the_attributes_rules_ask_for() -> None:
    """Large content attributes no rule uses (logfire schemas, the request parameters) are
    never converted on non-root spans. (The tool definitions are read: a model call's
    ``tools_offered``.)"""
    conventions = load_conventions()
    (trace,) = _read(TRACES / "pydantic-ai" / "b_tool_retry.otlp.json")
    reads: set[str] = set()
    for span in trace.spans:
        if span is not trace.root:
            span.attributes = CountingMapping(span.attributes, reads)
    map_trace(trace, conventions)
    for unused in ("logfire.json_schema", "model_request_parameters"):
        assert unused not in reads, f"{unused} was converted though no rule reads it"
    assert "gen_ai.output.messages" in reads


def test_a_span_no_rule_matches_is_counted_by_name(tmp_path: Path) -> None:
    """The app's own ``agent_run`` root holds the whole run: it is the run's wrapper. A span
    beside the recognised steps that no rule matches is counted by name."""
    conventions = load_conventions()
    (trace,) = _read(TRACES / "openinference-openai" / "a_happy.otlp.jsonl")
    traj = map_trace(trace, conventions)
    assert traj.unmapped_spans == {}
    assert traj.conventions == {"openinference": 2, RUN_WRAPPER: 1}
    derived = with_unknown_leaf(
        TRACES / "openinference-openai" / "a_happy.otlp.jsonl", tmp_path / "t.jsonl"
    )
    (trace,) = _read(derived)
    traj = map_trace(trace, conventions)
    assert traj.unmapped_spans == {"lookup_customer": 1}
    assert traj.conventions == {"openinference": 2, RUN_WRAPPER: 1}
