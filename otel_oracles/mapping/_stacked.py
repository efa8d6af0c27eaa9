"""One model call, one step: merging a call that stacked instrumentations recorded twice.
The same holds for tool calls: a framework's own tool span (AutoGen's ``execute_tool``, with
the call id and the failure status) inside an instrumentation's TOOL span for the same tool
(OpenInference's, with the arguments and the result) is one call.

A framework instrumentation (LangChain/LangGraph callbacks, LlamaIndex, an agent SDK) opens a
span for a model call, and the provider SDK's own instrumentation (openai, anthropic,
google-genai) opens another one inside it for the same HTTP request. Both map to generation
steps; left alone, the run shows every model call twice, tool calls requested in both get
synthesized twice, and step budgets count double.

The rule is structural, not keyed on library names: a generation whose nearest step-making
ancestor is a generation, that is that ancestor's only step-making descendant, that lies
within it in time and names the same or a compatible model (``gpt-4o-mini`` /
``gpt-4o-mini-2024-07-18``, ``models/gemini-2.0-flash`` / ``gemini-2.0-flash``, or no model
on one side), is the same call. The two drafts become one step at the outer span that keeps
the richer value of every field; tokens are counted once. A wrapper generation with several
model calls below it (a multi-step ``generateText``) is a different thing: it stays, flagged
``usage_aggregated`` by the mapper. Tool calls pair the same way, on the same tool name
(never a different tool: an agent-as-tool's inner calls are other calls), and so do handoff
tools, whichever layer recognises the call as a handoff.

A merged tool call failed when any layer says so. It succeeded only when a layer that can
show the outcome says so: a layer whose failure would show only in a result it did not
capture (``Draft.outcome_hidden``: the MCP SDK's client span, which ends OK when the server
answers a raised tool with an ``isError`` result) makes the OK of the layers around it no
proof (the agent framework's span ends OK too, since nothing raised on its side); only a layer
inside it (the MCP server's own span, which ends ERROR for that result) or the captured result
itself shows the outcome. Otherwise the call's outcome is unknown (``unset``).

A retrieval is one call with the layer around it the same way: a retriever span nested alone in
a tool call (LangChain's ``create_retriever_tool``, LlamaIndex's ``RetrieverTool``: the
retriever is the tool's work) or in another retrieval (LlamaIndex records ``aretrieve``,
``_aretrieve`` and ``_retrieve`` of one retrieval) is the retrieval that call made, whatever
the names. The kept step keeps the outer layer's kind and name (the tool the model called)
and gains the retrieval's query and documents; left alone, one search would count as two to
five calls, and a tool span whose OK proves nothing (a handled tool error) would hide the
retriever's own status, which shows whether the search failed.

Two layers can also record one tool call side by side (``merge_sibling_layers``): the Claude
Agent SDK's tracers (OpenLIT's ``execute_tool``, OpenInference's TOOL span) write the call
from the CLI's message stream, while the ``mcp`` SDK's server span for the same call
(``tools/call <tool>``) opens under the run, beside it, since the CLI's control channel
carries no trace context. Left alone, every call, retry and failure counts twice. A tool call
whose span lies within the time of another's, recorded by another instrumentation (another
scope: a layer never records one call twice), for the same tool (the MCP span by the
server's own name), not nested in it and hung under the same step or one around it (a
sub-agent's call is under the sub-agent in one layer, under the run in the other) is that
call recorded again, when the fit is one to one. Calls of one tool run at the same time fit
several ways: they join in start order only where every layer's calls of that window agree on
the outcome (any pairing then gives each call the same outcome); otherwise they stay apart,
never given another call's outcome.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from otel_oracles.model.span import SpanRecord
from otel_oracles.model.tool_name import TOOL_NAME_SEPARATORS

if TYPE_CHECKING:
    from otel_oracles.mapping._mapper import Draft

_STACKABLE = frozenset({"generation", "tool_call", "handoff", "retrieval"})
"""Draft kinds whose nested same-call pairs merge (see ``_same_call``)."""
_TOOL_OUTERS = frozenset({"tool_call", "handoff"})
"""What a tool call can be recorded as by either layer: a handoff tool (AutoGen's
``transfer_to_<agent>``) is a handoff step where a layer knows it for one (both, when
OpenInference's TOOL span and autogen-core's ``execute_tool`` span each are recognised as
the handoff) and a plain tool call where it does not."""
_RETRIEVAL_OUTERS = frozenset({"tool_call", "retrieval"})
"""What a retrieval nested alone inside is the same call as: the tool that ran the retriever,
or an outer layer of the same retrieval (see the module doc)."""
_QUALIFIERS = ("_", *TOOL_NAME_SEPARATORS)
"""What frameworks put between an MCP server's (or toolset's) name and the server's own tool
name when they offer the tool to the model: the namespace separators, and ``_`` (ADK's
``tool_name_prefix``, pydantic-ai's ``prefixed``, Strands' and Agno's prefixes,
langchain-mcp-adapters' ``tool_name_prefix``)."""
_MESSAGE_FIELDS = ("input_messages", "output_messages")
_PREFER_MORE_SPECIFIC = ("model",)
"""Fields where the longer of two compatible values is richer (a dated model version)."""


def merge_stacked_generations(
    drafts: list[Draft], draft_by_span: dict[str, Draft], by_id: dict[str, SpanRecord]
) -> list[Draft]:
    """``drafts`` without the inner drafts of stacked pairs, each absorbed into its outer
    draft (``draft_by_span`` then maps the inner span to the kept draft)."""
    generations = [d for d in drafts if d.kind in _STACKABLE and d.span is not None]
    if not generations or len(drafts) < 2:
        return drafts  # a call needs another draft (a call or a handoff) to be stacked on
    parent_of: dict[int, Draft | None] = {}
    pairs: list[tuple[Draft, Draft]] = []
    for draft in generations:
        assert draft.span is not None
        outer = _nearest_draft(draft.span, draft_by_span, by_id)
        parent_of[id(draft)] = outer
        if outer is not None and _same_call(outer, draft):
            pairs.append((outer, draft))
    if not pairs:
        return drafts
    attempts = _failed_attempts(pairs)
    below: dict[int, int] = {}
    for draft in drafts:
        if draft.span is None or id(draft) in attempts:
            continue
        key = id(draft)
        parent = (
            parent_of[key] if key in parent_of else _nearest_draft(draft.span, draft_by_span, by_id)
        )
        if parent is not None:
            below[id(parent)] = below.get(id(parent), 0) + 1
    merged_into: dict[int, Draft] = {}
    by_draft_id = {id(inner): inner for _, inner in pairs}
    for outer, inner in pairs:
        if id(inner) in attempts:
            continue  # a failed attempt of the call: a failed model call step of its own
        if below.get(id(outer)) != 1:
            continue  # other steps below it: a wrapper of several calls, not one call twice
        kept = outer
        while id(kept) in merged_into:  # three stacked layers: all into the outermost
            kept = merged_into[id(kept)]
        name = kept.fields.get("tool")
        _absorb_layer(kept, inner, draft_by_span)
        if inner.kind == "retrieval" and kept.kind != "retrieval":
            # The call is the tool's, named as the model asked for it: a tool span whose name
            # was not recorded stays an unnamed call, never one named after the retriever
            # inside it (a failed search would then count as another tool's failure).
            if name is None:
                kept.fields.pop("tool", None)
            else:
                kept.fields["tool"] = name
            kept.attributes["retrieval"] = True  # the call's documents are the retrieval's
        merged_into[id(inner)] = kept
    layers: dict[int, list[Draft]] = {}
    for inner_id, kept in merged_into.items():
        while id(kept) in merged_into:
            kept = merged_into[id(kept)]
        layers.setdefault(id(kept), [kept]).append(by_draft_id[inner_id])
    for group in layers.values():
        _outcome_from_layers(group, by_id)
    return [d for d in drafts if id(d) not in merged_into]


def _failed_attempts(pairs: list[tuple[Draft, Draft]]) -> set[int]:
    """The inner generations of ``pairs`` that are failed attempts of their outer call (by
    ``id``), each flagged ``failed_attempt``: a generation nested in a generation for the same
    call, that failed and ended before another generation nested there for that call started.
    A framework that retries a model request inside one logical call records every attempt
    below it (LiveKit's ``llm_request_run`` spans under ``llm_request``, ``lk.retry_count``
    0, 1, ...): the attempt that came last is the call, merged with it as any stacked layer;
    a failed one before it stays a step of its own, a failed model call that a later attempt
    recovered from, never part of the call's usage or reply. Counted as a call below the
    outer one, it would make that call a wrapper of several calls (no merge: the call's usage
    skipped as an aggregate, its requested tools synthesized again)."""
    by_outer: dict[int, list[Draft]] = {}
    for outer, inner in pairs:
        if outer.kind == "generation" and inner.kind == "generation":
            by_outer.setdefault(id(outer), []).append(inner)
    failed: set[int] = set()
    for inners in by_outer.values():
        for draft in inners:
            if draft.status != "error" or draft.span is None:
                continue
            end = draft.span.end_ns
            if any(o.span is not None and o.span.start_ns >= end for o in inners if o is not draft):
                draft.attributes["failed_attempt"] = True
                failed.add(id(draft))
    return failed


def _absorb_layer(kept: Draft, inner: Draft, draft_by_span: dict[str, Draft]) -> None:
    """``inner`` is ``kept``'s call recorded by another layer: folded into it (``absorb``),
    the MCP server's own name for the tool kept, and ``inner``'s span mapped to ``kept``."""
    absorb(kept, inner)
    served = inner.fields.get("tool")
    if served != kept.fields.get("tool") and "mcp.method.name" in inner.attributes:
        kept.attributes.setdefault("mcp_tool", served)  # the server's own name for it
    assert inner.span is not None
    draft_by_span[inner.span.span_id] = kept


def _outcome_from_layers(
    group: list[Draft],
    by_id: dict[str, SpanRecord],
    inside: Callable[[SpanRecord, set[str], dict[str, SpanRecord]], bool] | None = None,
) -> None:
    """Fold the layers' view of one call's outcome into the kept draft (``group[0]``): an OK
    is no proof when a layer hides the outcome, unless a layer inside that one shows it or
    the result was captured (see the module doc). ``inside`` says whether a span is inside
    one of the hiding layers' spans: by nesting (the default), or, for layers recorded side
    by side, by time."""
    kept = group[0]
    hidden = {d.span.span_id for d in group if d.outcome_hidden and d.span is not None}
    if not hidden or kept.status != "ok" or kept.fields.get("result") is not None:
        return
    within = inside or _inside
    for layer in group:
        shows = layer.status == "ok" and not layer.outcome_hidden and layer.span is not None
        if shows and layer.span is not None and within(layer.span, hidden, by_id):
            return  # a layer below the hiding one saw the call succeed
    kept.status = "unset"
    kept.outcome_hidden = True


def merge_sibling_layers(
    drafts: list[Draft], draft_by_span: dict[str, Draft], by_id: dict[str, SpanRecord]
) -> list[Draft]:
    """``drafts`` without the tool calls a second layer recorded beside the layer that keeps
    them (see the module doc): each absorbed into the call whose span holds it in time, of
    another instrumentation scope, for the same tool, not nested in it, and hung under the
    same step or one around it (the layer that sees no trace context hangs its span under
    the run, the other under the sub-agent that made the call); ``draft_by_span`` then maps
    its span to the kept draft. Runs after ``merge_stacked_generations``, so each layer's
    own nested records are one draft already."""
    calls = [d for d in drafts if d.kind in _TOOL_OUTERS and d.span is not None]
    if len(calls) < 2 or len({d.span.scope_name for d in calls if d.span is not None}) < 2:
        return drafts
    pairs = _sibling_pairs(calls, _Enclosing(draft_by_span, by_id))
    for outer, inner in pairs:
        _absorb_layer(outer, inner, draft_by_span)
        _outcome_from_layers([outer, inner], by_id, _within_in_time)
    if not pairs:
        return drafts
    merged = {id(inner) for _, inner in pairs}
    return [d for d in drafts if id(d) not in merged]


class _Enclosing:
    """The steps around a call, by span nesting: its own first, then outwards, ``0`` for the
    trace level (memoized per draft)."""

    def __init__(self, draft_by_span: dict[str, Draft], by_id: dict[str, SpanRecord]) -> None:
        self._draft_by_span = draft_by_span
        self._by_id = by_id
        self._chains: dict[int, tuple[int, ...]] = {}

    def chain(self, draft: Draft) -> tuple[int, ...]:
        """``id`` of every draft enclosing ``draft``'s span, nearest first, then ``0``."""
        found = self._chains.get(id(draft))
        if found is None:
            out: list[int] = []
            span = draft.span
            while span is not None:
                outer = _nearest_draft(span, self._draft_by_span, self._by_id)
                if outer is None or id(outer) in out:
                    break
                out.append(id(outer))
                span = outer.span
            found = self._chains[id(draft)] = (*out, 0)
        return found

    def beside(self, a: Draft, b: Draft) -> bool:
        """Neither call nested in the other, and one hung under the other's step or a step
        around it."""
        ca, cb = self.chain(a), self.chain(b)
        if id(a) in cb or id(b) in ca:
            return False
        return ca[0] in cb or cb[0] in ca


def _sibling_pairs(calls: list[Draft], enclosing: _Enclosing) -> list[tuple[Draft, Draft]]:
    """The (kept, absorbed) pairs among tool calls: ``inner`` within ``outer``'s time,
    another scope, the same tool, no call id of its own that differs, beside it
    (``_Enclosing.beside``). A window where several calls of a tool fit several ways (calls
    run at the same time) pairs in start order only when every pair fits and each layer's
    calls there agree on the outcome; otherwise its calls stay apart."""
    ordered = sorted(calls, key=_start)
    starts = [_start(d) for d in ordered]
    fits: dict[int, list[Draft]] = {}
    fitted_by: dict[int, list[Draft]] = {}
    for outer in ordered:
        assert outer.span is not None
        lo = bisect.bisect_left(starts, outer.span.start_ns)
        hi = bisect.bisect_right(starts, outer.span.end_ns)
        for inner in ordered[lo:hi]:
            if inner is not outer and _sibling_fit(outer, inner, enclosing):
                fits.setdefault(id(outer), []).append(inner)
                fitted_by.setdefault(id(inner), []).append(outer)
    if not fits:
        return []
    pairs: list[tuple[Draft, Draft]] = []
    done: set[int] = set()
    by_key = {id(d): d for d in calls}
    for key in fits:
        if key in done:
            continue
        # The window: every call linked to this one through fits, either way.
        outers: dict[int, Draft] = {}
        inners: dict[int, Draft] = {}
        todo = [(key, True)]
        while todo:
            k, is_outer = todo.pop()
            side = outers if is_outer else inners
            if k in side:
                continue
            side[k] = by_key[k]
            links = fits.get(k, []) if is_outer else fitted_by.get(k, [])
            todo.extend((id(d), not is_outer) for d in links)
        done.update(outers)
        if set(outers) & set(inners):
            continue  # a call both holds and is held: three layers or equal times, unclear
        if len(outers) == 1 and len(inners) == 1:
            pairs.append((next(iter(outers.values())), next(iter(inners.values()))))
            continue
        in_order = _in_start_order(list(outers.values()), list(inners.values()), enclosing)
        if in_order is not None:
            pairs.extend(in_order)
    return pairs


def _in_start_order(
    outers: list[Draft], inners: list[Draft], enclosing: _Enclosing
) -> list[tuple[Draft, Draft]] | None:
    """Calls of one window paired in start order, or None when the counts differ, a pair
    does not fit, or a layer's calls there disagree on the outcome."""
    if len(outers) != len(inners):
        return None
    for layer in (outers, inners):
        if len({d.status for d in layer}) > 1:
            return None  # which call failed would depend on the pairing
    pairs = list(
        zip(
            sorted(outers, key=_start),
            sorted(inners, key=_start),
            strict=True,
        )
    )
    if not all(_sibling_fit(outer, inner, enclosing) for outer, inner in pairs):
        return None
    return pairs


def _start(draft: Draft) -> int:
    assert draft.span is not None
    return draft.span.start_ns


def _sibling_fit(outer: Draft, inner: Draft, enclosing: _Enclosing) -> bool:
    """Whether ``inner`` may be ``outer``'s call recorded by another layer beside it."""
    a, b = outer.span, inner.span
    assert a is not None and b is not None
    if a.scope_name == b.scope_name or not a.end_ns or not b.end_ns:
        return False
    if b.start_ns < a.start_ns or b.end_ns > a.end_ns:
        return False
    if (a.start_ns, a.end_ns) == (b.start_ns, b.end_ns) and a.span_id > b.span_id:
        return False  # equal times: one orientation only
    ids = (outer.fields.get("call_id"), inner.fields.get("call_id"))
    if all(ids) and str(ids[0]) != str(ids[1]):
        return False
    return _same_tool(outer.fields.get("tool"), inner) and enclosing.beside(outer, inner)


def _within_in_time(span: SpanRecord, hiding: set[str], by_id: dict[str, SpanRecord]) -> bool:
    """Whether ``span`` lies within the time of one of the ``hiding`` spans (layers recorded
    side by side: the later, shorter record is the one nearer the tool)."""
    for span_id in hiding:
        other = by_id.get(span_id)
        if other is None or other is span:
            continue
        if other.start_ns <= span.start_ns and span.end_ns <= other.end_ns:
            return True
    return False


def _inside(span: SpanRecord, ancestors: set[str], by_id: dict[str, SpanRecord]) -> bool:
    """Whether one of ``ancestors`` (span ids) is an ancestor of ``span``."""
    seen = {span.span_id}
    parent_id = span.parent_span_id
    while parent_id and parent_id not in seen:
        if parent_id in ancestors:
            return True
        seen.add(parent_id)
        parent = by_id.get(parent_id)
        if parent is None:
            return False
        parent_id = parent.parent_span_id
    return False


def _nearest_draft(
    span: SpanRecord, draft_by_span: dict[str, Draft], by_id: dict[str, SpanRecord]
) -> Draft | None:
    seen = {span.span_id}
    parent_id = span.parent_span_id
    while parent_id and parent_id not in seen:
        seen.add(parent_id)
        found = draft_by_span.get(parent_id)
        if found is not None:
            return found
        parent = by_id.get(parent_id)
        if parent is None:
            return None
        parent_id = parent.parent_span_id
    return None


def _same_call(outer: Draft, inner: Draft) -> bool:
    a, b = outer.span, inner.span
    assert a is not None and b is not None
    if b.start_ns < a.start_ns:
        return False
    if a.end_ns and b.end_ns and b.end_ns > a.end_ns and not _child_call(outer, inner):
        return False
    if inner.kind == "retrieval":
        return outer.kind in _RETRIEVAL_OUTERS
    if outer.kind in _TOOL_OUTERS and inner.kind in _TOOL_OUTERS:
        return _same_tool(outer.fields.get("tool"), inner)
    if outer.kind != "generation" or inner.kind != "generation":
        return False
    return compatible_models(outer.fields.get("model"), inner.fields.get("model"))


def _child_call(outer: Draft, inner: Draft) -> bool:
    """Whether ``inner`` is a model call opened directly inside the model call ``outer`` (its
    span's parent): the provider SDK's record of the framework's call. Such a pair is one
    call even when the inner span ends after the outer one: on a streamed call each layer
    ends its span when its own wrapper of the stream finishes, and the framework's wrapper,
    the consumer's side, can finish first (OpenLLMetry JS's LlamaIndex and OpenAI
    instrumentations, by a fraction of a millisecond: ``llamaindex-js-openllmetry-openai``).
    Only a direct child: a span further down that outlives its ancestor is another call."""
    a, b = outer.span, inner.span
    assert a is not None and b is not None
    return outer.kind == inner.kind == "generation" and b.parent_span_id == a.span_id


def _same_tool(name: Any, inner: Draft) -> bool:
    """Whether the outer layer's tool ``name`` is the inner layer's tool: the same name, or,
    for an inner span of the MCP protocol (``mcp.method.name``, kept by the rule: the MCP
    client's or server's span records the tool by the server's own name), that name qualified
    by the toolset or server the framework put before it (``docs_search_docs``,
    ``mcp__docs__search_docs``, ``docs.search_docs`` around ``search_docs``)."""
    served = inner.fields.get("tool")
    if not isinstance(name, str) or not name or not isinstance(served, str) or not served:
        return False
    if name == served:
        return True
    if "mcp.method.name" not in inner.attributes:
        return False
    return any(name.endswith(sep + served) and len(name) > len(sep + served) for sep in _QUALIFIERS)


def compatible_models(a: Any, b: Any) -> bool:
    """Whether two model names may name the same model: equal after dropping a path prefix
    (``models/``, ``openai/``) and case, or one a dated/suffixed version of the other;
    an unknown model is compatible with any."""
    if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
        return True
    x = a.rsplit("/", 1)[-1].lower()
    y = b.rsplit("/", 1)[-1].lower()
    short, long = sorted((x, y), key=len)
    return long == short or long.startswith(short + "-") or long.startswith(short + "@")


def absorb(kept: Draft, other: Draft) -> None:
    """Fold ``other`` (the same model call) into ``kept``, field by field, richer value wins:
    a value over none, a captured message list over a redacted one and a longer one over a
    shorter one (on a tie ``other``'s, the layer nearer the wire: ``_richer_messages``), a
    more specific model name; otherwise ``kept``'s own value stays (token counts therefore
    come from one span, never summed)."""
    fields = kept.fields
    for name, value in other.fields.items():
        if value is None:
            continue
        current = fields.get(name)
        if current is None:
            if name in kept.redacted and name not in other.redacted:
                kept.redacted.discard(name)
            fields[name] = value
        elif name in _MESSAGE_FIELDS and _richer_messages(
            value, name in other.redacted, current, name in kept.redacted
        ):
            fields[name] = value
            kept.redacted.discard(name)
        elif (
            name in _PREFER_MORE_SPECIFIC
            and isinstance(value, str)
            and isinstance(current, str)
            and len(value) > len(current)
        ):
            fields[name] = value
    kept.redacted |= {n for n in other.redacted if fields.get(n) is None}
    if other.status == "error":
        kept.status = "error"
    elif kept.status == "unset":
        kept.status = other.status
    for key, val in other.attributes.items():
        kept.attributes.setdefault(key, val)
    assert other.span is not None
    stacked = kept.attributes.setdefault("stacked_spans", [])
    stacked.append(other.span.span_id)


def _richer_messages(new: Any, new_redacted: bool, old: Any, old_redacted: bool) -> bool:
    """Whether ``new`` (an inner layer's messages) should replace ``old`` (the kept outer
    layer's): captured over redacted, more parts over fewer, and on a tie the inner layer's,
    the one nearer the wire (the provider SDK records the request it sent and the response
    it got; a framework's wrapper may record its own rendering of them, such as the name of
    the output field instead of the model's reply)."""
    if old_redacted != new_redacted:
        return old_redacted
    return _part_count(new) >= _part_count(old)


def _part_count(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(
        len(m["parts"]) if isinstance(m, dict) and isinstance(m.get("parts"), list) else 0
        for m in messages
    )
