"""Default factories for pydantic fields: ``Field(default_factory=new_list)``, not
``Field(default_factory=list)``.

Building a model's schema, pydantic asks each field's default factory whether it takes the
validated data (``inspect.signature``). For a builtin type such as ``list`` or ``dict`` the
signature is parsed from its ``__text_signature__`` through ``tokenize`` and ``ast``: about
half a million instructions per field, and ``grade`` builds 57 such fields at start-up
(docs/performance-history.md, "Start-up: pydantic's default factories"). A Python function
answers from its code object. Every instance still gets a new empty list or dict of its
own, and the JSON Schemas are unchanged (a factory's value is never shown there).
"""

from __future__ import annotations

from typing import Any


def new_list() -> list[Any]:
    """A new empty list (a field's default)."""
    return []


def new_dict() -> dict[Any, Any]:
    """A new empty dict (a field's default)."""
    return {}


DEFAULT_PLACEHOLDERS: tuple[str, ...] = ("__REDACTED__", "[REDACTED]", "<redacted>", "<elided>", "")
"""The texts instrumentations write in place of content they were told not to capture: a
conventions file's default ``redaction_placeholders`` (``mapping.config``). Here, not in the
schema's module, because the ``otel_genai`` parsers test content against it and are imported
at every start, which the schema's models are not (``mapping/__init__``)."""
