"""LlamaIndex agents on the fake OpenAI server, for the ``llamaindex-openinference`` source.

Each scenario runs a ``FunctionAgent`` (``llama-index-core`` agent workflows) with the
``llama-index-llms-openai`` model pointed at ``fake_openai.py`` and the scripted tools as
``FunctionTool``s. A tool failure is the tool's own exception, which the agent workflow turns
into an error tool output for the model. ``g_handoff`` is an ``AgentWorkflow`` whose root
triage agent hands off with LlamaIndex's own ``handoff`` tool (``{"to_agent", "reason"}``),
so the scripted turns call that tool instead of the scenario's ``transfer_to_*`` (for
``n_handback`` the research agent may hand back, ``can_handoff_to=["triage_agent"]``).
Traced by ``openinference-instrumentation-llama-index`` (``run``, the
``llamaindex-openinference`` source) or by OpenLLMetry's
``opentelemetry-instrumentation-llamaindex`` (``run_openllmetry``, the ``llamaindex-openllmetry``
source): the same agents, so the same truth.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from fake_openai import FakeOpenAI, call_order
from scenarios import Scenario, Tools, answer_type

HANDOFF = ("handoff", {"to_agent": "research_agent", "reason": "A research question."})
"""The scripted call of AgentWorkflow's handoff tool (replaces ``transfer_to_research_agent``)."""
HANDBACK = ("handoff", {"to_agent": "triage_agent", "reason": "Searched; triage answers."})
"""``n_handback``'s transfer back (replaces ``transfer_to_triage_agent``)."""
ONWARD = ("handoff", {"to_agent": "records_agent", "reason": "Records work."})
"""``s_nested_*``: the research agent's handoff on to the records agent (replaces
``transfer_to_records_agent``)."""


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
    asyncio.run(_run(scenario, tools, executed))


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run recorded by OpenLLMetry's LlamaIndex instrumentation (it reads
    ``TRACELOOP_TRACE_CONTENT`` for its content switch). It leaves the calls of LlamaIndex's
    ``OpenAI`` model to OpenLLMetry's OpenAI instrumentation, so both are active, as
    ``Traceloop.init()`` would make them."""
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    asyncio.run(_run(scenario, tools, executed))


def run_otel_genai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same run recorded by the OpenTelemetry project's own GenAI instrumentations
    (opentelemetry-python-genai): ``opentelemetry-instrumentation-genai-llama-index`` with
    ``opentelemetry-instrumentation-genai-openai`` for the model calls, both active (the
    ``llamaindex-otel-genai`` source); content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``SPAN_ONLY`` / ``NO_CONTENT``)."""
    from opentelemetry.instrumentation.genai.llama_index import LlamaIndexInstrumentor
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    for instrumentor in (LlamaIndexInstrumentor(), OpenAIInstrumentor()):
        instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    asyncio.run(_run(scenario, tools, executed))


def function_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as LlamaIndex ``FunctionTool``s; each call is logged before it runs,
    so the ground truth is what really executed."""
    from llama_index.core.tools import FunctionTool

    def logged(name: str) -> Callable[..., Any]:
        method = getattr(tools, name)

        def call(**kwargs: Any) -> Any:
            executed.append(name)
            return method(**kwargs)

        return call

    def search_docs(query: str) -> Any:
        """Search the knowledge base and return matching documents."""
        return logged("search_docs")(query=query)

    def delete_records(table: str, where: str) -> Any:
        """Delete records from a database table."""
        return logged("delete_records")(table=table, where=where)

    def write_file(path: str, content: str) -> Any:
        """Write a file in the workspace."""
        return logged("write_file")(path=path, content=content)

    def run_command(command: str) -> Any:
        """Run a shell command in the workspace."""
        return logged("run_command")(command=command)

    return [
        FunctionTool.from_defaults(fn=fn)
        for fn in (search_docs, delete_records, write_file, run_command)
    ]


async def _run(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.llms.openai import OpenAI

    answering = scenario.handoffs[-1][1] if scenario.transfers_back else None
    if scenario.agents_only:
        transfers = {
            "transfer_to_research_agent": HANDOFF,
            "transfer_to_triage_agent": HANDBACK,
            "transfer_to_records_agent": ONWARD,
        }
        turns = [
            t if isinstance(t, str) else [transfers.get(name, (name, args)) for name, args in t]
            for t in scenario.turns
        ]
        scenario = dataclasses.replace(scenario, turns=turns)
    # The agent's memory keeps the user and final assistant messages, not the tool calls, so
    # a later user turn's requests cannot be told apart by counting assistant messages.
    turn_of = call_order() if scenario.followups else None
    with FakeOpenAI(scenario, turn_of=turn_of) as base_url:
        llm = OpenAI(
            model="gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        all_tools = function_tools(tools, executed)
        if scenario.agents_only:
            triage = FunctionAgent(
                name="triage_agent", description="Routes research questions.",
                system_prompt="Hand research questions off.", llm=llm, tools=[],
                can_handoff_to=["research_agent"], streaming=False,
            )  # fmt: skip
            # n_handback: the research agent may hand back (g_handoff keeps the default).
            back = {"can_handoff_to": ["triage_agent"]} if scenario.transfers_back else {}
            records = []
            if scenario.nested:  # s_nested_*: the research agent hands the run on again
                back = {"can_handoff_to": ["records_agent"]}
                records = [
                    FunctionAgent(
                        name="records_agent", description="Changes records in the database.",
                        system_prompt=scenario.system, llm=llm, tools=all_tools,
                        streaming=False,
                    )
                ]  # fmt: skip
            research = FunctionAgent(
                name="research_agent", description="Searches the documents and answers.",
                system_prompt=scenario.system, llm=llm, tools=all_tools, streaming=False, **back,
            )  # fmt: skip
            workflow: Any = AgentWorkflow(
                agents=[triage, research, *records], root_agent="triage_agent"
            )
        else:
            name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
            # r_structured_*: the agent's output_cls, one more model call after its answer
            # that asks for the type (the run's structured_response).
            output_cls = {"output_cls": answer_type()} if scenario.structured else {}
            workflow = FunctionAgent(
                name=name, description="Answers with the tools it has.",
                system_prompt=scenario.system, llm=llm, tools=all_tools, streaming=False,
                **output_cls,
            )  # fmt: skip
        if scenario.followups:
            # One run per user message on the same Context: its memory is the history.
            from llama_index.core.workflow import Context

            ctx = Context(workflow)
            for prompt in scenario.prompts:
                output = await workflow.run(user_msg=prompt, ctx=ctx)
            if str(output.response.content).strip() != scenario.turns[-1]:
                raise SystemExit(f"{scenario.name}: last answer {output.response.content!r}")
        else:
            # q_turn_limit: the workflow's own limit counts model outputs and raises on the
            # one past it, before its tool calls run: one more than the calls whose tools run.
            limit = {"max_iterations": scenario.turn_limit + 1} if scenario.turn_limit else {}
            output = await workflow.run(user_msg=scenario.prompt, **limit)
    if scenario.structured and not scenario.answered_as_scripted(output.structured_response):
        raise SystemExit(f"{scenario.name}: structured answer {output.structured_response!r}")
    author = getattr(output, "current_agent_name", None)
    if answering is not None and author != answering:
        raise SystemExit(f"{scenario.name}: answered by {author}, not after the transfer back")
