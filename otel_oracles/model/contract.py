"""Contracts (and AgentBench tasks, which are contracts as they are), as plain data.

A contract has a selector (``match``), three layers (``evidence``, ``invariants``,
``tolerances``) and optionally an AgentBench ``workspace``. Each oracle spec holds its params
in their JSON form, as validated by the oracle's params model when the file was loaded.

Loading, validating oracle params and compiling a contract for grading live in
``otel_oracles.grade.loader`` (``load_contract``, ``compile_contract``): they need the oracle
registry, which this data model does not know about.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from otel_oracles.model.defaults import new_dict, new_list
from otel_oracles.model.field_docs import describe_fields

SPEC_META_KEYS: frozenset[str] = frozenset({"type", "name", "why", "id"})
"""Keys of an oracle spec that belong to the spec, not to the oracle's params."""


class OracleSpec(BaseModel):
    """One check in a contract: its type, its validated params, and the author's notes."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)

    type: str
    params: dict[str, Any] = Field(default_factory=new_dict)
    """Params as validated by the oracle's ``Params`` model (defaults filled in)."""
    name: str | None = None
    """Optional label; results use it as the check name (default: the type)."""
    why: str | None = None
    """Why this check exists, or why a tolerance is acceptable."""

    @property
    def label(self) -> str:
        return self.name or self.type


class MatchSpec(BaseModel):
    """Which traces a contract grades. Every given part must hold; omitted = all traces.

    Values are exact strings, or regexes when written ``/like this/``."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)

    resource: dict[str, Any] = Field(default_factory=new_dict)
    """Resource attributes of the trace's root span."""
    span: dict[str, Any] = Field(default_factory=new_dict)
    """Attributes that at least one span of the trace carries."""
    root_name: str | None = None
    """The root span's name."""


class Contract(BaseModel):
    """A contract or AgentBench task, loaded and validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)

    id: str
    version: int = 1
    name: str = ""
    description: str = ""
    prompt: str | None = None
    """AgentBench: the task prompt given to the agent."""
    workspace: dict[str, str] | None = None
    """AgentBench: relative path -> file content, materialized for replay."""
    match: MatchSpec | list[MatchSpec] | None = None
    """Which traces this contract grades: one selector, or a list of selectors of which any
    may select the trace. Omitted = every trace."""
    evidence: list[OracleSpec] = Field(default_factory=new_list)
    coverage: Literal["strict", "lenient"] = "strict"
    """How checks that need complete visibility (``tool_not_called``, ``no_network``,
    ``citations_grounded``, ``handoff``) treat spans no convention recognised: ``strict``
    turns their pass into ``missing_evidence``; ``lenient`` ignores such spans. Written
    ``evidence: {coverage: lenient}`` (or ``{require: [...], coverage: lenient}``); a check's
    own ``coverage`` param overrides it."""
    invariants: list[OracleSpec] = Field(default_factory=new_list)
    tolerances: list[OracleSpec] = Field(default_factory=new_list)
    on_missing_evidence: Literal["fail", "warn"] = "fail"
    tags: list[str] = Field(default_factory=new_list)
    source: str | None = None
    """File the contract was loaded from."""
    content_hash: str = ""
    """sha256 of the source bytes, first 16 hex digits; results carry it."""
    agentbench: bool = False
    """True when the file was an AgentBench task (it had ``oracles``)."""

    def checks(self) -> list[tuple[Literal["evidence", "invariant", "tolerance"], OracleSpec]]:
        return [
            *(("evidence", s) for s in self.evidence),
            *(("invariant", s) for s in self.invariants),
            *(("tolerance", s) for s in self.tolerances),
        ]


def format_loc(loc: tuple[int | str, ...]) -> str:
    """``("oracles", 1, "path")`` -> ``oracles[1].path``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'name'?)`` for a near miss among ``known``, else "".

    ``difflib`` is imported here, for a file with a mistake: ~7 M instructions a start
    otherwise (docs/performance-history.md, "Start-up: logging, difflib and literal tool
    names when needed")."""
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def validation_problems(
    exc: ValidationError,
    prefix: tuple[int | str, ...] = (),
    known_fields: Iterable[str] = (),
) -> list[str]:
    """One message per problem: ``path: what was expected`` (a near-miss field name gets a
    "did you mean" hint from ``known_fields``)."""
    known = list(known_fields)
    lines = []
    for err in exc.errors():
        loc = format_loc(prefix + tuple(err["loc"]))
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "field required"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field" + did_you_mean(str(err["loc"][-1]), known)
        lines.append(f"{loc}: {msg}")
    return lines


def describe_validation_error(exc: ValidationError, prefix: tuple[int | str, ...] = ()) -> str:
    """One line for every problem: ``path: what was expected; ...``."""
    return "; ".join(validation_problems(exc, prefix))


CONTRACT_KEYS: frozenset[str] = frozenset({"oracles", "budget", "workspace", "prompt"})
"""Top-level keys a contract file may hold besides ``Contract``'s own fields (AgentBench
tasks, the budget shorthand): offered in "did you mean" hints."""

CONTRACT_SUFFIXES: tuple[str, ...] = (".json", ".yaml", ".yml")


def discover_contract_files(paths: list[str | Path]) -> list[Path]:
    """Files given directly, plus every contract-suffixed file in given directories (sorted)."""
    out: list[Path] = []
    for item in paths:
        p = Path(item)
        if p.is_dir():
            out.extend(
                sorted(f for f in p.iterdir() if f.suffix in CONTRACT_SUFFIXES and f.is_file())
            )
        else:
            out.append(p)
    return out
