"""The shared renderers: console table, JSON, JUnit XML and HTML are pure functions of a
RunReport, whether its verdicts came from trajectories or traces."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from otel_oracles.model.result import (
    InputProblem,
    OracleResult,
    Outcome,
    RunReport,
    Verdict,
    count_outcomes,
)
from otel_oracles.report import (
    render_console,
    render_html,
    render_json,
    render_junit,
    terminal_safe,
)


def result(outcome: Outcome, message: str, name: str = "check") -> OracleResult:
    return OracleResult(
        oracle_type=name,
        name=name,
        outcome=outcome,
        passed=outcome in (Outcome.PASS, Outcome.TOLERATED),
        message=message,
        contract_id="c",
    )


def verdict(subject: str, *results: OracleResult, **kw: object) -> Verdict:
    rs = list(results)
    return Verdict(
        contract_id="c",
        contract_version=3,
        subject=subject,
        passed=all(r.passed for r in rs),
        results=rs,
        counts=count_outcomes(rs),
        duration_ns=1_500_000,
        **kw,
    )


def sample() -> RunReport:
    return RunReport(
        verdicts=[
            verdict("good.json", result(Outcome.PASS, "fine"), result(Outcome.TOLERATED, "1/1")),
            verdict(
                "4bf92f3577b34da6a3ce929d0e0e4736",
                result(Outcome.INVARIANT_FAILURE, "deleted <script>alert(1)</script>", "inv"),
                result(Outcome.MISSING_EVIDENCE, "no\nmessages\x01captured", "ev"),
                root_name="invoke_agent support",
                agent_name="support",
            ),
            verdict("crash.json", result(Outcome.ERROR, "oracle raised KeyError: 'x'", "boom")),
        ],
        notes=["scored against 1 task(s)"],
        input_errors=[InputProblem(source="bad.jsonl:3", message="invalid JSON")],
    )


def test_console_table_has_the_columns_and_one_line_per_failing_result() -> None:
    text = render_console(sample())
    lines = text.splitlines()
    assert lines[0].split() == [
        "SUBJECT", "AGENT", "CONTRACT", "VERDICT", "INV", "TOL", "EXH", "MISS",
    ]  # fmt: skip
    good = next(line for line in lines if line.startswith("good.json"))
    assert good.split() == ["good.json", "-", "c@3", "pass", "0", "1", "0", "0"]
    trace = next(line for line in lines if line.startswith("4bf92f"))
    assert trace.split()[1:4] == ["support", "c@3", "FAIL"]
    assert "    x invariant_failure inv: deleted <script>alert(1)</script>" in lines
    # a control character is shown as its escape, never sent to the terminal (terminal_safe)
    assert "    x missing_evidence ev: no messages\\x01captured" in lines
    assert not any("fine" in line for line in lines), "passing results are hidden by default"
    assert "3 verdict(s): 1 passed, 1 failed, 1 harness error(s), 1 input error(s)" in lines
    assert "note: scored against 1 task(s)" in lines
    assert not any("bad.jsonl" in line for line in lines), "input errors go to stderr"


def test_console_omits_the_agent_column_when_no_subject_has_one() -> None:
    report = RunReport(verdicts=[verdict("a.json", result(Outcome.PASS, "ok"))])
    assert render_console(report).splitlines()[0].split()[1] == "CONTRACT"


def test_json_is_the_model_dump_plus_derived_fields() -> None:
    data = json.loads(render_json(sample()))
    assert [v["verdict"] for v in data["verdicts"]] == ["pass", "fail", "error"]
    assert data["passed"] is False and data["exit_code"] == 2
    for v in data["verdicts"]:
        v.pop("verdict")
    data.pop("passed")
    data.pop("exit_code")
    assert RunReport.model_validate(data) == sample()


def test_junit_one_testcase_per_contract_and_subject_with_failure_and_error() -> None:
    root = ET.fromstring(render_junit(sample()))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "2")
    suite = root.find("testsuite[@name='c@3']")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["good.json", "4bf92f3577b34da6a3ce929d0e0e4736", "crash.json"]
    assert cases["good.json"].find("failure") is None
    failure = cases["4bf92f3577b34da6a3ce929d0e0e4736"].find("failure")
    assert failure is not None and failure.get("type") == "invariant_failure"
    assert failure.get("message") == "inv: deleted <script>alert(1)</script>"
    assert "missing_evidence ev: no\nmessages\\x01captured" in (failure.text or "")
    error = cases["crash.json"].find("error")
    assert error is not None and "KeyError" in error.get("message", "")
    inputs = root.find("testsuite[@name='otel-oracles inputs']/testcase/error")
    assert inputs is not None and inputs.get("message") == "invalid JSON"


HOSTILE_TEXTS = [
    "a&b<c>d\"e'f",
    "tab\there\r\nnew\nline",
    "esc\x1b[31mred\x07\x00",
    "del\x7f c1\x85\x9b",
    "bidi\u202eevil\u2066iso\u2069",
    "non\ufffe\uffffchar",
    "ünïcødé ✓ 日本",
    "",
    "  spaced   out  ",
    "]]>--><!--",
    "&amp;&#10;",
]
"""Text the JUnit writer escapes in some way: XML's specials, line breaks and tabs (which an
attribute writes as references), controls, non-characters, non-ASCII, nothing at all."""


def hostile_report() -> RunReport:
    """Every verdict kind (pass, failure, error, no results) and input errors, each piece of
    text a trace or contract chooses taken from ``HOSTILE_TEXTS``."""
    texts = iter(HOSTILE_TEXTS * 8)
    outcomes = [Outcome.PASS, Outcome.INVARIANT_FAILURE, Outcome.ERROR, Outcome.TOLERATED]
    verdicts = []
    for outcome in outcomes:
        results = [result(o, next(texts), next(texts)) for o in (Outcome.PASS, outcome)]
        v = verdict(next(texts), *results)
        verdicts.append(v.model_copy(update={"contract_id": next(texts) or "c"}))
    verdicts.append(verdict(next(texts)))
    sources = [next(texts) for _ in HOSTILE_TEXTS]
    problems = [
        InputProblem(source=t, message=m) for t, m in zip(sources, HOSTILE_TEXTS, strict=True)
    ]
    return RunReport(verdicts=verdicts, input_errors=problems)


def test_junit_is_the_document_elementtree_writes() -> None:
    """The JUnit document is written as text, not built as an ElementTree: parsing it and
    writing the tree back, indented, must give the same bytes, so its escaping (text,
    attributes, line breaks and tabs in attributes), empty elements and indentation are
    ElementTree's own."""
    for report in (hostile_report(), sample(), RunReport(verdicts=[])):
        document = render_junit(report).decode("utf-8")
        declaration = "<?xml version='1.0' encoding='utf-8'?>\n"
        assert document.startswith(declaration) and document.endswith(">\n")
        root = ET.fromstring(document.encode("utf-8"))
        ET.indent(root)
        body = document.removeprefix(declaration).removesuffix("\n")
        assert ET.tostring(root, encoding="unicode") == body


_TERMINAL_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""The definition of what ``terminal_safe`` escapes (DESIGN: shown, never obeyed): C0 but
tab and newline, DEL, C1, the bidirectional overrides and isolates, the surrogates."""


def reference_terminal_safe(text: str) -> str:
    """``terminal_safe`` by its definition: each character ``_TERMINAL_UNSAFE`` finds written
    as ``ascii`` writes it."""
    return _TERMINAL_UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def test_terminal_safe_escapes_every_character_as_its_definition() -> None:
    """``terminal_safe`` (the core's ``markup_text(..., "terminal")``, asked only for
    unprintable text) escapes exactly what the definition finds, as ``ascii`` writes it,
    over every code point, a surrogate too; printable text is returned unasked, which is
    right only while every character the definition finds is unprintable."""
    found = [c for c in map(chr, range(0x110000)) if _TERMINAL_UNSAFE.match(c)]
    assert len(found) == 9 + 21 + 33 + 5 + 4 + 2048  # ... and the surrogates
    assert not [f"{ord(c):#x}" for c in found if c.isprintable()]
    wrong = []
    for start in range(0, 0x110000, 256):
        chunk = "".join(map(chr, range(start, start + 256)))
        if terminal_safe(chunk) != reference_terminal_safe(chunk):
            wrong.append(hex(start))
    assert not wrong
    assert terminal_safe("tab\tand\nnewline kept, \x1b escaped, <&> as they are") == (
        "tab\tand\nnewline kept, \\x1b escaped, <&> as they are"
    )


def test_html_is_self_contained_and_escapes_everything() -> None:
    page = render_html(sample())
    assert "<script>" not in page, "text from a trace must never become markup"
    assert "deleted &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert page.count("<details") == 3
    assert "scored against 1 task(s)" in page and "bad.jsonl:3" in page


def test_verbose_console_shows_messages_whole() -> None:
    long = "first line of a long message " + "x" * 400 + "\nsecond line: the stderr tail"
    report = RunReport(verdicts=[verdict("t.json", result(Outcome.INVARIANT_FAILURE, long))])
    short = render_console(report)
    assert "second line" not in short and "…" in short, "the table keeps one capped line"
    whole = render_console(report, show_passing_details=True)
    assert "x" * 400 in whole
    assert "      second line: the stderr tail" in whole.splitlines()


def test_the_cores_markup_escapes_every_character_as_the_python_definitions() -> None:
    """The JUnit and HTML texts are written by the core (``markup_text``, ``VerdictMarkup``):
    every code point, a surrogate too, must come out as ``terminal_safe``'s definition then
    ``html.escape`` (the page) or ElementTree's escaping (JUnit, with XML's non-characters
    shown as escapes as well) would write it."""
    import html

    from otel_oracles._native import markup_text

    def xml_text(text: str) -> str:
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def xml_attribute(text: str) -> str:
        text = xml_text(text).replace('"', "&quot;").replace("\r", "&#13;")
        return text.replace("\n", "&#10;").replace("\t", "&#09;")

    def xml_clean(text: str) -> str:
        text = reference_terminal_safe(text)
        return text.replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")

    wrong = []
    for start in range(0, 0x110000, 256):  # each escape is its character's alone
        c = "".join(map(chr, range(start, start + 256)))
        expected = {
            "html": html.escape(reference_terminal_safe(c)),
            "text": xml_text(xml_clean(c)),
            "attribute": xml_attribute(xml_clean(c)),
        }
        wrong += [
            (hex(start), how) for how, text in expected.items() if markup_text(c, how) != text
        ]
    assert not wrong


def reference_one_line(text: str, limit: int) -> str:
    """``one_line``'s definition: whitespace runs collapsed (``str.split``) and cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
NEAR = "\u180e\u200b\u2060\ufeff\x1c\x85\xa0"  # format and separator characters
ONE_LINE_CASES = (
    f"{SPACES}one{SPACES}two {NEAR} three{SPACES}",
    "é" * 990 + " \ud800" * 20,
    "x" * 998 + " y",
    "x" * 999 + " y",
    "",
    SPACES,
    "\ud800\udcff " * 3,
)


def test_one_line_is_its_definition() -> None:
    """``one_line`` (the core's, the one implementation: the table, the JUnit input errors
    and failure messages) collapses every character ``str.split`` splits at
    (``str.isspace``) and no other, and cuts at ``limit`` characters as Python counts them
    (a surrogate one), at every limit from one character to past the text."""
    from otel_oracles._native import one_line

    for text in ONE_LINE_CASES:
        for limit in (1, 2, 3, 5, 17, 300, 999, 1000, 1001, 5000):
            assert one_line(text, limit) == reference_one_line(text, limit), (text, limit)
    assert one_line("a  b\n") == "a b"
    assert one_line("x" * 301) == "x" * 299 + "…"  # 300 characters by default
    with pytest.raises(ValueError, match="at least one"):
        one_line("x", 0)


def test_a_failures_message_is_one_line_as_python_cuts_it() -> None:
    """The core collapses a failure's ``message`` attribute to one line as ``one_line``'s
    definition does, cut at 1,000 characters."""
    for message in ONE_LINE_CASES[:4]:
        failing = result(Outcome.INVARIANT_FAILURE, message, "inv")
        root = ET.fromstring(render_junit(RunReport(verdicts=[verdict("s", failing)])))
        failure = root.find("testsuite/testcase/failure")
        assert failure is not None
        expected = terminal_safe(reference_one_line(f"inv: {message}", 1000))
        assert failure.get("message") == expected
