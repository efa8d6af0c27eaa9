"""Compiled contracts: what grading needs of a contract, built once.

A ``Contract`` (``otel_oracles.model``) is plain data: what the file says, with every
oracle's params in their JSON form (what results carry). A ``CompiledContract`` adds what
grading builds from that data: each check's oracle instance over its typed params, the
evidence names it needs, its budget, and the trace selector. It is built once (by
``compile_contract`` in ``otel_oracles.grade.loader``) and held by whoever grades many
trajectories, so grading a trace does no per-check set-up and no state hides in module
caches.
"""

from __future__ import annotations

from otel_oracles._frozen import Frozen, set_field
from otel_oracles._native import CheckHead
from otel_oracles.grade.evidence import Plan
from otel_oracles.grade.oracles.base import OracleCheck, OracleParams
from otel_oracles.grade.registry import BUILTIN_MODULES, oracle_class
from otel_oracles.grade.selector import MappedAgents, TraceSelector
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.result import Layer
from otel_oracles.model.span import Trace
from otel_oracles.replay import WorkspaceReplay

BUDGET_PARAMS: tuple[str, ...] = ("max", "allowed", "max_total")
"""Params whose value results report as the check's ``budget``, first found wins."""


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class CompiledCheck(Frozen):
    """One check of a contract, prepared once: its oracle instantiated over typed params and
    its evidence names resolved."""

    __slots__ = (
        "budget",
        "evidence",
        "foreign",
        "head",
        "layer",
        "oracle",
        "plan",
        "setup_error",
        "spec",
    )
    layer: Layer
    spec: OracleSpec
    oracle: OracleCheck | None
    evidence: tuple[str, ...]
    """Sorted, unique evidence names (the order gaps are reported in)."""
    plan: Plan
    """``evidence`` made ready to ask of trajectories, once (``Evidence.lacking_of``: the
    check asks it when its contract's names are not all there)."""
    setup_error: Exception | None
    """What building the oracle (or asking its evidence) raised; reported by the check as an
    ``error`` result, never stopping the others."""
    budget: int | None
    foreign: bool
    """Whether the oracle's class is a plug-in's (or any class outside the built-in modules):
    its findings are checked where they leave it (``MAX_DETAILS_DEPTH`` in the core's check
    loop), as the built-ins' are by construction."""
    head: CheckHead
    """What the core's loop reads of this check for each result, made once here: the
    fields every result of it has that the check alone decides (``oracle_type``, ``name``,
    ``layer``, ``params``, ``budget``, ``why``: read off the spec, a pydantic model whose
    every attribute read goes through its ``__getattr__`` hook), whether its layer is a
    known one and a tolerance, its oracle's ``runs_commands`` and ``needs_full_coverage``,
    and a built-in oracle's ``native_plan`` (asked before its ``check``:
    ``OracleCheck.native_plan``). Its ``params`` are shared by every result that is
    validated: read them, never change them."""

    def __init__(
        self,
        layer: Layer,
        spec: OracleSpec,
        oracle: OracleCheck | None,
        evidence: tuple[str, ...],
        setup_error: Exception | None,
        budget: int | None,
        foreign: bool,
    ) -> None:
        set_field(self, "layer", layer)
        set_field(self, "spec", spec)
        set_field(self, "oracle", oracle)
        set_field(self, "evidence", evidence)
        set_field(self, "plan", Plan(evidence))
        set_field(self, "setup_error", setup_error)
        set_field(self, "budget", budget)
        set_field(self, "foreign", foreign)
        why = spec.why
        head = CheckHead(
            spec.type, spec.label, layer, spec.params, budget, why, oracle, setup_error, foreign
        )
        set_field(self, "head", head)


def compile_check(
    layer: Layer, spec: OracleSpec, params: OracleParams | None = None
) -> CompiledCheck:
    """``spec`` prepared for grading. ``params`` are the spec's params already validated into
    the oracle's ``Params`` model (as the loader does, once); without them the JSON form in
    ``spec.params`` is validated here (a contract built or copied in code)."""
    oracle: OracleCheck | None = None
    evidence: tuple[str, ...] = ()
    error: Exception | None = None
    try:
        cls = oracle_class(spec.type)
        oracle = cls(params if params is not None else cls.Params.model_validate(spec.params))
        evidence = tuple(sorted(set(oracle.required_evidence())))
    except Exception as exc:  # noqa: BLE001 - reported by the check, never stops the others
        oracle, error = None, exc
    budget = next((spec.params[k] for k in BUDGET_PARAMS if k in spec.params), None)
    if not isinstance(budget, int) or isinstance(budget, bool):
        budget = None
    return CompiledCheck(
        layer=layer,
        spec=spec,
        oracle=oracle,
        evidence=evidence,
        setup_error=error,
        budget=budget,
        foreign=oracle is not None and type(oracle).__module__ not in BUILTIN_MODULES,
    )


# A plain frozen class, not a dataclass: compared by identity, shown by its own ``__repr__``,
# and each method ``dataclasses`` generates is compiled from source at every start
# (``otel_oracles._frozen``).
class CompiledContract(Frozen):
    """A contract ready to grade: the plain ``contract``, its ``checks`` in result order
    (evidence, invariants, tolerances) and its trace ``selector``. Immutable; share it
    across threads and trajectories."""

    __slots__ = ("checks", "contract", "evidence", "plain", "plan", "selector", "workspace")
    contract: Contract
    checks: tuple[CompiledCheck, ...]
    selector: TraceSelector
    evidence: tuple[str, ...]
    """Every evidence name a check asks for, sorted and unique, made from ``checks``:
    asked of a trajectory once per contract, so that when it lacks none (most
    trajectories), no check asks for its own."""

    plan: Plan
    """``evidence`` made ready to ask of trajectories, once (``Evidence.lacking_of``), not
    looked up by its names for every trajectory."""

    plain: bool
    """Whether the contract's values every verdict copies (``id``, ``version``,
    ``content_hash``, ``name``) are exactly of their fields' types: worked out once here,
    not per verdict (``CheckRunner.verdict`` in the core). A validated contract's are; one
    built by ``model_construct`` may hold anything, and its verdicts are validated."""

    workspace: WorkspaceReplay | None
    """The contract's workspace as compiled, replayed in memory over a copy of its files
    written once (not once per trajectory, nor looked up by its items), or ``None`` when
    the contract has none."""

    def __init__(
        self, contract: Contract, checks: tuple[CompiledCheck, ...], selector: TraceSelector
    ) -> None:
        set_field(self, "contract", contract)
        set_field(self, "checks", checks)
        set_field(self, "selector", selector)
        names = tuple(sorted({name for check in checks for name in check.evidence}))
        set_field(self, "evidence", names)
        set_field(self, "plan", Plan(names))
        c = contract
        plain = (
            type(c.id) is str
            and type(c.version) is int
            and type(c.content_hash) is str
            and type(c.name) is str
        )
        set_field(self, "plain", plain)
        workspace = None if c.workspace is None else WorkspaceReplay(c.workspace)
        set_field(self, "workspace", workspace)

    def selects(self, trace: Trace, agents: MappedAgents | None = None) -> bool:
        """Whether the contract's ``match`` selects ``trace`` (``agents``: see
        ``otel_oracles.grade.selector``). May raise ``RegexBudgetExceeded``."""
        return self.selector(trace, agents)

    def could_select(self, trace: Trace) -> str | None:
        """For a trace ``selects`` rejected whose spans name parents that never arrived: why
        the missing part could make the contract select it, else ``None``
        (``otel_oracles.grade.selector``)."""
        return self.selector.could_select(trace)

    def __repr__(self) -> str:
        return f"CompiledContract(id={self.contract.id!r}, checks={len(self.checks)})"
