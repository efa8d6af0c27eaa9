"""JUnit XML, the format CI systems read: one ``testsuite`` per contract, one ``testcase``
per contract x subject. A failing verdict carries ``<failure>`` (agent failures) or
``<error>`` (harness errors only) whose text lists every failing oracle message."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from otel_oracles.model.result import RunReport, Verdict
from otel_oracles.report._common import contract_label, failing, one_line

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters, even escaped."""
    return _XML_INVALID.sub("?", text)


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}"


def _testcase(parent: ET.Element, v: Verdict) -> tuple[int, int]:
    case = ET.SubElement(
        parent,
        "testcase",
        classname=_clean(v.contract_id),
        name=_clean(v.subject),
        time=_seconds(v.duration_ns),
    )
    lines = [f"{r.outcome.value} {r.name}: {r.message}" for r in v.results]
    if v.passed:
        ET.SubElement(case, "system-out").text = _clean("\n".join(lines))
        return 0, 0
    bad = failing(v)
    tag = "error" if v.verdict == "error" else "failure"
    first = bad[0]
    element = ET.SubElement(
        case,
        tag,
        message=_clean(one_line(f"{first.name}: {first.message}", 1000)),
        type=first.outcome.value,
    )
    element.text = _clean("\n".join(f"{r.outcome.value} {r.name}: {r.message}" for r in bad))
    ET.SubElement(case, "system-out").text = _clean("\n".join(lines))
    return (0, 1) if tag == "error" else (1, 0)


def render_junit(report: RunReport) -> bytes:
    """The JUnit XML document (UTF-8 bytes, with declaration)."""
    root = ET.Element("testsuites", name="otel-oracles")
    by_contract: dict[str, list[Verdict]] = defaultdict(list)
    for v in report.verdicts:
        by_contract[contract_label(v)].append(v)
    total = total_fail = total_err = 0
    total_ns = 0
    for label, verdicts in by_contract.items():
        suite = ET.SubElement(root, "testsuite", name=_clean(label))
        fails = errs = 0
        ns = 0
        for v in verdicts:
            f, e = _testcase(suite, v)
            fails, errs, ns = fails + f, errs + e, ns + v.duration_ns
        suite.set("tests", str(len(verdicts)))
        suite.set("failures", str(fails))
        suite.set("errors", str(errs))
        suite.set("skipped", "0")
        suite.set("time", _seconds(ns))
        total, total_fail, total_err = total + len(verdicts), total_fail + fails, total_err + errs
        total_ns += ns
    if report.input_errors:
        suite = ET.SubElement(root, "testsuite", name="otel-oracles inputs")
        for problem in report.input_errors:
            case = ET.SubElement(suite, "testcase", classname="inputs", name=_clean(problem.source))
            ET.SubElement(
                case, "error", message=_clean(one_line(problem.message, 1000)), type="input_error"
            ).text = _clean(problem.message)
        n = len(report.input_errors)
        for key, value in (("tests", n), ("failures", 0), ("errors", n), ("skipped", 0)):
            suite.set(key, str(value))
        suite.set("time", "0.000")
        total, total_err = total + n, total_err + n
    root.set("tests", str(total))
    root.set("failures", str(total_fail))
    root.set("errors", str(total_err))
    root.set("time", _seconds(total_ns))
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
