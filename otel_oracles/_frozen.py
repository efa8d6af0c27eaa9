"""Frozen plain classes: the internal records a grade builds at import, without the methods
``dataclasses`` generates.

``@dataclass(frozen=True)`` writes the source of ``__init__``, ``__setattr__`` and
``__delattr__`` for each class and compiles it at every start (~2-3 M instructions a class);
a record nobody compares or prints needs none of them generated. A subclass declares
``__slots__`` and writes its ``__init__`` with ``set_field`` (``object.__setattr__``, as the
generated one does); assigning or deleting a field afterwards raises
``FrozenInstanceError``, as on a frozen dataclass, and a copy or pickle keeps its slots.

A record that is compared, hashed or printed subclasses ``FrozenValue``, whose ``__eq__``,
``__hash__`` and ``__repr__`` are written once here, over the fields its ``__slots__`` name
(read by an ``attrgetter`` made when the class is), instead of generated per class: what a
frozen dataclass's do (equal when of the same class with equal fields, the hash of the
fields, ``Name(field=value, ...)``), with nothing compiled at start.

A mutable record compared or printed (a run's counts) subclasses ``Value``: the same
``__eq__`` and ``__repr__``, no hash (a mutable dataclass's ``__hash__`` is ``None``), its
fields assigned as usual; a copy or pickle keeps its slots (``object``'s reduce).
"""

from __future__ import annotations

import inspect
from dataclasses import FrozenInstanceError
from operator import attrgetter
from typing import Any, ClassVar

set_field = object.__setattr__
"""Sets a field in a frozen record's ``__init__``."""


class Frozen:
    """Base of a frozen record written as a plain slotted class (module docstring)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        """A copy's or unpickled record's slots (``object.__getstate__``'s form), set past
        the freeze."""
        for name, value in state[1].items():
            set_field(self, name, value)


class _ByFields:
    """Equality and repr by fields, as a dataclass's (``FrozenValue``, ``Value``): equal when
    of the same class with equal fields, shown as ``Name(field=value, ...)``. Defining
    ``__eq__`` alone leaves ``__hash__`` ``None``, as on a mutable dataclass. A subclass
    without ``__slots__`` of its own has its base's fields; one with them adds its own."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _read: ClassVar[attrgetter[Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__ or "__slots__" not in cls.__dict__:
            return  # the bases below, which have no fields; a subclass with its base's
        slots = cls.__dict__["__slots__"]
        names = tuple(n for n in inspect.get_annotations(cls) if n in slots)
        if len(names) != len(slots) or not cls._fields + names:
            raise TypeError(f"{cls.__qualname__}: each of its __slots__ is an annotated field")
        # A base's fields first, as a dataclass's subclass has them.
        cls._fields += names
        # Several names read as a tuple; one as the value itself, compared and hashed alike.
        cls._read = attrgetter(*cls._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._read(self) == self._read(other))
        return NotImplemented

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


class FrozenValue(Frozen, _ByFields):
    """A frozen record compared, hashed and shown by its fields, as a frozen dataclass is
    (module docstring). A subclass annotates its fields in order and names each in its
    ``__slots__`` (sorted, as the project's slots are)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._read(self))


class Value(_ByFields):
    """A mutable record compared and shown by its fields, as a dataclass with ``slots=True``
    is, and unhashable as it is (module docstring). A subclass annotates its fields in order,
    names each in its ``__slots__`` (sorted) and assigns them in its ``__init__``."""

    __slots__ = ()
