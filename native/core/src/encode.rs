//! OTLP protobuf and JSON encoding of the telemetry otel-oracles emits (grade spans, evaluation events, metrics).
