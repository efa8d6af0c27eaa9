"""A surrogate is no character and has no UTF-8 text, yet a ``str`` an application made can
hold one (``surrogateescape`` decoding of bytes that are not UTF-8, ``os.fsdecode``, a tool
that decodes loosely), and the library grades such text (results built in-process, the
pytest plug-in). Every report writer raised ``UnicodeEncodeError`` on one, losing the whole
report of results already graded. Each writer now writes a surrogate as its escape
(``\\udcff``): in the JSON report the escape is JSON's, which parses back to the same
``str``; on the console and in JUnit and HTML it is the text shown, as for every other
character they cannot show (``terminal_safe``). Valid text is written as before (the
writers' other tests, byte for byte)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from otel_oracles.emit import SHOWN_FILTER
from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.report import (
    JsonWriter,
    render_console,
    render_html,
    render_json,
    render_junit,
    report_data,
    terminal_safe,
)
from tests.native.verdict_cases import result, verdict_of

LONE = "\udcff"
"""What ``b"\\xff".decode("utf-8", "surrogateescape")`` gives."""


def hostile_verdict(keys: bool = True) -> Verdict:
    """A failing verdict holding surrogates in every kind of text a writer writes: subject,
    agent, check name, message, a details key, value and list item, and a high-low pair
    (two code points in a ``str``, still no UTF-8 text)."""
    failed = result(
        name=f"no-delete{LONE}",
        passed=False,
        outcome="invariant_failure",
        message=f"forbidden tool called: delete_{LONE} (\ud83d\ude00)",
        details={"tool": f"delete_{LONE}", "key\ud800" if keys else "k": [f"item{LONE}"], "n": 1},
    )
    verdict = verdict_of([failed, result(name=f"ok{LONE}")])
    return verdict.model_copy(update={"subject": f"run-{LONE}.json", "agent_name": f"ag{LONE}"})


def escaped(text: str) -> str:
    """``text`` as the human-facing writers show it: each surrogate as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_the_json_report_writes_surrogates_as_json_escapes_that_parse_back() -> None:
    verdict = hostile_verdict()
    report = RunReport(verdicts=[verdict], notes=[f"note {LONE}"])
    text = render_json(report)
    assert "\\udcff" in text and "\\ud83d\\ude00" in text
    document = json.loads(text)
    assert document["notes"] == [f"note {LONE}"]
    dumped = document["verdicts"][0]
    assert dumped["subject"] == verdict.subject
    assert dumped["results"][0]["details"] == verdict.results[0].details
    # Parsed as json.dumps's own escapes parse: a lone surrogate back to itself, a pair of
    # escapes to the character they spell.
    message = dumped["results"][0]["message"]
    assert message == json.loads(json.dumps(verdict.results[0].message))
    assert message == f"forbidden tool called: delete_{LONE} (\U0001f600)"
    # The same text as json.dumps writes, its surrogates escaped as `backslashreplace` does
    # (of a report whose keys hold none: pydantic's dump of a key replaces them).
    plain = RunReport(verdicts=[hostile_verdict(keys=False)], notes=[f"note {LONE}"])
    want = json.dumps(report_data(plain), indent=2, ensure_ascii=False)
    assert render_json(plain) == escaped(want) + "\n"


def test_the_shown_json_report_and_the_streaming_writer_write_surrogates() -> None:
    verdict = hostile_verdict()
    writer = JsonWriter()
    writer.add(verdict, SHOWN_FILTER)
    document = json.loads(b"".join(writer.byte_chunks([], [])))
    shown = document["verdicts"][0]["results"][0]
    assert shown["name"] == verdict.results[0].name  # a name is written as it is
    # The filter renders its text around the name (read, not refused), then drops it.
    assert shown["message"] == SHOWN_FILTER.shown_message(verdict.results[0])
    assert shown["message"] == "violated; n=1; tool=[redacted]"
    assert document == json.loads(render_json(RunReport(verdicts=[verdict]), shown=SHOWN_FILTER))


RENDERERS: dict[str, Callable[[RunReport], bytes]] = {
    "console": lambda r: render_console(r, show_passing_details=True).encode("utf-8"),
    "junit": lambda r: render_junit(r),
    "junit_shown": lambda r: render_junit(r, SHOWN_FILTER),
    "html": lambda r: render_html(r).encode("utf-8"),
    "html_shown": lambda r: render_html(r, shown=SHOWN_FILTER).encode("utf-8"),
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_the_human_facing_reports_show_surrogates_as_escapes(name: str) -> None:
    verdict = hostile_verdict()
    report = RunReport(verdicts=[verdict], notes=[f"note {LONE}"])
    text = RENDERERS[name](report).decode("utf-8")
    assert "\\udcff" in text
    assert "\\udcff" in text.split("run-", 1)[1][:12]  # the subject, escaped
    if name.startswith("junit"):
        root = ET.fromstring(text.encode("utf-8"))
        failure = next(root.iter("failure"))
        assert "\\udcff" in (failure.get("message") or "") + (failure.text or "")


def test_terminal_safe_escapes_surrogates_and_keeps_printable_text() -> None:
    assert terminal_safe(f"a{LONE}b\ud83d\ude00") == "a\\udcffb\\ud83d\\ude00"
    assert terminal_safe("plain é 😀 text") == "plain é 😀 text"
