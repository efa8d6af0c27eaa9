"""Every name the grader emits, in one place.

Each constant here is declared in ``conventions/registry/otel-oracles.yaml`` (type, unit,
stability, description); ``tests/emit/test_emit_registry.py`` fails when the code emits a
name the registry does not declare or the registry declares one no test sees.
Standard names (``gen_ai.*``, ``error.type``) are used where OpenTelemetry defines one;
everything else lives under ``otel_oracles.*`` so it cannot collide with names in flight.
"""

from __future__ import annotations

INSTRUMENTATION_SCOPE = "otel_oracles"
"""Scope name of every span, log record and metric the grader emits."""
SERVICE_NAME = "otel-oracles"
"""``service.name`` of the grader's own telemetry unless ``OTEL_SERVICE_NAME`` or
``OTEL_RESOURCE_ATTRIBUTES`` sets one."""

# ---- standard attributes -------------------------------------------------------------------
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
ERROR_TYPE = "error.type"
AGENT_NAME = "gen_ai.agent.name"
PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"

# ---- own attributes ------------------------------------------------------------------------
CONTRACT_ID = "otel_oracles.contract.id"
CONTRACT_VERSION = "otel_oracles.contract.version"
CONTRACT_HASH = "otel_oracles.contract.hash"
VERDICT = "otel_oracles.verdict"
OUTCOME = "otel_oracles.outcome"
ORACLE_TYPE = "otel_oracles.oracle.type"
LAYER = "otel_oracles.layer"
PASSED = "otel_oracles.passed"
BUDGET_USED = "otel_oracles.budget.used"
BUDGET_LIMIT = "otel_oracles.budget.limit"
STEP_INDEXES = "otel_oracles.step.indexes"
EVALUATED_SPAN_IDS = "otel_oracles.evaluated.span_ids"
SUBJECT = "otel_oracles.subject"
SUBJECT_SERVICE_VERSION = "otel_oracles.subject.service.version"
CHECKS = "otel_oracles.checks"
INVARIANT_FAILURES = "otel_oracles.invariant_failures"
TOLERATED_FAILURES = "otel_oracles.tolerated_failures"
BUDGET_EXHAUSTED = "otel_oracles.budget_exhausted"
MISSING_EVIDENCE = "otel_oracles.missing_evidence"
ERRORS = "otel_oracles.errors"
TRANSPORT = "otel_oracles.transport"

# ---- spans and events ----------------------------------------------------------------------
GRADE_SPAN_PREFIX = "grade"
"""Grade span name is ``grade {contract id}`` (contract ids are few and stable)."""
EVALUATION_EVENT = "gen_ai.evaluation.result"

# ---- metrics -------------------------------------------------------------------------------
METRIC_TRACES = "otel_oracles.grade.traces"
METRIC_RESULTS = "otel_oracles.grade.results"
METRIC_INVARIANT_FAILURES = "otel_oracles.grade.invariant_failures"
METRIC_TOLERATED_FAILURES = "otel_oracles.grade.tolerated_failures"
METRIC_BUDGETS_EXHAUSTED = "otel_oracles.grade.budgets_exhausted"
METRIC_MISSING_EVIDENCE = "otel_oracles.grade.missing_evidence"
METRIC_DURATION = "otel_oracles.grade.duration"
METRIC_BUFFERED_TRACES = "otel_oracles.receiver.buffered_traces"
METRIC_LATE_SPANS = "otel_oracles.receiver.late_spans"
METRIC_EVICTED_TRACES = "otel_oracles.receiver.evicted_traces"
METRIC_REJECTED_REQUESTS = "otel_oracles.receiver.rejected_requests"
