"""Outbound HTTP requests a trace recorded: evidence of network access besides commands.

``conventions/generic-clients.yaml`` maps HTTP client spans (semconv ``http.request.method``
or the older ``http.method``; Micrometer's ``method`` and ``http.url`` in ``spring-ai.yaml``)
to ``other`` steps that keep where the request went. A request
made while a model call was in flight, inside that call's time span, is the model client's
own transport (an HTTP instrumentation under the SDK) and not the agent reaching the network;
every other one is. ``no_network`` fails on them, naming the host.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from otel_oracles._frozen import Frozen, set_field
from otel_oracles.grade.evidence import Evidence
from otel_oracles.model.step import OTHER, Step

HTTP_METHOD_KEYS: tuple[str, ...] = ("http.request.method", "http.method", "method")
"""Semconv's keys, and the ``method`` tag of Micrometer's ``http.client.requests`` observation
(Spring's HTTP clients bridged to OpenTelemetry; ``conventions/spring-ai.yaml``)."""
URL_KEYS: tuple[str, ...] = ("url.full", "http.url")
HOST_KEYS: tuple[str, ...] = ("server.address", "net.peer.name", "http.host", "target.host")
"""``target.host``: Micrometer's tag in Spring Framework 7's HTTP client observations."""


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class OutboundRequest(Frozen):
    """An HTTP client request of the run: its step, method and host."""

    __slots__ = ("host", "method", "step")
    step: Step
    method: str
    host: str
    """The URL's host, else ``server.address`` / ``net.peer.name``, else ``unknown host``."""

    def __init__(self, step: Step, method: str, host: str) -> None:
        set_field(self, "step", step)
        set_field(self, "method", method)
        set_field(self, "host", host)


def outbound_requests(ev: Evidence) -> list[OutboundRequest]:
    """HTTP client requests of the run that are not a model call's own transport, in step
    order. Computed once per trajectory."""
    found: list[OutboundRequest] = ev.memoized("outbound_requests", _find, ev)
    return list(found)


def _find(ev: Evidence) -> list[OutboundRequest]:
    t = ev.trajectory
    # The model calls' extents, read when a timed HTTP request is first found (most runs
    # make none besides the model calls' own, which are no steps of their own).
    calls: list[tuple[int, int]] | None = None
    out: list[OutboundRequest] = []
    for step in t.steps:
        if step.kind != OTHER:
            continue
        method = next((step.attributes[k] for k in HTTP_METHOD_KEYS if k in step.attributes), None)
        if method is None:
            continue
        start, end = step.start_ns, step.end_ns
        if start is not None and end is not None:
            if calls is None:
                calls = [
                    (g.start_ns, g.end_ns)
                    for g in ev.groups.generations
                    if g.start_ns is not None and g.end_ns is not None
                ]
            if any(g_start <= start and end <= g_end for g_start, g_end in calls):
                continue
        out.append(OutboundRequest(step, str(method), _host(step)))
    return out


def _host(step: Step) -> str:
    for key in URL_KEYS:
        url = step.attributes.get(key)
        if isinstance(url, str):
            try:
                host = urlsplit(url).hostname
            except ValueError:
                host = None
            if host:
                return host
    for key in HOST_KEYS:
        value = step.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown host"
