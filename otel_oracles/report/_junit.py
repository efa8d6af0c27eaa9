"""JUnit XML, the format CI systems read: one ``testsuite`` per contract, one ``testcase``
per contract x subject. A failing verdict carries ``<failure>`` (agent failures) or
``<error>`` (harness errors only) whose text lists every failing oracle message."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from otel_oracles.model.result import InputProblem, RunReport, Verdict
from otel_oracles.report._common import (
    contract_label,
    one_line,
    replay,
    spool,
    terminal_safe,
)

if TYPE_CHECKING:
    from otel_oracles._native import ShownFilter

_XML_INVALID = re.compile("[\ud800-\udfff\ufffe\uffff]")
"""What XML 1.0 cannot carry beyond what ``terminal_safe`` escapes: the non-characters and
lone surrogates (which UTF-8 cannot encode either)."""


def _clean(text: str) -> str:
    """``text`` as the console shows it (``terminal_safe``: C0 controls but tab and newline,
    DEL, C1, the bidirectional overrides and isolates written as ``\\x1b``, ``\\u202e``), and
    what XML cannot carry written the same way. A CI page shows the testcase names and
    failure text a trace chose: a raw right-to-left override made a tool name read reversed
    there, and the C1 controls and DEL reached whoever read the XML in a terminal. XML 1.0
    cannot carry most C0 controls even escaped; they were replaced by ``?``, losing what was
    there."""
    safe = terminal_safe(text)
    if _XML_INVALID.search(safe) is None:
        return safe
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", safe)


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


def _testcase(parent: ET.Element, v: Verdict, shown: ShownFilter | None) -> tuple[int, int]:
    """``v``'s testcase under ``parent``; each result's message is what ``shown`` (the
    privacy filter) shows of it, or its own without one. Returns (failures, errors)."""
    case = ET.SubElement(
        parent,
        "testcase",
        classname=_clean(v.contract_id),
        name=_clean(v.subject),
        time=_seconds(v.duration_ns),
    )
    messages = [r.message if shown is None else shown.shown_message(r) for r in v.results]
    lines = [f"{r.outcome.value} {r.name}: {m}" for r, m in zip(v.results, messages, strict=True)]
    if v.passed:
        ET.SubElement(case, "system-out").text = _clean("\n".join(lines))
        return 0, 0
    bad = [i for i, r in enumerate(v.results) if not r.passed]  # the failing results
    tag = "error" if v.verdict == "error" else "failure"
    first = v.results[bad[0]]
    element = ET.SubElement(
        case,
        tag,
        message=_clean(one_line(f"{first.name}: {messages[bad[0]]}", 1000)),
        type=first.outcome.value,
    )
    element.text = _clean("\n".join(lines[i] for i in bad))
    ET.SubElement(case, "system-out").text = _clean("\n".join(lines))
    return (0, 1) if tag == "error" else (1, 0)


def _fragment(element: ET.Element, level: int) -> str:
    """``element`` serialized as it appears at ``level`` of the ``ET.indent``-ed document."""
    ET.indent(element, level=level)
    return ET.tostring(element, encoding="unicode")


def _start_tag(tag: str, attributes: dict[str, str]) -> str:
    """An opening tag with ElementTree's own attribute escaping and order."""
    empty = ET.tostring(ET.Element(tag, attributes), encoding="unicode")
    return empty.removesuffix(" />") + ">"


@dataclass(slots=True)
class _Suite:
    cases: IO[str] = field(default_factory=spool)
    tests: int = 0
    failures: int = 0
    errors: int = 0
    ns: int = 0


class JUnitWriter:
    """Builds the JUnit document one verdict at a time, so ``grade`` need not keep every
    verdict: each testcase is serialized as it arrives into its contract's spool (on disk
    past a megabyte); ``chunks()`` wraps the spools in their suites. Same bytes as
    ``render_junit`` of the whole report."""

    def __init__(self) -> None:
        self._suites: dict[str, _Suite] = {}

    def add(self, v: Verdict, shown: ShownFilter | None = None) -> None:
        """Serialize ``v``'s testcase; with ``shown`` (the privacy filter,
        ``emit.SHOWN_FILTER``) each message is the one it shows, asked of it as the text is
        laid out: no scrubbed copy of the verdict is built."""
        label = contract_label(v)
        suite = self._suites.get(label)
        if suite is None:
            suite = self._suites[label] = _Suite()
        holder = ET.Element("testsuite")
        fails, errs = _testcase(holder, v, shown)
        suite.cases.write("\n    " + _fragment(holder[0], 2))
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
            yield from (text.encode("utf-8") for text in self._chunks(input_errors))
        finally:
            for suite in self._suites.values():
                suite.cases.close()

    def _chunks(self, input_errors: list[InputProblem]) -> Iterator[str]:
        tests = sum(s.tests for s in self._suites.values()) + len(input_errors)
        failures = sum(s.failures for s in self._suites.values())
        errors = sum(s.errors for s in self._suites.values()) + len(input_errors)
        root = {
            "name": "otel-oracles",
            "tests": str(tests),
            "failures": str(failures),
            "errors": str(errors),
            "time": _seconds(sum(s.ns for s in self._suites.values())),
        }
        yield "<?xml version='1.0' encoding='utf-8'?>\n"
        if not self._suites and not input_errors:
            yield ET.tostring(ET.Element("testsuites", root), encoding="unicode") + "\n"
            return
        yield _start_tag("testsuites", root)
        for label, suite in self._suites.items():
            attributes = {
                "name": _clean(label),
                "tests": str(suite.tests),
                "failures": str(suite.failures),
                "errors": str(suite.errors),
                "skipped": "0",
                "time": _seconds(suite.ns),
            }
            yield "\n  " + _start_tag("testsuite", attributes)
            cases = replay(suite.cases)
            while block := cases.read(1 << 16):
                yield block
            yield "\n  </testsuite>"
        if input_errors:
            suite_el = ET.Element("testsuite", name="otel-oracles inputs")
            for problem in input_errors:
                case = ET.SubElement(
                    suite_el, "testcase", classname="inputs", name=_clean(problem.source)
                )
                ET.SubElement(
                    case,
                    "error",
                    message=_clean(one_line(problem.message, 1000)),
                    type="input_error",
                ).text = _clean(problem.message)
            n = len(input_errors)
            for key, value in (("tests", n), ("failures", 0), ("errors", n), ("skipped", 0)):
                suite_el.set(key, str(value))
            suite_el.set("time", "0.000")
            yield "\n  " + _fragment(suite_el, 1)
        yield "\n</testsuites>\n"


def render_junit(report: RunReport, shown: ShownFilter | None = None) -> bytes:
    """The JUnit XML document (UTF-8 bytes, with declaration); ``shown`` as for ``add``."""
    writer = JUnitWriter()
    for v in report.verdicts:
        writer.add(v, shown)
    return b"".join(writer.chunks(report.input_errors))
