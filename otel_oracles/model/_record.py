"""Frozen records: the trajectory types (``SpanRef``, ``Step``, ``Trajectory``) as plain
classes, validated by pydantic only where a value comes from outside.

Why not ``pydantic.BaseModel``: a model class defines ``__getattr__``, so CPython cannot
specialise attribute reads on its instances (about 25 ns a read against 6 for a plain
object), and the checks read step fields millions of times a run; and a model cannot be
built from values already of their fields' types without walking its fields in Python
(``model_construct``) or copying a blank (``model_copy``), both several µs a step. A record
keeps its field values in its instance ``__dict__`` (which the core's scan-text reader
reads, ``native/python/src/scan.rs``), so a read is a plain instance attribute read and the
mapping stage's ``from_normalized`` is one dict merge.

What stays pydantic's: ``Record(**values)`` validates ``values`` with a pydantic
``TypeAdapter`` over a ``TypedDict`` of the fields (so bad values raise the same
``ValidationError`` a model raised, titled with the class name), ``model_dump`` /
``model_dump_json`` serialize through it, and ``__get_pydantic_core_schema__`` lets a
record be a field of another record or model (``Trajectory.steps: list[Step]``). The
adapters are built on first use: a ``grade`` run, whose steps all come from the mapping
stage, builds none.
"""

import copy
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import (
    Any,
    ClassVar,
    Literal,
    NotRequired,
    Required,
    Self,
    TypeVar,
    dataclass_transform,
    get_origin,
    get_type_hints,
)

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import core_schema
from typing_extensions import TypedDict

T = TypeVar("T")

_setattr = object.__setattr__
_new = object.__new__
_MISSING: Any = object()
"""A required field's place in a record's template (``from_normalized`` refuses it)."""


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(Field,))
class Record:
    """A frozen record. Fields are declared as annotated class attributes, with a default or
    ``Field(default_factory=...)`` when optional, in the order dumps and ``vars()`` show
    them. Build one with ``Cls(**values)`` (validated) or ``Cls.from_normalized(values)``
    (trusted)."""

    model_fields: ClassVar[dict[str, FieldInfo]]
    """Every field's name and pydantic ``FieldInfo`` (annotation, default), declared order."""
    _template: ClassVar[dict[str, Any]]
    _required: ClassVar[tuple[str, ...]]
    _factories: ClassVar[tuple[tuple[str, Callable[[], Any]], ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints = get_type_hints(cls)
        fields: dict[str, FieldInfo] = {}
        for base in reversed(cls.__mro__[1:]):  # a subclass keeps its bases' fields
            fields.update(base.__dict__.get("model_fields", {}))
        for name in inspect.get_annotations(cls):
            hint = hints[name]
            if get_origin(hint) is ClassVar:
                continue
            if name in cls.__dict__:
                fields[name] = FieldInfo.from_annotated_attribute(hint, cls.__dict__[name])
            else:
                fields[name] = FieldInfo.from_annotation(hint)
        for name in fields:
            if name in cls.__dict__:  # as on a model: ``Step.tool`` is no value
                delattr(cls, name)
        cls.model_fields = fields
        cls._template = {
            name: _MISSING if info.is_required() or info.default_factory else info.default
            for name, info in fields.items()
        }
        cls._required = tuple(name for name, info in fields.items() if info.is_required())
        cls._factories = tuple(
            (name, info.default_factory)  # type: ignore[misc]
            for name, info in fields.items()
            if info.default_factory is not None
        )

    def __init__(self, **values: Any) -> None:
        """Validate ``values`` as pydantic validates a model's fields."""
        valid = _fields_adapter(type(self)).validate_python(values)
        _setattr(self, "__dict__", type(self)._complete(valid))

    @classmethod
    def from_normalized(cls, values: Mapping[str, Any]) -> Self:
        """A record from values that already have exactly their fields' types, without
        validating them: for the mapping stage, which normalizes every value before it
        builds a step, and for ``model_copy``. Fields not given take their defaults (a
        fresh value from a default factory); a required field not given, or a name that is
        no field, is a ``TypeError``. Anything else goes through ``Cls(**values)``."""
        record = _new(cls)
        _setattr(record, "__dict__", cls._complete(values))
        return record

    @classmethod
    def _complete(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` over the defaults, in declared order, checked to name every required
        field and nothing else."""
        data = {**cls._template, **values}
        for name, make in cls._factories:
            if name not in values:
                data[name] = make()
        if len(data) != len(cls._template):
            raise cls._refused(data)
        for name in cls._required:
            if data[name] is _MISSING:
                raise cls._refused(data)
        return data

    @classmethod
    def _refused(cls, data: dict[str, Any]) -> TypeError:
        unknown = sorted(set(data) - set(cls._template))
        missing = [name for name in cls._required if data.get(name) is _MISSING]
        return TypeError(f"{cls.__name__}: unknown fields {unknown}, missing {missing}")

    # ---- what a pydantic model offers, for callers and plug-ins ------------------------------

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """A record of this class as is, or one validated from a mapping of its fields."""
        return _class_adapter(cls).validate_python(obj)  # type: ignore[no-any-return]

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return _class_adapter(cls).json_schema()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update``'s values, not validated (as ``BaseModel.model_copy``)."""
        values = copy.deepcopy(self.__dict__) if deep else self.__dict__
        return type(self).from_normalized({**values, **(update or {})})

    def model_dump(
        self,
        *,
        mode: Literal["json", "python"] = "python",
        include: Any = None,
        exclude: Any = None,
        exclude_none: bool = False,
        round_trip: bool = False,
        warnings: bool = True,
    ) -> dict[str, Any]:
        """The fields as ``BaseModel.model_dump`` dumps them (nested records as dicts)."""
        dumped: dict[str, Any] = _fields_adapter(type(self)).dump_python(
            self.__dict__,
            mode=mode,
            include=include,
            exclude=exclude,
            exclude_none=exclude_none,
            round_trip=round_trip,
            warnings=warnings,
        )
        return dumped

    def model_dump_json(
        self,
        *,
        indent: int | None = None,
        include: Any = None,
        exclude: Any = None,
        exclude_none: bool = False,
    ) -> str:
        return (
            _fields_adapter(type(self))
            .dump_json(
                self.__dict__,
                indent=indent,
                include=include,
                exclude=exclude,
                exclude_none=exclude_none,
            )
            .decode()
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: Callable[[Any], core_schema.CoreSchema]
    ) -> core_schema.CoreSchema:
        """A record as a field of a model or record: a record of this class is taken as is
        (as pydantic takes a model instance), a mapping is validated into one; dumped as
        its fields."""
        fields = handler(_fields_type(cls))

        def validate(value: Any, inner: core_schema.ValidatorFunctionWrapHandler) -> Any:
            if isinstance(value, cls):
                return value
            return cls.from_normalized(inner(value))

        return core_schema.no_info_wrap_validator_function(
            validate,
            fields,
            serialization=core_schema.wrap_serializer_function_ser_schema(
                _dump_values, schema=fields
            ),
        )

    __pydantic_serializer__: ClassVar[Any]  # set below the class: a lazy serializer

    # ---- a frozen value ------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise _frozen(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise _frozen(self, name, None)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return type(self) is type(other) and self.__dict__ == other.__dict__
        return NotImplemented

    def __hash__(self) -> int:
        """The hash of the field values (a ``TypeError`` when one is a list or dict)."""
        return hash(tuple(self.__dict__.values()))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        yield from self.__dict__.items()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._fields_repr(', ')})"

    def __str__(self) -> str:
        return self._fields_repr(" ")

    def _fields_repr(self, sep: str) -> str:
        return sep.join(f"{name}={value!r}" for name, value in self.__dict__.items())


class _LazySerializer:
    """``Record.__pydantic_serializer__``: pydantic dumps a value it finds in an ``Any`` field
    (an oracle's ``details``, say) with its class's ``__pydantic_serializer__``, as it dumps
    a model there; built on first use."""

    def __get__(self, record: Record | None, owner: type[Record]) -> Any:
        return _class_adapter(owner).serializer


Record.__pydantic_serializer__ = _LazySerializer()


def _dump_values(record: Record, dump: core_schema.SerializerFunctionWrapHandler) -> Any:
    """A nested record dumped as its fields (``include`` / ``exclude`` apply to them)."""
    return dump(record.__dict__)


def _frozen(record: Record, name: str, value: Any) -> ValidationError:
    """What assigning to a frozen model's field raises."""
    return ValidationError.from_exception_data(
        type(record).__name__, [{"type": "frozen_instance", "loc": (name,), "input": value}]
    )


def _per_class(build: Callable[[type[Record]], T]) -> Callable[[type[Record]], T]:
    """``build(cls)`` made once per record class, on first use."""
    made: dict[type[Record], T] = {}

    @functools.wraps(build)
    def get(cls: type[Record]) -> T:
        try:
            return made[cls]
        except KeyError:
            made[cls] = value = build(cls)
            return value

    return get


_typed_dict: Any = TypedDict
"""``typing_extensions.TypedDict`` (which pydantic takes on Python 3.11), called with a
computed name and fields."""


@_per_class
def _fields_type(cls: type[Record]) -> Any:
    """A ``TypedDict`` of ``cls``'s fields (extra keys forbidden), which pydantic validates
    and dumps as it does a model with those fields."""
    items = {
        name: (Required if info.is_required() else NotRequired)[info.rebuild_annotation()]
        for name, info in cls.model_fields.items()
    }
    fields_type = _typed_dict(cls.__name__, items)
    fields_type.__pydantic_config__ = ConfigDict(extra="forbid")
    fields_type.__module__ = cls.__module__
    return fields_type


@_per_class
def _fields_adapter(cls: type[Record]) -> TypeAdapter[dict[str, Any]]:
    return TypeAdapter(_fields_type(cls))


@_per_class
def _class_adapter(cls: type[Record]) -> TypeAdapter[Any]:
    return TypeAdapter(cls)
