"""Contracts (and AgentBench tasks, which are contracts as they are).

A contract has a selector (``match``), three layers (``evidence``, ``invariants``,
``tolerances``) and optionally an AgentBench ``workspace``. Oracle specs are written flat
(``{type: file_not_modified, path: x}``); each is validated against the params model of its
oracle class, so required params are declared once, on the class.

Files are validated when loaded, never at use time: ``load_contract`` raises ``ContractError``
whose message names the file, the JSON path of the bad field and what was expected.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from otel_oracles.config_yaml import YamlLimitError, load_yaml, read_config_bytes
from otel_oracles.errors import ContractError

SPEC_META_KEYS: frozenset[str] = frozenset({"type", "name", "why", "id"})
"""Keys of an oracle spec that belong to the spec, not to the oracle's params."""


class OracleSpec(BaseModel):
    """One check in a contract: its type, its validated params, and the author's notes."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    type: str
    params: dict[str, Any] = Field(default_factory=dict)
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

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    resource: dict[str, Any] = Field(default_factory=dict)
    """Resource attributes of the trace's root span."""
    span: dict[str, Any] = Field(default_factory=dict)
    """Attributes that at least one span of the trace carries."""
    root_name: str | None = None
    """The root span's name."""


class Contract(BaseModel):
    """A contract or AgentBench task, loaded and validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

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
    evidence: list[OracleSpec] = Field(default_factory=list)
    coverage: Literal["strict", "lenient"] = "strict"
    """How checks that need complete visibility (``tool_not_called``, ``no_network``,
    ``citations_grounded``, ``handoff``) treat spans no convention recognised: ``strict``
    turns their pass into ``missing_evidence``; ``lenient`` ignores such spans. Written
    ``evidence: {coverage: lenient}`` (or ``{require: [...], coverage: lenient}``); a check's
    own ``coverage`` param overrides it."""
    invariants: list[OracleSpec] = Field(default_factory=list)
    tolerances: list[OracleSpec] = Field(default_factory=list)
    on_missing_evidence: Literal["fail", "warn"] = "fail"
    tags: list[str] = Field(default_factory=list)
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
    """`` (did you mean 'name'?)`` for a near miss among ``known``, else ""."""
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

OTLP_KEYS: frozenset[str] = frozenset({"resourceSpans", "resourceLogs", "resourceMetrics"})


def parse_contract(data: Any, source: str, content_hash: str = "") -> Contract:
    """Validate a decoded contract/task document, reporting every mistake at once: the
    AgentBench task rules, each oracle spec, unknown and mistyped top-level fields."""
    from otel_oracles.grade.registry import parse_oracle_spec  # registry imports the model

    if not isinstance(data, dict):
        raise ContractError("expected a mapping at the top level", source)
    if OTLP_KEYS & data.keys():
        raise ContractError(
            "this is OTLP trace data, not a contract: give trace files as the PATHS of "
            "'otel-oracles grade PATHS --contracts CONTRACTS'",
            source,
        )
    if "steps" in data and "oracles" not in data and "invariants" not in data:
        raise ContractError(
            "this is an AgentBench trajectory, not a contract: give it with --trajectory "
            "to 'otel-oracles run' or 'gate'",
            source,
        )
    problems: list[str] = []
    data = dict(data)
    agentbench = "oracles" in data
    if agentbench:
        problems.extend(_agentbench_task_problems(data))
        if "invariants" in data:
            problems.append("use either 'oracles' (AgentBench) or 'invariants', not both")
        data["invariants"] = data.pop("oracles")
    if "budget" in data:  # compact failure budget -> tolerances/invariants (trace_budget.py)
        from otel_oracles.grade.oracles.trace_budget import expand_budget

        try:
            data = expand_budget(data, source)
        except ContractError as exc:
            problems.extend(exc.problems)
            data.pop("budget", None)
    if "coverage" in data:
        problems.append("coverage: write it under evidence: {coverage: lenient}")
        data.pop("coverage")
    evidence = data.get("evidence")
    if isinstance(evidence, dict):
        try:
            data.update(_evidence_block(evidence, source))
        except ContractError as exc:
            problems.extend(exc.problems)
            data["evidence"] = []
    specs: dict[str, list[OracleSpec]] = {}
    for layer in ("evidence", "invariants", "tolerances"):
        raw = data.pop(layer, [])
        key = "oracles" if agentbench and layer == "invariants" else layer
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            problems.append(f"{key}: expected a list")
            raw = []
        specs[layer] = []
        for i, item in enumerate(raw):
            try:
                specs[layer].append(parse_oracle_spec(item, layer, f"{key}[{i}]", source))
            except ContractError as exc:
                problems.extend(exc.problems)
    try:
        contract = Contract.model_validate(
            {
                **data,
                **specs,
                "source": source,
                "content_hash": content_hash,
                "agentbench": agentbench,
            }
        )
    except ValidationError as exc:
        known = {*Contract.model_fields, *CONTRACT_KEYS} - {"source", "content_hash", "agentbench"}
        problems.extend(validation_problems(exc, known_fields=known))
        raise ContractError("", source, problems=problems) from None
    if problems:
        raise ContractError("", source, problems=problems)
    return contract


EVIDENCE_BLOCK_KEYS: frozenset[str] = frozenset({"require", "coverage"})


def _evidence_block(block: dict[str, Any], source: str) -> dict[str, Any]:
    """``evidence: {require: [...], coverage: lenient}`` -> the ``evidence`` list and the
    contract's ``coverage`` (the list form, ``evidence: [...]``, stays the short way)."""
    unknown = sorted(set(block) - EVIDENCE_BLOCK_KEYS)
    if unknown:
        raise ContractError(
            f"evidence.{unknown[0]}: unknown field (evidence as a mapping takes require, coverage)",
            source,
        )
    out: dict[str, Any] = {"evidence": block.get("require") or []}
    if "coverage" in block:
        coverage = block["coverage"]
        if coverage not in ("strict", "lenient"):
            raise ContractError(
                f"evidence.coverage: expected 'strict' or 'lenient', got {coverage!r}", source
            )
        out["coverage"] = coverage
    return out


def _agentbench_task_problems(data: dict[str, Any]) -> list[str]:
    """The exact AgentBench task rules: id/name/description/prompt strings, a non-empty
    workspace of relative path -> content, a non-empty oracles list, optional string tags.
    Every breach is reported, not only the first."""
    problems: list[str] = []
    for key in ("id", "name", "description", "prompt"):
        if key not in data:
            problems.append(f"{key}: field required")
        elif not isinstance(data[key], str):
            problems.append(f"{key}: expected a string, got {type(data[key]).__name__}")
    ws = data.get("workspace")
    if not isinstance(ws, dict) or not ws:
        problems.append("workspace: expected a non-empty map of relative path -> content")
        ws = {}
    for path, content in ws.items():
        norm = str(path).replace("\\", "/")
        if (
            not norm.strip("/.")
            or norm.startswith("/")
            or (len(norm) > 1 and norm[1] == ":")
            or ".." in norm.split("/")
        ):
            problems.append(f"workspace.{path}: expected a relative path inside the workspace")
        if not isinstance(content, str):
            problems.append(
                f"workspace.{path}: expected file content as a string, got {type(content).__name__}"
            )
    if not isinstance(data["oracles"], list) or not data["oracles"]:
        problems.append("oracles: expected a non-empty list")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        problems.append("tags: expected a list of strings")
    return problems


def load_contract(path: str | Path) -> Contract:
    """Load a contract or AgentBench task from JSON or YAML (chosen by extension)."""
    p = Path(path)
    try:
        raw = read_config_bytes(p)
    except OSError as exc:
        raise ContractError(f"cannot read: {exc.strerror}", str(p)) from None
    except YamlLimitError as exc:
        raise ContractError(exc.problem, str(p)) from None
    try:
        text = raw.decode("utf-8")
        data = json.loads(text) if p.suffix == ".json" else load_yaml(text)
    except UnicodeDecodeError:
        raise ContractError("not UTF-8 text", str(p)) from None
    except json.JSONDecodeError as exc:
        raise ContractError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", str(p)
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ContractError(
            f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", str(p)
        ) from None
    return parse_contract(data, str(p), hashlib.sha256(raw).hexdigest()[:16])


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
