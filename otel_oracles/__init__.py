"""otel-oracles: grade AI agent traces with deterministic oracles and failure budgets.

The curated public API lives here; anything not in ``__all__`` may change without notice.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from otel_oracles.errors import (
    ContractError,
    ConventionError,
    InputError,
    OtelOraclesError,
    PluginError,
    ReplayError,
)
from otel_oracles.grade import (
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
    grade,
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
    load_contract,
)

if TYPE_CHECKING:
    from otel_oracles.emit import Emitter, InMemoryEmitter


def __getattr__(name: str) -> Any:
    """Import the emit stage (which loads the OTel SDK and grpc) only when it is asked for,
    so ``import otel_oracles`` stays cheap for commands that never emit."""
    if name in ("Emitter", "InMemoryEmitter"):
        from otel_oracles import emit

        return getattr(emit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


try:
    __version__ = version("otel-oracles")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

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
