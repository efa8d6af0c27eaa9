"""Ground truth for the real traces: parsed from each source's EXPECTED.md, never re-typed.

The corpus generator wrote EXPECTED.md from the scripted runs (tools called in order with
their arguments and outcome, handoffs, final answers). Reading it here means a test compares
the mapping against what really happened, not against what the mapping produced last time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"

_TOOL_LINE = re.compile(r"^\s+\d+\. `(?P<tool>[^`]+)` `(?P<args>.*)` → (?P<outcome>.*)$")
_VARIANT_LINE = re.compile(r"^- `(?P<variant>[^`]+)`: run verified")


@dataclass
class ExpectedCall:
    tool: str
    arguments: dict[str, object]
    ok: bool
    outcome: str
    """The EXPECTED.md outcome text (``ok: documents doc-17, doc-42``, ``ERROR (...)``)."""

    @property
    def document_ids(self) -> list[str]:
        m = re.match(r"ok: documents (.+)$", self.outcome)
        return [d.strip() for d in m.group(1).split(",")] if m else []


@dataclass
class Scenario:
    source: str
    name: str
    calls: list[ExpectedCall] = field(default_factory=list)
    final_answer: str | None = None
    handoff: tuple[str, str] | None = None
    """The first transfer between agents (``handoffs[0]``)."""
    handoffs: list[tuple[str, str]] = field(default_factory=list)
    """Every transfer, in order (``YES — triage_agent → research_agent, then research_agent →
    triage_agent, via ...``): a transfer back is one more handoff, never folded into the first."""
    handoff_tool: str | None = None
    """The tool the handoff is made through, where EXPECTED.md names one (``via ...
    (`task_research_agent {...}`)``)."""
    variants: list[str] = field(default_factory=list)
    """``a_happy``, ``a_happy.nocontent``, ``a_happy.noroot`` ... as listed in EXPECTED.md."""
    parallel: list[list[int]] = field(default_factory=list)
    """Groups of calls (0-based positions in ``calls``) the model requested in one turn
    (``**Parallel:**``): the framework may run, and the trace record, them in any order."""
    structured: bool = False
    """The agent answered through structured output (``**Structured output:** YES``): the
    final answer is the JSON text of the object it returned."""
    cut: bool = False
    """The model stopped before it finished its answer (``**Answer cut off:**``: the token
    limit or the provider's content filter): the final answer is the fragment it sent, and
    no complete answer exists."""

    @property
    def model_turns_with_calls(self) -> int:
        """How many model turns requested calls: one per call, except calls requested
        together. What a trace that shows only that a turn requested calls can count."""
        return len(self.calls) - sum(len(group) - 1 for group in self.parallel)

    def in_order_of(self, mapped: list[tuple[str | None, object]]) -> Scenario:
        """This scenario with each group of calls requested together put in the order the
        mapped calls (``(tool, arguments)``, one per call) show them: by name, and by arguments
        where they were captured (two calls of one tool); unchanged when the mapped calls are
        not a reordering of the calls within their groups."""
        if not self.parallel or len(mapped) != len(self.calls):
            return self
        calls = list(self.calls)
        for group in self.parallel:
            pool = [calls[i] for i in group]
            for position in group:
                tool, arguments = mapped[position]
                match = next(
                    (
                        c
                        for c in pool
                        if c.tool == tool and (arguments is None or c.arguments == arguments)
                    ),
                    None,
                )
                if match is None:
                    return self
                pool.remove(match)
                calls[position] = match
        return replace(self, calls=calls)


def parse_expected(source: str) -> dict[str, Scenario]:
    text = (TRACES / source / "EXPECTED.md").read_text(encoding="utf-8")
    scenarios: dict[str, Scenario] = {}
    current: Scenario | None = None
    for line in text.splitlines():
        heading = re.match(r"^## ([a-z]_\w+)$", line)
        if heading:
            current = Scenario(source, heading.group(1))
            scenarios[current.name] = current
            continue
        if current is None:
            continue
        m = _TOOL_LINE.match(line)
        if m:
            outcome = m.group("outcome")
            current.calls.append(
                ExpectedCall(
                    tool=m.group("tool"),
                    arguments=json.loads(m.group("args")),
                    # DENIED: the approval step refused the call; it never ran.
                    ok=not outcome.startswith(("ERROR", "DENIED")),
                    outcome=outcome,
                )
            )
            continue
        m = re.match(r"^- \*\*Final answer:\*\* '(.*)'$", line)
        if m:
            current.final_answer = m.group(1)
            continue
        m = re.match(r"^- \*\*Handoff / delegation:\*\* YES — (.*?), via ", line)
        if m:
            pairs = re.findall(r"(\w+) → (\w+)", m.group(1))
            current.handoffs = [(a, b) for a, b in pairs]
            current.handoff = current.handoffs[0]
            # `tool {args}`, or a tool named alone (a request written as text: Langroid's)
            tool = re.search(r"`(\w+) \{", line) or re.search(r"via the `(\w+)` tool \(", line)
            current.handoff_tool = tool.group(1) if tool else None
            continue
        if line.startswith("- **Structured output:** YES"):
            current.structured = True
            continue
        if line.startswith("- **Answer cut off:**"):
            current.cut = True
            continue
        m = re.match(r"^- \*\*Parallel:\*\* calls ([\d, ]+) were requested", line)
        if m:
            current.parallel.append([int(n) - 1 for n in m.group(1).split(",")])
            continue
        m = _VARIANT_LINE.match(line)
        if m:
            current.variants.append(m.group("variant"))
    return {k: v for k, v in scenarios.items() if v.variants}


SOURCES: tuple[str, ...] = tuple(
    sorted(p.name for p in TRACES.iterdir() if (p / "EXPECTED.md").is_file())
)


@dataclass
class Case:
    """One exported file (plus its log records) and the scenario it recorded."""

    source: str
    variant: str
    scenario: Scenario
    files: list[Path]
    raw_files: list[Path]

    @property
    def content(self) -> bool:
        return ".nocontent" not in self.variant

    @property
    def id(self) -> str:
        return f"{self.source}/{self.variant}"


def cases() -> list[Case]:
    """Every (source, variant) EXPECTED.md lists, with the files that hold it."""
    out = []
    for source in SOURCES:
        folder = TRACES / source
        for scenario in parse_expected(source).values():
            for variant in scenario.variants:
                files = sorted(
                    p
                    for p in folder.iterdir()
                    if p.is_file()
                    and (
                        p.name in (f"{variant}.otlp.json", f"{variant}.otlp.jsonl")
                        or p.name == f"{variant}.logs.otlp.jsonl"
                    )
                )
                raw_dir = folder / f"{variant}.raw"
                raw = sorted(raw_dir.iterdir()) if raw_dir.is_dir() else []
                out.append(Case(source, variant, scenario, files, raw))
    return out
