"""The privacy boundary: what of a result's text may leave the process.

Traces carry customer data, and ``OracleResult.message`` is written by oracles that may
quote it (a matched line, a tool argument, a model answer). So by default the emitted
explanation is *rebuilt* from a template per outcome plus allow-listed values: the check's
name (contract-authored), outcome, budget numbers, step indexes, and detail values that are
numbers, booleans or identifier-shaped strings under keys known to hold identifiers (tool
names, error types). Anything else is dropped, and identifier-shaped values that look like
secrets (emails, API keys, long tokens) are replaced. ``explain="full"`` is the explicit
opt-in that emits the oracle's own message, still length-capped.

The reports (console, JSON, JUnit, HTML) apply the same boundary through ``SHOWN_FILTER``
itself as they render each result (the JSON report's writer in the core), building no
scrubbed copy: one definition of what may be shown, wherever results go. The templates are
rendered and details scrubbed by the core (``ShownFilter``, ``native/python/src/scrub.rs``)
with the allow-lists and regexes defined here.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any, Literal

from otel_oracles._native import ShownFilter
from otel_oracles.errors import OtelOraclesError
from otel_oracles.model.result import OracleResult, Outcome

ExplainMode = Literal["template", "full"]

OTEL_ORACLES_EXPLAIN = "OTEL_ORACLES_EXPLAIN"
"""``template`` (default) or ``full``: how much of a check's message may leave the process
as ``gen_ai.evaluation.explanation``. ``full`` is an explicit opt-in; see docs/telemetry.md."""


def explain_mode(text: str, source: str) -> ExplainMode:
    """``text`` as a mode; anything but ``template`` or ``full`` is an ``OtelOraclesError``
    naming ``source`` (the variable or the option it came from)."""
    if text == "template":
        return "template"
    if text == "full":
        return "full"
    raise OtelOraclesError(f"expected template or full, got {text!r}", source)


def explain_from_env() -> ExplainMode | None:
    """``OTEL_ORACLES_EXPLAIN`` (None when unset or blank), any case, spaces around ignored.

    Read here rather than in ``EmitSettings.from_env`` alone: every ``grade``'s reports
    follow it, and building the settings model (~4 M instructions) is for an export."""
    value = os.environ.get(OTEL_ORACLES_EXPLAIN, "").strip().lower()
    return explain_mode(value, OTEL_ORACLES_EXPLAIN) if value else None


MAX_EXPLANATION_CHARS = 256
"""Template explanations are short by construction; the cap guards odd contract labels."""
MAX_FULL_EXPLANATION_CHARS = 2048
"""Even the opt-in keeps one log record bounded."""
MAX_VALUE_CHARS = 64
MAX_LIST_ITEMS = 5

IDENTIFIER_DETAIL_KEYS: frozenset[str] = frozenset(
    {
        "tool",
        "tools",
        "tool_name",
        "expected_tool",
        "forbidden_tool",
        "agent",
        "from_agent",
        "to_agent",
        "error.type",
        "error_type",
        "status",
        "finish_reason",
        "evidence",
        "field",
        "kind",
        "unclassified_spans",
    }
)
"""Detail keys whose string values are identifiers (names chosen by developers, not users)."""

SHOWN_ERROR_TYPES: frozenset[str] = frozenset({"SandboxError"})
"""Errors whose message otel-oracles composes from configuration and the machine's state,
never from a trace (no sandbox here and how to install it; commands turned off in
``serve``): templates show it, since without it the reader cannot fix the harness."""

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:\-]{0,63}$")
_SECRET_SHAPES = re.compile(
    r"""
    [^@\s]+@[^@\s]+\.[A-Za-z]{2,}               # email
    | (?:sk|pk|rk|ak|api|key|token|ghp|gho|xox[abp])[-_][A-Za-z0-9_\-]{8,}  # vendor key prefixes
    | AKIA[0-9A-Z]{12,}                          # AWS access key id
    | eyJ[A-Za-z0-9_\-]{10,}                     # JWT
    | [A-Za-z0-9_\-]*\d[A-Za-z0-9_\-]*[A-Za-z][A-Za-z0-9_\-]{18,}  # long mixed token
    """,
    re.VERBOSE | re.IGNORECASE,
)
REDACTED = "[redacted]"

_TEMPLATES: dict[Outcome, str] = {
    Outcome.PASS: "{name}: holds",
    Outcome.TOLERATED: "{name}: tolerated{budget}",
    Outcome.INVARIANT_FAILURE: "{name}: violated",
    Outcome.BUDGET_EXHAUSTED: "{name}: budget exhausted{budget}",
    Outcome.MISSING_EVIDENCE: "{name}: evidence needed to judge is missing",
    Outcome.ERROR: "{name}: the check itself failed",
}


def looks_secret(value: str) -> bool:
    """True for strings shaped like an email, an API key or a long opaque token."""
    return _SECRET_SHAPES.search(value) is not None


def replace_secrets(text: str, replacement: Callable[[str], str] | None = None) -> tuple[str, int]:
    """``text`` with every secret-shaped part (as ``looks_secret`` finds them) replaced by
    ``replacement(part)`` (default: ``REDACTED``), and how many were replaced: for text kept
    on purpose (a promoted fixture's opted-in content), where the rest must survive."""
    if replacement is None:
        return _SECRET_SHAPES.subn(REDACTED, text)
    return _SECRET_SHAPES.subn(lambda m: replacement(m.group()), text)


_KNOWN_IDENTIFIERS_MAX = 4096
"""How many accepted strings ``scrub_details`` remembers (the same few detail keys and tool
names come in every result; the bound guards a run of distinct ones)."""

_IDENTIFIER_MAX_CHARS = 65
"""The longest string ``_IDENTIFIER`` matches: 64 characters and a final newline (``$``)."""


def safe_identifier(value: Any) -> str | None:
    """``value`` when it is a short identifier that does not look like a secret, else None."""
    if (
        isinstance(value, str)
        and len(value) <= _IDENTIFIER_MAX_CHARS
        and _safe_identifier_text(value)
    ):
        return value
    return None


@functools.lru_cache(maxsize=4096)
def _safe_identifier_text(value: str) -> bool:
    """Whether a string short enough to be an identifier (so the cache stays small) is one
    and does not look like a secret: the same detail keys and tool names come back in every
    result of every trace, and the secret-shape search is most of what scrubbing a result
    costs."""
    return _IDENTIFIER.match(value) is not None and not looks_secret(value)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def explain(result: OracleResult, mode: ExplainMode = "template") -> str:
    """The ``gen_ai.evaluation.explanation`` for ``result`` under ``mode``."""
    if mode == "full":
        return _cap(result.message, MAX_FULL_EXPLANATION_CHARS)
    return _template(result)


SHOWN_FILTER = ShownFilter(
    IDENTIFIER_DETAIL_KEYS,
    safe_identifier,
    looks_secret,
    REDACTED,
    MAX_LIST_ITEMS,
    _KNOWN_IDENTIFIERS_MAX,
    list(_TEMPLATES.items()),
    Outcome.PASS,
    Outcome.ERROR,
    SHOWN_ERROR_TYPES,
    MAX_EXPLANATION_CHARS,
    MAX_VALUE_CHARS,
)
"""The privacy filter in the core (``native/python/src/scrub.rs``), its one implementation:
the template explanations (``explain``), the messages reports show (``shown_message``) and
the scrubbed details (``scrub_details``) come from it, and the JSON report's writer applies
it to each result as it writes it (no Python call, no scrubbed dict). It asks
``safe_identifier`` (and, for a check name that is not an identifier, ``looks_secret``)
what may be shown, remembering the strings it gave back."""


def scrub_details(details: dict[str, Any]) -> dict[str, Any]:
    """The details a report may show by default: numbers and booleans (counts, lengths,
    exit codes), and identifier-shaped values under identifier keys (secret-shaped ones
    replaced; of a list its first ``MAX_LIST_ITEMS`` items, of a name -> count dict its first
    pairs); every other value (arguments, output, matched text) is dropped. A new dict."""
    return SHOWN_FILTER.scrub(details)


def shown_message(result: OracleResult, mode: ExplainMode = "template") -> str:
    """The message a report shows of ``result`` under ``mode``: in ``template`` mode the
    template explanation without the check's name (reports print it next to the message
    already); ``full`` keeps the oracle's own. Asked of the filter in the core, whose kept
    heads answer the common pass without rendering it."""
    if mode == "full":
        return result.message
    return SHOWN_FILTER.shown_message(result)


def _template(result: OracleResult) -> str:
    """The outcome's template with the check's name (itself when an identifier, else capped,
    and the check's type or ``check`` when it looks secret) and budget, ``error.type`` (and
    the message of a ``SHOWN_ERROR_TYPES`` error), the first steps and, unless it passed, the
    allow-listed details sorted by key (``scrub_details``' rules, values capped at
    ``MAX_VALUE_CHARS``); at most ``MAX_EXPLANATION_CHARS``. Rendered by the core."""
    return SHOWN_FILTER.explain(result)
