"""JSON documents read from files (contracts, manifests, trajectories, saved reports), with
every way ``json.loads`` refuses one turned into one error with a place when it has one.

``json.loads`` refuses a document three ways: ``JSONDecodeError`` (a syntax error, with its
line and column), ``RecursionError`` (nesting deeper than the interpreter's stack), and a bare
``ValueError`` for a decimal integer longer than Python reads from text
(``sys.get_int_max_str_digits``, 4,300 digits). Callers that caught only the first let the
other two escape as tracebacks; here all three are a ``JsonDocumentError``.
"""

from __future__ import annotations

import json
import sys
from typing import Any


class JsonDocumentError(ValueError):
    """A JSON document ``json.loads`` refused: ``problem``, and its line and column (1-based)
    when the parser gave them."""

    def __init__(self, problem: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column

    @property
    def where(self) -> str:
        """``" at line L column C"``, or nothing when there is no place."""
        if self.line is None:
            return ""
        return f" at line {self.line} column {self.column}"


def load_json_document(text: str | bytes) -> Any:
    """``json.loads(text)``; ``JsonDocumentError`` for any document it refuses."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonDocumentError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JsonDocumentError("nested too deeply for the parser") from None
    except ValueError:
        digits = sys.get_int_max_str_digits()
        raise JsonDocumentError(f"an integer of more than {digits} digits") from None
