"""The plug-in's command-line options, read once per pytest run into what grading needs:
contracts, conventions and how much of a result's text test output may show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from otel_oracles.emit import EmitSettings, ExplainMode
from otel_oracles.errors import OtelOraclesError
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import ConventionCache, ConventionSet, load_conventions
from otel_oracles.model.contract import Contract, discover_contract_files


@dataclass(frozen=True, slots=True)
class Settings:
    """``--oo-contracts`` (loaded), ``--oo-conventions`` (with the bundled ones),
    ``--oo-explain`` (else ``OTEL_ORACLES_EXPLAIN``, else ``template``), and the directory
    that contract paths written in tests are relative to (pytest's root directory; paths
    on the command line are relative to where pytest was started, as a shell reads them)."""

    contracts: tuple[Contract, ...]
    conventions: ConventionSet
    explain: ExplainMode
    root: Path

    def resolve(self, path: str | Path) -> Path:
        """``path`` as given when absolute, else under the root directory, so a contract
        path in a test means the same file wherever pytest was started."""
        p = Path(path)
        return p if p.is_absolute() else self.root / p


def load_contracts(paths: Sequence[Path]) -> tuple[Contract, ...]:
    """Every contract in ``paths`` (files, or directories of .yaml/.yml/.json files).
    Raises ``OtelOraclesError`` naming the file and key for an invalid one."""
    files = discover_contract_files(list(paths))
    return tuple(load_contract(f) for f in files)


_SETTINGS = pytest.StashKey["Settings"]()


def settings_for(config: pytest.Config) -> Settings:
    """The run's settings, loaded on first use (so a run that never grades loads nothing).
    A mistake in an option or a file they name is a ``pytest.UsageError`` of one line."""
    settings = config.stash.get(_SETTINGS, None)
    if settings is not None:
        return settings
    cwd = config.invocation_params.dir
    try:
        explain = EmitSettings.from_env(explain=config.getoption("oo_explain")).explain
        contract_paths = [cwd / p for p in config.getoption("oo_contracts")]
        missing = [str(p) for p in contract_paths if not p.exists()]
        if missing:
            raise pytest.UsageError(f"--oo-contracts: no such file or directory: {missing[0]}")
        contracts = load_contracts(contract_paths)
        if contract_paths and not contracts:
            raise pytest.UsageError(
                "--oo-contracts: no contract files (.json/.yaml/.yml) found in "
                + ", ".join(config.getoption("oo_contracts"))
            )
        conventions = load_conventions(
            [cwd / p for p in config.getoption("oo_conventions")], ConventionCache.from_env()
        )
    except OtelOraclesError as exc:
        raise pytest.UsageError(f"otel-oracles: {exc}") from None
    settings = Settings(contracts, conventions, explain, config.rootpath)
    config.stash[_SETTINGS] = settings
    return settings
