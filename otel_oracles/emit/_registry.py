"""The registry of emitted names (``conventions/registry/otel-oracles.yaml``) as data, and the
Markdown tables of docs/telemetry.md generated from it.

Why generated: the docs, the registry and the code must not drift. The registry test
compares what the code emits with the registry; a docs test compares the tables in
docs/telemetry.md with ``render_tables()``. Regenerate with::

    python -m otel_oracles.emit._registry --write docs/telemetry.md
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

REGISTRY_PATH = (
    Path(__file__).resolve().parents[2] / "conventions" / "registry" / "otel-oracles.yaml"
)
"""In the source tree only: the registry is a development artefact (docs and tests)."""
BEGIN = "<!-- registry:begin (generated from conventions/registry/otel-oracles.yaml) -->"
END = "<!-- registry:end -->"

Instrument = Literal["counter", "updowncounter", "histogram", "gauge"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Member(_Model):
    id: str
    value: str
    brief: str = ""


class Attribute(_Model):
    key: str
    type: str | dict[str, list[Member]]
    brief: str
    note: str = ""
    examples: list[Any] = Field(default_factory=list)
    stability: str

    @property
    def type_name(self) -> str:
        if isinstance(self.type, str):
            return self.type
        return "enum: " + ", ".join(f"`{m.value}`" for m in self.type["members"])


class Ref(_Model):
    ref: str
    requirement_level: str | dict[str, str] = "recommended"
    brief: str = ""

    @property
    def requirement(self) -> str:
        if isinstance(self.requirement_level, str):
            return self.requirement_level
        ((level, condition),) = self.requirement_level.items()
        return f"{level}: {condition}"


class SpanName(_Model):
    note: str


class SpanDef(_Model):
    type: str
    kind: str
    name: SpanName
    brief: str
    stability: str
    events: list[str] = Field(default_factory=list)
    attributes: list[Ref]


class EventDef(_Model):
    name: str
    brief: str
    stability: str
    attributes: list[Ref]


class MetricDef(_Model):
    name: str
    instrument: Instrument
    unit: str
    brief: str
    note: str = ""
    stability: str
    attributes: list[Ref]

    @property
    def prometheus_name(self) -> str:
        """The name the collector's ``prometheus`` exporter produces (default translation:
        dots to underscores, UCUM unit suffix, ``{annotation}`` units dropped, ``_total`` on
        monotonic counters; histograms expose ``_bucket``/``_sum``/``_count``)."""
        base = re.sub(r"[^A-Za-z0-9_]", "_", self.name)
        if self.unit == "s":
            base += "_seconds"
        elif self.unit and not self.unit.startswith("{") and self.unit != "1":
            base += "_" + re.sub(r"[^A-Za-z0-9]", "", self.unit)
        if self.instrument == "counter":
            base += "_total"
        return base


class Producer(_Model):
    """Who emits: the resource and scope names that mark the grader's own telemetry (the
    self-telemetry filter relies on them; ``_names`` holds the same values, checked by
    tests/emit/test_emit_registry.py)."""

    service_name: str
    instrumentation_scope: str


class Registry(_Model):
    file_format: Literal["definition/2"]
    producer: Producer
    attributes: list[Attribute]
    spans: list[SpanDef]
    events: list[EventDef]
    metrics: list[MetricDef]

    def attribute_keys(self) -> set[str]:
        """Every attribute name the registry allows on any signal (own and referenced)."""
        keys = {a.key for a in self.attributes}
        groups: list[SpanDef | EventDef | MetricDef] = [*self.spans, *self.events, *self.metrics]
        for group in groups:
            keys.update(r.ref for r in group.attributes)
        return keys


def load_registry(path: Path = REGISTRY_PATH) -> Registry:
    return Registry.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_tables(registry: Registry | None = None) -> str:
    """The generated part of docs/telemetry.md (between the BEGIN/END markers)."""
    reg = registry or load_registry()
    own = {a.key: a for a in reg.attributes}
    out: list[str] = [BEGIN, ""]
    for span in reg.spans:
        out += [
            f"### Span `{span.type}`: {span.name.note} ({span.kind}, {span.stability})",
            "",
            _cell(span.brief),
            "",
            "| Attribute | Requirement | Description |",
            "|---|---|---|",
        ]
        out += [
            f"| `{r.ref}` | {_cell(r.requirement)} | "
            f"{_cell(r.brief or (own[r.ref].brief if r.ref in own else 'standard'))} |"
            for r in span.attributes
        ]
        out += ["", f"Events on this span: {', '.join(f'`{e}`' for e in span.events)}.", ""]
    for event in reg.events:
        out += [
            f"### Event `{event.name}` ({event.stability})",
            "",
            _cell(event.brief),
            "",
            "| Attribute | Requirement | Description |",
            "|---|---|---|",
        ]
        out += [
            f"| `{r.ref}` | {_cell(r.requirement)} | "
            f"{_cell(r.brief or (own[r.ref].brief if r.ref in own else 'standard'))} |"
            for r in event.attributes
        ]
        out.append("")
    out += [
        "### Metrics",
        "",
        "| Metric | Instrument | Unit | Prometheus name | Attributes | Description |",
        "|---|---|---|---|---|---|",
    ]
    for m in reg.metrics:
        attrs = ", ".join(f"`{r.ref}`" for r in m.attributes) or "none"
        desc = _cell(m.brief + (f" {m.note}" if m.note else ""))
        prom = m.prometheus_name
        out.append(f"| `{m.name}` | {m.instrument} | `{m.unit}` | `{prom}` | {attrs} | {desc} |")
    out += [
        "",
        "### Attributes of our own (`otel_oracles.*`)",
        "",
        "| Attribute | Type | Description | Examples | Stability |",
        "|---|---|---|---|---|",
    ]
    for a in reg.attributes:
        examples = ", ".join(f"`{e}`" for e in a.examples)
        out.append(
            f"| `{a.key}` | {_cell(a.type_name)} | {_cell(a.brief)} | {examples} | {a.stability} |"
        )
    out += ["", END]
    return "\n".join(out)


def replace_tables(document: str, tables: str) -> str:
    """``document`` with the text between the markers replaced by ``tables``."""
    start, end = document.index(BEGIN), document.index(END) + len(END)
    return document[:start] + tables + document[end:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="Markdown file whose tables to regenerate")
    args = parser.parse_args()
    tables = render_tables()
    if args.write is None:
        sys.stdout.write(tables + "\n")
        return
    doc = args.write.read_text(encoding="utf-8")
    args.write.write_text(replace_tables(doc, tables), encoding="utf-8")


if __name__ == "__main__":
    main()
