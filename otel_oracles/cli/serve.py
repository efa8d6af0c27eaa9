"""``otel-oracles serve``: receive OTLP, grade every agent trace as it completes, emit results."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import click

from otel_oracles.server.environment import OTEL_ORACLES_SERVE_CONFIG

_FLAGS: dict[str, str] = {
    "grpc_endpoint": "receivers.grpc.endpoint",
    "http_endpoint": "receivers.http.endpoint",
    "bearer_token_file": "receivers.auth.bearer_token_file",
    "tls_cert": "receivers.tls.cert_file",
    "tls_key": "receivers.tls.key_file",
    "decision_wait": "assembly.decision_wait",
    "max_trace_age": "assembly.max_trace_age",
    "max_traces": "assembly.max_traces",
    "workers": "grading.workers",
    "processes": "grading.processes",
    "shutdown_timeout": "shutdown_timeout",
    "log_level": "log_level",
    "log_format": "log_format",
    "insecure": "receivers.insecure",
}


@click.command("serve")
@click.option(
    "--config",
    "-c",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=OTEL_ORACLES_SERVE_CONFIG,
    help="YAML config file (see examples/serve.yaml). Env: OTEL_ORACLES_SERVE_CONFIG.",
)
@click.option(
    "--contracts",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Contract file or folder (repeatable); replaces grading.contracts.",
)
@click.option("--grpc-endpoint", help="host:port of the OTLP/gRPC receiver [127.0.0.1:4327].")
@click.option("--http-endpoint", help="host:port of the OTLP/HTTP receiver [127.0.0.1:4328].")
@click.option("--no-grpc", is_flag=True, help="Do not open the gRPC receiver.")
@click.option("--no-http", is_flag=True, help="Do not open the HTTP receiver.")
@click.option("--bearer-token-file", type=click.Path(path_type=Path), help="Require this token.")
@click.option("--tls-cert", type=click.Path(path_type=Path), help="PEM certificate (TLS on).")
@click.option("--tls-key", type=click.Path(path_type=Path), help="PEM key of --tls-cert.")
@click.option("--decision-wait", help="Quiet time after the root span ended [10s].")
@click.option("--max-trace-age", help="Grade (as incomplete) after this long [5m].")
@click.option("--max-traces", type=int, help="Traces buffered before pushing back [10000].")
@click.option("--processes", help="Grading worker processes: a number or auto (one per CPU).")
@click.option("--workers", type=int, help="Grading threads per process (0 = sized to the machine).")
@click.option("--shutdown-timeout", help="SIGTERM drain budget [20s].")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--log-format", type=click.Choice(["json", "text"]))
@click.option(
    "--insecure",
    is_flag=True,
    default=None,
    help="Listen on a non-loopback address without a bearer token or TLS client "
    "certificates (anyone who reaches the port can send traces). Refused otherwise.",
)
@click.option("--check-config", is_flag=True, help="Validate settings and contracts, then exit.")
def serve(
    config_path: Path | None,
    contracts: tuple[Path, ...],
    no_grpc: bool,
    no_http: bool,
    check_config: bool,
    **flags: Any,
) -> None:
    """Receive OTLP traces and logs, grade each agent trace when it completes, and emit the
    verdicts as OpenTelemetry spans, events and metrics.

    Precedence: flags > OTEL_ORACLES_SERVE_* env vars > config file > defaults. Results go
    where the standard OTEL_EXPORTER_OTLP_* variables point. SIGTERM drains: stop accepting,
    grade everything buffered (incomplete traces marked so), flush, exit 0 (1 if the drain
    ran out of --shutdown-timeout). Health: GET /healthz, /readyz on the HTTP receiver.

    \b
    Examples:
      otel-oracles serve --contracts examples/tasks
      otel-oracles serve -c examples/serve.yaml --decision-wait 2s
      OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 otel-oracles serve -c serve.yaml
      otel-oracles serve -c serve.yaml --check-config
    """
    from otel_oracles.server import configure_logging, create_server, load_grading, load_settings

    overrides: dict[str, Any] = {_FLAGS[k]: v for k, v in flags.items() if v is not None}
    if contracts:
        overrides["grading.contracts"] = [str(p) for p in contracts]
    if no_grpc:
        overrides["receivers.grpc.enabled"] = False
    if no_http:
        overrides["receivers.http.enabled"] = False
    settings = load_settings(config_path, overrides)
    configure_logging(settings.log_level, settings.log_format)
    if check_config:
        loaded, _ = load_grading(settings)
        click.echo(f"config ok: {len(loaded)} contracts")
        return
    server = create_server(settings)
    code = asyncio.run(_run(server))
    if code:
        sys.exit(code)


async def _run(server: Any) -> int:
    from otel_oracles.server.config import ConfigError

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
    except ConfigError:
        await server.shutdown(0)
        raise
    except (OSError, RuntimeError) as exc:
        await server.shutdown(0)
        raise ConfigError(f"cannot listen: {exc}", source="receivers") from None
    await stop.wait()
    budget = server.settings.shutdown_timeout
    try:
        drained = await asyncio.wait_for(server.shutdown(budget), budget + 5)
    except TimeoutError:
        drained = False
    return 0 if drained else 1
