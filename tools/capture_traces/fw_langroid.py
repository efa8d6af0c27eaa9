"""Langroid agents (``langroid``) traced by ``openinference-instrumentation-openai``, for the
``langroid-openinference`` source.

Langroid's parser counts tokens with tiktoken's ``cl100k_base``, which tiktoken downloads on
first use: ``tiktoken_offline`` points its cache at the copy LiteLLM's wheel ships, so the
capture stays offline (``litellm`` is in the source's packages for that file alone).

Langroid has no OpenTelemetry tracing of its own: what records a Langroid run is the
instrumentation of the ``openai`` client its ``OpenAIGPT`` model calls (``OpenAIGPTConfig``
with ``api_base`` on the scripted server), one ``ChatCompletion`` LLM span per model call. The
agent is a ``ChatAgent`` with OpenAI's tools API switched on (``use_functions_api=True``,
``use_tools=False``: Langroid's documented setting for OpenAI models; its default, JSON tool
requests written in the reply text, is another shape), run by a non-interactive ``Task``
whose ``done_sequences=["L"]`` ends it on the model's first reply that asks for no tool.
Langroid streams by default, so every model call is streamed. The tools are ``ToolMessage``
classes whose ``handle`` runs the scripted tool; Langroid runs them itself and no span records
a tool run: the calls are the model's requests, the results the next call's ``tool``
messages. The run is the application's ``agent_run`` span.

A tool whose handler raises ends Langroid's task with the exception (0.69 re-raises it), so
each handler returns its backend's failure as an error object, as the raw client loops do
(``Tools.call``: ``{"error": "SearchBackendError: ..."}``), which Langroid sends the model as
the call's result.

``run_text_tools`` (the ``langroid-text-tools-openinference`` source) runs the same agents in
Langroid's default tool mode (``use_tools=True``, ``use_functions_api=False``): the tools are
described in the system message, the model asks for one by writing its JSON
(``{"request": "search_docs", "query": ...}``) in its reply text, Langroid parses and runs it
and hands the result back as a user message. Nothing but the reply text shows a call: the
request goes out with no ``tools``, the reply has no ``tool_calls`` and its finish reason is
``stop`` (``text_script`` writes each scripted tool turn as such a reply, one JSON object a
line per requested call).

``g_handoff`` and the ``s_delegated_*`` runs: the triage agent's ``research_agent`` tool runs
the research agent's own task on the question and returns its answer, which the triage agent
passes on (``Scenario.through_agent_tool``); the research agent starts from its own history,
so the scripted server answers in call order.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from scenarios import QUESTION, Scenario, Tools


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: a handoff scenario's transfer is the triage agent's
    ``research_agent`` tool, which runs the research agent's turns."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def text_script(scenario: Scenario) -> Scenario:
    """``script``'s turns with each tool turn written as Langroid's default tool mode reads it:
    the reply text, one JSON tool request a line (``request`` names the tool)."""
    scripted = script(scenario)
    turns = [
        turn
        if isinstance(turn, str)
        else "\n".join(json.dumps({"request": name, **args}) for name, args in turn)
        for turn in scripted.turns
    ]
    return dataclasses.replace(scripted, turns=turns)


def tiktoken_offline() -> None:
    """Point tiktoken's cache at the ``cl100k_base`` encoding LiteLLM's wheel ships, under the
    name tiktoken caches it by (as LiteLLM itself does on import): Langroid's parser loads that
    encoding, which tiktoken would otherwise download on first use."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        raise SystemExit("langroid-openinference needs litellm installed for its tokenizer file")
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))


def tool_messages(tools: Tools, executed: list[str]) -> list[type[Any]]:
    """The scripted tools as Langroid ``ToolMessage`` classes whose handlers return a failure
    as an error object (``Tools.call``); each logs its execution before it runs."""
    from langroid.agent.tool_message import ToolMessage

    class SearchDocs(ToolMessage):
        request: str = "search_docs"
        purpose: str = "Search the knowledge base for <query> and return matching documents."
        query: str

        def handle(self) -> str:
            executed.append("search_docs")
            return tools.call("search_docs", {"query": self.query})

    class DeleteRecords(ToolMessage):
        request: str = "delete_records"
        purpose: str = "Delete records from the database table <table> matching <where>."
        table: str
        where: str

        def handle(self) -> str:
            executed.append("delete_records")
            return tools.call("delete_records", {"table": self.table, "where": self.where})

    class WriteFile(ToolMessage):
        request: str = "write_file"
        purpose: str = "Write the file <path> in the workspace with the text <content>."
        path: str
        content: str

        def handle(self) -> str:
            executed.append("write_file")
            return tools.call("write_file", {"path": self.path, "content": self.content})

    class RunCommand(ToolMessage):
        request: str = "run_command"
        purpose: str = "Run the shell command <command> in the workspace."
        command: str

        def handle(self) -> str:
            executed.append("run_command")
            return tools.call("run_command", {"command": self.command})

    return [SearchDocs, DeleteRecords, WriteFile, RunCommand]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through a Langroid ``Task`` with OpenAI's tools API under OpenInference's
    OpenAI instrumentor; fails when the run's answer is not the script's."""
    run_task(scenario, tracer_provider, tools, executed, text_tools=False)


def run_text_tools(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """``run`` in Langroid's default tool mode: tool requests as JSON in the reply text."""
    run_task(scenario, tracer_provider, tools, executed, text_tools=True)


def run_task(
    scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str], text_tools: bool
) -> None:
    """One scenario through a Langroid ``Task`` under OpenInference's OpenAI instrumentor,
    the tools asked for through OpenAI's tools API or (``text_tools``) as JSON in the reply
    text; fails when the run's answer is not the script's."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    tiktoken_offline()
    import langroid as lr
    import langroid.language_models as lm
    from fake_openai import FakeOpenAI, call_order
    from langroid.agent.tool_message import ToolMessage
    from langroid.utils.configuration import settings

    settings.cache = False  # every call reaches the model server (no Redis answer cache)
    scripted = text_script(scenario) if text_tools else script(scenario)
    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:

        def agent(name: str, system: str, messages: list[type[Any]]) -> Any:
            llm = lm.OpenAIGPTConfig(
                chat_model="gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key",
                cache_config=None, timeout=30,
            )  # fmt: skip
            config = lr.ChatAgentConfig(
                name=name, llm=llm, system_message=system,
                use_functions_api=not text_tools, use_tools_api=not text_tools,
                use_tools=text_tools,
            )  # fmt: skip
            chat_agent = lr.ChatAgent(config)
            chat_agent.enable_message(messages)
            return chat_agent

        def task(chat_agent: Any) -> Any:
            # done_sequences "L": the task ends on the model's first reply that asks for no
            # tool (Langroid's documented ending), its text the task's result; no log files.
            config = lr.TaskConfig(
                done_sequences=["L"], enable_loggers=False, enable_html_logging=False
            )
            return lr.Task(chat_agent, interactive=False, config=config)

        functions = tool_messages(tools, executed)
        if scenario.agents_only:
            research = agent("research_agent", scenario.system, functions)

            class ResearchAgent(ToolMessage):
                request: str = "research_agent"
                purpose: str = "Answer the research <question> with citations."
                question: str

                def handle(self) -> str:
                    done = task(research).run(self.question)
                    return str(done.content if done is not None else "")

            runner = agent(
                "triage_agent", "Hand research questions to research_agent.", [ResearchAgent]
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            runner = agent(name, scenario.system, functions)
        with tracer.start_as_current_span("agent_run"):
            result = task(runner).run(scenario.prompt)
    answer = (result.content if result is not None else "").strip()
    if scenario.model_fails_from is None and answer != scripted.turns[-1]:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {scripted.turns[-1]!r}")
