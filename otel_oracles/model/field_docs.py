"""Field descriptions read from the attribute docstrings, when something shows them.

Models document each field with a docstring under it. pydantic can copy those into the
fields' descriptions itself (``use_attribute_docstrings``), but it does so while creating
every class, by locating and tokenizing the class's source: about a sixth of ``grade``'s
start-up went there, for descriptions that only ``otel-oracles schema`` and ``otel-oracles
oracles`` print (docs/performance-history.md, "Start-up"). So no model turns that on; the models
whose JSON Schema users read set ``json_schema_extra=describe_fields`` (or call it from their
own hook), and listings call ``field_descriptions``. Both read the source only when asked, and
each module's source once.

The result is what ``use_attribute_docstrings`` gave: a string literal right after an
annotated attribute in the class body documents it; a description given with
``Field(description=...)`` wins; an inherited field keeps the docstring of the class that
declares it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from typing import Any

from pydantic import BaseModel


def _attribute_docs(body: list[ast.stmt]) -> dict[str, str]:
    """``{attribute: docstring}`` for one class body."""
    docs: dict[str, str] = {}
    target: str | None = None
    after_annotation = False
    for stmt in body:
        if isinstance(stmt, ast.AnnAssign):
            if isinstance(stmt.target, ast.Name):
                target = stmt.target.id
            after_annotation = True
            continue
        if (
            after_annotation
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            if target is not None:
                docs[target] = inspect.cleandoc(stmt.value.value)
            target = None
        after_annotation = False
    return docs


@functools.cache
def _module_classes(module_name: str) -> dict[str, dict[str, str]]:
    """``{qualified class name: {attribute: docstring}}`` for the module-level classes (and
    classes nested in them) of a module's source; empty when the source is not available."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    found: dict[str, dict[str, str]] = {}
    pending: list[tuple[str, list[ast.stmt]]] = [("", ast.parse(source).body)]
    while pending:
        prefix, body = pending.pop()
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                found[name] = _attribute_docs(node.body)
                pending.append((name + ".", node.body))
    return found


def _class_docs(cls: type) -> dict[str, str]:
    docs = _module_classes(cls.__module__).get(cls.__qualname__)
    if docs is not None:
        return docs
    try:  # a class defined in a function: inspect finds its source by itself
        source = textwrap.dedent(inspect.getsource(cls))
        if source[:1] in (" ", "\t"):  # a multi-line string less indented than the class
            source = "def wrapper():\n" + source
        node: ast.stmt | None = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return {}
    if isinstance(node, ast.FunctionDef):
        node = node.body[0] if node.body else None
    return _attribute_docs(node.body) if isinstance(node, ast.ClassDef) else {}


def field_descriptions(model: type[BaseModel]) -> dict[str, str]:
    """``{field name: description}`` for every documented field of ``model``."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        if info.description is not None:
            out[name] = info.description
            continue
        owner = next((k for k in model.__mro__ if name in inspect.get_annotations(k)), None)
        doc = _class_docs(owner).get(name) if owner is not None else None
        if doc is not None:
            out[name] = doc
    return out


def describe_fields(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A ``json_schema_extra`` hook: each property of ``model``'s JSON Schema gets its
    field's description (properties are keyed by alias or by name, whichever was asked)."""
    properties = schema.get("properties", {})
    for name, text in field_descriptions(model).items():
        info = model.model_fields[name]
        for key in (info.serialization_alias or info.alias, name):
            prop = properties.get(key) if key is not None else None
            if isinstance(prop, dict):
                prop.setdefault("description", text)
                break
