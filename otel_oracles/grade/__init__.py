"""Grading: contracts + oracles + budgets -> verdicts.

Load a contract with ``compile_contract`` (a ``CompiledContract``, built once) and grade
trajectories with ``grade``; ``load_contract`` gives the plain ``Contract`` data alone.
"""

from otel_oracles.grade.compiled import CompiledContract
from otel_oracles.grade.evaluator import grade, outcome_for, run_check
from otel_oracles.grade.evidence import Evidence
from otel_oracles.grade.loader import compile_contract, load_contract, parse_contract
from otel_oracles.grade.oracles.base import (
    Finding,
    GradeContext,
    NoParams,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.registry import register_oracle, registered

__all__ = [
    "CompiledContract",
    "Evidence",
    "Finding",
    "GradeContext",
    "NoParams",
    "OracleCheck",
    "OracleParams",
    "compile_contract",
    "grade",
    "load_contract",
    "outcome_for",
    "parse_contract",
    "register_oracle",
    "registered",
    "run_check",
]
