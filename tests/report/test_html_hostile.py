"""The HTML report is a page a reviewer opens in a browser, built from names a trace chose:
agent, span, tool, scope and resource names, status messages, the file names of a trace
directory (input errors). Markup in any of them must stay text, and the characters a
browser acts on must be shown, not obeyed: a browser ignores ESC, but it lays text out by
the bidirectional overrides and isolates, so a tool name holding U+202E read reversed in the
report. They are shown as their escapes, as on a terminal (``report.terminal_safe``).

Run through the real CLI over a real capture with every string made hostile."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from tests.report.test_terminal_escapes import ACTED_ON, TRACE, run

HOSTILE = (
    '"><script>alert(1)</script><img src=x onerror=alert(2)></pre></td></details>'
    "<!--\u202e\u2066\x1b[2J\x9b1m"
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def hostile_directory(root: Path) -> Path:
    document = json.loads(TRACE.read_text())
    for resource in document["resourceSpans"]:
        for attribute in resource.get("resource", {}).get("attributes", []):
            if "stringValue" in attribute["value"]:
                attribute["value"]["stringValue"] += HOSTILE
        for scope in resource["scopeSpans"]:
            scope.setdefault("scope", {})["name"] = scope["scope"].get("name", "") + HOSTILE
            for span in scope["spans"]:
                span["name"] += HOSTILE
                span.setdefault("status", {})["message"] = HOSTILE
                for attribute in span["attributes"]:
                    if "stringValue" in attribute["value"]:
                        attribute["value"]["stringValue"] += HOSTILE
    traces = root / "traces"
    traces.mkdir()
    (traces / "hostile.otlp.json").write_text(json.dumps(document))
    (traces / ('"><script>x<img onerror=y>\u202e.jsonl')).write_text("{not json\n")
    return traces


def test_every_hostile_string_stays_text_and_is_shown_not_obeyed(tmp_path: Path) -> None:
    traces = hostile_directory(tmp_path)
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\nversion: 1\ninvariants: [{type: max_tool_calls, max: 0}]\n")
    page = tmp_path / "report.html"
    result = run("grade", str(traces), "-c", str(contract), "--html", str(page),
                 "--explain", "full")  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr  # a failure and an input error
    html = page.read_text(encoding="utf-8")
    parser = _Tags()
    parser.feed(html)
    assert not parser.tags & {"script", "img", "iframe"}, parser.tags
    assert not {a for a in parser.attributes if a.startswith("on")}, parser.attributes
    assert "delete_records&quot;&gt;&lt;script&gt;" in html  # the tool's name, as text
    assert "&lt;img onerror=y&gt;" in html  # the file name of the input error, as text
    found = sorted({f"{ord(c):#x}" for c in ACTED_ON.findall(html)})
    assert not found, f"characters a browser or terminal acts on, raw in the page: {found}"
    assert "\\u202e" in html and re.search(r"\\x1b\[2J", html)
