"""What model calls' messages say, read by the core (``native/python/src/evidence/messages.rs``
and ``StepView.final_output`` / ``StepView.fragment``): the answers are those of the Python
definitions they replaced.

The ``_spec_*`` functions are those definitions, kept here as the specification. The
messages are made at random to reach every branch of them: roles of the model and others
(and none, and no ``str``), ``parts`` and ``content`` as texts, lists and other values,
parts of every type (and none), placeholders, names and ids that are empty, missing or no
``str``, ``dict`` subclasses and messages that are no ``dict``.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest

from otel_oracles.grade.evidence import (
    CUT_FINISH_REASONS,
    TOOL_CALL_FINISH_REASONS,
    Evidence,
    _history_ids,
    group_steps,
    is_placeholder,
    message_text,
    message_tool_names,
    messages_empty,
    unnamed_request,
)
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory


def _spec_part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return None if is_placeholder(part) else part
    if not isinstance(part, dict):
        return None
    kind = part.get("type", "text")
    if kind not in ("text", "output_text", "input_text"):
        return None
    for key in ("content", "text"):
        value = part.get(key)
        if isinstance(value, str) and not is_placeholder(value):
            return value
    return None


def _spec_message_text(message: Any) -> str | None:
    if isinstance(message, str):
        return None if is_placeholder(message) else message
    if not isinstance(message, dict):
        return None
    texts: list[str] = []
    for key in ("parts", "content"):
        value = message.get(key)
        if isinstance(value, str):
            if not is_placeholder(value):
                texts.append(value)
        elif isinstance(value, list):
            texts.extend(t for t in (_spec_part_text(p) for p in value) if t is not None)
    return "\n".join(texts) if texts else None


def _spec_assistant_text(messages: Any) -> str | None:
    if not messages:
        return None
    for message in reversed(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role in (None, "assistant", "model", "ai"):
            text = _spec_message_text(message)
            if text is not None:
                return text
    return None


def _spec_answer_text_parts(messages: Any) -> int:
    for message in reversed(messages or []):
        role = message.get("role") if isinstance(message, dict) else None
        if role in (None, "assistant", "model", "ai") and _spec_message_text(message) is not None:
            if isinstance(message, str):
                # The Python definition raised ``AttributeError`` here (``str.get``); the
                # core counts the one text such a message carries, as ``message_text`` reads.
                return 1
            count = 0
            for key in ("parts", "content"):
                value = message.get(key)
                if isinstance(value, str):
                    count += not is_placeholder(value)
                elif isinstance(value, list):
                    count += sum(1 for p in value if _spec_part_text(p) is not None)
            return count
    return 0


def _spec_tool_names(messages: Any) -> list[str]:
    names: list[str] = []
    for message in messages or []:
        if not isinstance(message, dict):
            continue
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                name = part.get("name")
                if isinstance(name, str) and name:
                    names.append(name)
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function")
            name = fn.get("name") if isinstance(fn, dict) else call.get("name")
            if isinstance(name, str) and name:
                names.append(name)
    return names


def _spec_messages_empty(messages: Any) -> bool:
    if not isinstance(messages, list):
        return False
    return not any(_spec_message_text(m) is not None or _spec_tool_names([m]) for m in messages)


def _spec_unnamed_request(messages: Any) -> bool:
    for message in messages or []:
        if not isinstance(message, dict):
            continue
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                name = part.get("name")
                if not (isinstance(name, str) and name):
                    return True
    return False


def _spec_call_ids(messages: Any) -> list[str]:
    ids: list[str] = []
    for m in messages or []:
        if not isinstance(m, dict):
            continue
        for part in m.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call" and part.get("id"):
                ids.append(str(part["id"]))
        for call in m.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id"):
                ids.append(str(call["id"]))
    return ids


class _Dict(dict[str, Any]):
    """A ``dict`` subclass: read through its own ``get``, as Python reads it."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, default)


_TEXTS = ["hello", "", "  ", "[REDACTED]", "two\nlines", "***", "é"]


def _text(rng: random.Random) -> Any:
    return rng.choice([*_TEXTS, None, 3])


def _part(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(_TEXTS)
    if roll < 0.2:
        return rng.choice([None, 7, ["x"]])
    kind = rng.choice(["text", "output_text", "input_text", "tool_call", "thinking", None, 1])
    part: dict[str, Any] = {} if kind is None else {"type": kind}
    for key in ("content", "text", "name", "id"):
        if rng.random() < 0.4:
            part[key] = rng.choice([*_TEXTS, None, 5, "call_1", "call_2", "search"])
    return (_Dict if rng.random() < 0.1 else dict)(part)


def _message(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(["plain", "", "<redacted>", 4, None])
    message: dict[str, Any] = {}
    if rng.random() < 0.8:
        message["role"] = rng.choice(["assistant", "model", "ai", "user", "tool", None, 2])
    for key in ("parts", "content"):
        roll = rng.random()
        if roll < 0.4:
            message[key] = [_part(rng) for _ in range(rng.randint(0, 3))]
        elif roll < 0.6:
            message[key] = _text(rng)
    if rng.random() < 0.3:
        calls = []
        for _ in range(rng.randint(0, 2)):
            call: dict[str, Any] = {"id": rng.choice(["call_3", "", None, 9])}
            if rng.random() < 0.6:
                call["function"] = rng.choice([{"name": rng.choice(["f", "", None])}, "f", None])
            else:
                call["name"] = rng.choice(["g", "", None, 1])
            calls.append(rng.choice([call, "x"]))
        message["tool_calls"] = calls if rng.random() < 0.9 else None
    return (_Dict if rng.random() < 0.1 else OrderedDict if rng.random() < 0.1 else dict)(message)


def _messages(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([None, "[REDACTED]", [], ()])
    return [_message(rng) for _ in range(rng.randint(1, 4))]


def _outcome(read: Callable[[Any], Any], value: Any) -> tuple[Any, type[Any] | None]:
    """What ``read(value)`` gives, or the type of the error it raises (a value Python
    cannot iterate, where it iterates it, is an error in both)."""
    try:
        return read(value), None
    except TypeError as error:
        return None, type(error)


def test_message_readings_are_the_python_definitions_they_replaced() -> None:
    rng = random.Random(2712)
    seen = {"text": 0, "names": 0, "empty": 0, "unnamed": 0, "raised": 0}
    for _ in range(20_000):
        messages = _messages(rng)
        for message in messages if isinstance(messages, list) else []:
            want = _spec_message_text(message)
            got = message_text(message)
            assert got == want and type(got) is type(want)
            seen["text"] += want is not None
        names = _outcome(message_tool_names, messages)
        assert names == _outcome(_spec_tool_names, messages)
        seen["names"] += bool(names[0])
        seen["raised"] += names[1] is not None
        empty = _outcome(messages_empty, messages)
        assert empty == _outcome(_spec_messages_empty, messages)
        seen["empty"] += empty[0] is True
        unnamed = _outcome(unnamed_request, messages)
        assert unnamed == _outcome(_spec_unnamed_request, messages)
        seen["unnamed"] += unnamed[0] is True
    assert min(seen.values()) > 500, seen


def _generation(index: int, messages: Any, **values: Any) -> Step:
    return Step.from_normalized(
        {"index": index, "kind": StepKind.GENERATION, "output_messages": messages, **values}
    )


def test_the_answer_text_and_its_parts_are_the_python_definitions_they_replaced() -> None:
    """The last model call's answer (``final_output``'s text, its parts counted under
    ``thoughts_unmarked``) and, when it has none, its agent's, read in the core's walk."""
    rng = random.Random(1812)
    texts = parts = 0
    for _ in range(5_000):
        messages = _messages(rng)
        thoughts = rng.random() < 0.5
        last = _generation(
            1, messages, attributes={"thoughts_unmarked": thoughts} if thoughts else {}
        )
        agent_messages = _messages(rng)
        agent = Step.from_normalized(
            {
                "index": 0,
                "kind": StepKind.AGENT,
                "output_messages": agent_messages,
                "result": rng.choice(["done", "", None, 5]),
            }
        )
        out = Evidence(Trajectory(trace_id="t", steps=[agent, last])).final_output()
        want_parts = _spec_answer_text_parts(messages) if thoughts else 0
        want = _spec_assistant_text(messages)
        if want_parts > 1:
            assert out.text is None and out.step is last
            assert f"its answer is {want_parts} text parts" in (out.missing or "")
            parts += 1
            continue
        if want is not None:
            assert (out.text, out.step) == (want, last)
            texts += 1
            continue
        want = _spec_assistant_text(agent_messages)
        if want is None and isinstance(agent.result, str) and not is_placeholder(agent.result):
            want = agent.result
        if want is not None:
            assert (out.text, out.step) == (want, agent)
            continue
        assert out.text is None and out.step is last and out.missing is not None
        absent = is_placeholder(messages)
        assert (
            "not captured:" in out.missing and "output messages not captured" in out.missing
        ) is absent
    assert texts > 1_000 and parts > 100, (texts, parts)


def test_the_cut_reason_is_the_first_that_says_so() -> None:
    for reasons, want in [
        (["stop", "MAX_TOKENS", "length"], "MAX_TOKENS"),
        (["Content_Filter"], "Content_Filter"),
        (["stop"], None),
    ]:
        last = _generation(0, [{"role": "assistant", "content": "partial"}], finish_reasons=reasons)
        out = Evidence(Trajectory(trace_id="t", steps=[last])).final_output()
        if want is None:
            assert out.text == "partial"
        else:
            assert out.text is None and f"(finish reason {want})" in (out.missing or "")
            assert CUT_FINISH_REASONS[want.lower()] in (out.missing or "")


def _spec_calls_outside(steps: list[Step]) -> list[str]:
    groups = group_steps(steps)
    referenced: dict[str, None] = {}
    for g in groups.generations:
        if not g.input_messages:
            continue
        requested, answered = _history_ids(g.input_messages)
        for i in [*requested, *answered]:
            referenced.setdefault(i, None)
    if not referenced:
        return []
    executors = [*groups.calls, *groups.handoffs]
    known = {s.call_id for s in executors if s.call_id}
    for g in groups.generations:
        known.update(_spec_call_ids(g.output_messages))
    unknown = [i for i in referenced if i not in known]
    anonymous = sum(1 for s in executors if not s.call_id)
    return unknown if len(unknown) > anonymous else []


def test_calls_outside_the_trace_are_the_python_definitions_they_replaced() -> None:
    """The call ids model input refers to that no step made (``StepView.fragment``'s first
    finding), with call ids of every kind in the output messages (the requests that make a
    call known) and executors with and without call ids."""
    rng = random.Random(1827)
    found = 0
    for _ in range(3_000):
        steps: list[Step] = []
        for i in range(rng.randint(1, 6)):
            kind = rng.choice([StepKind.GENERATION, StepKind.TOOL_CALL, StepKind.HANDOFF])
            values: dict[str, Any] = {"index": i, "kind": kind}
            if kind == StepKind.GENERATION:
                values["output_messages"] = _messages(rng)
                values["input_messages"] = rng.choice(
                    [
                        None,
                        [],
                        [
                            {
                                "role": "assistant",
                                "tool_calls": [{"id": rng.choice(["call_1", "call_3"])}],
                            }
                        ],
                        [{"role": "tool", "tool_call_id": rng.choice(["call_2", "call_9", 9])}],
                        [
                            {
                                "role": "assistant",
                                "parts": [
                                    {"type": "tool_call", "id": "search_1", "name": "search"}
                                ],
                            },
                            {
                                "role": "user",
                                "parts": [{"type": "tool_call_response", "id": "search_0"}],
                            },
                        ],
                    ]
                )
            else:
                values["call_id"] = rng.choice([None, "", "call_1", "call_2"])
            steps.append(Step.from_normalized(values))
        t = Trajectory(trace_id="t", steps=steps)
        view = group_steps(steps)
        want, raised = _outcome(_spec_calls_outside, steps)
        if raised is not None:
            with pytest.raises(raised):
                view.fragment(t.root_span_id, TOOL_CALL_FINISH_REASONS, _history_ids)
            continue
        got = view.fragment(t.root_span_id, TOOL_CALL_FINISH_REASONS, _history_ids)
        if want:
            assert got is not None and got[0] == "outside" and got[2] == want
            found += 1
        else:
            assert got is None or got[0] != "outside"
    assert found > 300, found


def test_a_root_model_call_without_executors_is_unanswered() -> None:
    """The root span a model call whose request no step runs: ``unanswered`` names its
    requests (from its output, else the synthesized calls after it); its input structure
    only: ``unstarted``."""
    root = SpanRef(trace_id="t", span_id="r")
    asked = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "search", "id": "c"}]}]
    steps = [
        _generation(0, asked, source=root, input_messages=[{"role": "user", "content": "q"}]),
    ]
    t = Trajectory(trace_id="t", steps=steps, root_span_id="r")
    found = group_steps(steps).fragment("r", TOOL_CALL_FINISH_REASONS, _history_ids)
    assert found is not None and found[0] == "unanswered" and found[1] is steps[0]
    assert found[2] == ["search"]
    assert "requested tool calls (search)" in (Evidence(t).fragment_gap() or "")
    quiet = [
        _generation(0, [{"role": "assistant", "content": "hi"}], source=root,
                    input_messages=[{"role": "user", "parts": [{"type": "text"}]}]),
    ]  # fmt: skip
    found = group_steps(quiet).fragment("r", TOOL_CALL_FINISH_REASONS, _history_ids)
    assert found is not None and found[0] == "unstarted" and found[1] is quiet[0]
    assert group_steps(quiet).fragment("other", TOOL_CALL_FINISH_REASONS, _history_ids) is None
