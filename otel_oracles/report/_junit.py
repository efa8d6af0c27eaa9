"""JUnit XML, the format CI systems read: one ``testsuite`` per contract, one ``testcase``
per contract x subject. A failing verdict carries ``<failure>`` (agent failures) or
``<error>`` (harness errors only) whose text lists every failing oracle message.

The document is written as text, not built as an ElementTree: a tree per testcase, indented
and serialized by ElementTree's Python serializer, was most of the report's cost (with the
regex over every piece of text, ~0.45 G instructions of data-2000's 3,500 verdicts). Each
testcase is written by the core (``_markup.MARKUP``), the suites around them here. The bytes are
ElementTree's, indented as ``ET.indent`` lays them out (``tests/report/
test_report_renderers.py`` holds the document to what ElementTree writes of it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from otel_oracles._native import markup_text, one_line
from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import blocks, byte_spool
from otel_oracles.report._markup import MARKUP

if TYPE_CHECKING:
    from otel_oracles._native import ShownFilter


def _attribute(text: str) -> str:
    """An attribute value as ElementTree escapes it, of ``text`` as the console shows it
    (``terminal_safe``; and U+FFFE, U+FFFF, which XML cannot carry, written the same way). A
    CI page shows the testcase names and failure text a trace chose: a raw right-to-left
    override made a tool name read reversed there, and the C1 controls and DEL reached
    whoever read the XML in a terminal; XML 1.0 cannot carry most C0 controls even escaped
    (they were replaced by ``?``, losing what was there)."""
    return markup_text(text, "attribute")


def _element(tag: str, attributes: str, text: str) -> str:
    """``<tag attributes>text</tag>`` with ``text`` shown as character data (as
    ``_attribute`` shows a value), or ``<tag attributes />`` for no text (as ElementTree
    writes an empty element)."""
    if not text:
        return f"<{tag}{attributes} />"
    return f"<{tag}{attributes}>{markup_text(text, 'text')}</{tag}>"


def _attributes(pairs: dict[str, str]) -> str:
    """`` name="value"`` per pair, in order, values shown (``_attribute``)."""
    return "".join(f' {name}="{_attribute(value)}"' for name, value in pairs.items())


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


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
        ``emit.SHOWN_FILTER``) each message is the one it shows, asked of it in the core as
        the text is laid out: no scrubbed copy of the verdict is built."""
        self.put(MARKUP.junit(v, shown))

    def put(self, testcase: tuple[str, bytes, int, int, int]) -> None:
        """Place a testcase as the core wrote it (``add``'s, or ``VerdictReports.write``'s
        for a run writing several reports): its suite's label, its text, its failures and
        errors and its duration in nanoseconds."""
        label, text, fails, errs, ns = testcase
        suite = self._suites.get(label)
        if suite is None:
            suite = self._suites[label] = _Suite()
        suite.cases.write(text)
        suite.tests += 1
        suite.failures += fails
        suite.errors += errs
        suite.ns += ns

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
                    "name": label,
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
                name = _attribute(problem.source)
                message = _attribute(one_line(problem.message, 1000))
                error = _element(
                    "error", f' message="{message}" type="input_error"', problem.message
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
