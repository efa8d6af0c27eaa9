"""Agent frameworks traced by OpenLIT, for the ``openlit-<framework>`` capture sources.

Each entry point runs an existing framework app unchanged under ``openlit.init()``
(``fw_openai_agents.init_openlit``: the capture's providers registered globally first, since
OpenLIT reuses the SDK providers it finds; metrics off), which instruments every library it
supports that is installed: the framework itself and the client the framework's model talks
through. OpenLIT reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false`` as its
content switch.

- ``run_langgraph`` (``openlit-langgraph``): ``fw_langgraph``'s ReAct agent (a
  ``langgraph-swarm`` handoff for ``g_handoff``); OpenLIT's langchain / langgraph
  instrumentors and its openai one under ``ChatOpenAI``.
- ``run_crewai`` (``openlit-crewai``): ``fw_crewai``'s crew (delegation to a coworker for
  ``g_handoff``); OpenLIT's crewai and litellm instrumentors.
- ``run_llamaindex`` (``openlit-llamaindex``): ``fw_llamaindex``'s agents (an
  ``AgentWorkflow`` with its ``handoff`` tool for ``g_handoff``); OpenLIT's llama_index
  instrumentor and its openai one under LlamaIndex's ``OpenAI`` model.
- ``run_smolagents`` (``openlit-smolagents``): ``fw_smolagents``'s ``ToolCallingAgent`` (a
  managed agent for ``g_handoff``); OpenLIT's smolagents and openai instrumentors.
- ``run_agno`` (``openlit-agno``): ``fw_agno``'s agents (a ``Team`` delegating to a member for
  ``g_handoff``); OpenLIT's agno and openai instrumentors.
- ``run_google_adk`` (``openlit-google-adk``): ``fw_adk``'s agents (``transfer_to_agent`` to
  a sub-agent for ``g_handoff``); OpenLIT's google_adk and litellm instrumentors, beside ADK's
  own tracing, which writes to the same global provider.
- ``run_pydantic_ai`` (``openlit-pydantic-ai``): ``fw_pydantic_ai``'s agents (a delegation
  tool running the research agent for ``g_handoff``); OpenLIT's pydantic_ai instrumentor and
  its openai one under ``OpenAIChatModel``. Pydantic AI's own instrumentation stays off (the
  driver never calls ``Agent.instrument_all`` and passes no ``instrument=``; OpenLIT does not
  turn it on).
- ``run_ag2`` (``openlit-ag2``): ``fw_ag2``'s agents on AG2 Classic (``fw_ag2.run_classic``:
  ``ConversableAgent`` pairs, the API OpenLIT's ag2 instrumentor wraps; it records nothing of
  AG2 1.x's ``ag2.Agent``); OpenLIT's ag2 and openai instrumentors.
- ``run_haystack`` (``openlit-haystack``): ``fw_haystack``'s agents (the research agent as a
  ``ComponentTool`` for ``g_handoff``) inside the application's ``agent_run`` span, as for
  ``haystack-openllmetry``: OpenLIT's haystack instrumentor wraps pipelines and components
  (the generator's runs), not the ``Agent``; its openai one records the requests.
- ``run_dspy`` (``openlit-dspy``): ``fw_dspy``'s ``ReAct`` programs (no ``g_handoff``) inside
  the application's ``agent_run`` span, on ``dspy.LM(engine="litellm")``: OpenLIT has no DSPy
  instrumentor, and DSPy 3.4's default engine talks HTTP through its own vendored client,
  which no OpenLIT instrumentor sees (the run records nothing), so the model calls go through
  LiteLLM, which OpenLIT's litellm instrumentor records.
- ``run_create_agent`` (``openlit-create-agent``): ``fw_langchain_create_agent``'s LangChain 1.x
  ``create_agent`` agents (the research agent's graph run from a tool for ``g_handoff``);
  OpenLIT's langchain and langgraph instrumentors (``create_agent`` builds a LangGraph graph).
- ``run_strands`` (``openlit-strands``): ``fw_strands``'s agents (the research agent as a
  tool for ``g_handoff``); OpenLIT's strands instrumentor, a span processor enriching Strands'
  own spans, and its openai one under Strands' ``OpenAIModel``.
- ``run_agent_framework`` (``openlit-agent-framework``): ``fw_agent_framework``'s agents
  (``Agent.as_tool`` for ``g_handoff``); OpenLIT's agent_framework instrumentor, which turns
  the framework's own telemetry off and writes its own spans, and its openai one.
- ``run_claude_agent_sdk`` (``openlit-claude-agent-sdk``): ``fw_claude_agent_sdk``'s
  ``query()`` runs (an ``AgentDefinition`` sub-agent through Claude Code's ``Agent`` tool for
  ``g_handoff``); OpenLIT's claude_agent_sdk instrumentor.
- ``openlit-litellm`` and ``openlit-bedrock`` run the raw LiteLLM and boto3 Converse loops
  (``fw_litellm.run_openlit``, ``fw_bedrock.run_openlit``).
"""

from __future__ import annotations

from typing import Any

from scenarios import Scenario, Tools


def run_langgraph(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The LangGraph ReAct agent (or swarm) under ``openlit.init()``."""
    from fw_langgraph import _run
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    _run(scenario, tools, executed)


def run_crewai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The CrewAI crew under ``openlit.init()``."""
    from fw_crewai import run_crew
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    run_crew(scenario, tools, executed)


def run_llamaindex(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The LlamaIndex agents under ``openlit.init()``."""
    import asyncio

    from fw_llamaindex import _run
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    asyncio.run(_run(scenario, tools, executed))


def run_smolagents(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The smolagents ``ToolCallingAgent`` under ``openlit.init()``."""
    from fw_openai_agents import init_openlit
    from fw_smolagents import run_tool_calling

    init_openlit(tracer_provider, logger_provider)
    run_tool_calling(scenario, tools, executed)


def run_agno(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Agno agents (or team) under ``openlit.init()``."""
    from fw_agno import run_agents
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    run_agents(scenario, tools, executed)


def run_google_adk(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Google ADK agents under ``openlit.init()`` (``fw_adk.run`` points ADK's own tracing
    at the same providers, as an application using both would). LiteLLM's bundled cost map
    is chosen before ``openlit.init()`` imports LiteLLM: at import it would otherwise fetch
    the map from GitHub."""
    import os

    from fw_adk import run
    from fw_openai_agents import init_openlit

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    init_openlit(tracer_provider, logger_provider)
    run(scenario, tracer_provider, logger_provider, tools, executed)


def run_pydantic_ai(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Pydantic AI agents under ``openlit.init()``, with Pydantic AI's own instrumentation
    left off so every span is OpenLIT's."""
    from fw_openai_agents import init_openlit
    from fw_pydantic_ai import _run

    init_openlit(tracer_provider, logger_provider)
    _run(scenario, tools, executed)


def run_ag2(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The AG2 Classic agents under ``openlit.init()``."""
    from fw_ag2 import run_classic
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    run_classic(scenario, tools, executed)


def run_haystack(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Haystack agents under ``openlit.init()``, in the application's own span."""
    from fw_haystack import run_in_app_span
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    run_in_app_span(scenario, tracer_provider, tools, executed)


def run_dspy(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The DSPy ``ReAct`` program on LiteLLM under ``openlit.init()``, in the application's
    own span (nothing else would hold its model calls together). LiteLLM's bundled cost map
    is chosen before ``openlit.init()`` imports LiteLLM, which would otherwise fetch it."""
    import os

    from fw_dspy import run_react
    from fw_openai_agents import init_openlit

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    init_openlit(tracer_provider, logger_provider)
    with tracer_provider.get_tracer("capture.app").start_as_current_span("agent_run"):
        run_react(scenario, tools, executed, engine="litellm")


def run_create_agent(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The LangChain 1.x ``create_agent`` agents under ``openlit.init()``."""
    from fw_langchain_create_agent import _run
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    _run(scenario, tools, executed)


def run_strands(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Strands agents under ``openlit.init()``: OpenLIT's strands instrumentor is a span
    processor it puts first on the global provider, enriching Strands' own spans in place
    (Strands' tracing stays on, default conventions); its openai one records the requests of
    Strands' ``OpenAIModel``."""
    from fw_openai_agents import init_openlit
    from fw_strands import run_agent

    init_openlit(tracer_provider, logger_provider)
    run_agent(scenario, tools, executed)


def run_agent_framework(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Microsoft Agent Framework agents under ``openlit.init()``: OpenLIT's
    agent_framework instrumentor turns the framework's own telemetry off and writes its own
    ``invoke_agent`` / ``execute_tool`` spans; its openai one records the requests of
    ``OpenAIChatCompletionClient``."""
    from fw_agent_framework import run
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    run(scenario, tracer_provider, logger_provider, tools, executed)


def run_claude_agent_sdk(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The Claude Agent SDK's ``query()`` (``fw_claude_agent_sdk``: the Claude Code CLI the
    wheel bundles, on the scripted Anthropic server) under ``openlit.init()``: OpenLIT's
    claude_agent_sdk instrumentor wraps ``query()`` and writes ``invoke_agent`` and
    ``execute_tool`` spans from the messages the CLI streams back."""
    import asyncio

    from fw_claude_agent_sdk import _query
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    asyncio.run(_query(scenario, tools, executed))
