"""Test support code shared across stages (real OTLP sinks, process helpers)."""
