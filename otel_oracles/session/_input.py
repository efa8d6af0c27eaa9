"""From decoded batches to subjects: the reading half of a grading session.

The grader's own telemetry is dropped, spans are grouped into traces under the run's limits
(``InputLimits``), and traces of one run are joined into one subject (``join_released``).
Every front end that grades spans (``grade``, ``grade --workers``, ``inspect``, the pytest
fixture) reaches subjects through ``traces_from_batches``, so they group alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from otel_oracles._frozen import FrozenValue, set_field
from otel_oracles.assemble import AssemblyStats, OfflineAssembly, assemble_offline, join_released
from otel_oracles.assemble.config import DEFAULT_IDLE_SPANS
from otel_oracles.decode import DecodedBatch, read_paths
from otel_oracles.decode.config import DEFAULT_MAX_DECOMPRESSED_BYTES, DEFAULT_MAX_MESSAGE_BYTES
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import Trace


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class InputLimits(FrozenValue):
    """How much one offline run reads and holds (``grade``/``inspect`` flags, docs/ingest.md):
    the decoder's per-line/message and decompressed-size limits, and the assembler's release
    window and memory cap."""

    __slots__ = ("idle_spans", "max_buffered_spans", "max_decompressed_bytes", "max_message_bytes")
    max_message_bytes: int
    max_decompressed_bytes: int
    idle_spans: int
    max_buffered_spans: int | None

    def __init__(
        self,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
        idle_spans: int = DEFAULT_IDLE_SPANS,
        max_buffered_spans: int | None = None,
    ) -> None:
        set_field(self, "max_message_bytes", max_message_bytes)
        set_field(self, "max_decompressed_bytes", max_decompressed_bytes)
        set_field(self, "idle_spans", idle_spans)
        set_field(self, "max_buffered_spans", max_buffered_spans)

    def read(self, paths: Sequence[str], problems: list[InputProblem]) -> Iterator[DecodedBatch]:
        """``read_paths`` under these limits."""
        return read_paths(
            list(paths),
            problems,
            max_message_bytes=self.max_message_bytes,
            max_decompressed_bytes=self.max_decompressed_bytes,
        )

    def assemble(
        self, batches: Iterable[DecodedBatch], stats: AssemblyStats | None = None
    ) -> OfflineAssembly:
        """``assemble_offline`` under these limits."""
        return assemble_offline(
            batches,
            idle_spans=self.idle_spans,
            max_buffered_spans=self.max_buffered_spans,
            stats=stats,
        )


DEFAULT_LIMITS = InputLimits()


def traces_from_batches(
    batches: Iterable[DecodedBatch],
    stats: AssemblyStats | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
) -> Iterator[Trace]:
    """The subjects in ``batches``: the grader's own telemetry dropped, spans grouped into
    traces, traces of one run joined. What assembly and joining did accrues in ``stats``.
    Deterministic: the same batches give the same subjects in the same order, which is what
    lets ``grade --workers`` split subjects (not spans) between processes."""
    assembly = limits.assemble(without_own_telemetry(batches), stats=stats)
    # Each trace is handed to the join with what it reads of it, worked out by the core at
    # release from the decoded spans (``OfflineAssembly.released``): no record is read back.
    # The join's stream is returned as it is, not wrapped in a generator of its own: every
    # subject passes each level of the chain.
    joined = stats.joined if stats is not None else None
    return join_released(assembly.released(), stats=joined)


def without_own_telemetry(batches: Iterable[DecodedBatch]) -> Iterator[DecodedBatch]:
    """``batches`` without the grader's own spans and log records (``emit``'s
    ``own_telemetry_check``, the one ``serve`` skips on receipt): an export holding an agent's
    spans and the grade spans and events emitted for them grades like the agent's spans
    alone. Only records marked *and* shaped as the grader's are left out (``emit._own``): a
    sender's span in the grader's scope is read like any span. A natively decoded batch is
    filtered in the core on its native records (same markers and shape, handed over from
    ``emit``), so no record is built for it here."""
    from otel_oracles.emit import OWN_SHAPE, own_markers, own_telemetry_check

    scope, services = own_markers()
    shape = OWN_SHAPE.as_tuple()
    is_own = own_telemetry_check()
    for batch in batches:
        if batch.native is not None:
            kept = batch.native.without_own(scope, services, shape)
            if kept is not None:
                batch.native = kept
            yield batch
            continue
        if any(map(is_own, batch.spans)):
            batch.spans = [s for s in batch.spans if not is_own(s)]
        if any(map(is_own, batch.logs)):
            batch.logs = [r for r in batch.logs if not is_own(r)]
        yield batch
