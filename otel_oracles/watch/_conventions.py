"""The coding-agent conventions (``coding-agents.yaml``): which log events of Claude Code,
Codex CLI and Gemini CLI become which session entries, and which tool names are commands,
file edits, reads or web access.

Loaded and validated once (pydantic, ``extra="forbid"``): a typo in the file is a
``ConventionError`` naming the key, at load time.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from otel_oracles import safe_regex
from otel_oracles.config_yaml import load_yaml, read_config_bytes
from otel_oracles.errors import ConventionError

CONVENTIONS_FILE = Path(__file__).with_name("coding-agents.yaml")

EntryKind = Literal["tool", "decision", "prompt", "model"]
ActionKind = Literal["command", "file_edit", "file_read", "web", "mcp", "tool"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EventMapping(_Model):
    """One log event and the attributes that fill its entry's fields."""

    entry: EntryKind
    tool: str | None = None
    arguments: str | None = None
    """Attribute holding the tool arguments as a JSON object string."""
    call_id: str | None = None
    success: str | None = None
    decision: str | None = None
    source: str | None = None
    """Attribute saying where a permission decision came from (config, user, hook)."""
    text: str | None = None
    model: str | None = None
    input_tokens: str | None = None
    output_tokens: str | None = None
    unset: str | None = None
    """What to do to get the field when the agent left it out (shown as missing evidence)."""


class ToolKinds(_Model):
    """Tool names by what they do."""

    command: list[str] = Field(default_factory=list)
    file_edit: list[str] = Field(default_factory=list)
    file_read: list[str] = Field(default_factory=list)
    web: list[str] = Field(default_factory=list)
    mcp_prefix: str | None = None

    def kind_of(self, tool: str) -> ActionKind:
        kinds: tuple[ActionKind, ...] = ("command", "file_edit", "file_read", "web")
        for kind in kinds:
            if tool in getattr(self, kind):
                return kind
        if self.mcp_prefix and tool.startswith(self.mcp_prefix):
            return "mcp"
        return "tool"


class AgentConvention(_Model):
    """How one coding agent's telemetry reads."""

    service: str
    """Regex matched (``re.search``) against the resource's ``service.name``."""
    session: list[str] = Field(min_length=1)
    """Attributes naming the session (first present wins)."""
    version: list[str] = Field(default_factory=list)
    """Resource or record attributes holding the agent's version."""
    cwd_argument: str | None = None
    """Tool-argument key that carries the working directory, when the agent has one."""
    events: dict[str, EventMapping]
    tools: ToolKinds


class CodingAgentConventions(_Model):
    agents: dict[str, AgentConvention]

    def agent_for(self, service_name: str) -> tuple[str, AgentConvention] | None:
        return next(
            (
                (name, a)
                for name, a in self.agents.items()
                if safe_regex.search(a.service, service_name)
            ),
            None,
        )


@functools.cache
def coding_agent_conventions(path: Path = CONVENTIONS_FILE) -> CodingAgentConventions:
    """The bundled conventions (cached: the file is part of the package)."""
    data = load_yaml(read_config_bytes(path))
    try:
        return CodingAgentConventions.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConventionError(f"{where}: {err['msg']}", str(path)) from None
