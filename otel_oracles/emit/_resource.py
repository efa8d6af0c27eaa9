"""Who the grader is in its own telemetry: its version, its OpenTelemetry resource and its
instrumentation scope.

A module of its own because offline ``grade`` needs the resource's ``service.name`` (the
name it would emit under marks the grader's own spans in an input, see ``_own``) while it
builds no exporter.

The emitter's resource and scope are the package's own records (``GraderResource``,
``GraderScope``): what the core's encoders read of the SDK's ``Resource`` and
``InstrumentationScope`` (attributes and schema URL; name and version), and what the SDK
adapters turn into those (``sdk_resource``, ``sdk_scope``) for an exporter a caller
supplies. In the usual configuration the resource is made here, as ``Resource.create``
makes it: importing the SDK's ``resources`` module (``concurrent.futures``, ``platform``,
``socket``, ``subprocess``, ``uuid``, the semantic conventions' resource names) and its
``Resource.create`` (a thread pool for its two detectors) were ~30 M instructions of every
``grade --export``. A configuration that gives the SDK more to read
(``OTEL_RESOURCE_ATTRIBUTES``, further detectors) is read by ``Resource.create`` itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from otel_oracles.emit._names import SERVICE_NAME

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.util.types import AttributeValue


class GraderResource:
    """The grader's resource: its attributes in the SDK's order, and its schema URL."""

    __slots__ = ("attributes", "schema_url")

    def __init__(self, attributes: Mapping[str, AttributeValue], schema_url: str = "") -> None:
        self.attributes = attributes
        self.schema_url = schema_url


class GraderScope:
    """The grader's instrumentation scope (no schema URL, no attributes, as the SDK's
    ``InstrumentationScope(name, version)``)."""

    __slots__ = ("attributes", "name", "schema_url", "version")

    def __init__(self, name: str, version: str) -> None:
        self.name = name
        self.version = version
        self.schema_url = ""
        self.attributes: Mapping[str, AttributeValue] = {}


SDK_RESOURCE_ENV: tuple[str, ...] = (
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS",
)
"""What, when set, the resource is made of by the SDK's ``Resource.create``: the attributes
its ``otel`` detector parses, and the further detectors it loads."""


@functools.cache
def grader_version() -> str:
    """The installed otel-oracles version (read from the package metadata, not from the
    package's ``__init__``, which imports more than emission needs)."""
    try:
        return version("otel-oracles")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0"


def grader_scope() -> GraderScope:
    """The instrumentation scope of the grader's spans, log records and metrics."""
    from otel_oracles.emit._names import INSTRUMENTATION_SCOPE

    return GraderScope(INSTRUMENTATION_SCOPE, grader_version())


def grader_record() -> GraderResource:
    """The grader's resource (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``,
    telemetry.sdk.*, service.instance.id) with ``service.name`` defaulting to
    ``otel-oracles`` instead of ``unknown_service``, and ``service.version``."""
    if any(os.environ.get(name) for name in SDK_RESOURCE_ENV):
        attrs, schema_url = _sdk_created()
    else:
        attrs, schema_url = _created(os.environ.get("OTEL_SERVICE_NAME")), ""
    if str(attrs.get("service.name", "")).startswith("unknown_service"):
        attrs["service.name"] = SERVICE_NAME
    attrs.setdefault("service.version", grader_version())
    return GraderResource(attrs, schema_url)


def grader_resource() -> Resource:
    """``grader_record()`` as the SDK's resource."""
    return sdk_resource(grader_record())


def sdk_resource(resource: GraderResource) -> Resource:
    """The SDK's ``Resource`` of ``resource`` (for an exporter a caller supplies)."""
    from opentelemetry.sdk.resources import Resource

    return Resource(resource.attributes, resource.schema_url)


def sdk_scope(scope: GraderScope) -> InstrumentationScope:
    """The SDK's ``InstrumentationScope`` of ``scope`` (for an exporter a caller supplies)."""
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    return InstrumentationScope(scope.name, scope.version, scope.schema_url, scope.attributes)


def record_of(resource: Resource) -> GraderResource:
    """A resource a caller gives the emitter, as the record the emitter's sinks read."""
    return GraderResource(dict(resource.attributes), resource.schema_url)


def _sdk_created() -> tuple[dict[str, AttributeValue], str]:
    """``Resource.create({})``'s attributes and schema URL."""
    from opentelemetry.sdk.resources import Resource

    detected = Resource.create({})
    return dict(detected.attributes), detected.schema_url


_instance: tuple[int, str] | None = None
"""This process's ``service.instance.id`` and the pid it was made in."""


def _instance_id() -> str:
    """A random (version 4) UUID for this process, made anew after a fork, as the SDK's
    ``ServiceInstanceIdResourceDetector`` makes its own."""
    global _instance
    pid = os.getpid()
    if _instance is None or _instance[0] != pid:
        b = bytearray(os.urandom(16))
        b[6] = (b[6] & 0x0F) | 0x40  # version 4
        b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
        h = b.hex()
        _instance = (pid, f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    return _instance[1]


def _created(service_name: str | None) -> dict[str, AttributeValue]:
    """What ``Resource.create({})`` makes when neither variable of ``SDK_RESOURCE_ENV`` is
    set: the SDK's telemetry.sdk.* attributes, then its two detectors' (the process's
    service.instance.id, then ``OTEL_SERVICE_NAME``), else the default name."""
    from opentelemetry.sdk.version import __version__ as sdk_version

    return {
        "telemetry.sdk.language": "python",
        "telemetry.sdk.name": "opentelemetry",
        "telemetry.sdk.version": sdk_version,
        "service.instance.id": _instance_id(),
        # Without a name the SDK's is `unknown_service:<executable>`, which
        # `grader_record` replaces in its place.
        "service.name": service_name or "unknown_service",
    }
