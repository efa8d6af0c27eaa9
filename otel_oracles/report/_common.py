"""Small helpers the renderers share."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from typing import IO, AnyStr

from otel_oracles._frozen import Value
from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles._native import markup_text
from otel_oracles.model.result import InputProblem, Verdict

SPOOL_MEMORY_BYTES = 1 << 20
"""A streaming writer keeps up to this much rendered text in memory, then moves it to an
anonymous temporary file: small reports never touch the disk, large ones never fill memory."""

SPOOL_WRITE_CHARS = 1 << 16
"""A streaming writer gathers rendered text up to this size before one write to its spool: a
write per verdict cost more than the text (a method call through the spool, the encoder)."""


def contract_label(verdict: Verdict) -> str:
    """``id@version``: results carry the version so a change of promise is visible."""
    return f"{verdict.contract_id}@{verdict.contract_version}"


def agent_label(verdict: Verdict) -> str:
    """The root span / agent name when the subject has one (trace-derived), else ``""``."""
    parts = [p for p in (verdict.agent_name, verdict.root_name) if p]
    return parts[0] if parts else ""


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on instead of showing, and every
    surrogate, written as its Python escape (``\x1b``, ``\u202e``, ``\udcff``): what a
    trace names (agent, tool, span, error text) is shown, never obeyed, and always has UTF-8
    text. Every line printed for a person (the table, ``inspect``, ``watch``, the
    ``error:``/``note:`` lines) goes through this, and the JUnit and HTML reports escape
    their texts the same way in the core; JSON escapes C0 itself (and the core's JSON writer
    each surrogate, as ``\udcff`` too).

    What is escaped: C0 controls but tab and newline (ESC starts the sequences that retitle
    the window, clear the screen, move the cursor, write the clipboard or make links; CR
    overwrites the line), DEL, the C1 controls (``\x9b`` is CSI on terminals that take 8-bit
    controls), the bidirectional overrides and isolates that make a line read in another
    order than it is ("Trojan Source"), and the surrogates, which are no characters and have
    no UTF-8 text: a ``str`` an application made can hold one (Python's ``surrogateescape``
    decoding of bytes that are not UTF-8, ``os.fsdecode``), and writing it raised
    ``UnicodeEncodeError``, losing the whole report. The one implementation is the core's
    (``markup_text(text, "terminal")``, which the reports' markup writers share); every
    character it escapes is unprintable to Python (a control, a format character), so
    printable text, nearly all of it, is returned without the call."""
    return text if text.isprintable() else markup_text(text, "terminal")


_JSON_UNSAFE = lazy_pattern("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What ``terminal_safe`` escapes beyond the C0 controls, which JSON escapes itself."""


def json_safe(text: str) -> str:
    """JSON ``text`` with DEL, the C1 controls and the bidirectional overrides and isolates
    written as ``\\uXXXX``. JSON requires only C0 to be escaped, so a trace's names reached
    a terminal, a pager or a reviewer's diff of a results file raw, to be obeyed there. Outside
    strings a JSON text is ASCII, so every such character is inside a string, where its
    escape parses to the same value: the document stays valid and equal when parsed.

    Most verdicts' text is ASCII, where only DEL can be found: that is tested first (the
    regex over each of 3,500 verdicts, a 21 MB report, took 0.6 s; with the test, 57 ms)."""
    if text.isascii():
        return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    if _JSON_UNSAFE().search(text) is None:
        return text
    return _JSON_UNSAFE().sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def spool() -> IO[str]:
    """A text buffer for rendered fragments that spills to disk past ``SPOOL_MEMORY_BYTES``."""
    return tempfile.SpooledTemporaryFile(
        max_size=SPOOL_MEMORY_BYTES, mode="w+", encoding="utf-8", newline="\n"
    )


def byte_spool() -> IO[bytes]:
    """``spool`` for text already encoded as UTF-8 (the JSON report: written once, read back
    and printed as bytes, instead of encoded, decoded and encoded again)."""
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES, mode="w+b")


def replay(buffer: IO[AnyStr]) -> IO[AnyStr]:
    """Rewind ``buffer`` for reading back what was written."""
    buffer.flush()
    buffer.seek(0)
    return buffer


def blocks(buffer: IO[bytes]) -> Iterator[bytes]:
    """What was written to ``buffer`` (a ``byte_spool``), read back in 64 KB blocks."""
    replay(buffer)
    while block := buffer.read(1 << 16):
        yield block


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class Tally(Value):
    """What a report's summary needs from verdicts that are no longer held."""

    __slots__ = ("errors", "passed", "verdicts")
    verdicts: int
    passed: int
    errors: int

    def __init__(self, verdicts: int = 0, passed: int = 0, errors: int = 0) -> None:
        self.verdicts = verdicts
        self.passed = passed
        self.errors = errors

    def add(self, verdict: Verdict, derived: str | None = None) -> None:
        """Count ``verdict``; ``derived`` is its ``verdict`` when the caller has it already
        (``VerdictReports.write`` derives it for the JSON report), so the property is not
        evaluated again for a failing verdict."""
        self.verdicts += 1
        if derived is None:
            if verdict.passed:
                self.passed += 1
                return
            derived = verdict.verdict
        if derived == "pass":
            self.passed += 1
        elif derived == "error":
            self.errors += 1

    @property
    def all_passed(self) -> bool:
        return self.passed == self.verdicts

    def exit_code(self, input_errors: list[InputProblem], keep_going: bool = False) -> int:
        """``RunReport.exit_code`` from the tally: 2 unreadable input (unless keep_going),
        1 any verdict failed, else 0."""
        if input_errors and not keep_going:
            return 2
        return 0 if self.all_passed else 1
