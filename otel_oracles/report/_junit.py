"""JUnit XML, the format CI systems read: one ``testsuite`` per contract, one ``testcase``
per contract x subject. A failing verdict carries ``<failure>`` (agent failures) or
``<error>`` (harness errors only) whose text lists every failing oracle message.

The document is written as text, not built as an ElementTree: a tree per testcase, indented
and serialized by ElementTree's Python serializer, was most of the report's cost (with the
regex over every piece of text, ~0.45 G instructions of data-2000's 3,500 verdicts). The
bytes are ElementTree's, indented as ``ET.indent`` lays them out: its escaping rules are the
few replaces below (``tests/report/test_report_renderers.py`` holds the document to what
ElementTree writes of it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import (
    blocks,
    byte_spool,
    contract_label,
    one_line,
    terminal_safe,
)

if TYPE_CHECKING:
    from otel_oracles._native import ShownFilter

_XML_INVALID = re.compile("[\ufffe\uffff]")
"""What XML 1.0 cannot carry beyond what ``terminal_safe`` escapes (the surrogates among
them): the non-characters."""


def _clean(text: str) -> str:
    """``text`` as the console shows it (``terminal_safe``: C0 controls but tab and newline,
    DEL, C1, the bidirectional overrides and isolates written as ``\\x1b``, ``\\u202e``), and
    what XML cannot carry written the same way. A CI page shows the testcase names and
    failure text a trace chose: a raw right-to-left override made a tool name read reversed
    there, and the C1 controls and DEL reached whoever read the XML in a terminal. XML 1.0
    cannot carry most C0 controls even escaped; they were replaced by ``?``, losing what was
    there. ASCII text holds nothing ``_XML_INVALID`` finds: it is not searched."""
    safe = terminal_safe(text)
    if safe.isascii() or _XML_INVALID.search(safe) is None:
        return safe
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", safe)


def _text(text: str) -> str:
    """Character data as ElementTree escapes it: ``&``, ``<`` and ``>``."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def _attribute(text: str) -> str:
    """An attribute value as ElementTree escapes it: ``_text``'s three, the quote, and the
    line breaks and tab as character references (so a parser does not normalize them)."""
    text = _text(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


def _element(tag: str, attributes: str, text: str) -> str:
    """``<tag attributes>text</tag>`` with ``text`` escaped, or ``<tag attributes />`` for
    no text (as ElementTree writes an empty element)."""
    if not text:
        return f"<{tag}{attributes} />"
    return f"<{tag}{attributes}>{_text(text)}</{tag}>"


def _attributes(pairs: dict[str, str]) -> str:
    """`` name="value"`` per pair, in order, values escaped."""
    return "".join(f' {name}="{_attribute(value)}"' for name, value in pairs.items())


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


def _testcase(v: Verdict, shown: ShownFilter | None) -> tuple[str, int, int]:
    """``v``'s testcase as it appears in the document (two levels in); each result's message
    is what ``shown`` (the privacy filter) shows of it, or its own without one. Returns
    (text, failures, errors). Each result's line is cleaned once: the failure text and
    system-out share it (both escape character by character, so cleaning the joined text
    and joining the cleaned lines are the same)."""
    results = v.results
    messages = [r.message if shown is None else shown.shown_message(r) for r in results]
    lines = [_clean(f"{r.outcome} {r.name}: {m}") for r, m in zip(results, messages, strict=True)]
    head = (
        f'<testcase classname="{_attribute(_clean(v.contract_id))}"'
        f' name="{_attribute(_clean(v.subject))}" time="{_seconds(v.duration_ns)}">'
    )
    out = _element("system-out", "", "\n".join(lines))
    if v.passed:
        return f"{head}\n      {out}\n    </testcase>", 0, 0
    bad = [i for i, r in enumerate(results) if not r.passed]  # the failing results
    tag = "error" if v.verdict == "error" else "failure"
    first = results[bad[0]]
    message = _clean(one_line(f"{first.name}: {messages[bad[0]]}", 1000))
    attributes = f' message="{_attribute(message)}" type="{_attribute(str(first.outcome))}"'
    failure = _element(tag, attributes, "\n".join([lines[i] for i in bad]))
    text = f"{head}\n      {failure}\n      {out}\n    </testcase>"
    return (text, 0, 1) if tag == "error" else (text, 1, 0)


@dataclass(slots=True)
class _Suite:
    cases: IO[bytes] = field(default_factory=byte_spool)
    tests: int = 0
    failures: int = 0
    errors: int = 0
    ns: int = 0


class JUnitWriter:
    """Builds the JUnit document one verdict at a time, so ``grade`` need not keep every
    verdict: each testcase is written as it arrives, as UTF-8, into its contract's spool (on
    disk past a megabyte; read back as the bytes written, not decoded and encoded again);
    ``chunks()`` wraps the spools in their suites. Same bytes as ``render_junit`` of the
    whole report."""

    def __init__(self) -> None:
        self._suites: dict[str, _Suite] = {}

    def add(self, v: Verdict, shown: ShownFilter | None = None) -> None:
        """Write ``v``'s testcase; with ``shown`` (the privacy filter,
        ``emit.SHOWN_FILTER``) each message is the one it shows, asked of it as the text is
        laid out: no scrubbed copy of the verdict is built."""
        label = contract_label(v)
        suite = self._suites.get(label)
        if suite is None:
            suite = self._suites[label] = _Suite()
        text, fails, errs = _testcase(v, shown)
        suite.cases.write(("\n    " + text).encode("utf-8"))
        suite.tests += 1
        suite.failures += fails
        suite.errors += errs
        suite.ns += v.duration_ns

    def close(self) -> None:
        """Drop the spooled text (``chunks`` does it when it finishes)."""
        for suite in self._suites.values():
            suite.cases.close()

    def chunks(self, input_errors: list[InputProblem]) -> Iterator[bytes]:
        """The UTF-8 document (with declaration) in pieces."""
        try:
            yield from self._chunks(input_errors)
        finally:
            for suite in self._suites.values():
                suite.cases.close()

    def _chunks(self, input_errors: list[InputProblem]) -> Iterator[bytes]:
        tests = sum(s.tests for s in self._suites.values()) + len(input_errors)
        failures = sum(s.failures for s in self._suites.values())
        errors = sum(s.errors for s in self._suites.values()) + len(input_errors)
        root = _attributes(
            {
                "name": "otel-oracles",
                "tests": str(tests),
                "failures": str(failures),
                "errors": str(errors),
                "time": _seconds(sum(s.ns for s in self._suites.values())),
            }
        )
        yield b"<?xml version='1.0' encoding='utf-8'?>\n"
        if not self._suites and not input_errors:
            yield f"<testsuites{root} />\n".encode()
            return
        yield f"<testsuites{root}>".encode()
        for label, suite in self._suites.items():
            attributes = _attributes(
                {
                    "name": _clean(label),
                    "tests": str(suite.tests),
                    "failures": str(suite.failures),
                    "errors": str(suite.errors),
                    "skipped": "0",
                    "time": _seconds(suite.ns),
                }
            )
            yield f"\n  <testsuite{attributes}>".encode()
            yield from blocks(suite.cases)
            yield b"\n  </testsuite>"
        if input_errors:
            n = str(len(input_errors))
            attributes = _attributes(
                {
                    "name": "otel-oracles inputs",
                    "tests": n,
                    "failures": "0",
                    "errors": n,
                    "skipped": "0",
                    "time": "0.000",
                }
            )
            yield f"\n  <testsuite{attributes}>".encode()
            for problem in input_errors:
                name = _attribute(_clean(problem.source))
                message = _attribute(_clean(one_line(problem.message, 1000)))
                error = _element(
                    "error",
                    f' message="{message}" type="input_error"',
                    _clean(problem.message),
                )
                yield (
                    f'\n    <testcase classname="inputs" name="{name}">'
                    f"\n      {error}\n    </testcase>"
                ).encode()
            yield b"\n  </testsuite>"
        yield b"\n</testsuites>\n"


def render_junit(report: RunReport, shown: ShownFilter | None = None) -> bytes:
    """The JUnit XML document (UTF-8 bytes, with declaration); ``shown`` as for ``add``."""
    writer = JUnitWriter()
    for v in report.verdicts:
        writer.add(v, shown)
    return b"".join(writer.chunks(report.input_errors))
