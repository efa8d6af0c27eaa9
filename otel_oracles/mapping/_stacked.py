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

Where it runs: ``merge_stacked_generations`` is the compiled core's
(``native/python/src/stacked.rs``, one call per trace), and so are the helpers the
side-by-side pass here shares with it (``nearest_draft``, ``same_tool``, ``absorb_layer``,
``outcome_from_layers``, ``compatible_models``); ``merge_sibling_layers`` stays Python.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from otel_oracles._native import (
    absorb_layer,
    compatible_models,
    merge_stacked_generations,
    nearest_draft,
    outcome_from_layers,
    same_tool,
    sibling_layer_calls,
)

if TYPE_CHECKING:
    from otel_oracles.mapping._mapper import Draft
    from otel_oracles.model.span import SpanRecord

__all__ = ["compatible_models", "merge_sibling_layers", "merge_stacked_generations"]


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
    calls = sibling_layer_calls(drafts)  # the core's walk: none unless two scopes hold calls
    if not calls:
        return drafts
    pairs = _sibling_pairs(calls, _Enclosing(draft_by_span, by_id))
    for outer, inner in pairs:
        absorb_layer(outer, inner, draft_by_span)
        outcome_from_layers([outer, inner], by_id, True)
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
                outer = nearest_draft(span, self._draft_by_span, self._by_id)
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
    return same_tool(outer.fields.get("tool"), inner) and enclosing.beside(outer, inner)
