"""Frozen plain classes: the internal records a grade builds at import, without the methods
``dataclasses`` generates.

``@dataclass(frozen=True)`` writes the source of ``__init__``, ``__setattr__`` and
``__delattr__`` for each class and compiles it at every start (~2-3 M instructions a class);
a record nobody compares or prints needs none of them generated. A subclass declares
``__slots__`` and writes its ``__init__`` with ``set_field`` (``object.__setattr__``, as the
generated one does); assigning or deleting a field afterwards raises
``FrozenInstanceError``, as on a frozen dataclass, and a copy or pickle keeps its slots.
"""

from dataclasses import FrozenInstanceError
from typing import Any

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
