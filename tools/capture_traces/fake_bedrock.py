"""A scripted Amazon Bedrock Runtime server on 127.0.0.1 (ephemeral port): the Converse API.

``POST /model/{modelId}/converse`` answers as Bedrock does: the scenario's next turn (chosen by
how many assistant messages the request already holds, as in ``fake_openai.py``) comes back as
``toolUse`` content blocks with ``stopReason: tool_use``, or as one ``text`` block with
``stopReason: end_turn``, with ``usage`` token counts. The real ``boto3`` client (pointed here
with ``endpoint_url`` and dummy credentials; the SigV4 signature is not checked) and its real
instrumentation run unchanged while the ground truth stays the script. A turn the scenario
gives reasoning (``Scenario.reasoning``) starts with a ``reasoningContent`` block (its
``reasoningText`` text and signature), as Claude models on Bedrock answer with reasoning on.
Non-streaming only.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from scenarios import Scenario
from scripted_server import Reply, ScriptedServer

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def converse(scenario: Scenario, request: dict[str, Any]) -> dict[str, Any]:
    """The scripted Converse response to one request."""
    messages = request.get("messages", [])
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    step = scenario.turns[min(turn, len(scenario.turns) - 1)]
    content: list[dict[str, Any]]
    if isinstance(step, str):
        content = [{"text": step}]
        cut = scenario.cut_of(step)  # the token limit, or a guardrail / filter stopping it
        stop_reason = {"length": "max_tokens", "content_filter": "content_filtered"}.get(
            cut or "", "end_turn"
        )
    else:
        content = [
            {"toolUse": {"toolUseId": f"tooluse_{turn:02d}{j:02d}", "name": name, "input": args}}
            for j, (name, args) in enumerate(step)
        ]
        stop_reason = "tool_use"
    reasoning = scenario.reasoning_of(turn)
    if reasoning is not None:  # a ``reasoningContent`` block (text and signature) comes first
        content.insert(0, {"reasoningContent": {"reasoningText": {
            "text": reasoning, "signature": f"sig-{scenario.name}-{turn}"}}})  # fmt: skip
    input_tokens = max(1, len(json.dumps([request.get("system"), messages])) // 4)
    output_tokens = max(1, len(json.dumps(content)) // 4)
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": {
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens,
        },
        "metrics": {"latencyMs": 12},
    }


class FakeBedrock(ScriptedServer):
    """``with FakeBedrock(scenario) as endpoint_url:`` serves until the block ends."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.models: list[str] = []
        super().__init__(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> Reply | str:
        parts = unquote(path.split("?")[0]).strip("/").split("/")
        if len(parts) != 3 or parts[0] != "model" or parts[2] != "converse":
            return "only /model/{modelId}/converse is scripted"
        self.models.append(parts[1])
        return Reply(
            converse(self.scenario, body), headers={"x-amzn-RequestId": f"req-{self.scenario.name}"}
        )
