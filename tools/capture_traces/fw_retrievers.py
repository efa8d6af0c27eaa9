"""Retrieval-augmented agents whose documents come from a framework *retriever*, not a plain
search function: the support scenarios' ``search_docs`` tool is the framework's own retriever
tool over a vector index, so the trace records a retriever span (with the documents it
returned) inside the tool call, the way real RAG agents are built.

Two frameworks, each under several instrumentations (the same agents, so the same truth):

- LangChain 1.x: ``create_agent`` (``ChatOpenAI`` on the scripted fake server,
  ``ToolErrorMiddleware`` turning a raised tool error into an error ``ToolMessage``) whose
  ``search_docs`` is ``create_retriever_tool`` over an ``InMemoryVectorStore`` retriever
  (``DeterministicFakeEmbedding``, no network). ``run_langchain_openinference``,
  ``run_langchain_openllmetry``, ``run_langchain_openlit``, ``run_langchain_mlflow``.
- LlamaIndex: a ``FunctionAgent`` whose ``search_docs`` is a ``RetrieverTool`` over a
  ``VectorStoreIndex`` retriever (the in-memory ``SimpleVectorStore``, ``HashEmbedding`` below:
  a deterministic local embedding, so the query embedding is a real embedding call).
  ``run_llamaindex_openinference``, ``run_llamaindex_mlflow``.

The index holds the scenarios' ``DOCS`` (``doc-17`` and ``doc-42``, ids kept as the
documents' ids and in their metadata), and the retriever returns all of them (``k`` = 2),
so the ids the answer must cite are the ones ``scenarios.py`` scripts. The index's backend
behaves as the scripted search does (``Tools.search_docs``, asked first on every retrieval):
it raises ``SearchBackendError`` where the scenario's search fails (``j_undisclosed_failure``:
the retriever raises, the tool call fails) and finds nothing where it comes back empty
(``f_degraded``: the retriever returns no documents). Every other tool is the scripted one.

The tool result the model sees lists each document as ``[doc-42] <title>: <text>``
(LangChain's ``document_prompt``; LlamaIndex's node text carries the same line), so the ids
the model cites are in what the tool returned, as a real prompt would show them.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from typing import Any

from scenarios import DOCS, Scenario, Tools

DESCRIPTION = "Search the knowledge base and return matching documents."


def _line(doc: dict[str, str]) -> str:
    """How a document is shown to the model: its id first, so the model can cite it."""
    return f"[{doc['id']}] {doc['title']}: {doc['text']}"


# ---- LangChain --------------------------------------------------------------------------------


def langchain_search_tool(tools: Tools, executed: list[str]) -> Any:
    """``search_docs`` as LangChain's ``create_retriever_tool`` over a vector-store retriever
    whose backend is the scripted search (it fails or comes back empty as scripted)."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.prompts import PromptTemplate
    from langchain_core.tools import create_retriever_tool
    from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever

    store = InMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            Document(
                id=d["id"],
                page_content=d["text"],
                metadata={"doc_id": d["id"], "title": d["title"]},
            )
            for d in DOCS["documents"]
        ]
    )

    class SupportIndexRetriever(VectorStoreRetriever):
        """The store's retriever behind the scripted backend: an outage raises, an index
        that finds nothing returns no documents."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any, **kwargs: Any) -> Any:
            executed.append("search_docs")
            if not tools.search_docs(query)["documents"]:  # raises SearchBackendError
                return []
            return super()._get_relevant_documents(query, run_manager=run_manager, **kwargs)

    retriever = SupportIndexRetriever(
        vectorstore=store, search_kwargs={"k": len(DOCS["documents"])}
    )
    return create_retriever_tool(
        retriever,
        "search_docs",
        DESCRIPTION,
        document_prompt=PromptTemplate.from_template("[{doc_id}] {title}: {page_content}"),
    )


def _run_langchain(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """One ``create_agent`` run with the retriever tool; fails when the answer is not the
    scripted one."""
    from fake_openai import FakeOpenAI
    from fw_langgraph import langchain_tools
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolErrorMiddleware
    from langchain_openai import ChatOpenAI

    if scenario.agents_only or scenario.structured or scenario.followups:
        raise SystemExit(f"{scenario.name}: the retriever agents run one agent, one turn")
    errors = ToolErrorMiddleware(on_error=lambda exc, request: f"Error: {exc!r}")
    others = [t for t in langchain_tools(tools, executed) if t.name != "search_docs"]
    with FakeOpenAI(scenario) as base_url:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        agent = create_agent(
            model, [langchain_search_tool(tools, executed), *others],
            system_prompt=scenario.system, middleware=[errors], name="support_agent",
        )  # fmt: skip
        state = agent.invoke(
            {"messages": [{"role": "user", "content": scenario.prompt}]}, {"recursion_limit": 25}
        )
    answer = str(state["messages"][-1].content).strip()
    if answer != scenario.turns[-1]:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {scenario.turns[-1]!r}")


def run_langchain_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Traced by ``openinference-instrumentation-langchain`` (a RETRIEVER span)."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    _run_langchain(scenario, tools, executed)


def run_langchain_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Traced by OpenLLMetry's ``opentelemetry-instrumentation-langchain``."""
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    _run_langchain(scenario, tools, executed)


def run_langchain_openlit(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Traced by OpenLIT (``openlit.init()``: its langchain and langgraph instrumentors)."""
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    _run_langchain(scenario, tools, executed)


def run_langchain_mlflow(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """Traced by MLflow's LangChain autolog alone (a RETRIEVER span), exported by MLflow's
    OTLP exporter to the capture's sink (``fw_mlflow.configure``)."""
    from fw_mlflow import configure, flush

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.langchain.autolog()
    _run_langchain(scenario, tools, executed)
    flush()


# ---- LlamaIndex -------------------------------------------------------------------------------


def hash_embedding() -> Any:
    """A deterministic local embedding for LlamaIndex (no model, no network): each word
    hashed into one of 16 dimensions, the vector normalised."""
    from llama_index.core.base.embeddings.base import BaseEmbedding

    def embed(text: str) -> list[float]:
        vector = [0.0] * 16
        for word in text.lower().split():
            vector[hashlib.sha256(word.encode()).digest()[0] % 16] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    class HashEmbedding(BaseEmbedding):
        """Bag of hashed words: the same text always gives the same vector."""

        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    return HashEmbedding(model_name="hash-embedding-16")


def llamaindex_search_tool(tools: Tools, executed: list[str]) -> Any:
    """``search_docs`` as LlamaIndex's ``RetrieverTool`` over a ``VectorStoreIndex`` retriever
    whose backend is the scripted search (it fails or comes back empty as scripted)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.indices.vector_store.retrievers import VectorIndexRetriever
    from llama_index.core.schema import TextNode
    from llama_index.core.tools import RetrieverTool, ToolMetadata

    embed_model = hash_embedding()
    nodes = [
        TextNode(id_=d["id"], text=_line(d), metadata={"doc_id": d["id"], "title": d["title"]})
        for d in DOCS["documents"]
    ]
    index = VectorStoreIndex(nodes, embed_model=embed_model)

    class SupportIndexRetriever(VectorIndexRetriever):
        """The index's retriever behind the scripted backend: an outage raises, an index
        that finds nothing returns no nodes."""

        def _retrieve(self, query_bundle: Any) -> Any:
            executed.append("search_docs")
            if not tools.search_docs(query_bundle.query_str)["documents"]:
                return []
            return super()._retrieve(query_bundle)

        async def _aretrieve(self, query_bundle: Any) -> Any:
            return self._retrieve(query_bundle)

    retriever = SupportIndexRetriever(
        index, similarity_top_k=len(DOCS["documents"]), embed_model=embed_model
    )
    return RetrieverTool(
        retriever=retriever, metadata=ToolMetadata(name="search_docs", description=DESCRIPTION)
    )


async def _run_llamaindex(scenario: Scenario, tools: Tools, executed: list[str]) -> None:
    """One ``FunctionAgent`` run with the retriever tool; fails when the answer is not the
    scripted one."""
    from fake_openai import FakeOpenAI
    from fw_llamaindex import function_tools
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.llms.openai import OpenAI

    if scenario.agents_only or scenario.structured or scenario.followups:
        raise SystemExit(f"{scenario.name}: the retriever agents run one agent, one turn")
    others = [t for t in function_tools(tools, executed) if t.metadata.name != "search_docs"]
    with FakeOpenAI(scenario) as base_url:
        llm = OpenAI(
            model="gpt-4o-mini", api_base=base_url, api_key="capture-not-a-key", temperature=0.0
        )
        agent = FunctionAgent(
            name="support_agent", description="Answers from the document index.",
            system_prompt=scenario.system, llm=llm,
            tools=[llamaindex_search_tool(tools, executed), *others], streaming=False,
        )  # fmt: skip
        output = await agent.run(user_msg=scenario.prompt)
    answer = str(output.response.content).strip()
    if answer != scenario.turns[-1]:
        raise SystemExit(f"{scenario.name}: answer {answer!r} != scripted {scenario.turns[-1]!r}")


def run_llamaindex_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """Traced by ``openinference-instrumentation-llama-index`` (RETRIEVER and EMBEDDING
    spans)."""
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
    asyncio.run(_run_llamaindex(scenario, tools, executed))


def run_llamaindex_mlflow(
    scenario: Scenario, endpoint: str, tools: Tools, executed: list[str], *, content: bool
) -> None:
    """Traced by ``mlflow.llama_index.autolog()`` alone (RETRIEVER and EMBEDDING spans)."""
    from fw_mlflow import configure, flush

    mlflow = configure(endpoint, content=content, openai=False)
    mlflow.llama_index.autolog()
    asyncio.run(_run_llamaindex(scenario, tools, executed))
    flush()
