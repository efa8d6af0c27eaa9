"""The package uses OpenTelemetry through its public interfaces only: no module whose path
has a private segment is imported, and no private member of an OpenTelemetry (or grpc)
object is read or written. Private members change without notice between SDK releases;
the grader's telemetry must not silently change or break with them.

The one allowed private-looking path is ``_logs``: ``opentelemetry._logs`` and
``opentelemetry.sdk._logs`` are the logs API and SDK themselves (the only way to use logs
in Python OpenTelemetry, documented as such while the signal is in development)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "otel_oracles"
ALLOWED_PRIVATE_SEGMENTS = frozenset({"_logs"})
KNOWN_PRIVATE_MEMBERS = frozenset(
    {
        "_stub",
        "_client",
        "_channel",
        "_export",
        "_translate_data",
        "_max_request_size",
        "_preferred_temporality",
        "_preferred_aggregation",
        "_collect",
        "_instrument_class_temporality",
        "_initialize_channel_and_stub",
        "_TRACER_PROVIDER",
        "_TRACER_PROVIDER_SET_ONCE",
        "_LOGGER_PROVIDER",
        "_LOGGER_PROVIDER_SET_ONCE",
        "_METER_PROVIDER",
        "_METER_PROVIDER_SET_ONCE",
    }
)
"""SDK/API internals the package once relied on, or that tests of OTel globals reset:
touched on anything but ``self``, they are a violation whatever the object's name."""
THIRD_PARTY = ("opentelemetry", "grpc")


def _private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    otel_names: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if node.module.split(".")[0] in THIRD_PARTY:
                otel_names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
            otel_names.update(
                a.asname or a.name.split(".")[0]
                for a in node.names
                if a.name.split(".")[0] in THIRD_PARTY
            )
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "opentelemetry" and any(
                _private(p) and p not in ALLOWED_PRIVATE_SEGMENTS for p in parts
            ):
                found.append(f"{path.name}:{node.lineno}: imports {module}")
                break
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        owner = node.value
        on_self = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
        if node.attr in KNOWN_PRIVATE_MEMBERS and not on_self:
            found.append(f"{path.name}:{node.lineno}: touches .{node.attr}")
        elif isinstance(owner, ast.Name) and owner.id in otel_names:
            found.append(f"{path.name}:{node.lineno}: touches {owner.id}.{node.attr}")
    for node in ast.walk(tree):  # getattr(x, "_private") / setattr(...) on the same names
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in KNOWN_PRIVATE_MEMBERS
        ):
            found.append(f"{path.name}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_no_private_opentelemetry_module_or_member_is_used() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50, "the package sources were not found"
    found = [v for f in files for v in _violations(f)]
    assert not found, "private OpenTelemetry use:\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Each kind of violation, written as the package once wrote it, is reported."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import opentelemetry._logs._internal as logs_api\n"
        "import opentelemetry.trace as trace_api\n"
        "from opentelemetry.util._once import Once\n"
        "from opentelemetry.exporter.otlp.proto.grpc import exporter\n"
        "from opentelemetry.sdk._logs import LoggerProvider\n"
        "trace_api._TRACER_PROVIDER = None\n"
        "exporter._stub = 1\n"
        "x = inner._preferred_temporality\n"
        "y = getattr(inner, '_client', None)\n"
        "z = self._client\n",
        encoding="utf-8",
    )
    found = "\n".join(_violations(sample))
    assert "imports opentelemetry._logs._internal" in found
    assert "imports opentelemetry.util._once" in found
    assert (
        "sdk._logs import LoggerProvider" not in found and "opentelemetry.sdk._logs\n" not in found
    )
    assert "touches ._TRACER_PROVIDER" in found
    assert "touches ._stub" in found
    assert "touches ._preferred_temporality" in found
    assert "getattr(..., '_client')" in found
    assert len(found.splitlines()) == 6, found
