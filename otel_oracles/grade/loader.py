"""Loading contracts (and AgentBench tasks, which are contracts as they are).

Oracle specs are written flat (``{type: file_not_modified, path: x}``); each is validated
once, here, against the params model of its oracle class, so required params are declared
once, on the class. Files are validated when loaded, never at use time: every function here
raises ``ContractError`` whose message names the file, the JSON path of the bad field and
what was expected, reporting every mistake of a file at once.

``compile_contract`` is what graders hold: a ``CompiledContract`` built once from a file (or
from a ``Contract`` made in code). ``load_contract`` and ``parse_contract`` give the plain
``Contract`` data alone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from otel_oracles._frozen import Frozen, set_field
from otel_oracles.config_bytes import ConfigTooLarge, read_config_bytes
from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.errors import ContractError
from otel_oracles.grade._documents import MISSING, DocumentCache
from otel_oracles.grade.budget import parse_budget
from otel_oracles.grade.compiled import CompiledContract, compile_check
from otel_oracles.grade.oracles.base import OracleParams
from otel_oracles.grade.registry import broken_plugins, registered, registration
from otel_oracles.grade.selector import selector_for
from otel_oracles.model.contract import (
    CONTRACT_KEYS,
    SPEC_META_KEYS,
    Contract,
    OracleSpec,
    did_you_mean,
    format_loc,
    validation_problems,
)

OTLP_KEYS: frozenset[str] = frozenset({"resourceSpans", "resourceLogs", "resourceMetrics"})

EVIDENCE_BLOCK_KEYS: frozenset[str] = frozenset({"require", "coverage"})

LAYERS: tuple[str, ...] = ("evidence", "invariants", "tolerances")


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class _Parsed(Frozen):
    """A contract as parsed: the plain data, and each check's params typed (same order as
    ``contract.checks()``)."""

    __slots__ = ("contract", "params")
    contract: Contract
    params: tuple[OracleParams, ...]

    def __init__(self, contract: Contract, params: tuple[OracleParams, ...]) -> None:
        set_field(self, "contract", contract)
        set_field(self, "params", params)


def compile_contract(source: str | Path | Contract) -> CompiledContract:
    """A contract file (or a ``Contract`` made in code) compiled for grading: oracle params
    validated once into their typed models, oracles built, selector compiled. Build it once
    and grade many trajectories with it. Raises ``ContractError`` (naming the file and field)
    for any mistake, including an invalid ``match`` regex."""
    if isinstance(source, Contract):
        return _compile(source, None)
    parsed = _load(Path(source))
    return _compile(parsed.contract, parsed.params)


def load_contract(path: str | Path) -> Contract:
    """Load a contract or AgentBench task from JSON or YAML (chosen by extension)."""
    return _load(Path(path)).contract


def parse_contract(data: Any, source: str, content_hash: str = "") -> Contract:
    """Validate a decoded contract/task document, reporting every mistake at once: the
    AgentBench task rules, each oracle spec, unknown and mistyped top-level fields."""
    return _parse(data, source, content_hash).contract


def _compile(contract: Contract, params: tuple[OracleParams, ...] | None) -> CompiledContract:
    checks = contract.checks()
    typed: tuple[OracleParams | None, ...] = params if params is not None else (None,) * len(checks)
    return CompiledContract(
        contract=contract,
        checks=tuple(
            compile_check(layer, spec, p) for (layer, spec), p in zip(checks, typed, strict=True)
        ),
        selector=selector_for(contract),
    )


def _load(p: Path) -> _Parsed:
    source = str(p)
    try:
        raw = read_config_bytes(p)
    except OSError as exc:
        raise ContractError(f"cannot read: {exc.strerror}", source) from None
    except ConfigTooLarge as exc:
        raise ContractError(exc.problem, source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractError("not UTF-8 text", source) from None
    if p.suffix == ".json":
        try:
            data = load_json_document(text)
        except JsonDocumentError as exc:
            raise ContractError(f"invalid JSON{exc.where}: {exc.problem}", source) from None
    else:
        data = _yaml_document(raw, text, source)
    return _parse(data, source, hashlib.sha256(raw).hexdigest()[:16])


def _yaml_document(raw: bytes, text: str, source: str) -> Any:
    """The file's YAML document: from the cache when it holds these bytes (``_documents``:
    validated by ``_parse`` as the YAML's would be), else loaded and kept there."""
    cache = DocumentCache.from_env()
    key = cache.key(raw) if cache is not None else ""
    if cache is not None:
        document = cache.get(key)
        if document is not MISSING:
            return document
    # YAML only now: a start whose contracts all come from the cache does not import it.
    import yaml

    from otel_oracles.config_yaml import load_yaml

    try:
        document = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ContractError(
            f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", source
        ) from None
    if cache is not None:
        cache.put(key, document)
    return document


def _parse(data: Any, source: str, content_hash: str) -> _Parsed:
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
    budget_checks = []
    if "budget" in data:  # the compact failure budget: checks appended to the layers
        try:
            budget_checks = parse_budget(data.pop("budget"), source).checks()
        except ContractError as exc:
            problems.extend(exc.problems)
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
    typed: dict[str, list[OracleParams]] = {}
    for layer in LAYERS:
        raw = data.pop(layer, [])
        key = "oracles" if agentbench and layer == "invariants" else layer
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            problems.append(f"{key}: expected a list")
            raw = []
        specs[layer], typed[layer] = [], []
        for i, item in enumerate(raw):
            try:
                spec, params = parse_oracle_spec(item, layer, f"{key}[{i}]", source)
            except ContractError as exc:
                problems.extend(exc.problems)
                continue
            specs[layer].append(spec)
            typed[layer].append(params)
    for check in budget_checks:
        specs[check.layer].append(
            OracleSpec(
                type=check.oracle_type,
                params=check.params.model_dump(mode="json"),
                why=check.why,
            )
        )
        typed[check.layer].append(check.params)
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
    return _Parsed(contract, tuple(p for layer in LAYERS for p in typed[layer]))


def parse_oracle_spec(
    item: Any, layer: str, where: str, source: str
) -> tuple[OracleSpec, OracleParams]:
    """Validate one flat oracle spec against its class's ``Params``: the spec as data (params
    in their JSON form, defaults filled in) and the typed params.

    Messages name the JSON path: ``oracles[1].path: field required for oracle type
    'file_not_modified'``.
    """
    if isinstance(item, str) and layer == "evidence":
        item = {"type": item}
    if isinstance(item, dict) and layer == "evidence" and "type" not in item:
        item = {"type": "evidence", **item}  # {attribute: x} / {field: y, tool: z}
    if not isinstance(item, dict):
        raise ContractError(f"{where}: expected a mapping with a 'type'", source)
    oracle_type = item.get("type")
    if not isinstance(oracle_type, str):
        raise ContractError(f"{where}.type: field required (a string naming the oracle)", source)
    reg = registration(oracle_type)  # imports this type's built-in module only
    if layer == "evidence" and "type" in item and reg is None:
        oracle_type = "evidence"
        item = {
            "type": "evidence",
            "field": item["type"],
            **{k: v for k, v in item.items() if k != "type"},
        }
        reg = registration(oracle_type)
    if reg is None:
        known = registered()
        broken = broken_plugins()
        if oracle_type in broken:
            raise ContractError(
                f"{where}.type: oracle type {oracle_type!r} failed to load: {broken[oracle_type]}",
                source,
            )
        hint = did_you_mean(oracle_type, known)
        raise ContractError(
            f"{where}.type: unknown oracle type {oracle_type!r}{hint}; "
            f"known types: {', '.join(known)}",
            source,
        )
    cls = reg.cls
    params = {k: v for k, v in item.items() if k not in SPEC_META_KEYS}
    try:
        validated = cls.Params.model_validate(params)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = f"{where}.{format_loc(tuple(err['loc']))}" if err["loc"] else where
            if err["type"] == "missing":
                problems.append(f"{loc}: field required for oracle type {oracle_type!r}")
            elif err["type"] == "extra_forbidden":
                names = [f.alias or n for n, f in cls.Params.model_fields.items()]
                hint = did_you_mean(str(err["loc"][-1]), [*names, *SPEC_META_KEYS])
                problems.append(
                    f"{loc}: unknown param for oracle type {oracle_type!r}{hint} "
                    f"(params: {', '.join(names) or 'none'})"
                )
            else:
                problems.append(f"{loc}: {err['msg']}")
        raise ContractError("", source, problems=problems) from None
    for meta in ("name", "why"):
        if meta in item and not isinstance(item[meta], str):
            raise ContractError(f"{where}.{meta}: expected a string", source)
    spec = OracleSpec(
        type=oracle_type,
        params=validated.model_dump(mode="json"),
        name=item.get("name") or item.get("id"),
        why=item.get("why"),
    )
    return spec, validated


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
