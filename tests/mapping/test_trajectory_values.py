"""A trajectory's own values around its steps (``map_trace``'s end, made by the compiled
core's ``build_trajectory``): the root's ids, name and service, the first named agent, the
orphans and the coverage, on real conventions (``otel-genai``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from otel_oracles._native import build_trajectory
from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "2" * 32
ROOT, AGENT, CHAT, ORPHAN = (c * 16 for c in "abcd")


def _span(span_id: str, parent: str, name: str, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, name, start_ns=1, end_ns=9, attributes=attrs,
        resource={"service.name": attrs.pop("service", "support-bot"), "host": "h1"},
    )  # fmt: skip


def _map(service: Any = "support-bot", orphan: bool = False) -> Trajectory:
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    spans = [
        _span(ROOT, "", "handle_request", service=service, route="/chat"),
        _span(AGENT, ROOT, "invoke_agent helper", **agent),
        _span(CHAT, AGENT, "chat gpt-4o-mini", **chat),
    ]
    if orphan:
        spans.append(_span(ORPHAN, "e" * 16, "lost child"))
    return map_trace(build_trace(TRACE, spans), load_conventions())


def test_the_trajectory_names_its_root_service_and_first_agent() -> None:
    t = _map()
    assert (t.trace_id, t.root_span_id, t.root_name) == (TRACE, ROOT, "handle_request")
    assert (t.service_name, t.agent_name, t.span_count) == ("support-bot", "helper", 3)
    assert t.resource == {"service.name": "support-bot", "host": "h1"}
    assert t.root_attributes == {"route": "/chat"}
    assert type(t.resource) is dict and type(t.root_attributes) is dict
    assert [s.kind for s in t.steps] == [StepKind.AGENT, StepKind.GENERATION]
    assert t.orphan_spans == [] and t.unmapped_spans == {}
    assert t.conventions == {"otel-genai": 2, "(run wrapper)": 1}
    assert t == Trajectory(**t.model_dump()), "the values validation would give"


def test_a_service_name_that_is_no_text_is_none() -> None:
    t = _map(service=7)
    assert t.service_name is None and t.resource["service.name"] == 7


def test_a_read_only_resource_is_copied_into_a_plain_dict() -> None:
    spans = [
        SpanRecord(TRACE, ROOT, "", "app", start_ns=1, end_ns=2,
                   resource=MappingProxyType({"service.name": "svc"})),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    assert type(t.resource) is dict and t.resource == {"service.name": "svc"}
    assert t.service_name == "svc" and t.agent_name is None


def test_orphans_are_listed_by_span_id() -> None:
    t = _map(orphan=True)
    assert t.orphan_spans == [ORPHAN]
    assert t.unmapped_spans == {"lost child": 1}


def test_the_core_makes_the_record_from_normalized_would() -> None:
    t = _map(orphan=True)
    assert type(t) is Trajectory and list(t.__dict__) == list(Trajectory.model_fields)
    given = {name: value for name, value in t.__dict__.items() if name != "source"}
    again = Trajectory.from_normalized(given)
    assert list(t.__dict__.items()) == list(again.__dict__.items())
    assert t.source is None and t.orphan_spans is given["orphan_spans"]


def test_a_class_with_its_own_from_normalized_makes_its_records() -> None:
    made: list[str] = []

    class Traced(Trajectory):
        @classmethod
        def from_normalized(cls, values: Mapping[str, Any]) -> Traced:
            made.append(str(values["trace_id"]))
            return super().from_normalized(values)

    trace = build_trace(TRACE, [_span(ROOT, "", "app")])
    t = build_trajectory(Traced, StepKind.AGENT, trace, [], {}, {}, (), ((), ()))
    assert type(t) is Traced and made == [TRACE]
    assert (t.root_name, t.service_name, t.span_count) == ("app", "support-bot", 1)
    assert type(_map()) is Trajectory, "the mapper's class is still made by the core"


def test_a_class_the_core_cannot_mold_is_checked_once() -> None:
    """The core checks each class it is given once (``TrajectoryMold``: its record made
    from a copy of the field defaults) and keeps the answer, a refusal too: a class with
    its own ``from_normalized`` is refused, and not looked at again for the next trace."""
    looked: list[str] = []

    class Looked(type):
        def __getattribute__(cls, name: str) -> Any:
            looked.append(name)
            return super().__getattribute__(name)

    class Traced(Trajectory, metaclass=Looked):
        @classmethod
        def from_normalized(cls, values: Mapping[str, Any]) -> Traced:
            return super().from_normalized(values)

    trace = build_trace(TRACE, [_span(ROOT, "", "app")])
    made = [build_trajectory(Traced, StepKind.AGENT, trace, [], {}, {}, (), ((), ()))]
    checked = looked.count("__dictoffset__")
    made.append(build_trajectory(Traced, StepKind.AGENT, trace, [], {}, {}, (), ((), ())))
    assert checked == 1 and looked.count("__dictoffset__") == 1
    assert [type(t) for t in made] == [Traced, Traced] and made[0] == made[1]
