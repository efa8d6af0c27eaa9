"""``serve`` on the trust boundary (docs/security.md): it refuses to listen openly without
client authentication, accepts the bearer scheme in any case, and runs no command from a
contract over a received trace unless its config says so."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.model.result import Outcome
from otel_oracles.server import load_settings
from otel_oracles.server.config import ConfigError
from tests.server.agent_traces import fixture_request, rekeyed, send_agent_traces, wait_until
from tests.server.conftest import CONTRACTS, serve_overrides
from tests.server.test_serve_receivers import post_pb, verdict_map

SERVE = [sys.executable, "-c", "from otel_oracles.cli import main; main()", "serve"]

COMMAND_CONTRACT = (
    "id: runs-tests\nname: runs tests\ndescription: a test_must_pass over the trace\n"
    "workspace: {README.md: x}\nmatch: {resource: {service.name: tested-agent}}\n"
    "invariants:\n  - {type: test_must_pass, command: 'true', name: tests-pass}\n"
)


def serve_argv(*args: str) -> list[str]:
    return [*SERVE, "--contracts", str(CONTRACTS), "--grpc-endpoint", "127.0.0.1:0", *args]


def test_serve_refuses_a_non_loopback_address_without_client_authentication() -> None:
    done = subprocess.run(
        serve_argv("--http-endpoint", "0.0.0.0:0"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"one line, no traceback: {done.stderr}"
    assert "0.0.0.0:0 is not a loopback address" in lines[0]
    assert "--insecure" in lines[0] and "bearer_token_file" in lines[0]


@pytest.mark.parametrize(
    "allowed",
    [
        {"receivers.insecure": True},
        {"receivers.auth.bearer_token": "s3cret"},
    ],
)
def test_a_non_loopback_address_is_allowed_with_a_token_or_insecure(
    allowed: dict[str, Any],
) -> None:
    over = serve_overrides(**{"receivers.http.endpoint": "0.0.0.0:0", **allowed})
    settings = load_settings(overrides=over, environ={})
    assert settings.receivers.http.endpoint == "0.0.0.0:0"


@pytest.mark.parametrize("endpoint", ["127.0.0.1:0", "localhost:0", "[::1]:0"])
def test_loopback_addresses_need_no_authentication(endpoint: str) -> None:
    over = serve_overrides(**{"receivers.http.endpoint": endpoint})
    assert load_settings(overrides=over, environ={}).receivers.http.endpoint == endpoint


def test_a_wildcard_grpc_endpoint_is_refused_too() -> None:
    over = serve_overrides(**{"receivers.grpc.endpoint": "[::]:0"})
    with pytest.raises(ConfigError, match=r"grpc\.endpoint \[::\]:0 is not a loopback"):
        load_settings(overrides=over, environ={})


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_case_insensitive(serve: Callable[..., Any], scheme: str) -> None:
    bg = serve(**{"receivers.auth.bearer_token": "s3cret"})
    req, tid = rekeyed(fixture_request("a_happy"))
    assert post_pb(bg, req, Authorization=f"{scheme} s3cret")[0] == 200
    assert post_pb(bg, req, Authorization=f"{scheme} wrong")[0] == 401
    assert post_pb(bg, req, Authorization="Basic s3cret")[0] == 401
    wait_until(lambda: tid in verdict_map(bg), what="the authorized trace's verdict")


def _command_result(bg: Any, trace_id: str) -> Any:
    verdict = next(v for v in bg.emitter.verdicts if v.trace_id == trace_id)
    return next(r for r in verdict.results if r.oracle_type == "test_must_pass")


def test_command_running_checks_are_off_in_serve_unless_configured(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    contract = tmp_path / "runs-tests.yaml"
    contract.write_text(COMMAND_CONTRACT)
    for commands, outcome in (("off", Outcome.ERROR), ("sandbox", Outcome.PASS)):
        over: dict[str, Any] = {"grading.contracts": [str(contract)]}
        if commands != "off":
            over["grading.commands"] = commands
        bg = serve(**over)
        exporter = OTLPSpanExporter(endpoint=bg.http_url + "/v1/traces")
        ids, _ = send_agent_traces(exporter, 1, service="tested-agent")
        wait_until(lambda bg=bg, ids=ids: ids[0] in verdict_map(bg), what="the verdict")
        result = _command_result(bg, ids[0])
        assert result.outcome == outcome, (commands, result.message)
        if commands == "off":
            assert "grading.commands: sandbox" in result.message
