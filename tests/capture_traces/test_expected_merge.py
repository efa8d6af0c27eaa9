"""A scenario added later is captured for an existing source without losing the others.

``capture.py --scenario NAME --out <folder with EXPECTED.md>`` merges the new section into the
folder's ground truth (``merged_expected``); the real-trace tests read that file, so a merge that
dropped or reordered a scenario, or hid which package versions wrote the new traces, would make
them test something other than what was captured.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "capture_traces"))

import capture
from scenarios import SCENARIOS

from tests.mapping.ground_truth import TRACES

HEAD = """# EXPECTED — `demo`

Captured by `tools/capture_traces/capture.py`.

## Source

- **What:** a demo.

### Versions

| package | version |
|---|---|
| demo | {version} |
"""


def section(name: str, note: str) -> str:
    return f"## {name}\n\n- **User prompt:** {note}\n- `{name}`: run verified (...)\n"


def doc(version: str, *sections: str) -> str:
    return HEAD.format(version=version) + "\n" + "\n".join(sections)


def test_a_new_scenario_is_added_in_scenario_order_and_the_others_are_kept() -> None:
    old = doc("1.0", section("a_happy", "old a"), section("h_coding_agent", "old h"))
    new = doc("1.0", section("d_forbidden_tool", "new d"))
    merged = capture.merged_expected(old, new)
    headings = [line for line in merged.splitlines() if line.startswith("## ")]
    assert headings == ["## Source", "## a_happy", "## d_forbidden_tool", "## h_coding_agent"]
    assert "old a" in merged and "old h" in merged and "new d" in merged
    assert "Captured with:" not in merged  # same versions: the head says it
    assert "\n\n\n" not in merged and merged.endswith("\n") and not merged.endswith("\n\n")


def test_a_recaptured_scenario_replaces_its_section_only() -> None:
    old = doc("1.0", section("a_happy", "old a"), section("b_tool_retry", "old b"))
    merged = capture.merged_expected(old, doc("1.0", section("b_tool_retry", "new b")))
    assert "old b" not in merged and "new b" in merged and "old a" in merged
    assert capture.merged_expected(merged, doc("1.0", section("b_tool_retry", "new b"))) == merged


def test_a_section_captured_with_other_versions_names_them() -> None:
    old = doc("1.0", section("a_happy", "old a"))
    merged = capture.merged_expected(old, doc("2.0", section("i_parallel_tools", "new i")))
    new_section = merged.split("## i_parallel_tools", 1)[1]
    assert "Captured with:" in new_section and "| demo | 2.0 |" in new_section
    assert "| demo | 1.0 |" in merged.split("## a_happy", 1)[0]  # the head is unchanged


def test_every_parallel_section_in_the_corpus_is_a_scenario_with_parallel_turns() -> None:
    """The ``**Parallel:**`` marker lets the tests compare those calls in any order: it must
    come only from a scenario whose turn really requested several calls."""
    marked = [
        path.parent.name
        for path in sorted(TRACES.glob("*/EXPECTED.md"))
        for part in path.read_text(encoding="utf-8").split("\n## ")[1:]
        if "- **Parallel:**" in part and not SCENARIOS[part.split("\n", 1)[0].strip()].parallel
    ]
    assert marked == []
    assert SCENARIOS["i_parallel_tools"].parallel and not SCENARIOS["d_forbidden_tool"].parallel
    assert capture.parallel_lines(SCENARIOS["i_parallel_tools"]) == [
        "- **Parallel:** calls 1, 2 were requested in one model turn; the framework may run, "
        "and the trace record, them in any order."
    ]
