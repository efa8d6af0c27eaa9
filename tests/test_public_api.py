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


def test_every_lazy_emit_name_resolves_to_its_defining_module() -> None:
    """``otel_oracles.emit`` imports its names on first use from the submodule ``_LAZY``
    names; a name listed under the wrong submodule only fails when someone asks for it."""
    import otel_oracles.emit as emit

    missing = [n for n in emit.__all__ if not hasattr(emit, n)]
    assert missing == [], f"names in emit.__all__ that do not resolve: {missing}"
