"""Agency Swarm (``agency-swarm`` 1.x) handing off with its own ``Handoff`` flow, traced by the
OpenTelemetry project's GenAI instrumentations, for the ``agency-swarm-otel-genai`` source.

The app: Agency Swarm ``Agent``s on the OpenAI Agents SDK's ``OpenAIChatCompletionsModel``
with the scripted fake OpenAI server as its client, the scripted tools as ``@function_tool``
functions (a failed search raises; the SDK hands the model its generic error text), run as
``Agency(...).get_response_sync(prompt)``. Delegation (``g_handoff``, ``s_delegated_*``) is a
communication flow ``(triage_agent, research_agent, Handoff)``: Agency Swarm builds the SDK
handoff itself (``agency_swarm.tools.send_message.Handoff.create_handoff``: the tool named
``transfer_to_<agent name, spaces as _>``, its arguments ``{"recipient_agent": <name>}``, a
reminder message added to the history), so the research agent takes over the run and
answers, where ``send_message`` (``agency-swarm-openinference``) runs it as a tool.

Tracing as ``fw_openai_agents.run_otel_genai`` sets it up:
``opentelemetry-instrumentation-genai-openai-agents`` turns the SDK's trace, agent and
function spans into GenAI spans (its ``disable_openai_trace_export`` removes the SDK's own
exporter: nothing leaves 127.0.0.1) and ``opentelemetry-instrumentation-genai-openai``
records the model calls. Content switch ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_openai import FakeOpenAI, call_order
from scenarios import Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through ``Agency.get_response_sync`` under the GenAI instrumentations."""
    from agency_swarm import Agency, Agent
    from agency_swarm.tools.send_message import Handoff
    from agents import OpenAIChatCompletionsModel, function_tool
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.genai.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider,
        disable_openai_trace_export=True,
    )  # fmt: skip
    OpenAIInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )

    def logged(name: str, fn: Callable[..., Any], **kwargs: Any) -> str:
        executed.append(name)
        return json.dumps(fn(**kwargs))

    @function_tool
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        return logged("search_docs", tools.search_docs, query=query)

    @function_tool
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        return logged("delete_records", tools.delete_records, table=table, where=where)

    @function_tool
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        return logged("write_file", tools.write_file, path=path, content=content)

    @function_tool
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        return logged("run_command", tools.run_command, command=command)

    all_tools = [search_docs, delete_records, write_file, run_command]
    # Requests are answered in arrival order (the calls are sequential): Agency Swarm adds its
    # own reminder message to the history at the handoff.
    with FakeOpenAI(scenario, call_order()) as base_url:
        client = AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key")
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
        if scenario.agents_only:
            research = Agent(
                name="research_agent",
                description="Researches support questions.",
                instructions=scenario.system,
                model=model,
                tools=all_tools,
            )
            triage = Agent(
                name="triage_agent",
                description="Routes support questions.",
                instructions="Hand research questions off to research_agent.",
                model=model,
            )
            agency = Agency(triage, communication_flows=[(triage, research, Handoff)])
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools)
            agency = Agency(agent)
        result = agency.get_response_sync(scenario.prompt)
    if not scenario.answered_as_scripted(result.final_output):
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
