"""``otel-oracles oracles``: list the oracle types this installation knows, with their params
(read from each class's ``Params`` model, the one source of truth) and docs, and the plug-ins
that failed to load."""

from __future__ import annotations

import enum
import inspect
import json
import textwrap
import types
import typing
from typing import Any

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from otel_oracles.grade.registry import broken_plugins, registered
from otel_oracles.model.field_docs import field_descriptions

DEFAULT_REPR_LIMIT = 70
"""Characters of a default value shown in the table (the JSON output has it whole)."""


_PLAIN: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "true/false",
    dict: "mapping",
    Any: "any value",
}


def _validator_names(metadata: list[Any]) -> set[str]:
    return {getattr(getattr(m, "func", None), "__name__", "") for m in metadata}


def _bound(metadata: list[Any]) -> str:
    """`` ≥ 0`` and the like, from pydantic's ``Field(ge=...)`` style constraints."""
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = [
        f" {sign} {getattr(m, key)}"
        for m in metadata
        for key, sign in marks.items()
        if getattr(m, key, None) is not None
    ]
    return "".join(parts)


def describe_type(annotation: Any, metadata: list[Any] | None = None) -> str:
    """A param's type as a contract author writes it: ``string (regex)``, ``integer ≥ 0``,
    ``string or list of strings``; never Python typing reprs."""
    metadata = list(metadata or [])
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        return describe_type(inner, [*metadata, *extra])
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return describe_type(options[0], metadata)
        return " or ".join(describe_type(a, metadata) for a in options)
    if origin is typing.Literal:
        return "one of " + ", ".join(str(v) for v in typing.get_args(annotation))
    checks = _validator_names(metadata)
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        item = describe_type(args[0]) if args else "any value"
        if item == "string (regex)":
            return "regex or list of regexes"
        if item == "string":
            return "string or list of strings"
        if item.startswith(("one of ", "mapping with ")):
            return f"list, each {item}"
        return f"list of {item}s"
    if any("schema" in name for name in checks):
        return "JSON Schema"
    if origin is dict:
        key, value = typing.get_args(annotation) or (str, Any)
        return f"mapping of {describe_type(key)} to {describe_type(value)}"
    if annotation is str and any("regex" in name for name in checks):
        return "string (regex)"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(str(m.value) for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping with " + ", ".join(f.alias or n for n, f in annotation.model_fields.items())
    return _PLAIN.get(annotation, getattr(annotation, "__name__", str(annotation))) + _bound(
        metadata
    )


def _default(info: FieldInfo) -> Any:
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]  # factories here take no args
    return info.default


def describe_oracles() -> dict[str, Any]:
    """Everything the listing shows, as plain data (the ``--json`` output)."""
    oracles = []
    for name, reg in registered().items():
        params = []
        described = field_descriptions(reg.cls.Params)
        for pname, info in reg.cls.Params.model_fields.items():
            required = info.is_required()
            default = None if required else _default(info)
            params.append(
                {
                    "name": info.alias or pname,
                    "type": describe_type(info.annotation, info.metadata),
                    "required": required,
                    "default": list(default) if isinstance(default, tuple) else default,
                    "description": described.get(pname, ""),
                }
            )
        doc = inspect.getdoc(reg.cls) or ""
        oracles.append(
            {
                "type": name,
                "distribution": reg.distribution,
                "summary": reg.cls.summary or (doc.splitlines()[0] if doc else ""),
                "doc": doc,
                "params": params,
            }
        )
    broken = [{"name": n, "error": e} for n, e in broken_plugins().items()]
    return {"oracles": oracles, "broken_plugins": broken}


def _render(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for oracle in data["oracles"]:
        lines.append(f"{oracle['type']}  ({oracle['distribution']})")
        lines.extend(textwrap.indent(oracle["doc"], "    ").splitlines())
        if oracle["params"]:
            lines.append("    params:")
            for p in oracle["params"]:
                if p["required"]:
                    need = "required"
                else:
                    shown = json.dumps(p["default"])
                    if len(shown) > DEFAULT_REPR_LIMIT:
                        shown = shown[: DEFAULT_REPR_LIMIT - 1] + "…"
                    need = f"default {shown}"
                lines.append(f"      {p['name']}: {p['type']}, {need}")
                if p["description"]:
                    desc = " ".join(p["description"].split())
                    lines.extend(
                        textwrap.wrap(desc, 88, initial_indent=" " * 8, subsequent_indent=" " * 8)
                    )
        else:
            lines.append("    params: none")
        lines.append("")
    if data["broken_plugins"]:
        lines.append("broken plug-ins (their types cannot be used until fixed):")
        lines.extend(f"  {b['name']}: {b['error']}" for b in data["broken_plugins"])
    return "\n".join(lines).rstrip() + "\n"


def _show(as_json: bool) -> None:
    data = describe_oracles()
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        click.echo(_render(data), nl=False)


_JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")


@click.group("oracles", invoke_without_command=True)
@_JSON_OPTION
@click.pass_context
def oracles_command(ctx: click.Context, as_json: bool) -> None:
    """List the oracle types you can use in contracts, with params and docs.

    Built-in types come with otel-oracles; plug-in packages add types through the
    'otel_oracles.oracles' entry-point group. A plug-in that failed to import is listed with
    its error.

    \b
    Examples:
      otel-oracles oracles
      otel-oracles oracles --json
    """
    if ctx.invoked_subcommand is None:
        _show(as_json)


@oracles_command.command("list")
@_JSON_OPTION
def list_command(as_json: bool) -> None:
    """Same as 'otel-oracles oracles'.

    \b
    Examples:
      otel-oracles oracles list --json
    """
    _show(as_json)
