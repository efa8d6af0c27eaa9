"""``otel-oracles schema``: the JSON Schema of the contract file format, for editor completion
and CI linting.

Generated, never hand-written: top-level fields come from the ``Contract`` model, each
oracle spec from its registered class's ``Params`` model (plug-ins included), evidence names
from the probe table, and the ``budget:`` keys from the shorthand's own table. A new oracle
type or param shows up here without anyone editing this file.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import click
from pydantic import TypeAdapter

from otel_oracles.grade.budget import BUDGET_KEYS
from otel_oracles.grade.evidence import EVIDENCE_DESCRIPTIONS
from otel_oracles.grade.registry import registered
from otel_oracles.model.contract import SPEC_META_KEYS, Contract
from otel_oracles.model.field_docs import field_descriptions

SCHEMA_ID = "https://otel-oracles.dev/schemas/contract.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

INTERNAL_FIELDS = frozenset(
    {"source", "content_hash", "agentbench", "evidence", "coverage", "invariants", "tolerances"}
)
"""Contract model fields that are not written by authors, or whose schema is built here."""

META_PROPS: dict[str, Any] = {
    "name": {"type": "string", "description": "Label used as the check's name in results."},
    "id": {"type": "string", "description": "Alias of name (AgentBench tasks)."},
    "why": {
        "type": "string",
        "description": "Why the check exists; for a tolerance, why the exception is acceptable.",
    },
}


def _relocate(schema: dict[str, Any], prefix: str, defs: dict[str, Any]) -> dict[str, Any]:
    """Move a model schema's ``$defs`` into the shared ``defs`` under ``prefix.Name`` and
    rewrite its ``$ref``s, so two oracles' same-named helper models cannot collide."""
    local = schema.pop("$defs", {})
    text = json.dumps(schema)
    for name in local:
        text = text.replace(f'"#/$defs/{name}"', f'"#/$defs/{prefix}.{name}"')
    for name, sub in local.items():
        sub_text = json.dumps(sub)
        for other in local:
            sub_text = sub_text.replace(f'"#/$defs/{other}"', f'"#/$defs/{prefix}.{other}"')
        defs[f"{prefix}.{name}"] = json.loads(sub_text)
    out: dict[str, Any] = json.loads(text)
    return out


def _oracle_spec(oracle_type: str, cls: Any, defs: dict[str, Any]) -> dict[str, Any]:
    params = _relocate(cls.Params.model_json_schema(by_alias=True), oracle_type, defs)
    props = {k: v for k, v in params.get("properties", {}).items() if k not in SPEC_META_KEYS}
    doc = inspect.getdoc(cls) or ""
    return {
        "title": oracle_type,
        "description": cls.summary or (doc.splitlines()[0] if doc else oracle_type),
        "type": "object",
        "properties": {"type": {"const": oracle_type}, **META_PROPS, **props},
        "required": ["type", *params.get("required", [])],
        "additionalProperties": False,
    }


def _evidence_item() -> dict[str, Any]:
    names = [n for n in EVIDENCE_DESCRIPTIONS if n != "attribute"]
    return {
        "description": "An evidence name, {field, tool}, {attribute}, or any oracle spec.",
        "anyOf": [
            {
                "type": "string",
                "enum": names,
                "description": "; ".join(f"{n}: {EVIDENCE_DESCRIPTIONS[n]}" for n in names),
            },
            {"$ref": "#/$defs/oracle.evidence"},
            {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "enum": names},
                    "tool": {"type": "string", "description": "Tool glob (tool_* evidence)."},
                    **META_PROPS,
                },
                "required": ["field"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": names},
                    "tool": {"type": "string", "description": "Tool glob (tool_* evidence)."},
                    **META_PROPS,
                },
                "required": ["type"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "attribute": {"type": "string", "description": "Attribute key."},
                    **META_PROPS,
                },
                "required": ["attribute"],
                "additionalProperties": False,
            },
            {"$ref": "#/$defs/oracle_spec"},
        ],
    }


def _budget() -> dict[str, Any]:
    kinds: dict[str, dict[str, Any]] = {
        "int": {"type": "integer", "minimum": 0},
        "bool": {"type": "boolean"},
    }
    props = {}
    for key, doc in BUDGET_KEYS.items():
        kind, _, text = doc.partition(":")
        props[key] = {**kinds.get(kind, {"type": "string"}), "description": text.strip()}
    return {
        "type": "object",
        "description": "Compact failure budget, expanded into tolerances and invariants.",
        "properties": props,
        "additionalProperties": False,
    }


def contract_json_schema() -> dict[str, Any]:
    """The whole contract-file schema (JSON Schema 2020-12)."""
    defs: dict[str, Any] = {}
    specs = []
    for oracle_type, reg in registered().items():
        defs[f"oracle.{oracle_type}"] = _oracle_spec(oracle_type, reg.cls, defs)
        specs.append({"$ref": f"#/$defs/oracle.{oracle_type}"})
    defs["oracle_spec"] = {"oneOf": specs, "description": "One check: its type and params."}
    props: dict[str, Any] = {}
    required: list[str] = []
    described = field_descriptions(Contract)
    for name, info in Contract.model_fields.items():
        if name in INTERNAL_FIELDS or info.annotation is None:
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(info.annotation)
        sub = _relocate(adapter.json_schema(by_alias=True), name, defs)
        if name in described:
            sub["description"] = described[name]
        props[name] = sub
        if info.is_required():
            required.append(name)
    spec_list = {"type": "array", "items": {"$ref": "#/$defs/oracle_spec"}}
    evidence_list = {"type": "array", "items": _evidence_item()}
    props["evidence"] = {
        "description": (
            "What must be captured to judge at all (a gap is missing_evidence): a list, or "
            "{require: [...], coverage: strict|lenient}."
        ),
        "anyOf": [
            evidence_list,
            {
                "type": "object",
                "properties": {
                    "require": evidence_list,
                    "coverage": {
                        "enum": ["strict", "lenient"],
                        "description": described["coverage"],
                    },
                },
                "additionalProperties": False,
            },
        ],
    }
    props["invariants"] = {**spec_list, "description": "Properties that must always hold."}
    props["tolerances"] = {
        **spec_list,
        "description": "Bounded, documented exceptions (same types with a budget: max, allowed).",
    }
    props["oracles"] = {**spec_list, "description": "AgentBench tasks: the task's invariants."}
    props["budget"] = _budget()
    return {
        "$schema": DIALECT,
        "$id": SCHEMA_ID,
        "title": "otel-oracles contract",
        "description": "A contract (or AgentBench task): evidence, invariants, tolerances.",
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
        "$defs": defs,
    }


@click.command("schema")
@click.option("--indent", type=int, default=2, show_default=True, help="JSON indentation.")
def schema_command(indent: int) -> None:
    """Print the JSON Schema of the contract file format.

    Generated from the contract model and every registered oracle's params (plug-ins
    included), so editors can complete and check contract files.

    \b
    Examples:
      otel-oracles schema > contract.schema.json
      # VS Code / yaml-language-server, first line of a contract:
      # yaml-language-server: $schema=./contract.schema.json
    """
    click.echo(json.dumps(contract_json_schema(), indent=indent or None, sort_keys=False))
