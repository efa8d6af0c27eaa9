"""Scrubbing a production trace into a test fixture, by the privacy rules the emitter uses.

The rule is the emitter's (``emit/_explain.py``): what may stay is what is shaped like an
identifier (a tool name, a model, an agent, an enum value) and does not look like a secret,
plus numbers and booleans; any other text is replaced by ``[redacted]``. Text under an
attribute key the user keeps on purpose (``--keep``, fnmatch patterns; a few name-like keys
by default) stays, but secret-shaped parts of it (emails, API keys, tokens) are replaced
all the same. JSON held in a string (message lists, tool arguments) is scrubbed leaf by
leaf, so its structure (roles, part types, tool-call shapes) survives for the mapping.

Trace, span and parent ids, timestamps, kinds and status codes are never touched: the
fixture grades as the same trace. A secret in kept text becomes ``[redacted-N]``, the same N
for the same value throughout the trace, so ids that join spans (a conversation id) still
join them. Every replacement is noted (where, how many values and
characters), never what was replaced.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from otel_oracles.emit import REDACTED, replace_secrets, safe_identifier
from otel_oracles.model.span import SpanRecord, Trace

DEFAULT_KEEP: tuple[str, ...] = (
    "*.name",
    "*.names",
    "*_name",
    "*.model",
    "*.id",
    "*.kind",
    "*.type",
    "*.system",
    "*.provider*",
    "*finish_reason*",
    "*.status",
    "*.version",
)
"""Keys whose text is kept (secrets still replaced): names, models, ids and enum-like
values chosen by developers, which contracts select and match on (an agent called
``Customer Support Agent`` is no identifier, but it is no customer data either)."""


@dataclass(slots=True)
class Removal:
    """What was replaced at one place: values redacted (and their characters), secrets
    replaced inside kept text."""

    values: int = 0
    chars: int = 0
    secrets: int = 0


@dataclass(slots=True)
class ScrubNote:
    """Every place something was replaced, keyed by (span id, span name, where)."""

    removals: dict[tuple[str, str, str], Removal] = field(default_factory=dict)

    def at(self, span: SpanRecord, where: str) -> Removal:
        key = (span.span_id, span.name, where)
        found = self.removals.get(key)
        if found is None:
            found = self.removals[key] = Removal()
        return found

    @property
    def values(self) -> int:
        return sum(r.values for r in self.removals.values())

    @property
    def secrets(self) -> int:
        return sum(r.secrets for r in self.removals.values())


@dataclass(frozen=True, slots=True)
class ScrubPolicy:
    """``keep``: fnmatch patterns of keys whose text is kept, secrets replaced: attribute
    keys, and paths into structured content (``body.message.content`` for a log event's
    body, ``gen_ai.output.messages.parts.content`` inside JSON held by an attribute,
    ``status.message``). ``names``: attribute keys whose plain text is kept likewise, never
    inside content (a ``user_id`` in tool arguments is customer data) nor JSON they hold."""

    keep: tuple[str, ...] = ()
    names: tuple[str, ...] = DEFAULT_KEEP

    def keeps(self, key: str) -> bool:
        """Whether the text under ``key`` is kept whole (secrets replaced)."""
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.keep)

    def names_key(self, key: str) -> bool:
        """Whether attribute ``key`` holds a name; its plain text (not JSON) is kept."""
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.names)


class _Scrubber:
    def __init__(self, policy: ScrubPolicy, note: ScrubNote) -> None:
        self.policy = policy
        self.note = note
        self._pseudonyms: dict[str, str] = {}

    def pseudonym(self, secret: str) -> str:
        """``[redacted-N]``, the same N for the same secret within one trace: a conversation
        id that joins spans still joins them, and nothing of the value is kept (a hash of
        an email could be confirmed by hashing a guess)."""
        found = self._pseudonyms.get(secret)
        if found is None:
            found = self._pseudonyms[secret] = f"[redacted-{len(self._pseudonyms) + 1}]"
        return found

    def kept(self, text: str, removal: Removal) -> str:
        """Kept text with its secrets replaced by pseudonyms."""
        kept, secrets = replace_secrets(text, self.pseudonym)
        removal.secrets += secrets
        return kept

    def content_key(self, key: str, removal: Removal) -> str:
        """A key inside content (JSON an attribute holds, a kvlist, a log body): kept when
        shaped like an identifier (``role``, ``query``, ``tool_calls``) or an index, else a
        pseudonym. Such keys are data as often as structure (tool arguments keyed by
        customer e-mail, a dict of patient names), and nothing in free text tells which."""
        if safe_identifier(key) is not None or (key.isascii() and key.isdigit() and len(key) < 20):
            return key
        removal.values += 1
        removal.chars += len(key)
        return self.pseudonym(key)

    def value(self, value: Any, key: str, removal: Removal, *, nested: bool = False) -> Any:
        if isinstance(value, bool | int | float) or value is None:
            return value
        if isinstance(value, str):
            return self.text(value, key, removal, nested=nested)
        if isinstance(value, Mapping):
            return {
                self.content_key(str(k), removal): self.value(v, f"{key}.{k}", removal, nested=True)
                for k, v in value.items()
            }
        if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
            return [self.value(v, key, removal, nested=nested) for v in value]
        removal.values += 1
        removal.chars += len(value) if isinstance(value, bytes | bytearray) else 0
        return REDACTED

    def text(self, text: str, key: str, removal: Removal, *, nested: bool) -> str:
        if self.policy.keeps(key):
            return self.kept(text, removal)
        if safe_identifier(text) is not None:
            return text
        if text.lstrip()[:1] in ("{", "["):
            try:
                parsed = json.loads(text)
                if isinstance(parsed, dict | list):
                    scrubbed = self.value(parsed, key, removal, nested=True)
                    return json.dumps(scrubbed, ensure_ascii=False)
            except (ValueError, RecursionError):
                # Not JSON, or JSON nested deeper than Python recurses (a tool argument
                # of 100,000 brackets ended promote in a traceback): redacted whole below.
                pass
        if not nested and self.policy.names_key(key):
            return self.kept(text, removal)
        if text:
            removal.values += 1
            removal.chars += len(text)
            return REDACTED
        return text

    def attributes(
        self, attributes: Mapping[str, Any], span: SpanRecord, where: str
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in attributes.items():
            # An attribute key is the instrumentation's, like a span name: kept, its
            # secret-shaped parts replaced (a key holding an e-mail address left as it was).
            removal = Removal()
            shown = self.kept(key, removal)
            out[shown] = self.value(value, key, removal)
            self._record(span, f"{where}{shown}", removal)
        return out

    def span(self, span: SpanRecord) -> SpanRecord:
        # The note names the span by its scrubbed name: the original can hold a secret.
        name = Removal()
        span_name = self.kept(span.name, name)
        shown = replace(span, name=span_name)
        self._record(shown, "span name", name)
        events = []
        for event in span.events:
            kind = "log event" if event.from_log else "event"
            removal = Removal()
            event_name = self.kept(event.name, removal)
            self._record(shown, f"{kind} name", removal)
            where = f"{kind} {event_name}: "
            attributes = self.attributes(event.attributes, shown, where)
            body = event.body
            if body is not None:
                removal = Removal()
                body = self.value(body, "body", removal, nested=True)
                self._record(shown, f"{where}body", removal)
            events.append(replace(event, name=event_name, attributes=attributes, body=body))
        links = [
            replace(link, attributes=self.attributes(link.attributes, shown, "link: "))
            for link in span.links
        ]
        status = Removal()
        status_message = self.value(span.status_message, "status.message", status)
        self._record(shown, "status message", status)
        scope = Removal()
        scope_name = self.kept(span.scope_name, scope) if span.scope_name else span.scope_name
        scope_version = (
            self.kept(span.scope_version, scope) if span.scope_version else span.scope_version
        )
        self._record(shown, "scope", scope)
        return replace(
            span,
            name=span_name,
            status_message=status_message,
            attributes=self.attributes(span.attributes, shown, ""),
            events=events,
            links=links,
            resource=self.attributes(span.resource, shown, "resource: "),
            scope_name=scope_name,
            scope_version=scope_version,
        )

    def _record(self, span: SpanRecord, where: str, removal: Removal) -> None:
        if removal.values or removal.secrets:
            found = self.note.at(span, where)
            found.values += removal.values
            found.chars += removal.chars
            found.secrets += removal.secrets


def scrub_trace(trace: Trace, policy: ScrubPolicy) -> tuple[list[SpanRecord], ScrubNote]:
    """The trace's spans scrubbed (in the trace's order), and the note of what was
    replaced."""
    note = ScrubNote()
    scrubber = _Scrubber(policy, note)
    return [scrubber.span(span) for span in trace.spans], note
