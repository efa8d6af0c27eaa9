"""The contract-level ``evidence`` oracle: "this must be captured to judge at all".

Entries in a contract's ``evidence`` layer are written short and become this type::

    evidence:
      - tool_arguments                      # {type: evidence, field: tool_arguments}
      - {field: tool_results, tool: search_docs}
      - {attribute: retrieval.snapshot_id}  # {type: evidence, attribute: ...}

The evaluator checks the declared evidence before calling ``check``, so a gap is
``missing_evidence`` naming what is missing and where; ``check`` only runs when everything
is there and reports what was confirmed.
"""

from typing import Self

from pydantic import model_validator

from otel_oracles._native import CheckPlan
from otel_oracles.grade.evidence import EVIDENCE_DESCRIPTIONS, PROBES
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck, OracleParams
from otel_oracles.grade.oracles.trace_common import PLANS
from otel_oracles.grade.registry import register_oracle

SCOPED_FIELDS: frozenset[str] = frozenset(
    {"tool_arguments", "tool_results", "tool_outcomes", "retrieval_documents"}
)
"""Evidence names that accept a ``tool`` glob to look at some tools only."""


class EvidenceParams(OracleParams):
    field: str | None = None
    """An evidence name: steps, tool_names, tool_arguments, tool_results, tool_outcomes,
    input_messages, output_messages, token_usage, final_output, retrieval_documents, agents,
    timing."""
    attribute: str | None = None
    """An attribute key that must be present somewhere in the trace."""
    tool: str | None = None
    """For tool_arguments / tool_results / tool_outcomes / retrieval_documents: a tool glob."""

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (self.field is None) == (self.attribute is None):
            raise ValueError("give exactly one of 'field' (an evidence name) or 'attribute'")
        if self.field is not None:
            if self.field not in PROBES or self.field == "attribute":
                known = ", ".join(k for k in PROBES if k != "attribute")
                raise ValueError(
                    f"unknown evidence {self.field!r}; known: {known}, or {{attribute: <key>}}"
                )
            if self.tool is not None and self.field not in SCOPED_FIELDS:
                raise ValueError(f"'tool' only applies to {', '.join(sorted(SCOPED_FIELDS))}")
        elif self.tool is not None:
            raise ValueError("'tool' does not apply to an attribute")
        return self

    def evidence_name(self) -> str:
        if self.attribute is not None:
            return f"attribute:{self.attribute}"
        assert self.field is not None
        return f"{self.field}:{self.tool}" if self.tool else self.field


@register_oracle
class Evidence(OracleCheck):
    """Declared evidence (a step field or an attribute) was captured in the trace."""

    oracle_type = "evidence"
    Params = EvidenceParams
    params: EvidenceParams
    given: EvidenceParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: EvidenceParams) -> None:
        super().__init__(params)
        # The one answer ``check`` gives (the evaluator answers a gap before it runs), made
        # by the core from the message worded here once.
        self.native_plan = PLANS.evidence(self._captured())

    def required_evidence(self) -> frozenset[str]:
        return frozenset({self.given.evidence_name()})

    def _captured(self) -> str:
        p = self.given
        if p.attribute is not None:
            return f"attribute {p.attribute!r} present"
        assert p.field is not None
        what = EVIDENCE_DESCRIPTIONS.get(p.field, p.field)
        return f"captured: {what}" + (f" (tool {p.tool})" if p.tool else "")

    def check(self, ctx: GradeContext) -> Finding:
        found = self.native_plan.finding(ctx)
        if found is None:  # (its plan answers every trajectory)
            raise RuntimeError("evidence's plan gave no finding")
        return found
