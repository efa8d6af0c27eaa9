"""The Claude Agent SDK (Python) driving the real Claude Code CLI, for ``claude-agent-sdk*``.

``claude_agent_sdk.query()`` starts the CLI the wheel bundles; the CLI talks to a scripted
Anthropic Messages server on 127.0.0.1 (``ANTHROPIC_BASE_URL``, streamed answers from
``fake_anthropic.py``) and calls the scenario's tools as in-process SDK MCP tools (``@tool`` +
``create_sdk_mcp_server``), which Claude Code names ``mcp__<server>__<tool>``. The script picks
the scenario's calls by those names, so the ground truth stays the scenario while the tool
names are the CLI's own. A failing tool answers ``is_error: true`` with the error JSON.

``g_handoff`` delegates through Claude Code's sub-agents: ``research_agent`` is an
``AgentDefinition``, and the triage turn calls the CLI's own delegation tool (``Agent``, or
``Task`` in older CLIs) with ``subagent_type: research_agent``; the sub-agent's requests carry
its own prompt, so the script recognises them by it and continues the scenario there.

The CLI runs with an empty ``HOME`` in a temporary directory, no built-in tools, and every
connection that is not to 127.0.0.1 sent to a dead proxy, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

from fake_anthropic import MODEL, message, stream_events
from scenarios import TOOL_SCHEMAS, Scenario, SearchBackendError, Tools
from scripted_server import Reply, ScriptedServer

SERVER = "scenario"
PREFIX = f"mcp__{SERVER}__"
"""How Claude Code names an SDK MCP server's tools (``tool_prefix`` in ``capture.py``)."""
DELEGATION_TOOLS = ("Agent", "Task")
"""Claude Code's sub-agent tool: ``Agent`` in 2.1 CLIs, ``Task`` before."""
RESEARCH_PROMPT = "You are research_agent: search the knowledge base and answer with citations."


def _offered(body: dict[str, Any]) -> set[str]:
    return {tool.get("name", "") for tool in body.get("tools", []) or []}


def _is_subagent(body: dict[str, Any]) -> bool:
    system = body.get("system")
    return RESEARCH_PROMPT in json.dumps(system)


class ClaudeCodeScript(ScriptedServer):
    """The scenario as Anthropic Messages answers for Claude Code. A request offering the
    scenario's tools gets the next scripted turn (counted, as ``fake_anthropic.py`` does, by
    the assistant messages it holds; a sub-agent's requests start after the delegation turn);
    any other request (a title, a summary or another side call) gets a short text."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.subagent_turns = 0
        """Turns the sub-agent answered: the delegating agent's count resumes after them."""
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        if not path.split("?")[0].endswith("/v1/messages"):
            return "only /v1/messages is scripted"
        offered = _offered(body)
        if not any(name.startswith(PREFIX) for name in offered):
            msg = {**message(self.scenario, {"messages": []}), "stop_reason": "end_turn",
                   "content": [{"type": "text", "text": "Refund question"}]}  # fmt: skip
        else:
            # A sub-agent sees only its own conversation (its turns follow the delegating
            # turn) and the delegating agent does not see the sub-agent's: each count is
            # shifted by the turns the other took.
            before = 1 if _is_subagent(body) else self.subagent_turns
            self.subagent_turns += _is_subagent(body)
            request = {**body, "messages": [{"role": "assistant"}] * before + body["messages"]}
            msg = message(self.scenario, request)
            msg["content"] = [self._rename(block, offered) for block in msg["content"]]
        if body.get("stream"):
            return Reply(stream_events(msg), content_type="text/event-stream")
        return Reply(msg)

    @staticmethod
    def _rename(block: dict[str, Any], offered: set[str]) -> dict[str, Any]:
        """A scripted call under the name Claude Code offers it by."""
        if block["type"] != "tool_use":
            return block
        if block["name"].startswith("transfer_to_"):
            tool = next((t for t in DELEGATION_TOOLS if t in offered), DELEGATION_TOOLS[0])
            target = block["name"].removeprefix("transfer_to_")
            args = {"description": "Research the question", "subagent_type": target,
                    "run_in_background": False,
                    "prompt": "Find the refund window for enterprise customers, with "
                              "citations."}  # fmt: skip
            return {**block, "name": tool, "input": args}
        return {**block, "name": PREFIX + block["name"]}


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """openinference-instrumentation-claude-agent-sdk around ``query()``."""
    from openinference.instrumentation.claude_agent_sdk import ClaudeAgentSDKInstrumentor

    ClaudeAgentSDKInstrumentor().instrument(tracer_provider=tracer_provider)
    asyncio.run(_query(scenario, tools, executed))


def run_mcp(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """As ``run``, with the capture's provider also the global one, as an app that sets up
    OpenTelemetry once does: the ``mcp`` SDK (2.x) then records its own server spans for the
    in-process SDK MCP server (``tools/call <tool>``, ``initialize``, ``tools/list``), which
    it traces through the global provider only. Those spans hang beside OpenInference's tool
    spans, not inside them (the CLI's control channel carries no trace context), so each call
    is recorded twice, by two layers, as siblings (``claude-agent-sdk-mcp``)."""
    from opentelemetry import trace

    trace.set_tracer_provider(tracer_provider)
    run(scenario, tracer_provider, logger_provider, tools, executed)


async def _query(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    import claude_agent_sdk as sdk

    def sdk_tool(name: str, description: str, schema: dict[str, Any]) -> Any:
        @sdk.tool(name, description, schema)
        async def call(args: dict[str, Any]) -> dict[str, Any]:
            executed.append(PREFIX + name)
            try:
                text, failed = json.dumps(getattr(tools, name)(**args)), False
            except SearchBackendError as exc:
                text, failed = json.dumps({"error": f"SearchBackendError: {exc}"}), True
            return {"content": [{"type": "text", "text": text}], "is_error": failed}

        return call

    server = sdk.create_sdk_mcp_server(
        SERVER,
        tools=[
            sdk_tool(s["function"]["name"], s["function"]["description"],
                     s["function"]["parameters"])
            for s in TOOL_SCHEMAS
        ],
    )  # fmt: skip
    agents = None
    if scenario.agents_only:
        agents = {
            "research_agent": sdk.AgentDefinition(
                description="Searches the knowledge base and answers with citations.",
                prompt=RESEARCH_PROMPT,
                # The tools the research agent's turns call (search_docs; s_delegated_forbidden
                # also delete_records): g_handoff's sub-agent is offered the search alone.
                tools=sorted(
                    {
                        PREFIX + tool
                        for turn in scenario.turns[1:]
                        for tool, _ in ([] if isinstance(turn, str) else turn)
                    }
                ),
                model="inherit",
                background=False,
            )
        }

    async def refuse(name: str, args: dict[str, Any], context: Any) -> Any:
        """The application's permission callback (``can_use_tool``): a human refusing every
        call it is asked about with the SDK's default denial (``PermissionResultDeny()``, no
        message of the application's own); the CLI then hands the model its refusal."""
        return sdk.PermissionResultDeny()

    # w_*_denied: the denied tools are not pre-approved, so the CLI asks the application's
    # permission callback, which refuses them (``refuse``).
    names = [s["function"]["name"] for s in TOOL_SCHEMAS]
    allowed = [PREFIX + n for n in names if n not in scenario.denied]
    if not scenario.denied:
        allowed = [PREFIX + "*"]
    with ClaudeCodeScript(scenario) as base_url, tempfile.TemporaryDirectory() as home:
        options = sdk.ClaudeAgentOptions(
            system_prompt=scenario.system,
            model=MODEL,
            tools=list(DELEGATION_TOOLS) if agents else [],
            mcp_servers={SERVER: server},
            strict_mcp_config=True,
            allowed_tools=[*allowed, *DELEGATION_TOOLS],
            can_use_tool=refuse if scenario.denied else None,
            agents=agents,
            setting_sources=[],
            max_turns=12,
            cwd=home,
            env={
                "HOME": home,
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "capture-not-a-key",
                "HTTPS_PROXY": "http://127.0.0.1:9",
                "HTTP_PROXY": "http://127.0.0.1:9",
                "NO_PROXY": "127.0.0.1,localhost",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
        )
        async for _message in sdk.query(prompt=scenario.prompt, options=options):
            pass
