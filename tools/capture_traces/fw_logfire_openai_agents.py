"""OpenAI Agents SDK traced by Logfire's own integration (``logfire.instrument_openai_agents()``).

Logfire replaces the SDK's trace provider with a wrapper that turns each SDK span (agent run,
model call, function tool, handoff) into a Logfire span: names from ``logfire.msg_template``
(``Agent run: 'support_agent'``, ``Chat completion with 'gpt-4o-mini'``, ``Function: search_docs``,
``Handoff: A → B``), payloads as JSON attributes described by ``logfire.json_schema``. The model is
the SDK's ``OpenAIChatCompletionsModel`` on the scripted fake OpenAI server (as the
``openinference-openai-agents`` source), tools are ``@function_tool`` functions over the shared
``scenarios.Tools`` and ``g_handoff`` is a native handoff.

``logfire.configure(send_to_logfire=False, console=False)`` keeps everything local: the capture's
span processor is handed to Logfire as an additional processor, so the spans reach the same
in-memory exporter and writer as every other source. Logfire has no content switch of its own for
this integration (its scrubbing redacts secrets by pattern, not messages); content off is the
SDK's ``OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=false``, which keeps model inputs/outputs and
tool arguments/results out of the SDK spans Logfire converts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """Run one scenario; ``executed`` receives each tool the SDK really ran, in order. With
    ``stream`` (``logfire-openai-agents-stream``) the run is ``Runner.run_streamed``, its
    events consumed to the end (``fw_openai_agents.run_turns``)."""
    import logfire
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        function_tool,
        set_trace_processors,
    )  # fmt: skip
    from fw_openai_agents import run_turns
    from openai import AsyncOpenAI

    # Logfire owns its tracer provider; the capture's processor (-> in-memory exporter) rides
    # along. The SDK's public API offers no other hook to reach it.
    logfire.configure(
        send_to_logfire=False,
        console=False,
        metrics=False,
        service_name="capture-logfire-openai-agents",
        additional_span_processors=[tracer_provider._active_span_processor],
    )
    set_trace_processors([])  # no export to OpenAI's tracing backend
    logfire.instrument_openai_agents()

    def logged(name: str, fn: Callable[..., Any], **kwargs: Any) -> str:
        executed.append(name)
        return json.dumps(fn(**kwargs))

    # w_*_denied: the approval step denies these tools' calls (fw_openai_agents.run_turns).
    @function_tool(needs_approval="search_docs" in scenario.denied)
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        return logged("search_docs", tools.search_docs, query=query)

    @function_tool(needs_approval="delete_records" in scenario.denied)
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
    with FakeOpenAI(scenario) as base_url:
        client = AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key")
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
        if scenario.agents_only:
            research = Agent(
                name="research_agent", instructions=scenario.system, model=model, tools=all_tools
            )
            agent = Agent(
                name="triage_agent", instructions="Hand research questions off.", model=model,
                handoffs=[research],
            )  # fmt: skip
            if scenario.transfers_back:
                research.handoffs = [agent]  # n_handback: transfer_to_triage_agent
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                research.handoffs = [
                    Agent(name="records_agent", instructions=scenario.system, model=model,
                          tools=all_tools)
                ]  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools)
        result = run_turns(agent, scenario, stream=stream)
    logfire.force_flush()
    if result.final_output != scenario.turns[-1]:
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
    if scenario.transfers_back and result.last_agent.name != scenario.handoffs[-1][1]:
        raise RuntimeError(f"answered by {result.last_agent.name}, not after the transfer back")
