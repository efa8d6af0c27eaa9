"""The oracle seam: subclass ``OracleCheck``, declare ``oracle_type`` and a ``Params`` model,
decorate with ``@register_oracle``.

An oracle returns a ``Finding``; the evaluator turns it into an ``Outcome`` according to the
layer the contract put it in:

=============  ==================  =====================================================
finding        invariant layer     tolerance layer
=============  ==================  =====================================================
pass, used=0   pass                pass
pass, used>0   pass                tolerated (a budgeted exception, within budget)
fail           invariant_failure   budget_exhausted
fail, rule     invariant_failure   invariant_failure (the exception broke the tolerance's
                                   terms, e.g. a degraded answer that hid the degradation)
missing        missing_evidence    missing_evidence
raises         error               error
=============  ==================  =====================================================

So an oracle with a budget param (``max``, ``allowed``) reports ``used`` and fails only when
the budget is exceeded; the same class serves both layers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from otel_oracles.model.contract import Contract
    from otel_oracles.model.step import Trajectory


class OracleParams(BaseModel):
    """Base for every oracle's params: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class NoParams(OracleParams):
    """For oracles that take no params."""


@dataclass(frozen=True, slots=True)
class Finding:
    """What one oracle found.

    ``status`` is ``pass``, ``fail`` or ``missing`` (the evidence needed to judge is absent:
    the message must name what was missing and where). ``used`` counts budgeted exceptions
    seen (retries, a disclosed degradation). ``span_ids``/``step_indexes`` point at what
    caused the result, so it can be attached to that span. ``breach`` says what a ``fail``
    broke: ``budget`` (more exceptions than allowed) or ``rule`` (a condition no budget can
    buy, such as an undisclosed degradation); a tolerance reports a rule breach as an
    invariant failure, because spending budget is not permission to break its terms.
    """

    status: Literal["pass", "fail", "missing"]
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    span_ids: tuple[str, ...] = ()
    step_indexes: tuple[int, ...] = ()
    used: int = 0
    breach: Literal["budget", "rule"] = "budget"

    @classmethod
    def ok(cls, message: str, **kw: Any) -> Finding:
        return cls("pass", message, **kw)

    @classmethod
    def fail(cls, message: str, **kw: Any) -> Finding:
        return cls("fail", message, **kw)

    @classmethod
    def missing(cls, message: str, **kw: Any) -> Finding:
        return cls("missing", message, **kw)


@dataclass(slots=True)
class GradeContext:
    """Everything an oracle may look at. ``workspace`` is the replayed directory for
    contracts with an AgentBench workspace, else ``None``."""

    trajectory: Trajectory
    contract: Contract
    workspace: Path | None = None
    initial_workspace: dict[str, str] = field(default_factory=dict)


class OracleCheck(ABC):
    """Base class of every oracle type.

    Subclasses set ``oracle_type`` and ``Params`` and implement ``check``. ``evidence`` names
    the step fields the oracle needs (see ``otel_oracles.grade.evidence``); when a trace
    lacks them the evaluator reports ``missing_evidence`` without calling ``check``.
    ``check`` may raise: the evaluator turns that into an ``error`` result and runs the rest.
    """

    oracle_type: ClassVar[str]
    Params: ClassVar[type[OracleParams]] = NoParams
    evidence: ClassVar[frozenset[str]] = frozenset()
    summary: ClassVar[str] = ""
    """One line for ``otel-oracles oracles``; defaults to the docstring's first line."""

    def __init__(self, params: OracleParams) -> None:
        self.params = params

    @abstractmethod
    def check(self, ctx: GradeContext) -> Finding:
        """Judge one trajectory. Pure apart from ``ctx.workspace``; never mutates ``ctx``."""

    def required_evidence(self) -> frozenset[str]:
        """Evidence needed for these params (override when it depends on them)."""
        return self.evidence
