"""Logfire's own model-client instrumentations on the raw tool loops, for the ``logfire-openai*``
and ``logfire-anthropic*`` sources.

``logfire.instrument_openai()`` and ``logfire.instrument_anthropic()`` record each model call
as a Logfire span (``Chat Completion with {request_data[model]!r}``, ``Message with
{request_data[model]!r}``) in one of two formats, chosen by their ``version`` argument: ``2``,
the default since Logfire 4.x, writes the GenAI semantic-convention attributes
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.usage.*``) beside a minimal
``request_data`` (the model only); ``1``, the format every earlier release wrote and the one
Logfire's own UI still reads, writes the whole request as ``request_data`` JSON and the reply
as ``response_data`` JSON (``{"message": ..., "usage": ...}``). A source named ``*-v1``
captures the legacy format.

The loops are the other raw sources' own: ``capture.py``'s chat-completions loop on the
``openai`` client and ``fw_anthropic._loop`` on the ``anthropic`` client, each inside the
application's ``agent_run`` span, no tool spans. ``logfire.configure(send_to_logfire=False)``
keeps everything local; the capture's span processor is handed to Logfire as an additional
processor, so the spans reach the same in-memory exporter as every other source.

Content off: Logfire has no content switch for these instrumentations (its scrubbing redacts
values that look like secrets, not messages), so the ``.nocontent`` variant is the same run.
"""

from __future__ import annotations

import functools
from typing import Any

from scenarios import Scenario, Tools


def configure(tracer_provider: Any, source: str) -> Any:
    """Logfire set up locally, its spans going to the capture's processor; returns the
    ``logfire`` module."""
    import logfire

    logfire.configure(
        send_to_logfire=False,
        console=False,
        metrics=False,
        service_name=f"capture-{source}",
        additional_span_processors=[tracer_provider._active_span_processor],
    )
    return logfire


def version(source: str) -> int:
    """The span format a source captures: ``1`` (``request_data`` / ``response_data``) for a
    ``*-v1`` source, else Logfire's default, ``2``."""
    return 1 if source.removesuffix("-stream").endswith("-v1") else 2


def instrument_openai(tracer_provider: Any, source: str) -> None:
    """``logfire.instrument_openai()`` on the ``openai`` classes, in the source's format."""
    configure(tracer_provider, source).instrument_openai(version=version(source))


def _anthropic(
    source: str,
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """``logfire.instrument_anthropic()`` on the Messages API loop of the ``*-anthropic``
    sources, in the source's format."""
    from fw_anthropic import _loop

    configure(tracer_provider, source).instrument_anthropic(version=version(source))
    _loop(scenario, tracer_provider, tools, executed, stream)


run_anthropic = functools.partial(_anthropic, "logfire-anthropic")
"""The default format (``capture.py``'s driver ``fw_logfire:run_anthropic``)."""
run_anthropic_v1 = functools.partial(_anthropic, "logfire-anthropic-v1")
"""``version=1``: ``request_data`` / ``response_data``."""
