"""The compact ``budget:`` contract shorthand, as checks.

The shorthand exists because the most common failure budget fits on one line::

    budget: {max_tool_retries: 1, allow_degraded_answer: true, require_citation: true}

``parse_budget`` validates the block into a ``Budget``; ``Budget.checks`` gives the ordinary
checks it stands for (``tool_retries``, ``tool_errors``, ``degraded_answer`` tolerances, a
``citation_required`` invariant), each with its oracle's own params model already built. The
loader appends them to the contract's layers, so results, ``explain`` and the docs only ever
see the long form, and the contract document itself is never rewritten.

The params models come from their oracles' modules when a budget asks for them
(``Budget.checks``), not when this module is imported: the loader imports it for every
contract, and importing ``trace_tools`` and ``trace_answers`` (pydantic building each of
their params models) was ~47 M instructions of every ``grade`` whatever its contracts name
(docs/performance-history.md, "Start-up: only the oracle modules the contracts name").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from otel_oracles._frozen import Frozen, set_field
from otel_oracles.errors import ContractError
from otel_oracles.grade.oracles.base import OracleParams

BUDGET_KEYS: dict[str, str] = {
    "max_tool_retries": "int: tolerance tool_retries with max N",
    "max_tool_errors": "int: tolerance tool_errors with max N",
    "allow_degraded_answer": "bool: tolerance degraded_answer with allowed true/false",
    "degraded_disclosure": "regex: what a degraded answer must say (degraded_answer.must_disclose)",
    "require_citation": "bool: invariant citation_required (when true)",
    "citation_pattern": "regex: citation id pattern for citation_required (default doc-\\d+)",
}
"""Keys of the ``budget:`` shorthand and what each stands for (``otel-oracles schema``)."""


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class BudgetCheck(Frozen):
    """One check a budget key stands for: where it goes, its oracle type, its typed params
    and the ``why`` results show (naming the budget key)."""

    __slots__ = ("layer", "oracle_type", "params", "why")
    layer: Literal["invariants", "tolerances"]
    oracle_type: str
    params: OracleParams
    why: str

    def __init__(
        self,
        layer: Literal["invariants", "tolerances"],
        oracle_type: str,
        params: OracleParams,
        why: str,
    ) -> None:
        set_field(self, "layer", layer)
        set_field(self, "oracle_type", oracle_type)
        set_field(self, "params", params)
        set_field(self, "why", why)


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class Budget(Frozen):
    """A validated ``budget:`` block (``None`` = key not given)."""

    __slots__ = (
        "allow_degraded_answer",
        "citation_pattern",
        "degraded_disclosure",
        "max_tool_errors",
        "max_tool_retries",
        "require_citation",
        "source",
    )
    max_tool_retries: int | None
    max_tool_errors: int | None
    allow_degraded_answer: bool | None
    degraded_disclosure: str | None
    require_citation: bool | None
    citation_pattern: str | None
    source: str

    def __init__(
        self,
        max_tool_retries: int | None = None,
        max_tool_errors: int | None = None,
        allow_degraded_answer: bool | None = None,
        degraded_disclosure: str | None = None,
        require_citation: bool | None = None,
        citation_pattern: str | None = None,
        source: str = "",
    ) -> None:
        set_field(self, "max_tool_retries", max_tool_retries)
        set_field(self, "max_tool_errors", max_tool_errors)
        set_field(self, "allow_degraded_answer", allow_degraded_answer)
        set_field(self, "degraded_disclosure", degraded_disclosure)
        set_field(self, "require_citation", require_citation)
        set_field(self, "citation_pattern", citation_pattern)
        set_field(self, "source", source)

    def checks(self) -> list[BudgetCheck]:
        """The checks this budget stands for, in the order they follow the contract's own:
        tolerances (retries, errors, degraded answer), then the citation invariant. Raises
        ``ContractError`` naming the budget key when a regex it carries is invalid."""
        out: list[BudgetCheck] = []
        if self.max_tool_retries is not None:
            from otel_oracles.grade.oracles.trace_tools import ToolRetriesParams

            n = self.max_tool_retries
            params = ToolRetriesParams(max=n)
            out.append(
                BudgetCheck("tolerances", "tool_retries", params, f"budget: max_tool_retries {n}")
            )
        if self.max_tool_errors is not None:
            from otel_oracles.grade.oracles.trace_tools import ToolErrorsParams

            n = self.max_tool_errors
            params_e = ToolErrorsParams(max=n)
            out.append(
                BudgetCheck("tolerances", "tool_errors", params_e, f"budget: max_tool_errors {n}")
            )
        if self.allow_degraded_answer is not None or self.degraded_disclosure is not None:
            from otel_oracles.grade.oracles.trace_answers import DegradedAnswerParams

            allowed = True if self.allow_degraded_answer is None else self.allow_degraded_answer
            fields: dict[str, Any] = {"allowed": allowed}
            if self.degraded_disclosure is not None:
                fields["must_disclose"] = self.degraded_disclosure
            degraded = self._params(DegradedAnswerParams, fields, "degraded_disclosure")
            why = f"budget: allow_degraded_answer {str(allowed).lower()}"
            out.append(BudgetCheck("tolerances", "degraded_answer", degraded, why))
        if self.require_citation:
            from otel_oracles.grade.oracles.trace_answers import CitationRequiredParams

            fields = {} if self.citation_pattern is None else {"pattern": self.citation_pattern}
            cited = self._params(CitationRequiredParams, fields, "citation_pattern")
            why = "budget: require_citation true"
            out.append(BudgetCheck("invariants", "citation_required", cited, why))
        return out

    def _params(self, model: type[OracleParams], fields: dict[str, Any], key: str) -> OracleParams:
        try:
            return model.model_validate(fields)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"]
            raise ContractError(f"budget.{key}: {message}", self.source) from None


def parse_budget(block: Any, source: str) -> Budget:
    """Validate a ``budget:`` block. Raises ``ContractError`` naming the key for unknown
    keys, wrong value types and a ``citation_pattern`` without ``require_citation``."""
    if not isinstance(block, dict):
        raise ContractError("budget: expected a mapping of budget keys", source)
    unknown = sorted(set(block) - set(BUDGET_KEYS))
    if unknown:
        raise ContractError(
            f"budget.{unknown[0]}: unknown budget key (known: {', '.join(BUDGET_KEYS)})", source
        )

    def typed(key: str, kind: type) -> Any:
        if key not in block:
            return None
        value = block[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok or (kind is int and value < 0):
            raise ContractError(f"budget.{key}: expected {BUDGET_KEYS[key].split(':')[0]}", source)
        return value

    budget = Budget(
        max_tool_retries=typed("max_tool_retries", int),
        max_tool_errors=typed("max_tool_errors", int),
        allow_degraded_answer=typed("allow_degraded_answer", bool),
        degraded_disclosure=typed("degraded_disclosure", str),
        require_citation=typed("require_citation", bool),
        citation_pattern=typed("citation_pattern", str),
        source=source,
    )
    if budget.citation_pattern is not None and not budget.require_citation:
        raise ContractError(
            "budget.citation_pattern: only meaningful with require_citation: true", source
        )
    return budget
