"""The service names the own-telemetry filter skips, with and without the SDK's resources.

``own_markers`` answers without the SDK when no variable the SDK reads a service name from
is set (``SERVICE_NAME_ENV``); these tests hold that answer to the SDK's own
(``Resource.create``'s, as the emitter names itself), and check that each variable still
gives the SDK's answer.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.sdk.resources import Resource

from otel_oracles.emit._names import INSTRUMENTATION_SCOPE, SERVICE_NAME
from otel_oracles.emit._own import SERVICE_NAME_ENV, own_markers, own_telemetry_check


def sdk_service_name() -> str:
    """The ``service.name`` of ``Resource.create``, ``unknown_service`` as the grader's."""
    name = str(Resource.create({}).attributes["service.name"])
    return SERVICE_NAME if name.startswith("unknown_service") else name


@pytest.fixture
def no_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SERVICE_NAME_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_service_env")
def test_without_service_variables_the_answer_is_the_sdks() -> None:
    scope, services = own_markers()
    sdk_name = sdk_service_name()
    assert scope == INSTRUMENTATION_SCOPE
    assert services == frozenset({sdk_name, SERVICE_NAME}) == frozenset({SERVICE_NAME})


@pytest.mark.usefixtures("no_service_env")
@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("OTEL_SERVICE_NAME", "grader-in-ci", "grader-in-ci"),
        ("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,team=qa", "from-attributes"),
        # Only the default detector named: the SDK's answer, read through the SDK.
        ("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "otel", SERVICE_NAME),
    ],
)
def test_each_service_variable_is_read_through_the_sdk(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    _, services = own_markers()
    assert services == frozenset({expected, SERVICE_NAME})
    assert services == frozenset({sdk_service_name(), SERVICE_NAME})
    assert own_telemetry_check().services == services


@pytest.mark.usefixtures("no_service_env")
@pytest.mark.parametrize("name", SERVICE_NAME_ENV)
def test_an_empty_variable_is_unset_for_the_sdk_too(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The SDK ignores an empty value of each variable; so does the fast path."""
    monkeypatch.setenv(name, "")
    assert own_markers()[1] == frozenset({sdk_service_name()})


def test_reading_own_markers_imports_no_sdk_without_service_variables() -> None:
    env_clear = "; ".join(f"os.environ.pop({n!r}, None)" for n in SERVICE_NAME_ENV)
    probe = (
        f"import os, sys; {env_clear}; "
        "from otel_oracles.emit import own_telemetry_check; own_telemetry_check(); "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
