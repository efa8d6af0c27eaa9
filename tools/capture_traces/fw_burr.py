"""Apache Burr agents traced by Burr's ``OpenTelemetryBridge`` plus OpenLLMetry's OpenAI
instrumentation.

The agent is a Burr state machine written the way Burr's tool-calling example writes one: a
``call_model`` action asks the OpenAI client (on the scripted fake server) for the next step
and stores the model's tool calls in the state; each tool is an action of its own, named after
the tool, that runs the first pending call and appends its result as a ``tool`` message; the
transitions (``when(next_tool=...)``) route to the action of the next pending call, back to
``call_model`` once none is left, and end the application when the model answers in text.

A failing search raises, as a real backend client would; the tool action catches it and hands
the model an ``{"error": ...}`` result, since an exception leaving a Burr action ends the
application. Burr's spans therefore show no failure: only the model's next request (its
``tool`` message, content on) does.

``g_handoff``: the triage agent's ``research_agent`` tool action builds and runs the research
agent as a Burr sub-application (``with_spawning_parent``, the same bridge as a hook), so the
research agent's spans nest in the triage agent's tool action span. It starts from a fresh
history, so the fake server answers in call order.

Tracing: ``OpenTelemetryBridge`` as an application hook, given a tracer of the capture's
provider under the name the bridge uses by default (its module), makes a span for the
application's ``run`` call and one per action, with no attributes unless an action logs some.
The OpenAI calls are traced by OpenLLMetry's ``opentelemetry-instrumentation-openai`` (the
bridge traces no model call itself); its ``TRACELOOP_TRACE_CONTENT`` switch is the content
switch.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import QUESTION, TOOL_SCHEMAS, Scenario, Tools

SCENARIO_TOOLS = ("search_docs", "delete_records", "write_file", "run_command")
RESEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "research_agent",
        "description": "Ask the research agent, which answers with citations.",
        "parameters": {
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
    },
}


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One run traced by Burr's OpenTelemetry bridge and the OpenAI instrumentation on the
    capture's provider; appends each executed scenario tool to ``executed`` and fails when
    the run's answer is not the scripted one."""
    del logger_provider
    import openai
    from burr.core import Application, ApplicationBuilder, ApplicationContext, State, action, when
    from burr.integrations.opentelemetry import OpenTelemetryBridge
    from fake_openai import FakeOpenAI, call_order
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    bridge = OpenTelemetryBridge(tracer=tracer_provider.get_tracer(OpenTelemetryBridge.__module__))
    scripted = script(scenario)

    def routed(state: State, messages: list[dict[str, Any]], pending: list[Any]) -> State:
        """The state after a step: the messages so far, the calls still to run and the
        action that runs the next one (``None`` when the model has to speak again)."""
        next_tool = pending[0]["function"]["name"] if pending else None
        return state.update(messages=messages, pending=pending, next_tool=next_tool)

    @action(reads=["messages"], writes=["messages", "pending", "next_tool", "answer"])
    def call_model(state: State, client: Any, schemas: list[dict[str, Any]]) -> State:
        response = client.chat.completions.create(
            model="gpt-4o-mini", messages=state["messages"], tools=schemas, temperature=0.0
        )
        message = response.choices[0].message.model_dump(exclude_none=True)
        pending = message.get("tool_calls") or []
        state = state.update(answer=None if pending else message.get("content"))
        return routed(state, [*state["messages"], message], pending)

    def tool_action(name: str, result_of: Any) -> Any:
        """The action running the first pending call, which the transitions guarantee is a
        call of ``name``."""

        @action(reads=["messages", "pending"], writes=["messages", "pending", "next_tool"])
        def run_tool(state: State, __context: ApplicationContext) -> State:
            call, *rest = state["pending"]
            result = result_of(json.loads(call["function"]["arguments"]), __context)
            reply = {"role": "tool", "tool_call_id": call["id"], "content": result}
            return routed(state, [*state["messages"], reply], rest)

        return run_tool

    def scenario_tool(name: str) -> Any:
        def result_of(arguments: dict[str, Any], context: Any) -> str:
            del context
            executed.append(name)
            return tools.call(name, arguments)  # a raised SearchBackendError as {"error": ...}

        return tool_action(name, result_of)

    def agent(
        client: Any,
        system: str,
        prompt: str,
        actions: dict[str, Any],
        schemas: list[dict[str, Any]],
        parent: Any = None,
    ) -> Application:
        """An agent application: ``call_model`` and one action per tool, routed by the
        state's ``next_tool``; it ends when the model answers in text."""
        graph: list[Any] = [("call_model", name, when(next_tool=name)) for name in actions]
        for source in actions:
            graph += [(source, name, when(next_tool=name)) for name in actions]
            graph.append((source, "call_model", when(next_tool=None)))
        builder = (
            ApplicationBuilder()
            .with_actions(call_model=call_model.bind(client=client, schemas=schemas), **actions)
            .with_transitions(*graph)
            .with_state(
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
                pending=[],
                next_tool=None,
                answer=None,
            )
            .with_entrypoint("call_model")
            .with_hooks(bridge)
        )
        if parent is not None:
            builder = builder.with_spawning_parent(
                parent.app_id, parent.sequence_id, parent.partition_key
            )
        return builder.build()

    def answer_of(app: Application) -> str:
        """Runs the application to its end: ``call_model`` with no tool call to route."""
        _, _, state = app.run(halt_after=[])
        return str(state["answer"]).strip()

    with FakeOpenAI(scripted, turn_of=call_order()) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="capture-not-a-key")
        scenario_actions = {name: scenario_tool(name) for name in SCENARIO_TOOLS}

        if scenario.agents_only:

            def research(arguments: dict[str, Any], context: Any) -> str:
                research_app = agent(
                    client, scenario.system, arguments["question"], scenario_actions,
                    TOOL_SCHEMAS, parent=context,
                )  # fmt: skip
                return answer_of(research_app)

            app = agent(
                client, "Hand research questions to the research_agent tool.", scenario.prompt,
                {"research_agent": tool_action("research_agent", research)}, [RESEARCH_TOOL],
            )  # fmt: skip
        else:
            app = agent(client, scenario.system, scenario.prompt, scenario_actions, TOOL_SCHEMAS)
        answer = answer_of(app)
    final = scripted.turns[-1]
    if answer != final:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {final!r}")
