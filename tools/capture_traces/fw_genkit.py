"""Firebase Genkit (Node): one scenario through ``genkit.mjs`` against the scripted fake OpenAI
server, for the ``genkit`` source.

Each agent is a Genkit flow whose ``ai.generate`` runs the tool loop (``ai.defineTool`` tools,
``maxTurns: 10``) on ``@genkit-ai/compat-oai``'s OpenAI plugin with its ``baseURL`` on the fake
server, run by Node from a scratch npm project's ``node_modules`` while this module serves the
scripted model on 127.0.0.1 and computes the tools' results with the same ``scenarios.Tools``
as every other source (``fw_mastra``'s ``run_node_agent``). Genkit records the run with its own
OpenTelemetry instrumentation; ``enableTelemetry`` adds the span processors, an OTLP/HTTP
protobuf exporter sending to ``otlp_sink.py`` among them. Genkit has no content switch, so the
content-off variant is the same run.

``g_handoff`` is an agent used as a tool, as for ``vercel-ai-sdk-5``: the triage agent's
``research_agent`` tool runs the research agent's flow, which starts from its own history, so
the fake server answers in call order (``fw_vercel5.script``).
"""

from __future__ import annotations

from pathlib import Path

from fw_mastra import run_node_agent
from fw_vercel5 import script
from scenarios import Scenario


def run_genkit(
    scenario: Scenario, variant: str, content: bool, out: Path, project: Path
) -> list[str]:
    """Run one (scenario, content) variant; returns the tools the run really executed."""
    return run_node_agent(
        "genkit.mjs", script(scenario), scenario, variant, content, out, project, sink=True
    )
