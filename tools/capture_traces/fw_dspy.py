"""DSPy ``ReAct`` programs on the fake OpenAI server, for the ``dspy-openinference`` source.

Each scenario runs ``dspy.ReAct("question -> answer", tools=[...])`` with
``dspy.LM("openai/gpt-4o-mini", api_base=...)`` (DSPy's default engine) pointed at
``fake_openai.py``. DSPy's ReAct does not use native tool calls: every step asks the model for
a ``next_thought`` / ``next_tool_name`` / ``next_tool_args`` in ChatAdapter's text format
(``[[ ## field ## ]]`` headers), and the run ends when the model picks DSPy's built-in
``finish`` tool, after which one more call extracts ``reasoning`` and ``answer``. So the
script turns each tool turn into such a text reply and the final text into a ``finish`` step
plus the extraction reply; the fake server answers in call order.

Tools are plain functions wrapped by ``dspy.Tool``; a failing search raises, and ReAct hands
the model the error text as the observation (``Execution error in search_docs: ...``). DSPy
has no handoff or delegation mechanism, so ``g_handoff`` is not captured for this source.
Traced by ``openinference-instrumentation-dspy`` (``run``) or MLflow's DSPy autolog
(``fw_mlflow.run_dspy``, the same program, ``run_react``); the response cache is off so every
step really reaches the server. Its LM spans record no token counts, and
``openinference-instrumentation-litellm`` cannot add them: DSPy 3.4's default engine for
``openai/`` models does not call LiteLLM (instrumented, it recorded no span).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from scenarios import Scenario, Tools

Turn = list[tuple[str, dict[str, Any]]] | str


def react_step(thought: str, tool: str, args: dict[str, Any]) -> str:
    """One ReAct step as ChatAdapter parses it."""
    return (
        f"[[ ## next_thought ## ]]\n{thought}\n\n"
        f"[[ ## next_tool_name ## ]]\n{tool}\n\n"
        f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n"
        "[[ ## completed ## ]]"
    )


def script(scenario: Scenario) -> Scenario:
    """The model's replies in call order: one ReAct step per tool call, then ``finish`` and
    the extraction step that carries the final answer."""
    replies: list[Turn] = []
    for turn in scenario.turns:
        if isinstance(turn, str):
            replies.append(react_step("I can answer now.", "finish", {}))
            replies.append(
                f"[[ ## reasoning ## ]]\nThe observations are enough to answer.\n\n"
                f"[[ ## answer ## ]]\n{turn}\n\n[[ ## completed ## ]]"
            )
        else:
            replies += [react_step(f"I should call {name}.", name, args) for name, args in turn]
    return dataclasses.replace(scenario, turns=replies)


def dspy_tools(tools: Tools, executed: list[str]) -> list[Any]:
    """The scripted tools as ``dspy.Tool``s; each call is logged before it runs, so the ground
    truth is what really executed."""
    import dspy

    def search_docs(query: str) -> str:
        """Search the knowledge base and return matching documents."""
        executed.append("search_docs")
        return json.dumps(tools.search_docs(query))

    def delete_records(table: str, where: str) -> str:
        """Delete records from a database table."""
        executed.append("delete_records")
        return json.dumps(tools.delete_records(table, where))

    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        executed.append("write_file")
        return json.dumps(tools.write_file(path, content))

    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        executed.append("run_command")
        return json.dumps(tools.run_command(command))

    return [dspy.Tool(fn) for fn in (search_docs, delete_records, write_file, run_command)]


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One ``ReAct`` run traced by OpenInference's DSPy instrumentor."""
    from openinference.instrumentation.dspy import DSPyInstrumentor

    DSPyInstrumentor().instrument(tracer_provider=tracer_provider)
    run_react(scenario, tools, executed)


def run_otel_genai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One ``ReAct`` run traced by the OpenTelemetry project's own DSPy instrumentation,
    ``opentelemetry-instrumentation-genai-dspy`` (the ``dspy-otel-genai`` source): an
    ``invoke_agent`` span per ``ReAct`` run, a ``chat`` span per LM call and an
    ``execute_tool`` span per ``dspy.Tool`` call, ``finish`` included; content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``."""
    from opentelemetry.instrumentation.genai.dspy import DSPyInstrumentor

    DSPyInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    run_react(scenario, tools, executed)


def run_react(scenario: Scenario, tools: Tools, executed: list[str], engine: str = "auto") -> None:
    """One ``ReAct`` run on the fake server, under whatever tracing the caller turned on;
    fails when its answer is not the scripted one. ``engine`` is ``dspy.LM``'s: ``auto``
    (DSPy's own HTTP client for ``openai/`` models) or ``litellm``."""
    # DSPy refreshes its model metadata from the network unless told to use its bundled copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    import dspy
    from fake_openai import FakeOpenAI, call_order

    with FakeOpenAI(script(scenario), turn_of=call_order()) as base_url:
        lm = dspy.LM(
            "openai/gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key",
            temperature=0.0, cache=False, num_retries=0, engine=engine,
        )  # fmt: skip
        dspy.configure(lm=lm, adapter=dspy.ChatAdapter())
        program = dspy.ReAct("question -> answer", tools=dspy_tools(tools, executed), max_iters=10)
        prediction = program(question=f"{scenario.system}\n\n{scenario.prompt}")
    if prediction.answer != scenario.turns[-1]:
        raise SystemExit(
            f"{scenario.name}: run answered {prediction.answer!r}, "
            f"script says {scenario.turns[-1]!r}"
        )
