"""``--explain`` and ``OTEL_ORACLES_EXPLAIN`` decide what the reports show, and the emitted
telemetry follows the same setting. The command line reads the variable without building
``EmitSettings`` (a grade without an export builds no settings model), so both readers are
held to one answer here."""

from __future__ import annotations

import pytest

from otel_oracles.cli._trust import resolve_explain
from otel_oracles.emit import EmitSettings
from otel_oracles.errors import OtelOraclesError


@pytest.mark.parametrize("env", [None, "", "  ", "template", "full", "FULL ", " Template"])
@pytest.mark.parametrize("explain", [None, "template", "full"])
def test_the_command_line_and_the_settings_agree(
    monkeypatch: pytest.MonkeyPatch, env: str | None, explain: str | None
) -> None:
    if env is None:
        monkeypatch.delenv("OTEL_ORACLES_EXPLAIN", raising=False)
    else:
        monkeypatch.setenv("OTEL_ORACLES_EXPLAIN", env)
    expected = explain or (env or "").strip().lower() or "template"
    assert resolve_explain(explain) == expected
    assert EmitSettings.from_env(explain=explain).explain == expected


@pytest.mark.parametrize("explain", [None, "full"])
def test_a_bad_variable_is_an_error_naming_it_even_beside_the_option(
    monkeypatch: pytest.MonkeyPatch, explain: str | None
) -> None:
    monkeypatch.setenv("OTEL_ORACLES_EXPLAIN", "verbose")
    for read in (resolve_explain, lambda e: EmitSettings.from_env(explain=e)):
        with pytest.raises(OtelOraclesError) as info:
            read(explain)
        assert info.value.source == "OTEL_ORACLES_EXPLAIN"
        assert "expected template or full, got 'verbose'" in str(info.value)


def test_an_unknown_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """click's choice stops it first; a caller of the function gets an error, not a mode."""
    monkeypatch.delenv("OTEL_ORACLES_EXPLAIN", raising=False)
    with pytest.raises(OtelOraclesError) as info:
        resolve_explain("everything")
    assert info.value.source == "--explain"
