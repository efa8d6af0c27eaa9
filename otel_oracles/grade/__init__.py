"""Grading: contracts + oracles + budgets -> verdicts."""

from otel_oracles.grade.evaluator import grade, outcome_for, run_check
from otel_oracles.grade.oracles.base import (
    Finding,
    GradeContext,
    NoParams,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.registry import register_oracle, registered

__all__ = [
    "Finding",
    "GradeContext",
    "NoParams",
    "OracleCheck",
    "OracleParams",
    "grade",
    "outcome_for",
    "register_oracle",
    "registered",
    "run_check",
]
