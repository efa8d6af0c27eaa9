"""A small support agent built with pydantic-ai, the system under test of this example suite.

It answers a customer question from a document search service reached over HTTP (its base
URL is configuration, so a test can point it at a failing stand-in), cites the documents it
used, retries a failed search once, and says so when search is unavailable. Its model here
is pydantic-ai's ``FunctionModel`` with a scripted policy, so the suite runs offline and
deterministically; in production the same agent gets a real model.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

SEARCH_TIMEOUT_S = 0.5


@dataclass
class SearchService:
    """Where the document search lives."""

    base_url: str


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The model's policy: search first; after a failed search, search once more; then
    answer from what was found, citing it, or disclose that search was unavailable."""
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    # A tool's ModelRetry comes back as a retry prompt (or, in newer releases, as a tool
    # return whose outcome says it failed).
    returned = [p for p in parts if isinstance(p, ToolReturnPart) and not _failed(p)]
    failed = [p for p in parts if isinstance(p, RetryPromptPart) or _failed(p)]
    searches = sum(
        1
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    )
    if returned:
        docs = returned[0].content
        if docs:
            cited = ", ".join(f"[{d['id']}]" for d in docs)
            return ModelResponse(parts=[TextPart(f"{docs[0]['text']} {cited}")])
        return ModelResponse(parts=[TextPart(_DEGRADED)])
    if failed and searches >= 2:
        return ModelResponse(parts=[TextPart(_DEGRADED)])
    question = str(messages[0].parts[-1].content) if isinstance(messages[0], ModelRequest) else ""
    return ModelResponse(
        parts=[ToolCallPart("search_docs", {"query": question}, tool_call_id=f"call_{searches}")]
    )


def _failed(part: object) -> bool:
    return isinstance(part, ToolReturnPart) and getattr(part, "outcome", "success") != "success"


_DEGRADED = (
    "Document search is unavailable right now (degraded), so I cannot cite our policy. "
    "Please try again later."
)

agent = Agent(
    FunctionModel(scripted_model),
    name="support_agent",
    deps_type=SearchService,
    instructions="Answer from the documents search_docs returns and cite their ids.",
)


@agent.tool(retries=3)
def search_docs(ctx: RunContext[SearchService], query: str) -> list[dict[str, str]]:
    """Search the knowledge base and return matching documents."""
    request = urllib.request.Request(
        f"{ctx.deps.base_url}/search",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=SEARCH_TIMEOUT_S) as response:
            return list(json.load(response)["results"])
    except (TimeoutError, urllib.error.URLError, ValueError, KeyError) as exc:
        raise ModelRetry(f"search failed: {type(exc).__name__}") from exc


def answer(question: str, search_url: str) -> str:
    """Run the agent on one question."""
    return agent.run_sync(question, deps=SearchService(search_url)).output
