"""The chat-completions tool loop of the raw sources, written the way apps traced by a
decorator-based SDK (Langfuse ``@observe``, MLflow ``@mlflow.trace``) write it: the run is one
decorated agent function, each tool a decorated function that really runs (and raises on a
failed search), and ``g_handoff`` a triage agent whose ``transfer_to_research_agent`` tool
runs a decorated research agent that continues the conversation.

The SDK's own OpenAI integration records the model calls; ``agent(name)`` and ``tool(name)``
return the SDK's decorators, so one loop serves every such SDK and the ground truth is the
same as the raw loop's (``capture.py``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from scenarios import TOOL_SCHEMAS, Scenario, SearchBackendError, Tools

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
TRANSFER = "transfer_to_research_agent"
TRANSFER_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TRANSFER,
        "description": "Hand the conversation to the research agent.",
        "parameters": {"type": "object", "properties": {}},
    },
}


def run_decorated(
    scenario: Scenario,
    client: Any,
    tools: Tools,
    executed: list[str],
    agent: Callable[[str], Decorator],
    tool: Callable[[str], Decorator],
) -> str:
    """Run one scenario through decorated functions; returns the final answer, which must be
    the script's (a wrong answer means the capture did not follow the script)."""

    def decorated_tool(name: str) -> Callable[..., Any]:
        scripted = getattr(tools, name)

        @functools.wraps(scripted)  # the tool's own signature, as SDKs record its inputs
        def call(**arguments: Any) -> Any:
            executed.append(name)
            return scripted(**arguments)

        return tool(name)(call)

    tool_functions = {
        name: decorated_tool(name)
        for name in ("search_docs", "delete_records", "write_file", "run_command")
    }

    def loop(messages: list[dict[str, Any]], schemas: list[dict[str, Any]]) -> str:
        for _ in range(10):
            response = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=schemas, temperature=0.0
            )
            message = response.choices[0].message.model_dump(exclude_none=True)
            if not message.get("tool_calls"):
                return str(message.get("content") or "")
            messages.append(message)
            for call in message["tool_calls"]:
                name = call["function"]["name"]
                arguments = json.loads(call["function"]["arguments"])
                if name == TRANSFER:
                    return transfer(messages, call["id"])
                try:
                    result = json.dumps(tool_functions[name](**arguments))
                except SearchBackendError as exc:
                    result = json.dumps({"error": f"SearchBackendError: {exc}"})
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        raise RuntimeError(f"{scenario.name}: no final answer after 10 model calls")

    def research(messages: list[dict[str, Any]]) -> str:
        return loop(messages, TOOL_SCHEMAS)

    research_agent = agent("research_agent")(research)

    def transfer_call(messages: list[dict[str, Any]], call_id: str) -> str:
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "transferred"})
        return str(research_agent(messages))

    transfer_call.__name__ = TRANSFER
    transfer_tool = tool(TRANSFER)(transfer_call)

    def transfer(messages: list[dict[str, Any]], call_id: str) -> str:
        return str(transfer_tool(messages, call_id))

    def start(prompt: str) -> str:
        messages = [{"role": "system", "content": scenario.system}]
        messages.append({"role": "user", "content": prompt})
        if scenario.agents_only:
            return loop(messages, [TRANSFER_SCHEMA])
        return loop(messages, TOOL_SCHEMAS)

    if scenario.agents_only:
        name = "triage_agent"
    else:
        name = "coding_agent" if scenario.name == "h_coding_agent" else "support_agent"
    start.__name__ = name
    answer = str(agent(name)(start)(scenario.prompt))
    if answer != scenario.turns[-1]:
        raise RuntimeError(f"final answer {answer!r} is not the script's")
    return answer


def run_on_openai(
    scenario: Scenario,
    tools: Tools,
    executed: list[str],
    agent: Callable[[str], Decorator],
    tool: Callable[[str], Decorator],
) -> str:
    """``run_decorated`` on a plain ``openai`` client pointed at the scripted server, for the
    SDKs that record the client themselves (AgentOps, Laminar, Langtrace)."""
    import openai
    from fake_openai import FakeOpenAI

    with FakeOpenAI(scenario) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="capture-not-a-key")
        return run_decorated(scenario, client, tools, executed, agent, tool)
