"""The Azure AI Agents SDK (``azure-ai-agents``) against a scripted agents service, traced by
the SDK's own ``AIAgentsInstrumentor``, for the ``azure-ai-agents`` source.

The agent loop runs in the service, not in the client (``fake_azure_agents.py`` is the service
and its model): the app is the SDK's documented function-calling sample with tracing
(``sample_agents_toolset_with_console_tracing.py``): the scripted tools as plain functions
decorated with the SDK's ``@trace_function()`` in a ``FunctionTool`` inside a ``ToolSet``,
``enable_auto_function_calls(toolset)``, ``create_agent(..., toolset=toolset)``,
``threads.create()``, ``messages.create(role="user")``, ``runs.create_and_process(...)`` (the
SDK polls the run and, on ``requires_action``, runs the functions and posts their outputs),
then ``messages.list(order=ASCENDING)`` to read the answer, all inside the application's span.
A function that raises is answered by the SDK with ``{"error": "Error executing function
'<name>': <exception>"}``, and so is a call of a function the toolset lacks or a call whose
arguments the function's signature refuses (the SDK's auto function calls retry up to 10
errored rounds before cancelling the run).

Tracing as documented: azure-core's tracing implementation set to OpenTelemetry (the
capture's provider made global; one run per process) and ``AIAgentsInstrumentor().instrument()``,
whose content switch is ``AZURE_TRACING_GEN_AI_CONTENT_RECORDING_ENABLED``. The spans are the
client's operations (``create_agent <name>``, ``create_thread``, ``create_message``,
``process_thread_run`` around ``get_thread_run`` polls and ``submit_tool_outputs``,
``list_messages``), ``gen_ai.system`` ``az.ai.agents``, messages as span events whose JSON is
``gen_ai.event.content``; the model calls happen in the service and have no span of their own,
and ``@trace_function`` makes one span per function run, named after the function, its
arguments and return value as attributes. The polling interval is 0 s (``polling_interval``;
the service answers at once), so the capture takes no wall time waiting.

The client's credential is a bearer token policy's, which refuses plain HTTP: the client is
given azure-core's ``AzureKeyCredentialPolicy`` as its ``authentication_policy`` (a key header
the scripted service ignores), the documented way to replace a client's authentication.
"""

from __future__ import annotations

import json
from typing import Any

from fake_azure_agents import MODEL, FakeAzureAgents
from scenarios import Scenario, Tools


class _NoToken:
    """A ``TokenCredential`` the client requires but never asks (its policy is replaced)."""

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        raise RuntimeError("the scripted service takes no token")


def functions(tools: Tools, executed: list[str]) -> set[Any]:
    """The scripted tools as the typed, documented functions ``FunctionTool`` reads (names,
    parameters and docstrings make the definitions), each under ``@trace_function()``."""
    from azure.ai.agents.telemetry import trace_function

    @trace_function()
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        :param query: What to search for.
        :return: The matching documents as JSON.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @trace_function()
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table.

        :param table: The table.
        :param where: Which rows.
        :return: What was deleted, as JSON.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @trace_function()
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        :param path: The file's path.
        :param content: The file's content.
        :return: What was written.
        """
        executed.append("write_file")
        return json.dumps(tools.write_file(path, content))

    @trace_function()
    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        :param command: The command line.
        :return: The command's exit code and output.
        """
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    return {search_docs, delete_records, write_file, run_command}


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario as the SDK's documented toolset sample, under its own tracing."""
    from azure.ai.agents import AgentsClient
    from azure.ai.agents.models import FunctionTool, ListSortOrder, RunStatus, ToolSet
    from azure.ai.agents.telemetry import AIAgentsInstrumentor
    from azure.core.credentials import AzureKeyCredential
    from azure.core.pipeline.policies import AzureKeyCredentialPolicy
    from azure.core.settings import settings
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    settings.tracing_implementation = "opentelemetry"
    AIAgentsInstrumentor().instrument()  # content switch: the environment variable
    toolset = ToolSet()
    toolset.add(FunctionTool(functions=functions(tools, executed)))
    tracer = tracer_provider.get_tracer("capture.app")
    agent_name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    with FakeAzureAgents(scenario) as endpoint, tracer.start_as_current_span("agent_run"):
        policy = AzureKeyCredentialPolicy(AzureKeyCredential("capture-not-a-key"), "api-key")
        with AgentsClient(
            endpoint=endpoint, credential=_NoToken(), authentication_policy=policy
        ) as client:
            client.enable_auto_function_calls(toolset)
            agent = client.create_agent(
                model=MODEL, name=agent_name, instructions=scenario.system, toolset=toolset
            )
            thread = client.threads.create()
            client.messages.create(thread_id=thread.id, role="user", content=scenario.prompt)
            run = client.runs.create_and_process(
                thread_id=thread.id, agent_id=agent.id, toolset=toolset, polling_interval=0
            )
            client.delete_agent(agent.id)
            messages = client.messages.list(thread_id=thread.id, order=ListSortOrder.ASCENDING)
            answers = [m.text_messages[-1].text.value for m in messages
                       if m.role == "assistant" and m.text_messages]  # fmt: skip
            if run.status == RunStatus.FAILED:
                error = run.last_error
                raise RuntimeError(f"run failed: {error.code if error else '?'}: "
                                   f"{error.message if error else '?'}")  # fmt: skip
            if not answers or answers[-1] != scenario.turns[-1]:
                raise SystemExit(f"{scenario.name}: run {run.status}, answers {answers!r}")
