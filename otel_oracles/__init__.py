"""otel-oracles: grade AI agent traces with deterministic oracles and failure budgets.

The curated public API lives here; anything not in ``__all__`` may change without notice.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

from otel_oracles._lazy_names import lazy_names
from otel_oracles.errors import (
    ContractError,
    ConventionError,
    InputError,
    OtelOraclesError,
    PluginError,
    ReplayError,
)

if TYPE_CHECKING:
    from otel_oracles.emit import Emitter, InMemoryEmitter
    from otel_oracles.grade import (
        Finding,
        GradeContext,
        OracleCheck,
        OracleParams,
        grade,
        load_contract,
        register_oracle,
    )
    from otel_oracles.model import (
        Contract,
        OracleResult,
        Outcome,
        Step,
        StepKind,
        Trajectory,
        Verdict,
    )

    __version__: str

_LAZY: dict[str, str] = {
    **dict.fromkeys(["Emitter", "InMemoryEmitter"], "otel_oracles.emit"),
    **dict.fromkeys(
        [
            "Finding",
            "GradeContext",
            "OracleCheck",
            "OracleParams",
            "load_contract",
            "register_oracle",
        ],
        "otel_oracles.grade",
    ),
    **dict.fromkeys(
        [
            "Contract",
            "OracleResult",
            "Outcome",
            "Step",
            "StepKind",
            "Trajectory",
            "Verdict",
        ],
        "otel_oracles.model",
    ),
}
"""Public name -> the module it comes from. Each is imported on first use: every
``otel_oracles.*`` import runs this file first, pytest among them at every start-up (the
package's ``pytest11`` plug-in), and the stages it would load cost most of a second."""


_public = lazy_names(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("otel-oracles")
        except PackageNotFoundError:  # running from a source tree without installation
            return "0.0.0"
    return _public(name)


class _Package(types.ModuleType):
    """This package's module type: its public ``grade`` is the function. Importing the
    ``otel_oracles.grade`` subpackage binds the subpackage to the package's ``grade``
    attribute; the property keeps the function there (the subpackage stays in
    ``sys.modules``), as the eager ``from otel_oracles.grade import grade`` used to."""

    @property
    def grade(self) -> Any:
        return import_module("otel_oracles.grade").grade

    @grade.setter
    def grade(self, value: object) -> None:
        """The import system binding the subpackage: nothing to keep."""


sys.modules[__name__].__class__ = _Package

__all__ = [
    "Contract",
    "ContractError",
    "ConventionError",
    "Emitter",
    "Finding",
    "GradeContext",
    "InMemoryEmitter",
    "InputError",
    "OracleCheck",
    "OracleParams",
    "OracleResult",
    "OtelOraclesError",
    "Outcome",
    "PluginError",
    "ReplayError",
    "Step",
    "StepKind",
    "Trajectory",
    "Verdict",
    "__version__",
    "grade",
    "load_contract",
    "register_oracle",
]
