"""Griptape agents traced by Griptape's own OpenTelemetry observability driver.

The model is Griptape's ``OpenAiChatPromptDriver`` on the scripted fake OpenAI server (native
tool calling). Griptape names a tool for the model ``<tool name>_<activity name>`` (a tool's
name is letters and digits only), so each scenario tool is a ``BaseTool`` of its own whose
name and single activity compose the scenario's name: the tool ``search`` with the activity
``docs`` is the model's ``search_docs``, and the script needs no renaming. The classes carry
ordinary names (``SearchTool``, ...), which is all the trace shows of a tool: Griptape's
spans are named ``<class>.<method>()`` and carry no attribute but ``tags``.

A failing search raises, as a real backend client would: the exception leaves the observed
``try_run`` (its span gets status ERROR and an exception event) and ``BaseTool.run`` hands
the model an ``ErrorArtifact``.

``g_handoff``: the triage agent's ``research`` tool is a ``StructureRunTool`` over a
``LocalStructureRunDriver`` that builds the research agent, so the model's
``research_run_structure`` call runs the research agent inside the tool's span. The research
agent starts from a fresh history, so the fake server answers in call order.

Export: ``OpenTelemetryObservabilityDriver`` on its own tracer provider with an OTLP/HTTP
span processor pointed at ``otlp_sink.py`` (``capture.run_sink_driver`` keeps the bodies as
sent), used through ``with Observability(observability_driver=...)``, which opens the run's
``main`` span and flushes on exit. Griptape records no message content at all, so there is
no content switch: both variants hold the same attributes.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import QUESTION, Scenario, Tools

RESEARCH_TOOL = "research_run_structure"
"""The model's name for the triage agent's ``StructureRunTool`` (tool ``research``)."""


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` runs the research agent's structure
    tool, the research agent searches and answers, then the triage agent passes it on."""
    return scenario.through_agent_tool((RESEARCH_TOOL, {"args": [QUESTION]}))


def make_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The four scenario tools as Griptape tools, each appending its scenario name to
    ``executed`` when its activity really runs."""
    from attrs import define
    from griptape.artifacts import TextArtifact
    from griptape.tools import BaseTool
    from griptape.utils.decorators import activity
    from schema import Literal, Schema

    def reply(value: Any) -> TextArtifact:
        return TextArtifact(value if isinstance(value, str) else json.dumps(value))

    @define
    class SearchTool(BaseTool):
        @activity(
            config={
                "description": "Search the knowledge base and return matching documents.",
                "schema": Schema({Literal("query", description="What to look for."): str}),
            }
        )
        def docs(self, params: dict[str, Any]) -> TextArtifact:
            executed.append("search_docs")
            return reply(tools.search_docs(params["values"]["query"]))

    @define
    class DeleteTool(BaseTool):
        @activity(
            config={
                "description": "Delete records from a database table.",
                "schema": Schema({Literal("table"): str, Literal("where"): str}),
            }
        )
        def records(self, params: dict[str, Any]) -> TextArtifact:
            executed.append("delete_records")
            values = params["values"]
            return reply(tools.delete_records(values["table"], values["where"]))

    @define
    class WriteTool(BaseTool):
        @activity(
            config={
                "description": "Write a file in the workspace.",
                "schema": Schema({Literal("path"): str, Literal("content"): str}),
            }
        )
        def file(self, params: dict[str, Any]) -> TextArtifact:
            executed.append("write_file")
            values = params["values"]
            return reply(tools.write_file(values["path"], values["content"]))

    @define
    class RunTool(BaseTool):
        @activity(
            config={
                "description": "Run a shell command in the workspace.",
                "schema": Schema({Literal("command"): str}),
            }
        )
        def command(self, params: dict[str, Any]) -> TextArtifact:
            executed.append("run_command")
            return reply(tools.run_command(params["values"]["command"]))

    return [
        SearchTool(name="search"),
        DeleteTool(name="delete"),
        WriteTool(name="write"),
        RunTool(name="run"),
    ]


def run(
    scenario: Scenario,
    endpoint: str,
    tools: Tools,
    executed: list[str],
    *,
    content: bool,
) -> None:
    """One run exported by Griptape's OpenTelemetry observability driver to the sink at
    ``endpoint``; fails when the run's answer is not the scripted one. ``content`` changes
    nothing: Griptape has no content switch (it records no content)."""
    del content
    from fake_openai import FakeOpenAI, call_order
    from griptape.drivers.observability.open_telemetry import OpenTelemetryObservabilityDriver
    from griptape.drivers.prompt.openai import OpenAiChatPromptDriver
    from griptape.drivers.structure_run.local import LocalStructureRunDriver
    from griptape.observability import Observability
    from griptape.rules import Rule
    from griptape.structures import Agent
    from griptape.tools import StructureRunTool
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    scripted = script(scenario)
    observability = Observability(
        observability_driver=OpenTelemetryObservabilityDriver(
            service_name="capture-griptape",
            span_processor=BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")),
        )
    )
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def prompt_driver() -> OpenAiChatPromptDriver:
            return OpenAiChatPromptDriver(
                model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key",
                temperature=0.0,
            )  # fmt: skip

        def research_agent() -> Agent:
            return Agent(
                prompt_driver=prompt_driver(), tools=make_tools(tools, executed),
                rules=[Rule(scenario.system)],
            )  # fmt: skip

        if scenario.agents_only:
            research = StructureRunTool(
                name="research",
                description="Answers research questions with citations.",
                structure_run_driver=LocalStructureRunDriver(create_structure=research_agent),
            )
            agent = Agent(
                prompt_driver=prompt_driver(), tools=[research],
                rules=[Rule("Hand research questions to the research tool.")],
            )  # fmt: skip
        else:
            agent = Agent(
                prompt_driver=prompt_driver(), tools=make_tools(tools, executed),
                rules=[Rule(scenario.system)],
            )  # fmt: skip
        with observability:
            agent.run(scenario.prompt)
        answer = str(agent.output.value).strip()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
