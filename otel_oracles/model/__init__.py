"""Data models shared by every stage: span records, steps and trajectories, contracts, results."""

from otel_oracles.model.contract import (
    Contract,
    MatchSpec,
    OracleSpec,
    discover_contract_files,
)
from otel_oracles.model.result import (
    Counts,
    InputProblem,
    OracleResult,
    Outcome,
    RunReport,
    Verdict,
    count_outcomes,
)
from otel_oracles.model.span import EventRecord, LinkRecord, LogRecord, SpanRecord, Trace
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory

__all__ = [
    "Contract",
    "Counts",
    "EventRecord",
    "InputProblem",
    "LinkRecord",
    "LogRecord",
    "MatchSpec",
    "OracleResult",
    "OracleSpec",
    "Outcome",
    "RunReport",
    "SpanRecord",
    "SpanRef",
    "Step",
    "StepKind",
    "Trace",
    "Trajectory",
    "Verdict",
    "count_outcomes",
    "discover_contract_files",
]
