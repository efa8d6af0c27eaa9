"""One search, one call: a retriever span nested alone in a tool call (a retriever tool) or in
another retrieval (one retrieval's wrapper layers) is that call, which gains the retrieval's
query and documents; a tool that runs more than the retriever keeps its steps apart. An
empty document list is a search that found nothing, not documents left uncaptured."""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.otel_genai import (
    parse_document_list,
    parse_no_documents_when_zero,
)
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind, Trajectory

TRACE = "0" * 31 + "3"
AGENT, TOOL, OUTER, INNER, OTHER = "a" * 16, "b" * 16, "c" * 16, "d" * 16, "e" * 16


def _span(span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=end, attributes=attrs)


def _map(spans: list[SpanRecord]) -> Trajectory:
    return map_trace(build_trace(TRACE, spans), load_conventions())


def _agent() -> SpanRecord:
    return _span(
        AGENT, "", "agent", 0, 100, **{"openinference.span.kind": "AGENT", "agent.name": "a"}
    )


def _tool(name: str = "search_docs", span_id: str = TOOL, start: int = 10) -> SpanRecord:
    return _span(
        span_id, AGENT, name, start, start + 40,
        **{"openinference.span.kind": "TOOL", "tool.name": name},
    )  # fmt: skip


def _retriever(span_id: str, parent: str, start: int, end: int, **docs: Any) -> SpanRecord:
    return _span(
        span_id, parent, "VectorIndexRetriever", start, end,
        **{"openinference.span.kind": "RETRIEVER", "input.value": "refund window", **docs},
    )  # fmt: skip


DOC_42 = {
    "retrieval.documents.0.document.id": "doc-42",
    "retrieval.documents.0.document.content": "Enterprise refunds within 30 days.",
}
DOC_42_DOC = {"id": "doc-42", "content": "Enterprise refunds within 30 days."}


def test_retriever_alone_in_a_tool_call_is_that_call() -> None:
    t = _map([_agent(), _tool(), _retriever(OUTER, TOOL, 15, 25, **DOC_42)])
    calls = t.tool_calls()
    assert [(s.kind, s.tool) for s in calls] == [(StepKind.TOOL_CALL, "search_docs")]
    assert calls[0].query == "refund window"
    assert calls[0].documents == [DOC_42_DOC]
    assert calls[0].attributes["retrieval"] is True
    assert calls[0].attributes["stacked_spans"] == [OUTER]


def test_layers_of_one_retrieval_are_one_call() -> None:
    spans = [
        _agent(),
        _tool(),
        _retriever(OUTER, TOOL, 12, 30),
        _retriever(INNER, OUTER, 14, 28, **DOC_42),
    ]
    calls = _map(spans).tool_calls()
    assert len(calls) == 1
    assert calls[0].documents == [DOC_42_DOC]


def test_retrieval_outside_a_tool_stays_a_retrieval() -> None:
    t = _map([_agent(), _retriever(OUTER, AGENT, 15, 25, **DOC_42)])
    assert [(s.kind, s.tool) for s in t.tool_calls()] == [
        (StepKind.RETRIEVAL, "VectorIndexRetriever")
    ]


def test_a_tool_running_more_than_its_retriever_keeps_its_steps() -> None:
    rerank = {"openinference.span.kind": "TOOL", "tool.name": "rerank"}
    spans = [
        _agent(),
        _tool(),
        _retriever(OUTER, TOOL, 12, 22, **DOC_42),
        _span(OTHER, TOOL, "rerank", 30, 35, **rerank),
    ]
    kinds = sorted((s.kind.value, s.tool) for s in _map(spans).tool_calls())
    assert kinds == [
        ("retrieval", "VectorIndexRetriever"),
        ("tool_call", "rerank"),
        ("tool_call", "search_docs"),
    ]


def test_an_empty_document_array_is_a_search_that_found_nothing() -> None:
    t = _map([_agent(), _tool(), _retriever(OUTER, TOOL, 15, 25, **{"retrieval.documents": ()})])
    assert t.tool_calls()[0].documents == []


def test_document_list_reads_framework_dumps() -> None:
    langchain = '[{"page_content": "text", "metadata": {"doc_id": "doc-1"}, "id": "doc-1"}]'
    assert parse_document_list(langchain) == [
        {"id": "doc-1", "content": "text", "metadata": {"doc_id": "doc-1"}}
    ]
    node = [{"node": {"id_": "doc-2", "text": "t", "metadata": {}}, "score": 0.5}]
    assert parse_document_list(node) == [
        {"id": "doc-2", "content": "t", "metadata": {}, "score": 0.5}
    ]
    assert parse_document_list('{"documents": [], "count": 0}') == []
    assert parse_document_list("[]") == []
    assert parse_document_list("[REDACTED]") is None
    assert parse_document_list('["not a document"]') is None


def test_a_zero_document_count_is_no_documents() -> None:
    assert parse_no_documents_when_zero(0) == []
    assert parse_no_documents_when_zero("0") == []
    assert parse_no_documents_when_zero(2) is None
    assert parse_no_documents_when_zero(False) is None
