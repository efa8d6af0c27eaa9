"""Steps and trajectories that the mapping builds without validation (``from_normalized``)
are exactly what validation builds from the same values: on every captured real trace, and
for the default-factory fields that must never be shared between two steps. And the frozen
records (``model/_record.py``) keep the pydantic model API their callers and plug-ins use:
validation errors, dumps, copies, equality, nesting."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model._record import Record
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
FILES = sorted(TRACES.glob("*/*.otlp.json"))


@pytest.fixture(scope="module")
def trajectories() -> list[Trajectory]:
    conventions = load_conventions()
    return [map_trace(t, conventions) for t in read_traces([str(f) for f in FILES], [])]


def test_every_mapped_step_equals_its_validated_twin(trajectories: list[Trajectory]) -> None:
    steps = [s for t in trajectories for s in t.steps]
    assert len(steps) > 1000, "the captured traces map to many steps"
    for step in steps:
        twin = Step(**vars(step))
        assert step == twin, f"step {step.index} of {step.source}: differs once validated"
        assert list(vars(step)) == list(Step.model_fields), "fields in declared order"
        assert step.model_dump() == twin.model_dump()


def test_every_mapped_steps_source_is_what_validation_makes(
    trajectories: list[Trajectory],
) -> None:
    """The builder sets a ``SpanRef``'s two fields one by one (``step.rs``, ``source``), not
    as a ``__dict__`` of its own: what it shows (``vars()``, in order), compares, hashes,
    dumps and pickles as is a validated record's."""
    sources = [s.source for t in trajectories for s in t.steps if s.source is not None]
    assert len(sources) > 1000
    for ref in sources:
        twin = SpanRef(trace_id=ref.trace_id, span_id=ref.span_id)
        assert type(ref) is SpanRef and ref == twin and hash(ref) == hash(twin)
        assert list(vars(ref).items()) == list(vars(twin).items())
        assert ref.model_dump() == twin.model_dump() and repr(ref) == repr(twin)
        assert pickle.loads(pickle.dumps(ref)) == twin


def test_every_mapped_trajectory_equals_its_validated_twin(
    trajectories: list[Trajectory],
) -> None:
    for trajectory in trajectories:
        twin = Trajectory(**vars(trajectory))
        assert trajectory == twin, f"trace {trajectory.trace_id}: differs once validated"


def test_normalized_steps_keep_defaults_and_share_no_mutable_default() -> None:
    first = Step.from_normalized({"index": 0, "kind": StepKind.TOOL_CALL, "tool": "search"})
    second = Step.from_normalized({"index": 1, "kind": StepKind.GENERATION})
    assert first == Step(index=0, kind=StepKind.TOOL_CALL, tool="search")
    assert (first.status, first.redacted, first.synthesized) == ("unset", (), False)
    assert first.attributes == {} and first.attributes is not second.attributes
    empty = [Trajectory.from_normalized({"steps": []}) for _ in range(2)]
    assert empty[0].orphan_spans is not empty[1].orphan_spans
    assert empty[0].unmapped_spans is not empty[1].unmapped_spans


def test_normalized_values_must_name_the_required_fields_and_no_other() -> None:
    with pytest.raises(TypeError, match=r"missing \['index'\]"):
        Step.from_normalized({"kind": StepKind.OTHER})
    with pytest.raises(TypeError, match=r"unknown fields \['tol'\]"):
        Step.from_normalized({"index": 0, "kind": StepKind.OTHER, "tol": "x"})
    with pytest.raises(TypeError, match="unknown fields"):
        Step(index=0, kind=StepKind.OTHER).model_copy(update={"tol": "x"})


def test_normalized_steps_stay_frozen() -> None:
    step = Step.from_normalized({"index": 0, "kind": StepKind.OTHER})
    with pytest.raises(ValidationError, match="frozen"):
        step.index = 1  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        del step.tool
    assert step.index == 0 and step.tool is None


class _ModelStep(BaseModel):
    """``Step``'s fields as a pydantic model, to hold the records to what a model does."""

    model_config = {"frozen": True, "extra": "forbid", "title": "Step"}
    index: int
    kind: StepKind
    tool: str | None = None
    status: Literal["ok", "error", "unset"] = "unset"
    redacted: tuple[str, ...] = ()
    source: SpanRef | None = None


@pytest.mark.parametrize(
    "values",
    [
        {"index": "x", "kind": "tool_call"},
        {"kind": "nope"},
        {"index": 0, "kind": "other", "tol": "misspelt"},
        {"index": 0, "kind": "other", "status": "fine"},
        {"index": 0, "kind": "other", "source": {"trace_id": "t"}},
        {"index": 0, "kind": "other", "redacted": "tool"},
    ],
)
def test_bad_values_raise_what_a_model_raises(values: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as record_error:
        Step(**values)
    with pytest.raises(ValidationError) as model_error:
        _ModelStep(**values)
    assert record_error.value.title == "Step"
    assert record_error.value.errors() == model_error.value.errors()


def test_validation_converts_as_a_model_does() -> None:
    values: dict[str, Any] = {"index": "3", "kind": "command", "redacted": ["tool"]}
    values["source"] = {"trace_id": "t", "span_id": "s"}
    step, model = Step(**values), _ModelStep(**values)
    assert (step.index, step.kind, step.redacted) == (model.index, model.kind, model.redacted)
    assert step.source == SpanRef(trace_id="t", span_id="s")
    arguments = {"cmd": "ls"}
    assert Step(index=0, kind=StepKind.COMMAND, arguments=arguments).arguments is not arguments


def test_dumps_and_copies_are_a_models() -> None:
    ref = SpanRef(trace_id="t", span_id="s")
    step = Step(index=0, kind=StepKind.TOOL_CALL, tool="x", source=ref, redacted=("tool",))
    dumped = step.model_dump(mode="json", exclude_none=True)
    assert dumped == {
        "index": 0,
        "kind": "tool_call",
        "tool": "x",
        "status": "unset",
        "source": {"trace_id": "t", "span_id": "s"},
        "synthesized": False,
        "redacted": ["tool"],
        "attributes": {},
    }
    assert step.model_dump()["kind"] is StepKind.TOOL_CALL
    assert step.model_dump(exclude={"source": {"trace_id"}})["source"] == {"span_id": "s"}
    trajectory = Trajectory(steps=[step])
    nested = trajectory.model_dump(mode="json", exclude={"steps": {"__all__": {"raw"}}})
    assert "raw" not in nested["steps"][0] and nested["steps"][0]["kind"] == "tool_call"
    assert Trajectory.model_validate(trajectory.model_dump()) == trajectory
    assert '"kind":"tool_call"' in trajectory.model_dump_json()
    changed = step.model_copy(update={"tool": "y"})
    assert (changed.tool, step.tool, changed.source) == ("y", "x", ref)
    assert step.model_copy(deep=True).source is not ref
    for twin in (copy.copy(step), copy.deepcopy(step), pickle.loads(pickle.dumps(step))):
        assert twin == step and type(twin) is Step
    assert step != step.model_copy(update={"index": 1}) and step != dict(step)
    assert hash(ref) == hash(SpanRef(trace_id="t", span_id="s"))


def test_a_record_in_a_models_any_field_dumps_as_its_fields() -> None:
    class Details(BaseModel):
        details: Any

    step = Step(index=2, kind=StepKind.OTHER)
    dumped = Details(details={"steps": [step]}).model_dump(mode="json")
    assert dumped["details"]["steps"][0] == step.model_dump(mode="json")
    assert Trajectory.model_json_schema()["properties"]["steps"]["items"] == {
        "$ref": "#/$defs/Step"
    }


def _step_builder(
    step: type, field_types: dict[str, Any] | None = None, span_ref: type = SpanRef
) -> Any:
    """A ``StepBuilder`` made as the mapper makes its own (``_mapper._STEPS``), with another
    step class, field table or source class."""
    from otel_oracles._native import StepBuilder
    from otel_oracles.mapping import _mapper
    from otel_oracles.mapping.parsers.scalars import parse_string
    from otel_oracles.model.step import COMMAND_KEYS, CONTENT_KEYS, PATH_KEYS, normalize_path

    types = {name: None if kind is object else kind for name, kind in _mapper._FIELD_TYPES.items()}
    return StepBuilder(
        step,
        span_ref,
        types if field_types is None else field_types,
        parse_string,
        StepKind,
        (_mapper._tool_class, normalize_path, PATH_KEYS, CONTENT_KEYS, COMMAND_KEYS),
    )


def test_the_step_builder_refuses_records_it_cannot_make_as_object_new_does() -> None:
    """The core allocates each record itself and sets its ``__dict__`` (``step.rs``,
    ``StepBuilder::record``): a class with a ``__new__`` of its own, or whose instances have
    no ``__dict__``, would come out wrong, so the builder refuses it when made."""

    class OwnNew(Step):
        def __new__(cls, **values: Any) -> OwnNew:
            return super().__new__(cls)

    class Slotted:
        __slots__ = ()
        _template = Step._template

    _step_builder(Step)  # the mapper's own classes are accepted
    for cls in (OwnNew, Slotted):
        with pytest.raises(TypeError, match=r"object\.__new__ and an instance __dict__"):
            _step_builder(cls)


def test_the_step_builder_refuses_a_span_ref_of_other_fields() -> None:
    """The builder sets a ``SpanRef``'s ``trace_id`` and ``span_id`` itself, in that order:
    a class with other fields, or in another order, would come out wrong."""

    class Longer(SpanRef):
        kind: str = ""

    class Reordered(Record):
        span_id: str
        trace_id: str

    for cls in (Longer, Reordered):
        with pytest.raises(ValueError, match="SpanRef fields"):
            _step_builder(Step, span_ref=cls)


def test_the_step_builder_refuses_a_draft_field_whose_default_is_not_none() -> None:
    """A built step leaves out a draft field whose value is ``None`` (its default is already
    in place): a field with another default would keep it instead of ``None``."""
    with pytest.raises(ValueError, match="draft field status has no default of None"):
        _step_builder(Step, {"tool": str, "status": str})


def _built(builder: Any) -> Any:
    """A well-typed tool call step made by ``builder.build``."""
    return builder.build(
        0,
        StepKind.TOOL_CALL,
        {"tool": "search"},
        "ok",
        None,
        False,
        set(),
        {},
        "c",
        "t",
        None,
        None,
        None,
    )


def test_a_built_step_keeps_its_dict_as_a_validated_one_does() -> None:
    """The builder allocates a step with the class's ``tp_alloc`` and sets its ``__dict__``
    (``step.rs``, ``dict_record``), skipping the inline attribute values ``object.__new__``
    prepares: the record reads, shows and takes an attribute through that very dict."""
    step = _built(_step_builder(Step))
    assert type(step) is Step and step.tool == "search" and step.index == 0
    assert step.__dict__ is vars(step) and list(vars(step)) == list(Step.model_fields)
    object.__setattr__(step, "note", 1)
    assert vars(step)["note"] == 1 and step.note == 1
    del vars(step)["note"]
    assert step == Step(**vars(step)) and pickle.loads(pickle.dumps(step)) == step


def test_the_step_builder_refuses_an_abstract_step_class_as_object_new_does() -> None:
    """A class made abstract after the builder took it is still refused by
    ``object.__new__``'s own check, as validation would refuse it."""

    class Later(Step):
        pass

    builder = _step_builder(Later)
    Later.__abstractmethods__ = frozenset({"missing"})  # type: ignore[misc]
    with pytest.raises(TypeError, match="abstract"):
        _built(builder)
    with pytest.raises(TypeError, match="abstract"):
        Later(**vars(_built(_step_builder(Step))))
