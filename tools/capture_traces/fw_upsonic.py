"""Upsonic agents traced by Upsonic's own OpenTelemetry tracing provider.

Upsonic (the ``upsonic`` package) runs an ``Agent`` on a ``Task``; its model classes are a
fork of pydantic-ai's, so the model is ``OpenAIChatModel("gpt-4o-mini",
provider=OpenAIProvider(base_url=...))`` on the scripted fake OpenAI server. Tools are plain
functions under Upsonic's ``@tool`` decorator with ``max_retries=0``: by default Upsonic
re-runs a tool that raised up to five times, with growing sleeps, before the model hears of
it, so a scripted failure would be retried by the framework instead of the model.

Tracing is ``DefaultTracingProvider`` handed to the agent as ``instrument=``: Upsonic's own
tracer provider and OTLP exporter (HTTP here, the virtualenv holding no gRPC exporter)
pointed at ``otlp_sink.py``. It records an ``agent.run`` span with Upsonic's ``upsonic.*``
attributes (input, output, usage, the tools called) and Langfuse's ``langfuse.*`` ones, a
``pipeline.execute`` span with one ``pipeline.step.<name>`` span per pipeline step, GenAI
``chat <model>`` spans (pydantic-ai's instrumented model) and ``tool.execute`` spans
(``upsonic.tool.name``, ``upsonic.tool.call_id``, ``upsonic.tool.success``, the arguments and
output as ``langfuse.observation.input`` / ``output``). The content switch is the provider's
``include_content``.

A failing search raises, as a real backend client would: Upsonic's tool manager catches the
exception and hands the model its bare message, and the ``tool.execute`` span ends OK with
``upsonic.tool.success`` true (0.77.3 sets it after any returned result, the caught
failure's included).

``g_handoff``: the triage agent's ``research_agent`` tool runs the research agent's task and
returns its answer (the research agent starts from a fresh history: answered in call order).
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def scenario_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as Upsonic tools without framework retries; each logs its
    execution before it runs."""
    from upsonic.tools import tool

    @tool(max_retries=0)
    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents.

        Args:
            query: What to look for.
        """
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    @tool(max_retries=0)
    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table.

        Args:
            table: The table.
            where: Which rows.
        """
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    @tool(max_retries=0)
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace.

        Args:
            path: The file's path.
            content: The file's text.
        """
        executed.append("write_file")
        return str(tools.write_file(path, content))

    @tool(max_retries=0)
    def run_command(command: str) -> str:
        """Run a shell command in the workspace.

        Args:
            command: The command line.
        """
        executed.append("run_command")
        return str(tools.run_command(command))

    return [search_docs, delete_records, write_file, run_command]


def run(
    scenario: Scenario,
    endpoint: str,
    tools: Tools,
    executed: list[str],
    *,
    content: bool,
) -> None:
    """One run exported by Upsonic's ``DefaultTracingProvider`` to the sink at ``endpoint``;
    fails when the run's answer is not the scripted one."""
    from fake_openai import FakeOpenAI, call_order
    from upsonic import Agent, Task
    from upsonic.integrations.tracing import DefaultTracingProvider
    from upsonic.models.openai import OpenAIChatModel
    from upsonic.providers.openai import OpenAIProvider
    from upsonic.tools import tool

    scripted = script(scenario)
    provider = DefaultTracingProvider(
        endpoint=f"{endpoint}/v1/traces", service_name="capture-upsonic",
        include_content=content, flush_on_exit=False,
    )  # fmt: skip
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, system: str, functions: list[Any]) -> Any:
            model = OpenAIChatModel(
                "gpt-4o-mini",
                provider=OpenAIProvider(base_url=base_url, api_key="capture-not-a-key"),
            )
            return Agent(
                model=model, name=name, system_prompt=system, tools=functions,
                instrument=provider,
            )  # fmt: skip

        functions = scenario_tools(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, functions)

            @tool(max_retries=0)
            async def research_agent(question: str) -> str:
                """Answer a research question with citations.

                Args:
                    question: The question to research.
                """
                return str(await research.do_async(Task(question)))

            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", [research_agent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, functions)
        answer = str(runner.do(Task(scenario.prompt))).strip()
    provider.shutdown()
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
