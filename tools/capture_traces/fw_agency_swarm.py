"""Agency Swarm (``agency-swarm`` 1.x, built on the OpenAI Agents SDK) traced by
``openinference-instrumentation-openai-agents``, for the ``agency-swarm-openinference`` source.

The app: an Agency Swarm ``Agent`` (a subclass of the SDK's ``Agent``) on the SDK's
``OpenAIChatCompletionsModel`` with the scripted fake OpenAI server as its client, the
scripted tools as the SDK's ``@function_tool`` functions (a failed search raises; the SDK
hands the model its generic error text), run as ``Agency(agent).get_response_sync(prompt)``,
the framework's documented entry point. Delegation (``g_handoff``, ``s_delegated_*``) is
Agency Swarm's own: a communication flow ``triage_agent > research_agent`` gives the triage
agent the framework's ``send_message`` tool, which runs the research agent and hands its
answer back; the triage agent passes it on.

Tracing as OpenInference documents it for the Agents SDK: ``OpenAIAgentsInstrumentor``
adds its processor to the SDK's trace processors, after the SDK's own export to OpenAI is
removed (``set_trace_processors([])``), so nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_openai import FakeOpenAI, call_order
from scenarios import QUESTION, Scenario, Tools

SEND_MESSAGE = "send_message"


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a delegation scenario's transfer becomes the triage
    agent's ``send_message`` call, the research agent's turns follow, then the triage agent
    passes the research agent's answer on."""
    call = {"recipient_agent": "research_agent", "message": QUESTION,
            "additional_instructions": ""}  # fmt: skip
    return scenario.through_agent_tool((SEND_MESSAGE, call))


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through ``Agency.get_response_sync`` under OpenInference."""
    from agency_swarm import Agency, Agent
    from agents import OpenAIChatCompletionsModel, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # no export to OpenAI's tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)

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
    # The research agent starts from its own thread, so requests are answered in arrival
    # order (the calls are sequential), not by the assistant messages they hold.
    served = script(scenario)
    turn_of = call_order() if scenario.agents_only else None
    with FakeOpenAI(served, turn_of) as base_url:
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
                instructions="Send research questions to research_agent.",
                model=model,
            )
            agency = Agency(triage, communication_flows=[(triage, research)])
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools)
            agency = Agency(agent)
        result = agency.get_response_sync(scenario.prompt)
    if not scenario.answered_as_scripted(result.final_output):
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
