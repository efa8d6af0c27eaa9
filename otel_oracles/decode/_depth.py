"""Where a JSON body nests too deeply: the message for a body the decoders refused.

The typed and tolerant JSON decoders both recurse per nesting level and stop at the
interpreter's recursion limit (hundreds of levels, far beyond any real OTLP body: an
``AnyValue`` array inside an array takes three levels each). A body that deep is refused as
a whole with this message, located by byte offset, rather than a traceback or a 500.
"""

from __future__ import annotations

from otel_oracles import safe_regex

MAX_REPORTED_DEPTH = 256
"""Nesting past this many levels is named as the culprit in the message."""

_TOKENS = safe_regex.compile_pattern(rb'"(?:[^"\\]|\\.)*+"|[\[\]{}]')
"""JSON strings (skipped whole, so brackets inside them do not count) and brackets."""


def too_deep(data: bytes) -> str:
    """One line naming the byte offset where nesting passed ``MAX_REPORTED_DEPTH`` levels
    (an iterative scan: this runs exactly when recursion was not an option)."""
    depth = 0
    deepest = 0
    for token in safe_regex.finditer(_TOKENS, data):
        opener = token.group()[:1]
        if opener in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_REPORTED_DEPTH:
                return (
                    f"JSON nests more than {MAX_REPORTED_DEPTH} levels deep "
                    f"(at byte {token.start()})"
                )
        elif opener in (b"]", b"}"):
            depth -= 1
    return f"JSON nests too deeply to decode ({deepest} levels)"
