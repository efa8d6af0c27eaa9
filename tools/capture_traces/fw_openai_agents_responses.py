"""OpenAI Agents SDK on its default Responses API model, traced by python-contrib's
``opentelemetry-instrumentation-openai-agents-v2``.

``capture.py``'s ``openinference-openai-agents`` source drives the SDK through a
chat-completions model; this one keeps the SDK's default, ``OpenAIResponsesModel``, against the
scripted Responses server (``fake_openai_responses.py``), so the instrumentation records
Responses items (``function_call``, ``function_call_output``, ``output_text``) as real users'
traces have them. Tools are ``@function_tool`` functions over the shared ``scenarios.Tools``; a
failing tool raises and the SDK sends the model its generic error text. ``g_handoff`` is a
native handoff (``transfer_to_research_agent``). Content capture is the instrumentation's
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (read when instrumenting). With
``stream=True`` (``openai-agents-responses-stream``) the run is ``Runner.run_streamed``, its
events consumed to the end, and every model call a streamed Responses request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from fake_openai_responses import FakeOpenAIResponses
from scenarios import Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """Run one scenario; ``executed`` receives each tool the SDK really ran, in order."""
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

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
    with FakeOpenAIResponses(scenario) as base_url:
        client = AsyncOpenAI(base_url=base_url, api_key="capture-not-a-key")
        model = OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client)
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
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            agent = Agent(name=name, instructions=scenario.system, model=model, tools=all_tools)
        if stream:
            result: Any = asyncio.run(_streamed(Runner, agent, scenario.prompt))
        else:
            result = Runner.run_sync(agent, scenario.prompt, max_turns=10)
    if result.final_output != scenario.turns[-1]:
        raise RuntimeError(f"final answer {result.final_output!r} is not the script's")
    if scenario.transfers_back and result.last_agent.name != scenario.handoffs[-1][1]:
        raise RuntimeError(f"answered by {result.last_agent.name}, not after the transfer back")


async def _streamed(runner: Any, agent: Any, prompt: str) -> Any:
    """``Runner.run_streamed``, its events consumed as an app showing them live would."""
    result = runner.run_streamed(agent, prompt, max_turns=10)
    async for _event in result.stream_events():
        pass
    return result
