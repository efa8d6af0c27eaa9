"""Past a framework's turn limit the scripted OpenAI server answers the final turn.

``q_turn_limit``'s ground truth rests on it: a framework that stops at its own limit asks the
model for a final answer, either by offering no tools (smolagents, CrewAI) or by offering them
with ``tool_choice`` ``none`` (LiveKit Agents, ``max_tool_steps``). Either request must get the
script's last turn, the answer; a request still free to call tools must get the next search,
so the limit, not the fake, ends the run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# The capture tools are scripts next to each other, not a package: import them as capture.py does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

from fake_openai import completion
from scenarios import LIMIT_ANSWER, SCENARIOS, TOOL_SCHEMAS

SCENARIO = SCENARIOS["q_turn_limit"]
HISTORY = [{"role": "user", "content": "q"}] + [{"role": "assistant", "content": None}] * 4
"""Four model turns already answered: the script's fifth turn is another search."""


def reply(**request: Any) -> dict[str, Any]:
    message = completion(SCENARIO, {"messages": HISTORY, **request})["choices"][0]["message"]
    assert isinstance(message, dict)
    return message


def test_tools_offered_but_none_allowed_get_the_final_answer() -> None:
    message = reply(tools=TOOL_SCHEMAS, tool_choice="none")
    assert message["content"] == LIMIT_ANSWER and "tool_calls" not in message


def test_no_tools_offered_get_the_final_answer() -> None:
    assert reply()["content"] == LIMIT_ANSWER


def test_tools_allowed_get_the_next_scripted_search() -> None:
    for choice in ({}, {"tool_choice": "auto"}):
        message = reply(tools=TOOL_SCHEMAS, **choice)
        assert message["content"] is None
        assert [c["function"]["name"] for c in message["tool_calls"]] == ["search_docs"]


def test_other_scenarios_ignore_tool_choice_none() -> None:
    """Only a turn-limit scenario reads ``tool_choice``: elsewhere the script decides."""
    message = completion(
        SCENARIOS["a_happy"],
        {"messages": [{"role": "user", "content": "q"}], "tools": TOOL_SCHEMAS,
         "tool_choice": "none"},
    )["choices"][0]["message"]  # fmt: skip
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["search_docs"]
