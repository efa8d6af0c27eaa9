"""The curated public API is pinned: adding or removing a name is a deliberate change."""

import otel_oracles

EXPECTED = {
    "Contract",
    "ContractError",
    "ConventionError",
    "Emitter",
    "Finding",
    "GradeContext",
    "InMemoryEmitter",
    "InputError",
    "OracleCheck",
    "OracleParams",
    "OracleResult",
    "OtelOraclesError",
    "Outcome",
    "PluginError",
    "ReplayError",
    "Step",
    "StepKind",
    "Trajectory",
    "Verdict",
    "__version__",
    "grade",
    "load_contract",
    "register_oracle",
}


def test_all_lists_exactly_the_curated_names() -> None:
    assert set(otel_oracles.__all__) == EXPECTED


def test_every_name_in_all_is_importable() -> None:
    missing = [n for n in otel_oracles.__all__ if not hasattr(otel_oracles, n)]
    assert missing == [], f"names in __all__ that do not exist: {missing}"
