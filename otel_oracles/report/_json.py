"""Machine output: the report's own models dumped as JSON, so the schema follows the code."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter

from otel_oracles._native import VerdictJson, json_indented
from otel_oracles.model.result import Counts, InputProblem, OracleResult, RunReport, Verdict
from otel_oracles.report._common import SPOOL_WRITE_CHARS, Tally, byte_spool, json_safe

ShownFields = Callable[[OracleResult], tuple[str, dict[str, Any]]]
"""A result's message and details as the report shows them (``emit.shown_fields``)."""

_DETAILS = TypeAdapter(dict[str, Any])
"""The type of ``OracleResult.details`` and ``params``: dumps a value that is not plain JSON
data as ``model_dump`` dumps the field."""

_VERDICT_FIELDS = tuple(Verdict.model_fields)
_RESULT_FIELDS = tuple(OracleResult.model_fields)
_COUNTS_FIELDS = tuple(Counts.model_fields)
"""Each model's fields in declaration order: the keys, in order, of its ``model_dump``."""

_VERDICT_LEVEL = 2
"""How deep each verdict sits in the document: in the report object's ``verdicts`` list."""

_VERDICT_JSON = VerdictJson(_VERDICT_FIELDS, _RESULT_FIELDS, _COUNTS_FIELDS, _VERDICT_LEVEL)
"""Writes a verdict's text from its models' field values in the core: what ``verdict_data``
and ``_dumps`` make of it, without the dicts and the ``str`` between them. A verdict it
leaves to them (held otherwise than validation leaves it, details or params that are not
plain JSON data) goes through them."""

_PLAIN_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})

_FIRST = b"    "
_NEXT = b",\n    "
"""What precedes a verdict's text in the document: its indent (and, after the first, a comma
ending the one before)."""

SPOOL_READ_BYTES = 1 << 20
"""The spooled verdicts are read back (and printed) in blocks of this size."""


def report_data(report: RunReport, exit_code: int | None = None) -> dict[str, Any]:
    """``model_dump(mode="json")`` of the report, plus the derived values a consumer should
    not have to recompute: ``passed``, ``exit_code`` and each verdict's ``verdict``.

    ``exit_code`` overrides ``report.exit_code()`` when the command decides it otherwise
    (``gate`` with manifest expectations)."""
    data = report.model_dump(mode="json")
    data["passed"] = report.passed
    data["exit_code"] = report.exit_code() if exit_code is None else exit_code
    for dumped, verdict in zip(data["verdicts"], report.verdicts, strict=True):
        dumped["verdict"] = verdict.verdict
    return data


def _plain(value: object) -> bool:
    """Whether ``value`` is already what pydantic's JSON mode makes of it: strings, integers,
    booleans, None, finite floats, and lists and string-keyed dicts of them (exact types).
    Anything else (NaN, a tuple, an enum member, a non-string key, a date) is dumped by
    pydantic as ``model_dump`` would. Scalars inside a container are decided inline (a call
    per value cost more than the rest of the report's Python)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                return False
            kind = type(item)
            if kind in _PLAIN_SCALARS:
                continue
            if kind is list:
                # A list of scalars (tool names, step indexes) is the common nested value:
                # its scalars decided here, only anything else by a call.
                for sub in item:
                    if type(sub) not in _PLAIN_SCALARS and not _plain(sub):
                        return False
            elif kind is float:
                if item - item != 0.0:  # NaN and infinities are not plain
                    return False
            elif not _plain(item):
                return False
        return True
    if kind is list:
        for item in value:  # type: ignore[attr-defined]
            kind = type(item)
            if kind in _PLAIN_SCALARS:
                continue
            if kind is float:
                if item - item != 0.0:
                    return False
            elif not _plain(item):
                return False
        return True
    if kind in _PLAIN_SCALARS:
        return True
    return kind is float and bool(value - value == 0.0)  # type: ignore[operator]


def verdict_data(v: Verdict, shown: ShownFields | None = None) -> dict[str, Any]:
    """The data of a verdict ``VerdictJson`` leaves to Python (and what its text is held to).

    ``v.model_dump(mode="json")`` plus ``verdict``, read from the models' fields instead of
    serialized through pydantic: every field but the two ``dict[str, Any]`` ones of each result
    is already its JSON form once validated (strings, integers, booleans, None, lists of
    them; an ``Outcome`` is a ``str`` that the writer spells as its value), so only those two
    need a look (``_plain``). With ``shown``, each result's message and details are what
    it gives (``JsonWriter.add``). Nothing is copied but the dicts that hold the fields."""
    data = _fields(v, _VERDICT_FIELDS)
    results = []
    dump = _DETAILS.dump_python
    for result in v.results:
        # ``_fields`` inline (this loop runs for every result reported); a ``dict[str,
        # Any]`` field (details, params) is itself when it is plain JSON data (most are),
        # else pydantic's dump of it, as ``model_dump(mode="json")`` dumps the field.
        out = dict(result.__dict__)
        if tuple(out) != _RESULT_FIELDS:
            out = result.model_dump(mode="json")
        if shown is not None:
            out["message"], details = shown(result)
        else:
            details = out["details"]
        if not (type(details) is dict and not details) and not _plain(details):
            details = dump(details, mode="json")  # (an empty dict, most scrubbed details, is plain)
        out["details"] = details
        params = out["params"]
        out["params"] = params if _plain(params) else dump(params, mode="json")
        results.append(out)
    data["results"] = results
    data["counts"] = _fields(v.counts, _COUNTS_FIELDS)
    data["verdict"] = v.verdict
    return data


def _fields(model: BaseModel, names: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``model``'s field values, keyed in declaration order (``names``): a model
    validated, built by ``model_construct`` or copied by ``model_copy`` holds exactly that
    in its ``__dict__``. One held any other way is dumped by pydantic (the nested models
    and ``dict[str, Any]`` fields come out already in their JSON form then)."""
    values = dict(model.__dict__)
    if tuple(values) == names:
        return values
    dumped: dict[str, Any] = model.model_dump(mode="json")
    return dumped


def _dumps(data: object, level: int = 0) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)`` as it sits ``level`` containers deep
    (every line after the first indented ``2 * level`` more spaces): written by the core
    (Python's encoder takes its slow pure-Python path whenever an indent is asked for), or by
    ``json.dumps`` itself for a value the core leaves to it. Either way with the characters a
    terminal or a diff view would act on escaped (``json_safe``)."""
    text = json_indented(data, 2, level)
    if text is not None:
        return json_safe(text)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return json_safe(text.replace("\n", "\n" + "  " * level) if level else text)


class JsonWriter:
    """Writes the same document as ``render_json`` one verdict at a time.

    ``json.dumps`` with an indent lays out a nested value exactly as it would alone, shifted
    by its depth, so each verdict is dumped as it arrives (spooled, on disk past a megabyte)
    and the document is stitched together in ``chunks()``; byte-identical to dumping the
    whole report at once (a test holds them equal). The spool holds the text encoded as
    UTF-8 once, and ``byte_chunks()`` gives the document as those bytes, so a writer to a
    UTF-8 stream prints them as they are.
    """

    def __init__(self) -> None:
        self._verdicts = byte_spool()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.tally = Tally()

    def add(self, v: Verdict, shown: ShownFields | None = None) -> None:
        """Dump ``v``; with ``shown``, each result's message and details are what it gives
        for the result: the same text as adding ``v`` with every result copied with them
        (``emit.scrub_verdict``), without building the copies.

        The core writes the text as UTF-8 bytes straight from the models (``VerdictJson``);
        a verdict it leaves goes through ``verdict_data`` and ``_dumps``, encoded on its
        own: most are ASCII, which encodes as a copy, while one character beyond Latin-1 (a
        template's ``…``) in a text joined with the others would make the whole joined block
        two bytes a character, to widen and then encode character by character."""
        text = _VERDICT_JSON.write(v, shown)
        if text is None:
            text = _dumps(verdict_data(v, shown), level=_VERDICT_LEVEL).encode("utf-8")
        self._pending.append(_FIRST if not self.tally.verdicts else _NEXT)
        self._pending.append(text)
        self._pending_bytes += len(text)
        if self._pending_bytes >= SPOOL_WRITE_CHARS:
            self._flush()
        self.tally.add(v)

    def _flush(self) -> None:
        self._verdicts.write(b"".join(self._pending))
        self._pending = []
        self._pending_bytes = 0

    def close(self) -> None:
        """Drop the spooled text (``lines``/``chunks`` do it when they finish)."""
        self._pending = []
        self._verdicts.close()

    def chunks(
        self, input_errors: list[InputProblem], notes: list[str], exit_code: int | None = None
    ) -> Iterator[str]:
        """The document in pieces; ``exit_code`` as in ``report_data``."""
        decoder = codecs.getincrementaldecoder("utf-8")()  # a block may end inside a character
        for block in self.byte_chunks(input_errors, notes, exit_code):
            if text := decoder.decode(block):
                yield text
        decoder.decode(b"", final=True)  # nothing is left: every block came from whole texts

    def byte_chunks(
        self, input_errors: list[InputProblem], notes: list[str], exit_code: int | None = None
    ) -> Iterator[bytes]:
        """``chunks()`` encoded as UTF-8: the spooled verdicts as they were written."""
        try:
            tail = RunReport(input_errors=input_errors, notes=notes).model_dump(mode="json")
            del tail["verdicts"]
            tail["passed"] = self.tally.all_passed
            tail["exit_code"] = (
                self.tally.exit_code(input_errors) if exit_code is None else exit_code
            )
            rest = _dumps(tail)[1:]  # "{" removed: the tail continues the verdicts' object
            if not self.tally.verdicts:
                yield ('{\n  "verdicts": [],' + rest + "\n").encode("utf-8")
                return
            yield b'{\n  "verdicts": [\n'
            self._flush()
            buffer = self._verdicts
            buffer.seek(0)
            while block := buffer.read(SPOOL_READ_BYTES):
                yield block
            yield ("\n  ]," + rest + "\n").encode("utf-8")
        finally:
            self._verdicts.close()


def render_json(report: RunReport, exit_code: int | None = None) -> str:
    writer = JsonWriter()
    for v in report.verdicts:
        writer.add(v)
    return b"".join(writer.byte_chunks(report.input_errors, report.notes, exit_code)).decode()
