"""Who the grader is in its own telemetry: its version and its OpenTelemetry resource.

A module of its own because offline ``grade`` needs the resource on every run (the
``service.name`` it would emit under marks the grader's own spans in an input, see ``_own``)
while it builds no exporter: this imports the SDK's ``resources`` only, not the exporters,
metric readers and protobuf encoders that ``_otel`` brings in.
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version

from opentelemetry.sdk.resources import Resource

from otel_oracles.emit._names import SERVICE_NAME


@functools.cache
def grader_version() -> str:
    """The installed otel-oracles version (read from the package metadata, not from the
    package's ``__init__``, which imports more than emission needs)."""
    try:
        return version("otel-oracles")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0"


def grader_resource() -> Resource:
    """The SDK's resource (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``, telemetry.sdk.*)
    with ``service.name`` defaulting to ``otel-oracles`` instead of ``unknown_service``."""
    detected = Resource.create({})
    attrs = dict(detected.attributes)
    if str(attrs.get("service.name", "")).startswith("unknown_service"):
        attrs["service.name"] = SERVICE_NAME
    attrs.setdefault("service.version", grader_version())
    return Resource(attrs, detected.schema_url)
