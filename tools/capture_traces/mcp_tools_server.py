"""The scripted scenario tools served by a real MCP server over stdio (``openinference-mcp``).

``python mcp_tools_server.py SCENARIO ENDPOINT EXECUTED`` serves ``search_docs``,
``delete_records``, ``write_file`` and ``run_command`` (``scenarios.Tools`` for SCENARIO) with
the ``mcp`` package's ``MCPServer`` on stdin/stdout. A failing search raises here, in the
server, as a real MCP tool would: the SDK answers the call with an ``isError`` result.

The server traces itself as a deployed one would: a tracer provider of its own whose OTLP/HTTP
exporter sends to ENDPOINT (the capture's sink, the agent's collector), the ``mcp`` SDK's own
server spans (``tools/call <tool>``) parented on the caller's context, which
``openinference-instrumentation-mcp`` and the SDK carry in each request's ``_meta``. Each tool
that really ran is appended to the file EXECUTED, one name a line, for the driver's check.

Agent frameworks pin the ``mcp`` package differently, and the server runs on the capture's own
interpreter: under ``mcp`` 1.x (no ``MCPServer``, no spans of its own) it is the 1.x
``FastMCP``, which answers a raised tool with the same ``isError`` result
(``Error executing tool search_docs: <message>``). ``openinference-instrumentation-mcp`` is
used where it is installed (it only carries the context); without it the 2.x SDK still reads
the caller's context from ``_meta``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenarios import SCENARIOS, Tools


def serve(scenario_name: str, endpoint: str, executed_file: Path) -> None:
    """Trace to ``endpoint`` and serve the scenario's tools until the client closes stdin."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "capture-mcp-tools"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    try:
        from openinference.instrumentation.mcp import MCPInstrumentor
    except ImportError:  # context propagation by the 2.x SDK alone
        pass
    else:
        MCPInstrumentor().instrument(tracer_provider=provider)
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # mcp 1.x, as some agent frameworks pin it
        from mcp.server.fastmcp import FastMCP as MCPServer

    tools = Tools(SCENARIOS[scenario_name])
    server: Any = MCPServer("capture-tools")

    def ran(name: str) -> None:
        with executed_file.open("a") as out:
            out.write(name + "\n")

    @server.tool()
    def search_docs(query: str) -> dict[str, Any]:
        """Search the knowledge base and return matching documents."""
        # The backend's state outlives one server process: clients that start the server
        # for each call (langchain-mcp-adapters' and LlamaIndex's default sessions) see the
        # same searches fail and succeed as one long-lived server's callers do.
        tools.searches = executed_file.read_text().split().count("search_docs")
        ran("search_docs")
        return dict(tools.search_docs(query))  # SearchBackendError propagates: isError

    @server.tool()
    def delete_records(table: str, where: str) -> dict[str, Any]:
        """Delete records from a database table."""
        ran("delete_records")
        return dict(tools.delete_records(table, where))

    @server.tool()
    def write_file(path: str, content: str) -> str:
        """Write a file in the workspace."""
        ran("write_file")
        return str(tools.write_file(path, content))

    @server.tool()
    def run_command(command: str) -> str:
        """Run a shell command in the workspace."""
        ran("run_command")
        return str(tools.run_command(command))

    try:
        server.run("stdio")
    finally:
        provider.shutdown()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
