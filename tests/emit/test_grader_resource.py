"""The grader's resource and scope as the package's own records (``_resource``).

``grader_record`` makes the resource itself unless a variable of ``SDK_RESOURCE_ENV`` is
set; these tests hold what it makes to what the SDK's ``Resource.create`` makes (as the
emitter used it: ``unknown_service`` replaced by the grader's name, ``service.version``
added), key order included, since the encoders write the attributes in that order. The
SDK's ``service.instance.id`` is a random UUID of its own: compared by its shape.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from otel_oracles.emit._names import INSTRUMENTATION_SCOPE, SERVICE_NAME
from otel_oracles.emit._resource import (
    SDK_RESOURCE_ENV,
    GraderScope,
    grader_record,
    grader_resource,
    grader_scope,
    grader_version,
    record_of,
    sdk_resource,
    sdk_scope,
)

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
INSTANCE = "service.instance.id"


def sdks_resource() -> tuple[dict[str, object], str]:
    """What the emitter made of ``Resource.create`` before it made its own records."""
    detected = Resource.create({})
    attrs = dict(detected.attributes)
    if str(attrs.get("service.name", "")).startswith("unknown_service"):
        attrs["service.name"] = SERVICE_NAME
    attrs.setdefault("service.version", grader_version())
    return attrs, detected.schema_url


def without_instance(attrs: object) -> list[tuple[str, object]]:
    assert isinstance(attrs, dict)
    return [(k, "<id>" if k == INSTANCE else v) for k, v in attrs.items()]


@pytest.fixture
def no_resource_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*SDK_RESOURCE_ENV, "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_resource_env")
@pytest.mark.parametrize("service_name", [None, "", "grader-in-ci", "unknown_service_x"])
def test_the_record_made_here_is_the_sdks(
    monkeypatch: pytest.MonkeyPatch, service_name: str | None
) -> None:
    if service_name is not None:
        monkeypatch.setenv("OTEL_SERVICE_NAME", service_name)
    record = grader_record()
    attrs, schema_url = sdks_resource()
    assert without_instance(record.attributes) == without_instance(attrs)
    assert record.schema_url == schema_url == ""
    assert UUID4.match(str(record.attributes[INSTANCE]))
    assert UUID4.match(str(attrs[INSTANCE]))
    # One id a process, as the SDK's detector keeps one.
    assert grader_record().attributes[INSTANCE] == record.attributes[INSTANCE]


@pytest.mark.usefixtures("no_resource_env")
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=qa,x=%20y"),
        ("OTEL_RESOURCE_ATTRIBUTES", f"{INSTANCE}=replica-a"),
        ("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "otel"),
    ],
)
def test_a_variable_the_sdk_reads_more_into_goes_through_the_sdk(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    attrs, schema_url = sdks_resource()
    record = grader_record()
    assert record.attributes == attrs  # the SDK's own id: the same process-wide one
    assert record.schema_url == schema_url


@pytest.mark.usefixtures("no_resource_env")
def test_the_sdk_objects_carry_the_records_values() -> None:
    record = grader_record()
    resource = sdk_resource(record)
    assert dict(resource.attributes) == record.attributes
    assert resource.schema_url == record.schema_url
    assert dict(grader_resource().attributes) == record.attributes
    assert record_of(resource).attributes == record.attributes
    scope = grader_scope()
    assert (scope.name, scope.version, scope.schema_url, dict(scope.attributes)) == (
        INSTRUMENTATION_SCOPE,
        grader_version(),
        "",
        {},
    )
    assert sdk_scope(scope) == InstrumentationScope(INSTRUMENTATION_SCOPE, grader_version())
    assert sdk_scope(GraderScope("s", "1")).schema_url == ""


def test_a_forked_process_gets_an_id_of_its_own() -> None:
    """As the SDK's detector: the id is made anew when the pid changes."""
    read, write = os.pipe()
    first = grader_record().attributes[INSTANCE]
    pid = os.fork()
    if pid == 0:  # the child: writes its id and leaves
        os.write(write, str(grader_record().attributes[INSTANCE]).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as child:
        theirs = child.read().decode()
    assert UUID4.match(theirs)
    assert theirs != first
    assert grader_record().attributes[INSTANCE] == first


def test_the_records_import_no_sdk_resources() -> None:
    env_clear = "; ".join(
        f"os.environ.pop({n!r}, None)" for n in (*SDK_RESOURCE_ENV, "OTEL_SERVICE_NAME")
    )
    probe = (
        f"import os, sys; {env_clear}; "
        "from otel_oracles.emit._resource import grader_record, grader_scope; "
        "grader_record(); grader_scope(); "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    imported = ["opentelemetry", "opentelemetry.sdk", "opentelemetry.sdk.version"]
    assert out.stdout.strip() == repr(imported)
