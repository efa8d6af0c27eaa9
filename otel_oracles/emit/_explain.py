"""The privacy boundary: what of a result's text may leave the process.

Traces carry customer data, and ``OracleResult.message`` is written by oracles that may
quote it (a matched line, a tool argument, a model answer). So by default the emitted
explanation is *rebuilt* from a template per outcome plus allow-listed values: the check's
name (contract-authored), outcome, budget numbers, step indexes, and detail values that are
numbers, booleans or identifier-shaped strings under keys known to hold identifiers (tool
names, error types). Anything else is dropped, and identifier-shaped values that look like
secrets (emails, API keys, long tokens) are replaced. ``explain="full"`` is the explicit
opt-in that emits the oracle's own message, still length-capped.

The reports (console, JSON, JUnit, HTML) apply the same boundary through ``scrub_verdict``
(the JSON report's writer in the core through ``SHOWN_FILTER`` itself): one definition of
what may be shown, wherever results go. The templates are rendered and details scrubbed by
the core (``ShownFilter``, ``native/python/src/scrub.rs``) with the allow-lists and regexes
defined here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Literal

from otel_oracles._native import ShownFilter
from otel_oracles.model.result import OracleResult, Outcome, Verdict

ExplainMode = Literal["template", "full"]

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

_NUMBER = (bool, int, float)
_SEQUENCE = (list, tuple)
"""``isinstance`` tuples: a ``bool | int | float`` union is a new object at every call."""

# Enum members read once: ``Outcome.PASS`` looks through the enum machinery on every read,
# and every result a report shows asks.
_PASS = Outcome.PASS
_ERROR = Outcome.ERROR
_PASS_VALUE = _PASS.value
"""A pass's outcome in ``explain_key``'s keys: an outcome keys by its value, a ``str`` whose
hash is kept, where an enum member's hash is a Python call (``Enum.__hash__``) at every
lookup."""

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


def error_type(result: OracleResult) -> str:
    """``error.type`` for an errored check: the exception class name when it is a plain
    identifier, else ``_OTHER`` (the semantic-conventions fallback)."""
    return safe_identifier(result.details.get("error.type")) or "_OTHER"


def explain_key(result: OracleResult, mode: ExplainMode = "template") -> tuple[Any, ...] | None:
    """Everything ``explain(result, mode)`` depends on, as a dict key (it includes the
    check's name, type and outcome); None when the text is not cached (``full`` mode, odd
    detail keys). Lets a caller keep what it derives from the text under this key and skip
    ``explain`` for results it has seen."""
    if mode == "full":
        return None
    # The text depends on a few small fields and on the detail values the template may
    # show (a pass shows none): results repeat across traces, and the secret-shape regexes
    # are worth not rerunning for each.
    if result.outcome is _PASS:  # the most common result: no detail is shown, no message
        return (
            result.name,
            result.oracle_type,
            _PASS_VALUE,
            result.used,
            result.budget,
            tuple(result.step_indexes[: MAX_LIST_ITEMS + 1]),
            (),
            None,
        )
    shown = _shown_details(result.details)
    if shown is None:
        return None
    return (
        result.name,
        result.oracle_type,
        result.outcome._value_,
        result.used,
        result.budget,
        tuple(result.step_indexes[: MAX_LIST_ITEMS + 1]),
        shown,
        _shown_message(result),
    )


def explain(result: OracleResult, mode: ExplainMode = "template") -> str:
    """The ``gen_ai.evaluation.explanation`` for ``result`` under ``mode``."""
    if mode == "full":
        return _cap(result.message, MAX_FULL_EXPLANATION_CHARS)
    return _template(result)


class Explainer:
    """``explain`` under one mode, remembering the template texts it rendered.

    Results repeat across traces (the same check, outcome and shown details), and rendering
    a template runs the secret-shape regexes over every detail, so whoever explains many
    results (a report writer) holds one of these; the memory is its own, bounded, and ends
    with it. Not shared between threads.
    """

    def __init__(self, mode: ExplainMode = "template", max_texts: int = 4096) -> None:
        self.mode = mode
        self._max = max_texts
        self._texts: dict[tuple[Any, ...], str] = {}
        self._shown: dict[tuple[Any, ...], str] = {}
        """``shown_message`` texts (the text without the check's name), under the same keys."""

    def __len__(self) -> int:
        """Texts remembered now."""
        return len(self._texts)

    def remembers(self, result: OracleResult) -> bool:
        """Whether ``result``'s text is remembered (it would not be rendered again)."""
        key = explain_key(result, self.mode)
        return key is not None and key in self._texts

    def __call__(self, result: OracleResult) -> str:
        key = explain_key(result, self.mode)
        if key is None:
            return explain(result, self.mode)
        return self._text(key, result)

    def _text(self, key: tuple[Any, ...], result: OracleResult) -> str:
        text = self._texts.get(key)
        if text is None:
            text = explain(result, self.mode)
            self._remember(self._texts, key, text)
        return text

    def _remember(self, texts: dict[tuple[Any, ...], str], key: tuple[Any, ...], text: str) -> None:
        if len(texts) >= self._max:
            texts.pop(next(iter(texts)))  # the oldest goes first
        texts[key] = text

    def shown(self, result: OracleResult) -> str:
        """The text without the check's name (``shown_message``), remembered too: a report
        asks for every result it writes, and most are the same few passes."""
        key = explain_key(result, self.mode)
        if key is None:
            return explain(result, self.mode).removeprefix(f"{result.name}: ")
        text = self._shown.get(key)
        if text is None:
            # The key holds the name (its first item), so the prefix is the same each time.
            text = self._text(key, result).removeprefix(f"{result.name}: ")
            self._remember(self._shown, key, text)
        return text


def _identifier_or_none(value: Any) -> str | None:
    """``value`` when it could render as itself (a short string), else None: everything
    else renders as ``[redacted]`` alike, so it needs no place in a cache key."""
    return value if isinstance(value, str) and len(value) <= MAX_VALUE_CHARS else None


def _shown_details(details: dict[str, Any]) -> tuple[Any, ...] | None:
    """Everything of ``details`` that ``_template`` can read (see ``_detail_value``), as a
    cache key; None when a key is not a string (no caching then)."""
    out: list[tuple[Any, ...]] = []
    for key, value in details.items():
        if not isinstance(key, str):
            return None
        if isinstance(value, _NUMBER):
            # A float keys by its spelling: 0.0 == -0.0 (and 1 == 1.0) as values, but the
            # template shows repr(value), and NaN never equals itself.
            out.append((key, type(value), repr(value) if type(value) is float else value))
        elif key in IDENTIFIER_DETAIL_KEYS:
            if isinstance(value, str):
                out.append((key, str, _identifier_or_none(value)))
            elif isinstance(value, _SEQUENCE):
                items = tuple(_identifier_or_none(v) for v in value[:MAX_LIST_ITEMS])
                out.append((key, list, items, len(value) > MAX_LIST_ITEMS))
            elif isinstance(value, dict):
                pairs = tuple(
                    (_identifier_or_none(k), n if isinstance(n, int) else None)
                    for k, n in list(value.items())[:MAX_LIST_ITEMS]
                )
                out.append((key, dict, pairs, len(value) > MAX_LIST_ITEMS))
            else:
                out.append((key, object, None))
    out.sort()  # by key: the keys of a dict differ, so no item is compared past its first
    return tuple(out)


def _shown_message(result: OracleResult) -> str | None:
    """The message a template shows as it is (see ``SHOWN_ERROR_TYPES``), else None."""
    if result.outcome == _ERROR and error_type(result) in SHOWN_ERROR_TYPES:
        return result.message
    return None


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
the template explanations (``explain``) and the scrubbed details (``scrub_details``) come
from it, and the JSON report's writer applies it to each result as it writes it (no Python
call, no scrubbed dict). It asks ``safe_identifier`` (and, for a check name that is not an
identifier, ``looks_secret``) what may be shown, remembering the strings it gave back."""


def scrub_details(details: dict[str, Any]) -> dict[str, Any]:
    """The details a report may show by default: numbers and booleans (counts, lengths,
    exit codes), and identifier-shaped values under identifier keys (secret-shaped ones
    replaced; of a list its first ``MAX_LIST_ITEMS`` items, of a name -> count dict its first
    pairs); every other value (arguments, output, matched text) is dropped. A new dict."""
    return SHOWN_FILTER.scrub(details)


def shown_message(
    result: OracleResult, mode: ExplainMode = "template", explainer: Explainer | None = None
) -> str:
    """The message a report shows of ``result`` under ``mode``: in ``template`` mode the
    template explanation without the check's name (reports print it next to the message
    already); ``full`` keeps the oracle's own. ``explainer`` (for ``mode``) remembers texts
    across calls."""
    if mode == "full":
        return result.message
    if explainer is not None:
        return explainer.shown(result)
    return explain(result, mode).removeprefix(f"{result.name}: ")


def shown_fields(
    result: OracleResult, mode: ExplainMode = "template", explainer: Explainer | None = None
) -> tuple[str, dict[str, Any]]:
    """The message and details a report shows of ``result`` under ``mode``
    (``shown_message``, and ``scrub_details`` unless ``full``): what ``scrub_result`` puts in
    its copy, for a writer that renders the result without building the copy."""
    if mode == "full":
        return result.message, result.details
    return shown_message(result, mode, explainer), scrub_details(result.details)


def scrub_result(
    result: OracleResult, mode: ExplainMode = "template", explainer: Explainer | None = None
) -> OracleResult:
    """``result`` as a report may show it under ``mode`` (``shown_fields``); ``full`` keeps
    all."""
    if mode == "full":
        return result
    message, details = shown_fields(result, mode, explainer)
    return result.model_copy(update={"message": message, "details": details})


def scrub_verdict(
    verdict: Verdict, mode: ExplainMode = "template", explainer: Explainer | None = None
) -> Verdict:
    """``verdict`` with every result passed through ``scrub_result``."""
    if mode == "full":
        return verdict
    results = [scrub_result(r, mode, explainer) for r in verdict.results]
    return verdict.model_copy(update={"results": results})


def _template(result: OracleResult) -> str:
    """The outcome's template with the check's name (itself when an identifier, else capped,
    and the check's type or ``check`` when it looks secret) and budget, ``error.type`` (and
    the message of a ``SHOWN_ERROR_TYPES`` error), the first steps and, unless it passed, the
    allow-listed details sorted by key (``scrub_details``' rules, values capped at
    ``MAX_VALUE_CHARS``); at most ``MAX_EXPLANATION_CHARS``. Rendered by the core."""
    return SHOWN_FILTER.explain(result)
