"""OTLP/gRPC receiver on ``grpc.aio``: ``TraceService/Export`` and ``LogsService/Export``.

The handlers take the request as raw bytes (no deserializer) and hand them to the same
decoder as OTLP/HTTP protobuf, so both transports share one decode path. They read the
call's message stream themselves (``_only_message``): exactly one message, or the request is
malformed. grpcio itself
handles gzip and enforces ``max_request_bytes`` (answering RESOURCE_EXHAUSTED without retry
info, which OTLP senders treat as final).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import grpc
from grpc import aio
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otel_oracles.errors import InputError
from otel_oracles.server._connections import connection_cap, open_receivers
from otel_oracles.server._status import status_for
from otel_oracles.server.config import ReceiversSettings

if TYPE_CHECKING:
    from otel_oracles.server._receiving import ReceiverOwner
    from otel_oracles.server._service import Signal

logger = logging.getLogger(__name__)

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"


def _response(signal: Signal, rejected: int, message: str) -> Any:
    if signal == "traces":
        resp = trace_service_pb2.ExportTraceServiceResponse()
        if rejected or message:
            resp.partial_success.rejected_spans = rejected
            resp.partial_success.error_message = message
        return resp
    lresp = logs_service_pb2.ExportLogsServiceResponse()
    if rejected or message:
        lresp.partial_success.rejected_log_records = rejected
        lresp.partial_success.error_message = message
    return lresp


async def _only_message(requests: AsyncIterator[bytes]) -> bytes:
    """The one message of a unary call, read from the stream of them.

    grpcio's unary handler reads the first message and ignores the rest, so a call carrying
    two Export messages was answered OK with the second's spans never read; and a call whose
    stream ended inside its message (a length prefix claiming more than was sent) never got
    an answer, holding its stream until the connection's maximum age. Reading the stream
    sees both: no message, or more than one, is a malformed request, refused whole."""
    body: bytes | None = None
    async for message in requests:
        if body is not None:
            raise InputError(
                "more than one message in a unary Export call; nothing of it was accepted"
            )
        body = message
    if body is None:
        raise InputError(
            "the call ended without a whole message (a length prefix claiming more than "
            "was sent, or a truncated prefix)"
        )
    return body


def _method(server: ReceiverOwner, signal: Signal) -> grpc.RpcMethodHandler:
    async def export(requests: AsyncIterator[bytes], context: aio.ServicerContext) -> Any:
        try:
            meta = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
            server.check_auth(meta.get("authorization"))
            body = await _only_message(requests)
            server.stats.add("requests", f"grpc.{signal}")
            accepted = server.ingest(body, "application/x-protobuf", signal, "grpc")
            return _response(signal, accepted.rejected, accepted.message)
        except Exception as exc:
            st = status_for(exc)
            if st.kind == "internal":
                logger.exception("OTLP/gRPC %s request failed", signal)
            server.count_rejection(st.kind, st.grpc.name.lower(), "grpc", st.message)
            await context.abort(st.grpc, st.message, trailing_metadata=st.grpc_trailers())

    # A stream handler, read as unary by _only_message: see there why.
    return grpc.stream_unary_rpc_method_handler(
        export, response_serializer=lambda m: m.SerializeToString()
    )


def _credentials(rc: ReceiversSettings) -> grpc.ServerCredentials | None:
    if rc.tls is None:
        return None
    key = rc.tls.key_file.read_bytes()
    cert = rc.tls.cert_file.read_bytes()
    ca = rc.tls.client_ca_file.read_bytes() if rc.tls.client_ca_file else None
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=ca, require_client_auth=ca is not None
    )


async def start_grpc(server: ReceiverOwner, rc: ReceiversSettings) -> tuple[aio.Server, int]:
    """Bind and start; returns the server (``stop(grace)`` stops it) and the bound port."""
    limit = rc.max_request_bytes
    conn = rc.connections
    srv = aio.server(
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", 1024 * 1024),
            ("grpc.so_reuseport", 0),
            # Idle and long-lived connections are closed with GOAWAY (clients reconnect), so
            # no client holds a connection, and its descriptor, forever.
            ("grpc.max_connection_idle_ms", int(conn.grpc_max_connection_idle * 1000)),
            ("grpc.max_connection_age_ms", int(conn.grpc_max_connection_age * 1000)),
            ("grpc.max_connection_age_grace_ms", int(conn.grpc_max_connection_age_grace * 1000)),
            # Without a cap, a thousand sockets that never start an RPC held a thousand
            # descriptors for minutes: at the fd limit the HTTP receiver, worker pipes and
            # exports failed too. Beyond the cap gRPC closes new connections at once; one
            # that sends no HTTP/2 preface is closed when an HTTP client's headers would be.
            (
                "grpc.max_allowed_incoming_connections",
                connection_cap(conn.grpc_max_connections, open_receivers(rc)),
            ),
            ("grpc.server_handshake_timeout_ms", int(conn.header_timeout * 1000)),
            # HTTP/2 lets a client open streams without limit, and each one it leaves half
            # sent held ~7 KB: 80,000 on each of four connections took 550 MB. Exporters
            # run one RPC, or a few, at a time per connection.
            ("grpc.max_concurrent_streams", conn.grpc_max_concurrent_streams),
        ]
    )
    srv.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                TRACE_SERVICE, {"Export": _method(server, "traces")}
            ),
            grpc.method_handlers_generic_handler(LOGS_SERVICE, {"Export": _method(server, "logs")}),
        )
    )
    creds = _credentials(rc)
    endpoint = rc.grpc.endpoint
    port = (
        srv.add_secure_port(endpoint, creds)
        if creds is not None
        else srv.add_insecure_port(endpoint)
    )
    if port == 0:
        raise OSError(f"cannot bind OTLP/gRPC receiver to {endpoint}")
    await srv.start()
    return srv, port
