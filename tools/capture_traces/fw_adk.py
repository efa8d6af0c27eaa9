"""Google ADK runs traced by ADK's own OpenTelemetry tracing.

The model is ADK's ``LiteLlm`` model class (``openai/gpt-4o-mini`` with ``api_base`` on the
scripted fake OpenAI server; LiteLLM's bundled cost map, no network). Tools are plain Python
functions, which ADK wraps as ``FunctionTool``; a failing search raises, as a real backend
client would, and the agent's ``on_tool_error_callback`` sends the model
``{"error": "SearchBackendError: ..."}`` (without one, ADK ends the run on the exception).

``g_handoff`` uses ADK's sub-agents: the triage agent's model calls ADK's built-in
``transfer_to_agent(agent_name="research_agent")``, then the research agent searches and
answers in the same invocation. Each agent sees the session's events in its own way, so the
fake server answers in call order (``fake_openai.call_order``) from the script below.

ADK reads its telemetry settings from the environment when a run starts:
``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN`` picks the span format (``2``, the default: GenAI
semconv 1.44 aligned, ``invoke_workflow`` / ``invoke_agent`` / ``generate_content`` /
``execute_tool``; ``1``: the legacy format with ``invocation`` / ``call_llm`` spans and
``gcp.vertex.agent.*`` payload attributes). Content capture is
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` for the GenAI attributes and
``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`` for the ``gcp.vertex.agent.*`` payloads.
``run_openinference`` (``openinference-google-adk``) traces the same agents with
OpenInference's ADK instrumentor instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Any

from scenarios import Scenario, SearchBackendError, Tools, answer_type

Turn = list[tuple[str, dict[str, Any]]] | str


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order, each ``transfer_to_<agent>`` made with ADK's own
    ``transfer_to_agent`` tool: ``g_handoff`` transfers to the research agent, which searches
    and answers; ``n_handback``'s research agent transfers back to its parent, the triage
    agent, which answers."""
    if not scenario.agents_only:
        return scenario

    def adk(turn: Turn) -> Turn:
        if isinstance(turn, str):
            return turn
        return [
            ("transfer_to_agent", {"agent_name": name.removeprefix("transfer_to_")})
            if name.startswith("transfer_to_")
            else (name, args)
            for name, args in turn
        ]

    return dataclasses.replace(scenario, turns=[adk(t) for t in scenario.turns])


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """One traced run; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one. With ``stream`` (``google-adk-stream``) the
    run streams as ADK's web server does for a chat UI: ``RunConfig(streaming_mode=SSE)``,
    every model call a streamed completion, partial events consumed as they come."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
    from fake_openai import FakeOpenAI, call_order
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from opentelemetry import _logs, trace

    if tracer_provider is not None:  # None: the tracer registered its own (Laminar)
        trace.set_tracer_provider(tracer_provider)
    if logger_provider is not None:
        _logs.set_logger_provider(logger_provider)

    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        result: dict[str, Any] = tools.search_docs(query)
        return result

    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table.

        Args:
            table: The table to delete from.
            where: SQL condition selecting the rows.
        """
        executed.append("delete_records")
        result: dict[str, Any] = tools.delete_records(table, where)
        return result

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: File path relative to the workspace.
            content: The whole new file content.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The command line to run.
        """
        executed.append("run_command")
        return str(tools.run_command(command))

    def tool_error(tool: Any, args: dict[str, Any], tool_context: Any, error: Exception) -> Any:
        """What the model is told when a tool raised (ADK would end the run otherwise)."""
        if isinstance(error, SearchBackendError):
            return {"error": f"SearchBackendError: {error}"}
        return None

    all_tools: list[Any] = [search_docs, delete_records, write_file, run_command]
    if scenario.denied:  # w_*_denied: ADK's tool confirmation guards the denied tools
        all_tools = [confirmed(f) if f.__name__ in scenario.denied else f for f in all_tools]
    scripted = script(scenario)
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        model = LiteLlm(model="openai/gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key")
        if scenario.agents_only:
            records = [  # s_nested_*: the research agent's own sub-agent
                LlmAgent(
                    name="records_agent", description="Changes records in the database.",
                    instruction=scenario.system, model=model, tools=all_tools,
                    on_tool_error_callback=tool_error,
                )
            ] if scenario.nested else []  # fmt: skip
            research = LlmAgent(
                name="research_agent", description="Answers research questions with citations.",
                instruction=scenario.system, model=model, tools=all_tools,
                on_tool_error_callback=tool_error, sub_agents=records,
            )  # fmt: skip
            agent = LlmAgent(
                name="triage_agent", instruction="Transfer research questions to research_agent.",
                model=model, sub_agents=[research],
            )  # fmt: skip
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # r_structured_*: an output schema beside tools (for LiteLLM's OpenAI models ADK
            # sends it as the request's response format, not through set_model_response).
            agent = LlmAgent(
                name=name, instruction=scenario.system, model=model, tools=all_tools,
                on_tool_error_callback=tool_error,
                output_schema=answer_type() if scenario.structured else None,
            )  # fmt: skip
        runner = InMemoryRunner(agent=agent, app_name="capture")
        answer, author = asyncio.run(_run(runner, scenario, types, stream))
    final = scripted.turns[-1]
    if not scripted.answered_as_scripted(answer):
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
    if scenario.transfers_back and author != scenario.handoffs[-1][1]:
        raise SystemExit(f"{scenario.name}: answered by {author}, not after the transfer back")


def confirmed(func: Any) -> Any:
    """``func`` as a ``FunctionTool`` that needs a human's confirmation
    (``require_confirmation=True``): ADK answers the call with an error asking for it, emits an
    ``adk_request_confirmation`` call for the application and ends the invocation; the
    application's answer (``_run``) decides whether the tool runs."""
    from google.adk.tools import FunctionTool

    return FunctionTool(func, require_confirmation=True)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run with ``openinference-instrumentation-google-adk`` instrumented first, as
    its documentation has it: the instrumentor wraps the runner and agents and points ADK's
    own tracer at its own, so ADK's built-in spans give way to OpenInference ones."""
    from openinference.instrumentation.google_adk import GoogleADKInstrumentor

    GoogleADKInstrumentor().instrument(tracer_provider=tracer_provider)
    run(scenario, tracer_provider, logger_provider, tools, executed)


async def _run(
    runner: Any, scenario: Scenario, types: Any, stream: bool = False
) -> tuple[str | None, str | None]:
    """The whole conversation, one invocation per user message in the same session (ADK's
    session keeps the history); returns the last final response's text and its agent
    (partial events of a streamed run are never final responses)."""
    from google.adk.agents.run_config import RunConfig, StreamingMode

    session = await runner.session_service.create_session(app_name="capture", user_id="user")
    # q_turn_limit: ADK's own limit on model calls per invocation; the next call raises
    # LlmCallsLimitExceededError instead of being made.
    settings: dict[str, Any] = {"streaming_mode": StreamingMode.SSE} if stream else {}
    if scenario.turn_limit:
        settings["max_llm_calls"] = scenario.turn_limit
    limit = RunConfig(**settings) if settings else None
    answer = author = None
    messages = [types.Content(role="user", parts=[types.Part(text=p)]) for p in scenario.prompts]
    while messages:
        message = messages.pop(0)
        refusals: list[Any] = []
        async for event in runner.run_async(
            user_id="user", session_id=session.id, new_message=message, run_config=limit
        ):
            for call in event.get_function_calls():
                if call.name == "adk_request_confirmation":
                    # w_*_denied: the human refuses the call (ToolConfirmation's payload,
                    # confirmed false); ADK then answers it with its own refusal.
                    refusals.append(
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=call.id, name=call.name, response={"confirmed": False}
                            )
                        )
                    )
            if event.is_final_response() and event.content and event.content.parts:
                # The answer is the response's text, not its thoughts (``thought`` parts:
                # the model's reasoning, which ADK keeps beside the text).
                said = [p.text or "" for p in event.content.parts if not p.thought]
                answer = "".join(said).strip() or answer
                author = event.author
        if refusals:  # the refusal resumes the run before the next user message
            messages.insert(0, types.Content(role="user", parts=refusals))
    await runner.close()
    return answer, author
