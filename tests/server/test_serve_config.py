"""serve settings: defaults, precedence (file < env < flags) and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.server.config import ConfigError, load_settings, parse_duration, parse_size


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "serve.yaml"
    p.write_text(text)
    return p


def test_defaults_bind_loopback_on_ports_that_do_not_clash_with_a_collector() -> None:
    s = load_settings(environ={})
    assert s.receivers.grpc.endpoint == "127.0.0.1:4327"
    assert s.receivers.http.endpoint == "127.0.0.1:4328"
    assert s.assembly.decision_wait == 10.0


def test_durations_and_sizes_take_units() -> None:
    assert parse_duration("250ms") == 0.25
    assert parse_duration("5m") == 300.0
    assert parse_duration(3) == 3.0
    assert parse_size("4MiB") == 4 * 1024 * 1024
    with pytest.raises(ValueError, match="duration"):
        parse_duration("soon")


def test_env_overrides_file_and_flags_override_env(tmp_path: Path) -> None:
    cfg = write(tmp_path, "assembly:\n  decision_wait: 3s\n  max_traces: 7\n")
    env = {"OTEL_ORACLES_SERVE_DECISION_WAIT": "2s", "OTEL_ORACLES_SERVE_MAX_TRACES": "9"}
    s = load_settings(cfg, {"assembly.max_traces": 11}, environ=env)
    assert s.assembly.decision_wait == 2.0
    assert s.assembly.max_traces == 11


def test_error_names_the_file_and_key_path(tmp_path: Path) -> None:
    cfg = write(tmp_path, "assembly:\n  decision_wait: soon\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, environ={})
    assert "assembly.decision_wait" in str(info.value) and str(cfg) in str(info.value)


def test_unknown_key_is_an_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, "receivers:\n  grcp: {}\n")
    with pytest.raises(ConfigError, match=r"receivers\.grcp: unknown field"):
        load_settings(cfg, environ={})


def test_max_trace_age_below_decision_wait_is_refused(tmp_path: Path) -> None:
    cfg = write(tmp_path, "assembly: {decision_wait: 10s, max_trace_age: 5s}\n")
    with pytest.raises(ConfigError, match="max_trace_age"):
        load_settings(cfg, environ={})


def test_bad_endpoint_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"receivers\.grpc\.endpoint"):
        load_settings(overrides={"receivers.grpc.endpoint": "localhost"}, environ={})


def test_token_file_is_read_and_missing_file_is_an_error(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("s3cret\n")
    s = load_settings(overrides={"receivers.auth.bearer_token_file": str(tok)}, environ={})
    assert s.receivers.auth.token() == "s3cret"
    with pytest.raises(ConfigError, match="bearer_token_file"):
        load_settings(overrides={"receivers.auth.bearer_token_file": "/nope"}, environ={})


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, "assembly:\n  decision_wait: [\n")
    with pytest.raises(ConfigError, match=r"serve\.yaml:\d+"):
        load_settings(cfg, environ={})


def test_example_config_validates(repo_root: Path) -> None:
    s = load_settings(repo_root / "examples" / "serve.yaml", environ={})
    assert s.receivers.grpc.endpoint.endswith(":4327")


def test_grading_processes_auto_number_env_and_bad_values(tmp_path: Path) -> None:
    import os

    from otel_oracles.server.config import grading_processes

    auto = load_settings(environ={}).grading
    assert auto.processes == "auto"
    cpus = os.cpu_count() or 1
    assert grading_processes(auto) == (cpus if cpus > 1 else 0)
    env = {"OTEL_ORACLES_SERVE_PROCESSES": "3"}
    assert grading_processes(load_settings(environ=env).grading) == 3
    assert grading_processes(load_settings(None, {"grading.processes": 0}, environ={}).grading) == 0
    for bad in ("-1", "many"):
        cfg = write(tmp_path, f"grading: {{processes: {bad}}}\n")
        with pytest.raises(ConfigError, match=r"grading\.processes"):
            load_settings(cfg, environ={})


def test_a_custom_emitter_with_explicit_worker_processes_is_refused() -> None:
    from otel_oracles.emit import InMemoryEmitter
    from otel_oracles.server import create_server
    from tests.server.conftest import serve_overrides

    settings = load_settings(None, serve_overrides(**{"grading.processes": 2}), environ={})
    with pytest.raises(ConfigError, match=r"grading\.processes: 0"):
        create_server(settings, emitter=InMemoryEmitter())
