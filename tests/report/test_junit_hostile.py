"""The JUnit report is what a CI system turns into its test page: testcase names, failure
messages and their text come from names a trace chose. XML 1.0 cannot carry most C0
controls, so they were replaced by ``?``; everything else went through raw: DEL and the C1
controls (``\\x9b`` is CSI on a terminal that takes 8-bit controls, where the XML is read
in a log) and the bidirectional overrides and isolates, by which a CI page lays a tool name
out reversed. They are written as their escapes, as on the console, the HTML and the JSON
reports (``report.terminal_safe``).

Run through the real CLI over a real capture with every string made hostile."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.report.test_html_hostile import hostile_directory
from tests.report.test_terminal_escapes import ACTED_ON, run

BIDI_OR_CONTROL = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
"""What XML could carry raw and a CI page or a terminal acts on (the C0 controls XML cannot
carry are in ``ACTED_ON``)."""


def test_junit_shows_bidi_and_control_characters_as_escapes(tmp_path: Path) -> None:
    traces = hostile_directory(tmp_path)
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\nversion: 1\ninvariants: [{type: max_tool_calls, max: 0}]\n")
    report = tmp_path / "report.xml"
    result = run("grade", str(traces), "-c", str(contract), "--junit", str(report),
                 "--explain", "full")  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr  # a failure and an input error
    xml = report.read_text(encoding="utf-8")
    root = ET.fromstring(xml.encode("utf-8"))  # still a well-formed document
    found = sorted({f"{ord(c):#x}" for c in ACTED_ON.findall(xml) + BIDI_OR_CONTROL.findall(xml)})
    assert not found, f"characters a CI page or terminal acts on, raw in the report: {found}"
    names = [case.get("name", "") for case in root.iter("testcase")]
    assert any("\\u202e" in name for name in names), names  # the file name, shown
    failure = next(root.iter("failure"))
    text = failure.text or ""
    assert "\\u202e" in text and "\\x1b[2J" in text and "\\x9b1m" in text, text
    assert "?[2J" not in xml  # no longer replaced: what the trace held is shown
