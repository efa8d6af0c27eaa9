"""The live-path baseline: a one-process OTLP/HTTP receiver that only decodes and walks.

The issue's reference point for ``serve``'s receiving core: "a one-process receiver that
only decodes and walks spans into dicts". aiohttp (the same framework ``serve`` uses), one
event loop, ``POST /v1/traces`` parsed with the stock OTLP classes and every resource's,
span's and event's attributes turned into dicts (``baselines.walk_request``), then an empty
``ExportTraceServiceResponse``. Nothing is kept. Prints ``{"port": N}`` once listening and
runs until killed; ``bench/serve_load.py --phases baseline`` drives it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import walk_request

_EMPTY = ExportTraceServiceResponse().SerializeToString()
spans = 0


async def export(request: web.Request) -> web.Response:
    global spans
    spans += walk_request(await request.read())
    return web.Response(body=_EMPTY, content_type="application/x-protobuf")


async def stats(_request: web.Request) -> web.Response:
    return web.json_response({"spans": spans})


async def main() -> None:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/traces", export)
    app.router.add_get("/stats", stats)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    print(json.dumps({"port": port}), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
