"""``otel-oracles oracles`` shows param types as a contract author writes them, and every
list-of-names param accepts one name."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from pydantic import ValidationError

from otel_oracles.grade.loader import load_contract
from otel_oracles.grade.registry import registered
from otel_oracles.mapping import load_conventions
from otel_oracles.pipeline import grade_trace, read_traces

CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
REPO = Path(__file__).resolve().parents[2]
RETRY = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "b_tool_retry.otlp.json"


def listing(*args: str) -> str:
    proc = subprocess.run([*CLI, "oracles", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_no_python_typing_reprs_in_the_listing() -> None:
    text = listing()
    for leak in ("typing", "Annotated", "Optional[", "<function", "Literal[", " at 0x", "str |"):
        assert leak not in text, leak
    params = {
        (o["type"], p["name"]): p["type"]
        for o in json.loads(listing("--json"))["oracles"]
        for p in o["params"]
    }
    assert params["tool_not_called", "tool"] == "string or list of strings"
    assert params["tool_retries", "max"] == "integer ≥ 0"
    assert params["citations_grounded", "pattern"] == "string (regex)"
    assert params["final_output", "must_match"] == "regex or list of regexes"
    assert params["schema_valid", "schema"] == "JSON Schema"
    assert params["tool_sequence", "mode"].startswith("one of exact, in_order")
    assert not [t for t in params.values() if re.search(r"[\[\]]|<\w", t)]


def test_every_list_of_names_accepts_one_name(tmp_path: Path) -> None:
    lists = {
        name: sorted(reg.cls.Params.string_list_params)
        for name, reg in registered().items()
        if reg.cls.Params.string_list_params
    }
    assert "tools" in lists["max_tool_calls"] and "tools" in lists["tool_retries"]
    for name, fields in lists.items():
        for field in fields:
            try:
                registered()[name].cls.Params.model_validate({field: "x"})
            except ValidationError as exc:  # other params may be required: not this one
                assert all(e["loc"][:1] != (field,) for e in exc.errors()), (name, field)

    body = "invariants:\n  - {{type: tool_retries, tools: {tools}, max: 0}}\n"
    head = "id: c\nversion: 1\nname: n\ndescription: d\n"
    single, listed = tmp_path / "single.yaml", tmp_path / "listed.yaml"
    single.write_text(head + body.format(tools="search_docs"))
    listed.write_text(head + body.format(tools="[search_docs]"))
    conventions = load_conventions([])
    (trace,) = list(read_traces([str(RETRY)], []))
    outcomes = [
        [
            r.outcome
            for v, _ in grade_trace(trace, [load_contract(p)], conventions)
            for r in v.results
        ]
        for p in (single, listed)
    ]
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0].value == "invariant_failure", "one retry of search_docs over max 0"
