"""``promote`` on a trace that puts customer data where the scrubbing did not look: an
attribute's key, a key of the JSON an attribute holds (tool arguments keyed by customer), an
event's name, the instrumentation scope's name, a span's name in the note. None of it may
reach the fixture or its note. And a tool argument nested 100,000 levels deep must not end
``promote`` in a traceback.

Real captures, the real CLI in a subprocess (the helpers of ``test_promote.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_promote import (
    ANSWER_KEEP,
    CONTRACTS,
    EMAIL,
    PYDANTIC_HAPPY,
    PYDANTIC_TRACE,
    run,
)

PATIENT = "Patient Jane Roe diagnosed with condition X"
"""Free text that looks like no secret (no e-mail, key or token shape): only its place can
tell the scrubber that it is data."""


def hostile(tmp_path: Path, *, deep_arguments: bool = False) -> Path:
    document = json.loads(PYDANTIC_HAPPY.read_text(encoding="utf-8"))
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["scope"]["name"] = f"pydantic-ai {EMAIL}"
            for span in scope["spans"]:
                if span["name"].startswith("execute_tool"):
                    span["name"] += f" for {EMAIL}"
                    span["attributes"].append(
                        {"key": f"customer.{EMAIL}", "value": {"boolValue": True}}
                    )
                    span.setdefault("events", []).append(
                        {"timeUnixNano": span["startTimeUnixNano"], "name": f"asked by {EMAIL}"}
                    )
                    for attribute in span["attributes"]:
                        if attribute["key"] == "gen_ai.tool.call.arguments":
                            arguments = json.loads(attribute["value"]["stringValue"])
                            arguments[EMAIL] = "vip"
                            arguments[PATIENT] = 1
                            text = json.dumps(arguments)
                            if deep_arguments:
                                text = "[" * 100_000 + "]" * 100_000
                            attribute["value"]["stringValue"] = text
    path = tmp_path / "hostile.otlp.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def promote(source: Path, out: Path) -> tuple[int, str, str]:
    proc = run(
        "promote", source, "--trace-id", PYDANTIC_TRACE, "--out", out, "-c", CONTRACTS,
        "--keep", ANSWER_KEEP, "--keep", "gen_ai.input.messages.parts.content",
        "--allow-verdict-change",
    )  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def test_customer_data_in_keys_and_names_does_not_leave(tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    code, stdout, stderr = promote(hostile(tmp_path), out)
    assert code == 0, stderr
    fixture = (out / f"{PYDANTIC_TRACE}.otlp.json").read_text(encoding="utf-8")
    note = (out / f"{PYDANTIC_TRACE}.promote.md").read_text(encoding="utf-8")
    for where, text in (("fixture", fixture), ("note", note), ("stdout", stdout + stderr)):
        assert EMAIL not in text, f"the e-mail address reached the {where}"
        assert PATIENT not in text, f"a free-text JSON key reached the {where}"
    assert '"key": "[redacted-' in fixture  # the key stays a key, its secret replaced
    assert "search_docs" in fixture  # identifier-shaped names and keys stay


def test_deeply_nested_json_text_is_redacted_not_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "fixtures"
    code, _, stderr = promote(hostile(tmp_path, deep_arguments=True), out)
    assert "Traceback" not in stderr, stderr
    assert code == 0, stderr
    fixture = (out / f"{PYDANTIC_TRACE}.otlp.json").read_text(encoding="utf-8")
    assert "[[[[" not in fixture
