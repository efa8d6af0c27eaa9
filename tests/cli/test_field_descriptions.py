"""Field descriptions come from the attribute docstrings when ``schema`` or ``oracles`` shows
them (``otel_oracles.model.field_docs``), exactly as pydantic's ``use_attribute_docstrings`` gave
them, without pydantic reading the source at every class creation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from otel_oracles.model.contract import Contract
from otel_oracles.model.field_docs import describe_fields, field_descriptions


class Base(BaseModel):
    model_config = ConfigDict(json_schema_extra=describe_fields)

    inherited: int = 0
    """Declared in the base."""
    redeclared: int = 0
    """Base's words, replaced below."""
    undocumented: int = 0
    _note: ClassVar[str] = "x"
    """A class variable, not a field."""


class Child(Base):
    redeclared: int = 1
    """Child's words."""
    explicit: str = Field(default="", description="From Field.")
    """Loses to the explicit description."""
    renamed: str = Field(default="", alias="from")
    """Shown under its alias."""


def test_descriptions_follow_the_declaring_class() -> None:
    assert field_descriptions(Child) == {
        "inherited": "Declared in the base.",
        "redeclared": "Child's words.",
        "explicit": "From Field.",
        "renamed": "Shown under its alias.",
    }


def test_the_schema_carries_them_by_alias_or_by_name() -> None:
    by_alias = Child.model_json_schema(by_alias=True)["properties"]
    assert by_alias["from"]["description"] == "Shown under its alias."
    assert by_alias["inherited"]["description"] == "Declared in the base."
    assert "description" not in by_alias["undocumented"]
    by_name = Child.model_json_schema(by_alias=False)["properties"]
    assert by_name["renamed"]["description"] == "Shown under its alias."


def test_a_class_defined_in_a_function() -> None:
    class Local(BaseModel):
        size: int = 0
        """How big, in a function."""

    assert field_descriptions(Local) == {"size": "How big, in a function."}


def test_the_contract_schema_is_described() -> None:
    """The real model: what ``otel-oracles schema`` prints for a contract."""
    schema: dict[str, Any] = Contract.model_json_schema()
    shown = {k: p["description"] for k, p in schema["properties"].items() if "description" in p}
    assert shown == field_descriptions(Contract)
    assert shown["source"] == "File the contract was loaded from."


def test_no_model_has_pydantic_read_its_source() -> None:
    """``use_attribute_docstrings=True`` would bring the cost back at every start-up."""
    package = Path(__file__).resolve().parents[2] / "otel_oracles"
    offenders = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if "use_attribute_docstrings=True" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
