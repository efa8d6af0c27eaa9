"""Emitter settings and their defaults.

Standard ``OTEL_*`` variables (endpoint, headers, timeout, compression, resource, service
name, metric export interval) are read by the OpenTelemetry SDK itself and never re-parsed
here. The one exception is the OTLP *protocol*, which picks the exporter class before the
SDK is involved (exactly what the SDK's own auto-configuration does).
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from otel_oracles.emit._explain import ExplainMode, explain_from_env
from otel_oracles.emit._metrics import DURATION_BUCKETS_S
from otel_oracles.emit._names import SERVICE_NAME

OtlpProtocol = Literal["grpc", "http/protobuf"]

DEFAULT_SERVICE_NAME = SERVICE_NAME
"""``service.name`` of the grader's own telemetry unless ``OTEL_SERVICE_NAME`` or
``OTEL_RESOURCE_ATTRIBUTES`` sets one (declared in conventions/registry/otel-oracles.yaml)."""

DEFAULT_PROTOCOL: OtlpProtocol = "http/protobuf"
"""The OTLP exporter specification's default; the Python SDK alone defaults to gRPC."""

DEFAULT_MAX_EXPORT_BATCH_SIZE = 512
"""Spans or log records per export request: the SDK batch processor's default size, which
keeps every request far below the 4 MiB gRPC message limit."""

DEFAULT_RETRY_AFTER_SECONDS = 30.0
"""An unreachable collector costs one exporter timeout per this period, not one per batch."""

GRADE_DURATION_BUCKETS_S = DURATION_BUCKETS_S
"""Grading takes sub-millisecond for trace checks and seconds for replayed test commands
(``otel_oracles.grade.duration``'s bounds, kept with the metrics)."""


class EmitSettings(BaseModel):
    """What the OTel emitter sends. Each form of the evaluation event is switchable because
    backends differ: some show only span events, OpenTelemetry is moving to log-based ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grade_span: bool = True
    """Emit one grade span per verdict, in the graded trace, child of its root span."""
    span_events: bool = True
    """Put one ``gen_ai.evaluation.result`` span event per check on the grade span
    (requires ``grade_span``)."""
    log_events: bool = True
    """Emit one ``gen_ai.evaluation.result`` log record per check, correlated to the
    evaluated span."""
    metrics: bool = True
    explain: ExplainMode = "template"
    max_export_batch_size: int = Field(default=DEFAULT_MAX_EXPORT_BATCH_SIZE, ge=1)
    retry_after_seconds: float = Field(default=DEFAULT_RETRY_AFTER_SECONDS, ge=0)
    """After a failed export, batches for that destination are counted as not delivered
    (not attempted) for this long."""

    @classmethod
    def from_env(cls, **overrides: object) -> "EmitSettings":
        """Defaults, then ``OTEL_ORACLES_EXPLAIN``, then explicit ``overrides`` (None = unset).
        Raises ``OtelOraclesError`` naming the variable for a bad environment value."""
        values: dict[str, object] = {}
        env_explain = explain_from_env()
        if env_explain is not None:
            values["explain"] = env_explain
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)
