"""Vercel AI SDK 5 agents (Node): one scenario through ``vercel5.mjs`` against the scripted fake
OpenAI server.

The agent is AI SDK 5's ``Experimental_Agent`` (``stopWhen: stepCountIs(10)``, ``tool()``
tools) on ``@ai-sdk/openai-compatible``, run by Node from a scratch npm project's
``node_modules`` while this module serves the scripted model on 127.0.0.1 and computes the
tools' results with the same ``scenarios.Tools`` as every other source (``fw_mastra``'s
``run_node_agent``). The SDK records the run with its own ``experimental_telemetry`` (the
``ai.*`` spans); content capture off is ``recordInputs`` / ``recordOutputs: false``.

``g_handoff`` is an agent used as a tool: the triage agent's ``research_agent`` tool runs the
research agent, whose ``ai.generateText`` span nests in the tool's ``ai.toolCall`` span; the
research agent starts from its own history, so the fake server answers in call order.
"""

from __future__ import annotations

from pathlib import Path

from fw_mastra import run_node_agent
from scenarios import QUESTION, Scenario


def script(scenario: Scenario) -> Scenario:
    """The model's turns in call order: ``g_handoff`` calls the research agent's tool, the
    research agent searches and answers, then the triage agent passes the answer on."""
    return scenario.through_agent_tool(("research_agent", {"question": QUESTION}))


def run_vercel5(
    scenario: Scenario,
    variant: str,
    content: bool,
    out: Path,
    project: Path,
    stream: bool = False,
) -> list[str]:
    """Run one (scenario, content) variant; returns the tools the run really executed.

    ``stream``: every agent runs through ``agent.stream`` (``streamText``) and its parts are
    consumed as they arrive, the ``<source>-stream`` captures."""
    return run_node_agent(
        "vercel5.mjs", script(scenario), scenario, variant, content, out, project,
        extra={"stream": stream},
    )  # fmt: skip
