"""The oracle seam: subclass ``OracleCheck``, declare ``oracle_type`` and a ``Params`` model,
decorate with ``@register_oracle``.

An oracle returns a ``Finding``; the evaluator turns it into an ``Outcome`` according to the
layer the contract put it in:

=============  ==================  =====================================================
finding        invariant layer     tolerance layer
=============  ==================  =====================================================
pass, used=0   pass                pass
pass, used>0   pass                tolerated (a budgeted exception, within budget)
fail           invariant_failure   budget_exhausted
fail, rule     invariant_failure   invariant_failure (the exception broke the tolerance's
                                   terms, e.g. a degraded answer that hid the degradation)
missing        missing_evidence    missing_evidence
raises         error               error
=============  ==================  =====================================================

So an oracle with a budget param (``max``, ``allowed``) reports ``used`` and fails only when
the budget is exceeded; the same class serves both layers.
"""

import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    Self,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
)

from pydantic import BaseModel, ConfigDict, model_validator

from otel_oracles._native import CheckPlan, SlotClass
from otel_oracles.errors import SandboxError
from otel_oracles.grade.evidence import Evidence
from otel_oracles.model.field_docs import describe_fields
from otel_oracles.replay import checked_parts
from otel_oracles.sandbox import SANDBOXED, CommandPolicy

if TYPE_CHECKING:
    from otel_oracles.model.contract import Contract
    from otel_oracles.model.step import Trajectory
    from otel_oracles.sandbox import CommandRun


def is_string_list(annotation: Any) -> bool:
    """``list[str]`` (items possibly ``Annotated``, the list possibly optional)."""
    if get_origin(annotation) in (Union, types.UnionType):
        return any(is_string_list(a) for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is not list:
        return False
    (item,) = get_args(annotation) or (Any,)
    if get_origin(item) is Annotated:
        item = get_args(item)[0]
    return item is str


def _params_schema(schema: dict[str, Any], cls: type[BaseModel]) -> None:
    """JSON Schema of a params model: each param described by its attribute docstring, and
    every list-of-strings param accepts one string too."""
    describe_fields(schema, cls)
    for name in getattr(cls, "string_list_params", ()):
        prop = schema.get("properties", {}).get(name)
        if prop is not None and prop.get("type") == "array":
            meta = {k: prop.pop(k) for k in ("title", "description", "default") if k in prop}
            original = dict(prop)
            prop.clear()
            prop.update({**meta, "anyOf": [{"type": "string"}, original]})


class OracleParams(BaseModel):
    """Base for every oracle's params: unknown keys are errors, values are immutable.

    Every list-of-strings param also accepts one string (``tools: search`` is
    ``tools: [search]``), so contract authors need not remember which params are lists.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        json_schema_extra=_params_schema,
    )
    string_list_params: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.string_list_params = frozenset(
            name for name, info in cls.model_fields.items() if is_string_list(info.annotation)
        )

    @model_validator(mode="before")
    @classmethod
    def _one_string_is_a_list(cls, data: Any) -> Any:
        lists = cls.string_list_params
        if not lists or not isinstance(data, dict):
            return data
        return {k: [v] if k in lists and isinstance(v, str) else v for k, v in data.items()}


class NoParams(OracleParams):
    """For oracles that take no params."""


Coverage = Literal["strict", "lenient"]
"""How a check that needs complete visibility treats spans no convention recognised:
``strict`` (a pass becomes ``missing_evidence`` naming them) or ``lenient`` (ignored)."""


class CoverageParams(OracleParams):
    """Base of the params of checks with ``needs_full_coverage``."""

    coverage: Coverage | None = None
    """``lenient``: judge even when spans of the trace were not recognised by any convention;
    ``strict``: such spans turn a pass into ``missing_evidence``. Unset: the contract's
    ``evidence: {coverage: ...}``, itself ``strict`` unless relaxed."""


class PlainParams:
    """Base of the classes ``plain_params`` makes: a params model's fields as slots, read
    without pydantic.

    A pydantic model defines ``__getattr__``, so every read of one of its fields goes
    through the type's ``__getattr__`` hook and the interpreter never specializes it: an
    oracle's ``check`` reading ``p.max``, ``p.tools`` ... for every trajectory paid that
    hook each time. A copy made once per compiled check is read as any slot is. Read-only,
    equal (and hashed) by value as the frozen model is, shown as the model would be.
    """

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} params are read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} params are read-only")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash((type(self), tuple(getattr(self, f) for f in self._fields)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({shown})"

    def __copy__(self) -> Self:
        """Itself, as nothing can change it (``copy`` would otherwise set the slots)."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self


_PLAIN_CLASSES: dict[type[BaseModel], type[PlainParams]] = {}
"""Each params model's ``PlainParams`` class, made the first time one of its values is
copied."""

_MODEL_OWN = frozenset(BaseModel.__mro__)


def _plain_class(model: type[BaseModel]) -> type[PlainParams]:
    """The ``PlainParams`` class of ``model``: its fields as slots, and what the model's own
    classes (not ``BaseModel``) define for reading: methods (``constrains_args``),
    properties, class constants, ``__str__``. Validators come along unused."""
    plain = _PLAIN_CLASSES.get(model)
    if plain is not None:
        return plain
    names = tuple(model.model_fields)
    namespace: dict[str, Any] = {}
    for klass in reversed(model.__mro__):
        if klass in _MODEL_OWN:
            continue
        for name, value in vars(klass).items():
            if name in ("__str__", "__format__") or not (
                name.startswith("_") or name.startswith("model_") or name in names
            ):
                namespace[name] = value
    namespace.update(
        __slots__=names,
        _fields=names,
        __module__=model.__module__,
        __qualname__=model.__qualname__,
        __doc__=model.__doc__,
    )
    plain = cast(type[PlainParams], type(model.__name__, (PlainParams,), namespace))
    _PLAIN_CLASSES[model] = plain
    return plain


def _plain_value(value: Any) -> Any:
    """``value`` with params models in it (itself, or the items of a list or tuple) made
    ``PlainParams``; the same object when it holds none."""
    if isinstance(value, BaseModel):
        return plain_params(value)
    if type(value) in (list, tuple) and any(isinstance(v, BaseModel) for v in value):
        return type(value)(_plain_value(v) for v in value)
    return value


P = TypeVar("P", bound=BaseModel)


def plain_params(params: P) -> P:
    """A read-only copy of ``params`` whose fields are plain slots (``PlainParams``), with
    the params models among its values (``tool_sequence``'s ``expected`` items) copied the
    same way. Typed as the model because it reads as the model does (its fields, methods
    and properties); it is not an instance of it, nor does it carry pydantic's API
    (``model_dump``, validation): that stays on the model itself."""
    plain = _plain_class(type(params))
    copy = object.__new__(plain)
    for name in plain._fields:
        object.__setattr__(copy, name, _plain_value(getattr(params, name)))
    return cast(P, copy)


@dataclass(frozen=True, slots=True)
class Finding:
    """What one oracle found.

    ``status`` is ``pass``, ``fail`` or ``missing`` (the evidence needed to judge is absent:
    the message must name what was missing and where). ``used`` counts budgeted exceptions
    seen (retries, a disclosed degradation). ``span_ids``/``step_indexes`` point at what
    caused the result, so it can be attached to that span. ``breach`` says what a ``fail``
    broke: ``budget`` (more exceptions than allowed) or ``rule`` (a condition no budget can
    buy, such as an undisclosed degradation); a tolerance reports a rule breach as an
    invariant failure, because spending budget is not permission to break its terms.
    """

    status: Literal["pass", "fail", "missing"]
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    span_ids: tuple[str, ...] = ()
    step_indexes: tuple[int, ...] = ()
    used: int = 0
    breach: Literal["budget", "rule"] = "budget"
    unseen: bool = False
    """A result that rests on something not seen: a ``fail`` for it (too few calls), or a
    ``pass`` of a check that needs every span only on this branch (no dependency degraded).
    Unrecognised spans may hold it, so the evaluator makes it ``missing_evidence`` there (and
    on a fragment of a run), as it does any pass of a check that needs every span (unless
    coverage is relaxed)."""

    # ``ok``, ``fail`` and ``missing`` name their keywords and build the finding positionally
    # (every check returns one, and forwarding ``**kw`` cost as much as the dataclass itself),
    # made without the generated ``__init__`` (``_filled``).

    @classmethod
    def ok(
        cls,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        span_ids: tuple[str, ...] = (),
        step_indexes: tuple[int, ...] = (),
        used: int = 0,
        breach: Literal["budget", "rule"] = "budget",
        unseen: bool = False,
    ) -> "Finding":
        """A pass (``details`` defaults to a new empty dict, as the field does)."""
        return _filled(cls, "pass", message, details, span_ids, step_indexes, used, breach, unseen)

    @classmethod
    def fail(
        cls,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        span_ids: tuple[str, ...] = (),
        step_indexes: tuple[int, ...] = (),
        used: int = 0,
        breach: Literal["budget", "rule"] = "budget",
        unseen: bool = False,
    ) -> "Finding":
        """A failure (what ``breach`` it is: see the class)."""
        return _filled(cls, "fail", message, details, span_ids, step_indexes, used, breach, unseen)

    @classmethod
    def missing(
        cls,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        span_ids: tuple[str, ...] = (),
        step_indexes: tuple[int, ...] = (),
        used: int = 0,
        breach: Literal["budget", "rule"] = "budget",
        unseen: bool = False,
    ) -> "Finding":
        """Missing evidence (the message names what and where)."""
        return _filled(
            cls, "missing", message, details, span_ids, step_indexes, used, breach, unseen
        )


_make_finding = SlotClass(Finding, [f.name for f in fields(Finding)]).make
"""``Finding(...)`` made in its memory by the core (``SlotClass``): the frozen dataclass's
generated ``__init__`` sets each of its eight fields through ``object.__setattr__``, a
method-wrapper call with an argument tuple, ~10 k instructions a finding, and every check
returns one (docs/performance-history.md)."""


def _filled(
    cls: type[Finding],
    status: Literal["pass", "fail", "missing"],
    message: str,
    details: dict[str, Any] | None,
    span_ids: tuple[str, ...],
    step_indexes: tuple[int, ...],
    used: int,
    breach: Literal["budget", "rule"],
    unseen: bool,
) -> Finding:
    """``cls(status, message, details or {}, ...)``, made in its memory (``_make_finding``) when
    ``cls`` is ``Finding`` itself (a subclass may add fields, or a ``__post_init__``: it gets
    its own ``__init__``)."""
    if details is None:
        details = {}
    if cls is not Finding:
        return cls(status, message, details, span_ids, step_indexes, used, breach, unseen)
    return _make_finding(status, message, details, span_ids, step_indexes, used, breach, unseen)


class GradeContext:
    """Everything an oracle may look at. ``workspace`` is the replayed directory for
    contracts with an AgentBench workspace, else ``None``.

    The evaluator may hand over the workspace lazily: ``materialize`` replays it on disk the
    first time ``workspace`` is read, and ``files`` (the replayed files, computed in memory)
    lets ``replayed_file`` answer reads without a directory until then. Checks that never
    touch the workspace then cost no temporary directory at all.

    ``evidence`` answers, once per trajectory, what checks keep asking of it (its tool calls,
    model calls, final answer, evidence gaps) and keeps values derived from its steps; read
    the trajectory through it rather than recomputing per check.
    """

    __slots__ = (
        "_files",
        "_materialize",
        "_workspace",
        "commands",
        "contract",
        "evidence",
        "initial_workspace",
        "replay_error",
        "trajectory",
    )

    def __init__(
        self,
        trajectory: "Trajectory",
        contract: "Contract",
        workspace: Path | None = None,
        initial_workspace: dict[str, str] | None = None,
        *,
        materialize: Callable[[], Path] | None = None,
        files: Mapping[str, bytes] | None = None,
        commands: CommandPolicy = SANDBOXED,
        evidence: Evidence | None = None,
    ) -> None:
        self.trajectory = trajectory
        self.evidence = Evidence(trajectory) if evidence is None else evidence
        """The trajectory's ``Evidence`` (shared by every check graded on it)."""
        self.commands = commands
        """Whether and how ``run_command`` may run commands (the operator's choice)."""
        self.contract = contract
        self.initial_workspace: dict[str, str] = (
            {} if initial_workspace is None else initial_workspace
        )
        self.replay_error: BaseException | None = None
        """Set when a lazy replay failed; the evaluator turns it into the verdict's one
        ``replay`` result, exactly as when the replay runs before any check."""
        self._workspace = workspace
        self._materialize = materialize if workspace is None else None
        self._files = files if workspace is None else None

    def __repr__(self) -> str:
        return (
            f"GradeContext(trajectory={self.trajectory.trace_id!r}, "
            f"contract={self.contract.id!r}, workspace={self._workspace!r})"
        )

    @property
    def workspace(self) -> Path | None:
        if self._workspace is None and self._materialize is not None:
            materialize, self._materialize = self._materialize, None
            self._files = None  # from now on the directory (which a command may change) rules
            try:
                self._workspace = materialize()
            except Exception as exc:
                self.replay_error = exc
                raise
        return self._workspace

    @property
    def has_workspace(self) -> bool:
        """Whether ``workspace`` is (or would be, once read) a directory, without replaying."""
        return self._workspace is not None or self._materialize is not None

    def command_problem(self) -> str | None:
        """Why ``run_command`` cannot run anything under this context's policy (turned
        off, or no sandbox on this machine), or None when it can."""
        if self.commands.mode == "off":
            return self.commands.off_reason
        if self.commands.mode == "sandbox":
            from otel_oracles.sandbox import sandbox_problem

            return sandbox_problem()
        return None

    def run_command(self, command: str, timeout: float) -> "CommandRun":
        """Run ``command`` with ``/bin/sh`` in the replayed workspace under the context's
        policy: sandboxed unless the operator chose ``unsafe``. The one way a check runs
        anything; raises ``SandboxError`` (an ``error`` result) when it may not."""
        workspace = self.workspace
        if workspace is None:
            raise SandboxError("a command needs a replayed workspace, and there is none")
        from otel_oracles.sandbox import run_command

        return run_command(command, workspace, timeout, self.commands)

    def replayed_file(self, rel: str, what: str) -> tuple[bool, bytes | None]:
        """``(known, data)`` for ``rel`` in the workspace without touching the disk:
        ``known`` is False when only the directory can tell (read ``workspace`` then);
        ``data`` is ``None`` when ``rel`` is not a file there. Path problems raise the same
        ``ReplayError`` as ``replay.safe_target``."""
        if self._files is None or self._workspace is not None:
            return False, None
        return True, self._files.get("/".join(checked_parts(rel, what)))


_make_context = SlotClass(
    GradeContext,
    (
        "trajectory", "contract", "commands", "evidence", "initial_workspace",
        "_workspace", "_materialize", "_files", "replay_error",
    ),
    keywords=True,
).make  # fmt: skip


def workspaceless_context(
    trajectory: "Trajectory", contract: "Contract", commands: CommandPolicy, evidence: Evidence
) -> GradeContext:
    """``GradeContext(trajectory, contract, initial_workspace={}, commands=commands,
    evidence=evidence)``: the context of a contract without a workspace (most contracts,
    one per contract graded), made in its memory by the core (``SlotClass``: its slots
    written, no ``__init__`` called with keywords, ~1,500 instructions less a context)."""
    return _make_context(trajectory, contract, commands, evidence, {}, None, None, None, None)


class OracleCheck(ABC):
    """Base class of every oracle type.

    Subclasses set ``oracle_type`` and ``Params`` and implement ``check``. ``evidence`` names
    the step fields the oracle needs (see ``otel_oracles.grade.evidence``); when a trace
    lacks them the evaluator reports ``missing_evidence`` without calling ``check``.
    ``check`` may raise: the evaluator turns that into an ``error`` result and runs the rest.
    """

    oracle_type: ClassVar[str]
    Params: ClassVar[type[OracleParams]] = NoParams
    evidence: ClassVar[frozenset[str]] = frozenset()
    summary: ClassVar[str] = ""
    """One line for ``otel-oracles oracles``; defaults to the docstring's first line."""
    runs_commands: ClassVar[bool] = False
    """True for checks that execute something over the workspace (``test_must_pass``).
    Such a check runs only where ``GradeContext.command_problem()`` is None (otherwise its
    result is ``error`` without calling ``check``) and must run through
    ``GradeContext.run_command``, which sandboxes it (docs/security.md)."""

    needs_full_coverage: ClassVar[bool] = False
    """True for checks that can pass only when every span was seen for what it is
    (``tool_not_called``, ``no_network``, ``citations_grounded``, ``handoff``, and those that
    bound a count: ``max_tool_calls``, ``tool_retries``, ``tool_errors``, ``loop_detected``,
    ``max_steps``, ``tokens``): a span no convention recognised may be the forbidden call, the
    network access, the source, the transfer, or one more call, retry or model call. Their
    params derive from ``CoverageParams``; the evaluator turns their pass on a trajectory
    with unrecognised spans into ``missing_evidence`` (a failure stays a failure) unless the
    check or the contract relaxes coverage."""

    holds_on_fragments: ClassVar[bool] = False
    """True for a check with ``needs_full_coverage`` whose pass stays true on a trace that
    holds only part of a run (``citations_grounded``: the answer's citations are backed by
    the results it was given, whatever else the run did). Otherwise the evaluator turns a
    pass of such a check on a fragment (``otel_oracles.grade.evidence.fragment_gap``) into
    ``missing_evidence``, whatever the coverage mode."""

    failure_stands_on_gaps: ClassVar[bool] = False
    """True for a check whose failure rests only on steps the trace does show, and which
    more steps can never undo: a recorded call of a forbidden tool (``tool_not_called``), a
    recorded network command or request (``no_network``), a count already over its budget
    (``max_tool_calls``, ``max_steps``, ``tool_errors``, ``tokens``, ``latency``: what is
    missing could only add calls, failures, model calls, tokens or time). When evidence the
    check needs is missing (the trace holds only part of a run, some calls' names or token
    counts were not recorded, the trace was graded incomplete on timeout), the evaluator
    still runs it, and a failure it finds stands, its message naming the missing evidence;
    anything else it finds (a pass, a count within budget, a failure for something not
    seen) is ``missing_evidence`` as usual. Without this, a forbidden call recorded in the
    second turn of a conversation traced apart would read as missing evidence, which a
    contract may accept (``on_missing_evidence: warn``) as a pass. A check whose recorded
    failure missing data could explain away (a loop of calls whose arguments were not
    captured, a citation the unseen results may back) leaves this False."""

    native_plan: "CheckPlan[Finding] | None" = None
    """The check's usual answer made by the core (``CheckPlan``, ``native/python/src/
    check_plans.rs``), built once from its params by a built-in's ``__init__``: the
    evaluator's loop asks it instead of entering ``check``, and runs ``check`` only when it
    answers ``None``. ``check`` asks the same plan first, so both give one finding. A
    plug-in leaves it ``None``; its ``check`` is always called."""

    def __init__(self, params: OracleParams) -> None:
        self.params = params
        self.given: OracleParams = plain_params(params)
        """``params`` copied once onto plain slots (``plain_params``): what the built-in
        checks read, as reading a pydantic model's field on every trajectory costs its
        ``__getattr__`` hook each time. A subclass narrows it as it narrows ``params``."""

    def coverage(self, contract: "Contract") -> Coverage:
        """The coverage mode of this check: its own ``coverage`` param, else the contract's."""
        own: Coverage | None = getattr(self.given, "coverage", None)
        return own if own is not None else contract.coverage

    @abstractmethod
    def check(self, ctx: GradeContext) -> Finding:
        """Judge one trajectory. Pure apart from ``ctx.workspace``; never mutates ``ctx``."""

    def required_evidence(self) -> frozenset[str]:
        """Evidence needed for these params (override when it depends on them)."""
        return self.evidence
