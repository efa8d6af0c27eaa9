"""Handoff tools that name their target agent only in their arguments
(``conventions/llama-index.yaml`` for AgentWorkflow's ``handoff``, ``google-adk.yaml`` for
``transfer_to_agent``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser

HANDOFF_TARGET_KEYS = ("to_agent", "agent_name", "agentName", "target_agent", "agent")
"""Argument names handoff tools give the agent they transfer to: LlamaIndex AgentWorkflow's
``handoff`` (``to_agent``), Google ADK's ``transfer_to_agent`` (``agent_name``; ADK for
TypeScript's ``agentName``), others."""


def parse_handoff_target(value: Any) -> str | None:
    """The agent a handoff tool's arguments (an object) name as its target, for tools whose
    name does not say it (``handoff``, ``transfer_to_agent``); ``None`` when none is named."""
    if not isinstance(value, dict):
        return None
    for key in HANDOFF_TARGET_KEYS:
        if isinstance(value.get(key), str) and value[key]:
            return str(value[key])
    return None


PARSERS: Mapping[str, Parser] = {
    "handoff_target": parse_handoff_target,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
