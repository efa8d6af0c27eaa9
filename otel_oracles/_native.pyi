"""Types of the compiled core (native/python/src/lib.rs): the contract between the Rust
bindings and the Python stages that call them. Keep it in step with the bindings:
``tests/native/test_native_stub.py`` runs ``mypy.stubtest`` on the built module, so a name,
parameter or constructor that differs from the runtime fails there. The classes are
``@final`` (a PyO3 class cannot be subclassed) and built by ``__new__``; parameters are
positional-only (``/``) only where the binding declares them so."""

from collections.abc import (
    Callable,
    Collection,
    Container,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Generic, Literal, TypeVar, final

from opentelemetry.sdk.metrics.export import MetricsData as SdkMetricsData
from pydantic import BaseModel

from otel_oracles.decode._transfer import RequestBody
from otel_oracles.emit._metric_data import MetricsData
from otel_oracles.emit._records import ItemBatch, LogItem, SpanItem
from otel_oracles.model.span import LinkRecord, LogRecord, SpanRecord, Trace
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory

__all__ = [
    "KEPT_TUPLES",
    "LATE_SAMPLE_SIZE",
    "MAX_ANY_VALUE_DEPTH",
    "MAX_LISTED_STEPS",
    "MAX_TOOL_NAME",
    "REMEMBERED_TRACE_IDS",
    "RESULT_PATTERN_WINDOW",
    "RULE_MEMO_TEXTS",
    "UNROOTED_IDLE_FACTOR",
    "Batch",
    "CheckHead",
    "CheckPlan",
    "CheckPlans",
    "CheckRunner",
    "Drafter",
    "EvidencePlan",
    "FieldReader",
    "GradeTally",
    "InMemoryReplay",
    "JoinFacts",
    "JsonSyntaxError",
    "LimitRules",
    "Linker",
    "ModelFill",
    "OfflineAssembler",
    "OnlineBuffer",
    "PatternSearch",
    "ProtoRequest",
    "RecordBuilder",
    "ResultRules",
    "RuleTable",
    "ScanFields",
    "SessionJoiner",
    "ShownFilter",
    "SlotClass",
    "SourceScan",
    "StepBuilder",
    "StepView",
    "TakenRequest",
    "Tally",
    "TraceDrafter",
    "TransferSpans",
    "VerdictJson",
    "VerdictLabels",
    "VerdictMarkup",
    "VerdictRecords",
    "VerdictReports",
    "Verdicts",
    "WireSpan",
    "absent",
    "absorb_layer",
    "answer_calls",
    "answering",
    "assign_agents",
    "build_trajectory",
    "calls_of",
    "cited_ids",
    "compatible_models",
    "core_version",
    "cut_length",
    "decode_json",
    "decode_json_many",
    "decode_proto",
    "encode_logs_json",
    "encode_logs_proto",
    "encode_metrics_json",
    "encode_metrics_proto",
    "encode_spans_json",
    "encode_spans_proto",
    "escape_surrogates",
    "fill_model",
    "first_start",
    "flag_aggregated_usage",
    "fragment_gap",
    "ground_ids",
    "handoff_targets",
    "is_placeholder",
    "join_facts",
    "join_keys",
    "json_indented",
    "known_clear",
    "lacking_of",
    "last_generation",
    "list_steps",
    "markup_text",
    "merge_stacked_generations",
    "merge_traces",
    "message_text",
    "message_tool_names",
    "messages_empty",
    "nearest_draft",
    "nested_agent_handoffs",
    "one_line",
    "outcome_from_layers",
    "parse_genai_messages",
    "parse_json",
    "parse_json_or_text",
    "parse_openinference_messages",
    "parse_python_literal",
    "parse_python_repr",
    "parse_request_tool_names",
    "parse_streamed_partials",
    "parse_string_list",
    "parse_tool_names",
    "raw_json",
    "repeated_args_candidates",
    "report_text",
    "requested_calls",
    "requested_handoffs",
    "requests_from_next_input",
    "run_wrappers",
    "same_tool",
    "scan_data",
    "select_proto",
    "sibling_layer_calls",
    "span_tree",
    "stopped_short",
    "structured",
    "tool_first_match",
    "tool_repeats",
    "tool_sequence_diff",
    "tools_running_agents",
    "unnamed_request",
    "unwrap_block",
    "where",
    "wire_references",
    "words_search",
    "written_request_candidates",
]

def core_version() -> str:
    """The version of the crate the module was built from."""

# -- decoded records (native/python/src/batch.rs) -------------------------------------------

@final
class Batch:
    """The records of one request body, decoded and owned by the core; ``records()`` builds
    the Python records. ``Batch()`` is an empty batch."""

    def __new__(cls) -> Batch: ...
    @property
    def ignored(self) -> int:
        """Records of signals that are not graded (metrics)."""
    @property
    def rejected(self) -> int:
        """Spans and log records the decoder dropped."""
    @property
    def problems(self) -> list[str]:
        """The first located problem messages (``MAX_LISTED_PROBLEMS``)."""
    @property
    def problems_omitted(self) -> int:
        """Problems found beyond the listed ones."""
    @property
    def span_count(self) -> int: ...
    @property
    def log_count(self) -> int: ...
    def records(self) -> tuple[list[SpanRecord], list[LogRecord]]:
        """New ``SpanRecord``s and ``LogRecord``s (ids hex, attributes plain dicts, empty
        maps ``EMPTY``, empty events/links ``NO_ITEMS``, one dict per resource)."""
    def without_own(
        self,
        scope: str,
        services: frozenset[str],
        shape: tuple[str, list[str], set[str], str, set[str], list[str], set[str]],
    ) -> Batch | None:
        """This batch without the grader's own records (instrumentation scope ``scope`` or a
        resource ``service.name`` in ``services``, and shaped as ``shape``,
        ``emit.OWN_SHAPE.as_tuple()``), or ``None`` when it holds none."""
    def transfer_spans(self, body: RequestBody) -> TransferSpans:
        """The spans of ``body`` decoded for transfer (positions = list order): compact
        entries, read as ``WireSpan``s, without the attribute dicts ``serve``'s receiving
        process never reads."""

@final
class RecordBuilder:
    """Builds the records of chosen positions of batches, sharing their repeated parts
    (attribute keys, resource dicts, scope strings; bounded) across calls: what a ``serve``
    grading worker builds of the body parts it is sent, its own traces' records only. Raises
    ``IndexError`` for a position past the batch's records."""

    def __new__(cls) -> RecordBuilder: ...
    def place(
        self,
        batches: list[Batch | None],
        orders: list[bytes | None],
        spans: list[tuple[bytes, list[Any]]],
        logs: list[tuple[bytes, list[Any]]],
    ) -> tuple[list[list[SpanRecord]], list[list[LogRecord]]]:
        """A grading worker's message's span and log lists built from their references
        (``server._processes._Records``: native-order ``u32`` (slot, position) pairs; the
        slot ``0xFFFFFFFF`` names a record sent as itself, in the list's second member) into
        the message's parts, ``batches[slot]`` (decoded) cut to the sorted positions
        ``orders[slot]`` (``u32``s; ``None``: the whole body). ``IndexError`` for a slot
        whose batch is ``None`` (a body that was not sent) or a position not in its part."""

# -- serve's online assembly buffer (native/python/src/online.rs) ---------------------------

@final
class WireSpan:
    """What assembly reads of a span decoded for transfer, and where the rest is (its body
    and position): the compact entry itself, its fields read on access. Never pickled."""

    @property
    def body(self) -> RequestBody: ...
    @property
    def index(self) -> int:
        """Its position among the body's decoded spans."""
    @property
    def trace_id(self) -> str: ...
    @property
    def span_id(self) -> str: ...
    @property
    def parent_span_id(self) -> str:
        """The parent's id, empty for a root."""
    @property
    def start_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def parent_is_remote(self) -> bool: ...
    @property
    def resource(self) -> Mapping[str, Any]:
        """Its resource's ``service.name`` only."""
    @property
    def scope_name(self) -> str: ...
    @property
    def links(self) -> list[LinkRecord]:
        """Its links without their attributes (built on each read)."""
    @property
    def attributes(self) -> Mapping[str, Any]:
        """Its ``SESSION_ATTRIBUTES`` only (built on each read)."""

def wire_references(
    lists: list[Sequence[Any]],
) -> tuple[list[RequestBody], list[list[int]], list[tuple[bytes, list[Any]]]]:
    """A message's span and log-record ``lists`` as references (``_processes._Records``):
    the bodies named, first come first placed (a body's slot), with the positions named in
    each (ascending, no repeats), and per list its (slot, position) ``u32`` pairs and the
    records sent as themselves (slot 0xFFFFFFFF)."""

@final
class TransferSpans:
    """The spans of one body decoded for transfer: ``WireSpan``s built on access, and what
    ``OnlineBuffer.offer`` buffers as compact entries without them."""

    @property
    def body(self) -> RequestBody:
        """The request body the spans were decoded from."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> WireSpan: ...
    def __iter__(self) -> Iterator[WireSpan]: ...
    def drop_own(self, marked: Callable[[Any], bool], is_own: Callable[[Any], bool]) -> int:
        """Drop the spans the grader emitted: ``marked`` is asked once per resource and
        scope, ``is_own`` of every span of a marked one; how many were dropped."""
    def trace_ids(self) -> set[str]:
        """The trace ids (hex) of the spans."""
    def keep_traces(self, keep: Collection[str]) -> None:
        """Keep only the spans of the trace ids in ``keep``."""

_Released = tuple[
    str,
    list[Any],
    list[Any],
    Literal["complete", "max_age", "span_limit", "evicted", "shutdown"],
    float,
    int,
]
"""``(trace_id, spans, logs, reason, due_at, dropped)`` of a released trace."""

@final
class OnlineBuffer:
    """The online assembly policy (``assemble.online`` has its rules); times are monotonic
    seconds given by the caller."""

    def __new__(
        cls,
        *,
        decision_wait: float,
        max_trace_age: float,
        max_traces: int,
        overflow_traces: int,
        max_buffered_spans: int,
        max_spans_per_trace: int,
        decision_cache_size: int,
    ) -> OnlineBuffer: ...
    @property
    def buffered_traces(self) -> int: ...
    @property
    def buffered_items(self) -> int: ...
    @property
    def draining_traces(self) -> int: ...
    @property
    def draining_items(self) -> int: ...
    @property
    def evictions(self) -> int: ...
    def holds(self, trace_id: str) -> bool: ...
    def offer(
        self, spans: Sequence[Any] | TransferSpans, logs: Sequence[Any], now: float
    ) -> tuple[int, int, int, int, bool, list[str], tuple[str, int, int] | None]:
        """Buffer one request all or nothing: ``(accepted, rejected, late, unattached_logs,
        overflow, traces, refused)``; ``refused`` is ``(limit, traces, records)`` buffered
        when the request was refused (then nothing of it was buffered)."""
    def due(self, now: float, limit: int | None = None) -> list[_Released]:
        """The traces gradable at ``now`` (at most ``limit``)."""
    def drain(self, now: float) -> list[_Released]:
        """Every buffered trace (shutdown)."""

# -- offline assembly (native/python/src/assemble_offline.rs) --------------------------------

UNROOTED_IDLE_FACTOR: int
REMEMBERED_TRACE_IDS: int
LATE_SAMPLE_SIZE: int

@final
class OfflineAssembler:
    """The offline release policy (``assemble_offline``): feed batches, take released traces
    as ``(trace_id, spans, logs, incomplete)`` with records built at release. Raises
    ``ValueError`` for ``idle_spans`` or ``max_buffered_spans`` below 1."""

    def __new__(
        cls, idle_spans: int, max_buffered_spans: int | None = None
    ) -> OfflineAssembler: ...
    def push_batch(self, batch: Batch) -> None:
        """Feed a decoded batch; its spans wait natively."""
    def push_records(self, spans: list[SpanRecord], logs: list[LogRecord]) -> None:
        """Feed records built in Python."""
    def finish(self) -> None:
        """No more input: what waits is released, in first-seen order."""
    @property
    def done(self) -> bool:
        """``finish`` was called and every trace released."""
    def next_release(self) -> tuple[Trace, JoinFacts | None] | None:
        """The next released trace (its span tree built and its log records attached, as
        ``span_tree``; ``incomplete`` set when it was released early) and, when its spans
        were all decoded natively, its ``JoinFacts``; or ``None`` when more input is needed
        (or done)."""
    def stats(self) -> tuple[int, int, int, int, int, list[str], int, int, int, int]:
        """(spans_read, logs_read, traces, late_spans, late_logs, late_trace_ids,
        evicted_traces, unattached_logs, buffered_spans, peak_buffered_spans)."""

# -- assemble: a trace's tree (span_tree.rs), its log-based events and merging a joined run
# -- (log_events.rs), joining runs (session_join.rs) -------------------------------------------

def span_tree(
    trace_id: str, spans: list[SpanRecord], logs: Iterable[LogRecord] | None = None, /
) -> Trace:
    """The ``Trace`` of ``spans`` (arrival order): children, roots, orphans, start order,
    and ``logs`` attached to their spans as events (each such span's events list replaced,
    log-based events attached earlier dropped; the rest counted in ``unattached_logs``), as
    ``build_trace`` documents."""

def first_start(spans: Iterable[SpanRecord]) -> int:
    """When the earliest of ``spans`` started (0 for none): a joined run's traces are
    ordered by it."""

def merge_traces(traces: list[Trace]) -> Trace:
    """One ``Trace`` of a joined run's ``traces`` (``assemble._sessions``): named by the one
    that started first; a root hung under the tool call that ran its agent trace, else under
    the first span of another member it links to (a copy of its record); incomplete when
    any member was; the members' unattached log records added up. One trace is returned
    as it is."""

def join_keys(trace_id: str, spans: Iterable[SpanRecord | WireSpan]) -> set[str]:
    """What may tie a trace to others: ``trace:<id>`` of itself and of the traces its spans
    link to, ``<attribute>:<value>`` of its session ids (``SESSION_ATTRIBUTES``)."""

@final
class JoinFacts:
    """What the join window reads of one trace (its join keys, agent root and tool calls,
    as ``join_keys`` and ``delegations`` read them): the core's one walk over its spans,
    done by the offline assembler over the decoded spans at release (or by ``join_facts``
    over the records). Valid for that ``Trace`` as released. Equal when every fact is."""

def join_facts(trace: Trace) -> JoinFacts:
    """The ``JoinFacts`` of ``trace`` read from its records (what ``SessionJoiner.add``
    reads when given none)."""

@final
class SessionJoiner:
    """The join window of ``join_sessions``: ``add`` a ``Trace``, get the groups of traces
    that leave it (each one run, members in arrival order). Raises ``ValueError`` for a
    negative ``window_spans``."""

    def __new__(cls, window_spans: int) -> SessionJoiner: ...
    def add(self, trace: Trace, facts: JoinFacts | None = None) -> list[list[Trace]]:
        """Let ``trace`` into the window; the groups that leave it. ``facts``: the trace's
        ``JoinFacts`` from its release, else they are read from its records."""
    def flush(self) -> list[list[Trace]]:
        """Every group left, in window order (end of input)."""
    @property
    def waiting(self) -> int:
        """Agent roots and tool calls waiting in the window for a partner."""

# -- emit: the emitter's records to OTLP bytes (native/python/src/encode.rs) ---------------
# Each takes an ``otel_oracles.emit._records.ItemBatch`` of ``SpanItem``s or ``LogItem``s and
# stores the encoded bytes of every shared ``Attrs`` run in its ``encoded`` dict.

_Made = TypeVar("_Made")

@final
class SlotClass(Generic[_Made]):
    """A class whose ``__init__`` only assigns ``fields``, made as that ``__init__`` makes an
    instance (``native/python/src/slots.rs``): ``object.__new__`` and one slot word written a
    field when its ``__slots__`` are ``fields`` (in that order unless ``keywords``), it has no
    ``__post_init__`` and its attribute access is ``object``'s or a frozen dataclass's; any
    other class is called with the values in order, or by name with ``keywords``."""

    def __new__(
        cls, target: type[_Made], fields: Sequence[str], *, keywords: bool = False
    ) -> SlotClass[_Made]: ...
    @property
    def make(self) -> Callable[..., _Made]:
        """The function that makes an instance of its arguments, in ``fields`` order (a
        builtin taking them as they stand, no argument tuple): taken once, called per
        instance."""
    @property
    def filled(self) -> bool:
        """Whether instances are made in their memory (else the class is called)."""

@final
class GradeTally:
    """The verdict metrics' counts per label set (``native/python/src/grade_tally.rs``):
    ``labels(verdict, trajectory)`` gives a verdict's labels (asked once per run of verdicts
    of one trajectory, contract and agent name); durations go into the buckets of
    ``bounds`` (seconds, strictly increasing). One per batch, on one thread."""

    def __new__(
        cls, labels: Callable[[Any, Any], tuple[tuple[str, Any], ...]], bounds: list[float]
    ) -> GradeTally: ...
    @property
    def bounds(self) -> list[float]:
        """The histogram's bucket bounds."""
    def __len__(self) -> int:
        """Label sets counted."""
    def add(self, pairs: list[Any]) -> None:
        """Counts every ``(verdict, trajectory)`` pair: the verdict, its four failure
        counts, each result by (check name, oracle type, outcome), its duration."""
    def state(self) -> Any:
        """The counts as plain data, one tuple per label set in first-seen order:
        ``(labels, {verdict: traces}, [invariant, tolerated, exhausted, missing],
        {(check, oracle type, outcome): results}, (bucket counts, sum, min, max))``."""
    def merge(self, state: Any) -> None:
        """Adds a ``state`` made elsewhere with the same bounds."""
    def take(self) -> Any:
        """``state``, then counts anew."""

@final
class VerdictLabels:
    """The label rules of the verdict metrics and the grade span
    (``native/python/src/grade_tally.rs``): ``names`` is ``emit._names``, ``generation`` the
    generation step kind, ``max_chars`` the longest label. Called with ``(verdict,
    trajectory)``: the verdict's metric labels, contract id and version, then the agent,
    provider, model and service version each when known (``GradeTally`` asks it without a
    Python call)."""

    def __new__(cls, names: Any, generation: Any, max_chars: int) -> VerdictLabels: ...
    def __call__(self, verdict: Any, trajectory: Any) -> tuple[tuple[str, Any], ...]: ...
    def label(self, value: object) -> str | None:
        """``value`` as a label: ``None`` unless a non-empty ``str``, cut to ``max_chars``
        characters (the last one an ellipsis) when longer."""
    def agent(self, verdict: Any, trajectory: Any) -> str | None:
        """The verdict's agent name as a label, else the trajectory's (``None`` or not)."""
    def generation(self, trajectory: Any) -> tuple[str | None, str | None]:
        """(provider, model) labels of the trajectory's (``None`` or not) first generation
        steps that name them, in step order."""

@final
class VerdictRecords:
    """``OtelEmitter``'s builder of grade spans and evaluation log records
    (``native/python/src/emit_records.rs``): ``names`` is ``emit._names``; ``classes`` the
    record classes (``Attrs``, ``SpanItem``, ``EventItem``, ``LogItem``); ``helpers`` the
    privacy filter (``SHOWN_FILTER``: template explanations and error types), ``explain``
    (``full`` explanations), the label rules (``VerdictLabels``: the grade span's agent,
    provider and model) and the subject label of a grade span that starts its own trace;
    ``severities`` an outcome's (``_records.Severity``, text); ``passing`` the outcomes scored
    1.0; ``forms`` whether the grade span, its events and the log records are built. Keeps
    the shared attribute runs it made, by what they are made of (each cache cleared at
    ``max_shared``); lists are cut at ``max_list`` items."""

    def __new__(
        cls,
        names: Any,
        classes: tuple[Any, Any, Any, Any],
        helpers: tuple[ShownFilter, Callable[..., Any], VerdictLabels, Callable[..., Any]],
        severities: dict[Any, tuple[Any, str]],
        passing: list[Any],
        error_outcome: Any,
        explain_mode: str,
        forms: tuple[bool, bool, bool],
        max_list: int,
        max_shared: int,
        seed: int,
    ) -> VerdictRecords: ...
    def build(
        self,
        results: list[Any],
        start: int,
        spans: list[Any] | ProtoRequest,
        logs: list[Any] | ProtoRequest,
        batch: int,
        tally: GradeTally | None = None,
    ) -> int:
        """Appends the records of ``results[start:]`` (verdict, trajectory) to ``spans`` and
        ``logs`` (one time stamp a verdict) and returns the index after the last verdict
        built: the first after which either holds ``batch`` records, else the end. Lists get
        the items; two ``ProtoRequest``s get the records written as OTLP protobuf (the bytes
        ``encode_*_proto`` makes of the items). ``tally`` counts each verdict built."""

@final
class ProtoRequest:
    """A pending OTLP protobuf request of grade spans or log records that
    ``VerdictRecords.build`` writes into (``native/python/src/encode.rs``); ``expected`` is
    how many records a request holds, for reserving room."""

    def __new__(cls, expected: int) -> ProtoRequest: ...
    def __len__(self) -> int:
        """Records written and not yet taken."""
    def take(self, resource: Any, scope: Any) -> memoryview:
        """The serialized request framed with ``resource`` and ``scope`` (empty without
        records), as ``encode_*_proto`` frames an ``ItemBatch``: a view of the writer's own
        buffer (a ``TakenRequest``), not a copy; starts anew."""

@final
class TakenRequest:
    """The buffer of a request ``ProtoRequest.take`` hands out (read through the buffer
    protocol: ``take`` returns a ``memoryview`` of it); not made from Python."""

    def __len__(self) -> int:
        """The request's length in bytes."""

def encode_spans_proto(batch: ItemBatch[SpanItem]) -> bytes:
    """The serialized ``ExportTraceServiceRequest`` (empty bytes for an empty batch)."""

def encode_logs_proto(batch: ItemBatch[LogItem]) -> bytes:
    """The serialized ``ExportLogsServiceRequest`` (empty bytes for an empty batch)."""

def encode_spans_json(batch: ItemBatch[SpanItem]) -> bytes:
    """``{"resourceSpans": ...}`` as one line of OTLP/JSON."""

def encode_logs_json(batch: ItemBatch[LogItem]) -> bytes:
    """``{"resourceLogs": ...}`` as one line of OTLP/JSON."""

# -- metric encoding (native/python/src/encode_metrics.rs) ------------------------------------

def encode_metrics_proto(metrics_data: MetricsData | SdkMetricsData) -> bytes:
    """The serialized ``ExportMetricsServiceRequest`` of a ``MetricsData`` (the package's
    records or the SDK's, read by the same names), as the SDK's ``encode_metrics`` builds it
    (empty bytes without resources)."""

def encode_metrics_json(metrics_data: MetricsData | SdkMetricsData) -> bytes:
    """``{"resourceMetrics": ...}`` as one line of OTLP/JSON (``{}`` without resources)."""

# -- OTLP/JSON decoding (native/python/src/decode_json.rs) -----------------------------------

MAX_ANY_VALUE_DEPTH: int
"""Most arrays/kvlists one attribute value or log body may nest (the core's bound)."""

class JsonSyntaxError(ValueError):
    """The body is not JSON; ``args`` are ``(message, line, column)``, 1-based."""

def decode_json(payload: bytes, start: int = 0, end: int | None = None) -> Batch:
    """Decode one OTLP/JSON request body, ``payload[start:end]`` read in place (the GIL is
    released meanwhile). Raises ``JsonSyntaxError`` for text that is not JSON and
    ``ValueError`` (the one-line reason) for JSON that is not an OTLP request or nests too
    deeply, or for a range outside ``payload``."""

def decode_json_many(payload: bytes, start: int = 0, end: int | None = None) -> list[Batch | str]:
    """Decode a JSON array of requests, ``payload[start:end]`` read in place: a ``Batch``, or
    the reason as a ``str``, per item."""

# -- protobuf decoding (native/python/src/decode_proto.rs) ----------------------------------

def decode_proto(
    payload: bytes,
    signal: Literal["traces", "logs"],
    for_transfer: bool = False,
    start: int = 0,
    end: int | None = None,
) -> tuple[Batch, bool]:
    """Decode an OTLP protobuf request body read as ``signal``: the batch, and whether the
    body plausibly is that signal (its first records' ids and timestamps). Raises
    ``ValueError`` naming the parser's reason when the bytes are not that message. Releases
    the interpreter while decoding. ``for_transfer``: the batch is only for
    ``Batch.transfer_spans``; every byte is checked alike (same errors, rejections and
    problems), but of a traces body's span, resource, event and link attributes only the
    spans' ``SESSION_ATTRIBUTES`` and the resources' ``service.name`` are built. The body
    is ``payload[start:end]`` (all of it by default; ``ValueError`` for a range outside it):
    a framed file's frames are decoded where they lie in the block read."""

def select_proto(payload: bytes, positions: list[int]) -> bytes:
    """An OTLP protobuf request body (traces or logs) holding only the records at
    ``positions`` of ``payload`` (every record message counts, rejected ones too), each
    under a copy of its resource and scope fields: ``decode_proto`` reads them as it read
    them in the whole body, in position order. Raises ``IndexError`` for a position past
    the last record, ``ValueError`` for bytes that are not a protobuf message. Releases the
    interpreter meanwhile."""

# -- message-content parsers (native/python/src/parsers.rs) ---------------------------------
# The registered ``json`` and ``json_or_text`` parsers (``mapping.parsers.scalars``): the
# parsed value as new objects, or the very object given when it is no JSON of that kind.

def parse_json(value: Any) -> Any:
    """A JSON ``str`` (stripped as ``str.strip()`` strips) or ``bytes`` (ASCII-stripped,
    UTF-8 with replacement) as its value; anything else unchanged."""

def parse_json_or_text(value: Any) -> Any:
    """A ``str`` holding a JSON object or array as its value; anything else unchanged."""

# The registered ``genai_messages`` parser (``mapping.parsers.otel_genai``).

def parse_genai_messages(value: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON ``str``, ``bytes`` or the
    structured list or dict) as the normalised messages in the GenAI parts format, ``None``
    when it holds no message list or object. Kept values are the very objects given; raises
    ``TypeError`` where the Python parser it replaced raised (a truthy non-list
    ``tool_calls`` number, a value ``json.dumps`` / ``orjson.dumps`` cannot encode)."""

# The registered ``openinference_messages`` parser (``mapping.parsers.openinference``).

def parse_openinference_messages(value: Any) -> list[dict[str, Any]] | None:
    """OpenInference's flattened ``llm.*_messages`` attributes (a mapping of the keys under
    the prefix, ``{"0.message.role": "user", ...}``) as the normalised messages, ``None``
    for no mapping or no message. Raises ``ValueError`` for an index key of digits ``int()``
    does not read and ``AttributeError`` for a key that is no ``str``, as the Python parser
    it replaced did; never changes the values it is given."""

# The cut length of a trace (``mapping._limits.cut_length``; native/python/src/limits.rs).

@final
class SourceScan:
    """Where one rule reads a span: attribute keys, key prefixes (``str.startswith``), and
    per span-event source its names and the attribute read (``None``: all of them)."""

    def __new__(
        cls,
        keys: frozenset[str],
        prefixes: list[str],
        events: list[tuple[list[str], str | None]],
    ) -> SourceScan: ...

def cut_length(drafts: Iterable[Any], min_values: int, min_length: int) -> int | None:
    """The longest text values (strings holding a space) among the values each draft's span
    (``draft.span``; none, or ``draft.synthesized``, left out) has where its rule reads it
    (``draft.rule.source_scan``; log records left out), nested in dict values, lists and tuples:
    their length when it is at least ``min_length``, at least ``min_values`` different texts
    (ASCII digits left out) have it and no string without a space is longer; else ``None``."""

@final
class LimitRules:
    """What a trace's SDK limits left out, made visible on its drafts
    (``mapping._limits``): the content fields and attributes, the attribute names written,
    the SDK languages that count overwritten keys and the cut length's thresholds."""

    def __new__(
        cls,
        content_fields: list[str],
        content_attributes: list[str],
        cut_attribute: str,
        dropped_attributes: str,
        dropped_events: str,
        overwrites_counted: frozenset[str],
        min_values: int,
        min_length: int,
    ) -> LimitRules: ...
    def apply(self, spans: Iterable[SpanRecord], drafts: Sequence[Any]) -> None:
        """``_limits.apply_limits`` over ``drafts`` and each one's ``follows``."""
    def drop_cut_values(self, drafts: Iterable[Any], length: int) -> None:
        """``_limits.drop_cut_values``."""
    def lost_attributes(self, spans: Iterable[SpanRecord]) -> dict[str, int]:
        """``_limits.lost_attributes``."""

# A tool step's result rules (``mapping._tool_results``; native/python/src/results.rs).

RESULT_PATTERN_WINDOW: int
"""Characters of a text result the declared patterns see (anchored at its start)."""

@final
class ResultRules:
    """Every file's ``tool_results``, merged: ``error_keys``, the compiled ``error_pattern``,
    ``empty_pattern`` and ``denied_pattern`` regexes, and the functions they run with
    (``safe_regex.match``, ``parsers.scalars.parse_string``)."""

    def __new__(
        cls,
        error_keys: list[str],
        error_patterns: list[Any],
        empty_patterns: list[Any],
        denied_patterns: list[Any],
        matcher: Callable[[Any, str], Any],
        parse_string: Callable[[Any], str | None],
    ) -> ResultRules: ...
    def judge(self, result: Any, failed: bool) -> tuple[str, Any] | None:
        """``("denied", text)``, ``("error", message)`` (never when ``failed``),
        ``("empty", None)`` or ``None``: ``ToolResultRules.judge``."""

def structured(result: Any) -> Any:
    """A result recorded as JSON or Python-repr text of an object or array, decoded, and a
    one-block result's value (``unwrap_block``), until nothing changes."""

def unwrap_block(result: Any) -> Any:
    """The value of a result that is exactly one content block (or an MCP
    ``CallToolResult``), else the very object."""

def requested_calls(draft: Any) -> list[dict[str, Any]]:
    """The tool calls a model call (a mapping ``Draft``) asked for: the ``tool_call`` parts
    with a name of its ``output_messages``, in order, the very part objects."""

@final
class Linker:
    """Tool-call linking of a trace's drafts (``mapping._mapper._link_tool_calls``), with the
    Python functions a found result and a new step go to: ``responses(gen)`` (a model call's
    input's tool results by call id), ``take_result(target, response, results)``,
    ``synthesized(gen, req, response, results)`` (a new ``Draft``) and ``hidden_call(gen)``
    (a new ``Draft``)."""

    def __new__(
        cls,
        responses: Callable[[Any], dict[str, dict[str, Any]]],
        take_result: Callable[[Any, dict[str, Any], Any], None],
        synthesized: Callable[[Any, dict[str, Any], dict[str, Any] | None, Any], Any],
        hidden_call: Callable[[Any], Any],
    ) -> Linker: ...
    def link(self, drafts: list[Any], finish_reasons: frozenset[str], results: Any) -> None:
        """Link ``drafts``' tool calls in place (claims, call ids, arguments, results; new
        steps appended to their model call's ``follows``)."""

# The registered ``tool_names`` and ``request_tool_names`` parsers (``mapping.parsers.scalars``;
# native/python/src/tools.rs): a model call's ``tools_offered``.

def parse_tool_names(value: Any) -> tuple[str, ...] | None:
    """The names of the tool definitions ``value`` records (JSON text, a list, one
    definition, an ``attr_prefix`` mapping of a flattened list; a definition named by
    ``name``, ``function.name`` or ``toolSpec.name``, or a bare name), ``()`` for an empty
    list, ``None`` when it is no list of named definitions."""

def parse_request_tool_names(value: Any) -> tuple[str, ...] | None:
    """The names of a recorded request's ``tools`` (else ``functions``), ``()`` when the
    request object has neither, ``None`` when it is no object or names no tool readably."""

# The registered ``python_literal`` parser (``mapping.parsers.python_literals``).

def parse_python_literal(value: Any) -> Any:
    """A ``str`` holding the Python ``repr`` of a dict or list as its JSON-like value (what
    ``ast.literal_eval`` reads, tuples and sets as lists, sets sorted by ``repr``, ``bytes``
    decoded, complex numbers and non-string keys as their ``str``); anything else, and text
    that is no such literal, unchanged. A few corners (``\\N{...}`` escapes, surrogate
    escapes, integers past 127 bits) are read by ``python_literals.parse_python_literal_by_ast``."""

# The registered ``string_list`` parser (``mapping.parsers.scalars``).

def parse_string_list(value: Any) -> list[str] | None:
    """``["stop"]``, ``"stop"`` or a JSON array text (a ``str`` starting with ``[``, read by
    ``parse_json``) as a list of strings: each item that is not ``None`` as its ``str()``;
    any other value ``None``."""

# The registered ``streamed_partials`` parser (``mapping.parsers.otel_genai``).

def parse_streamed_partials(value: Any) -> Any:
    """A model call's output messages without a stream's partial chunks: when every message
    but the last is a dict whose ``finish_reason`` is ``""`` and the last has a truthy one,
    a list of the last alone; anything else unchanged."""

# The registered ``python_repr`` parser (``mapping.parsers.python_literals``).

def parse_python_repr(value: Any) -> Any:
    """A ``str`` holding the ``repr`` of Python objects as data: a constructor call as
    ``{"__type__": name, "__args__": [...], keyword: value}``, an enum's ``<...>`` repr as its
    value and any other ``<...>`` as ``None``, tuples and sets as lists, literals as
    ``parse_python_literal`` reads them, names ``None``; other values unchanged. Any other
    expression, and text that is no expression, is read by
    ``python_literals.parse_python_repr_by_ast`` (raising where it raises)."""

# -- the mapping rule table (native/python/src/rules.rs) -----------------------------------

@final
class RuleTable:
    """The matches of a convention set's rules (priority order) as plain data, built by
    ``otel_oracles.mapping._compile.rule_table``; ``select`` gives each span its rule."""

    def __new__(
        cls,
        rules: Sequence[Sequence[Sequence[Sequence[Any]]]],
        keys: list[str],
        host_lists: list[list[Any]],
        regexes: list[str],
        search: Callable[[int, str], bool],
        content: tuple[
            Sequence[tuple[int, Sequence[Sequence[Any]]]],
            frozenset[str],
            Callable[[Any], str],
        ]
        | None = None,
    ) -> RuleTable:
        """``rules``: per rule ``(all, any)``, each condition ``(tag, a, b)`` (tuples or lists, as
        JSON reads them back). ``regexes``: the patterns by number. Each is analysed once: the
        core answers the texts its analysis proves the answer for, and calls ``search(number,
        text)`` for the others (once per distinct text, remembered). ``content``: ``(reads,
        placeholders, dumps)``, per read the number of the key a ``field`` condition tests and
        the origins of its sources (``(tag, a, b)`` as in a read plan): a span's value under
        that key is the raw value of the first source holding one that is no placeholder, a
        ``str`` as it is, anything else ``dumps(value)`` (events as their bodies, or their
        attributes as a ``dict``); the span's own attribute under that key is never read."""
    def select(
        self, spans: Sequence[SpanRecord], children: dict[str, list[SpanRecord]]
    ) -> list[int]:
        """Per span, the number of the first rule whose match holds, or -1. ``children``
        (span id -> direct children) serves ``child`` conditions; a ``parent`` condition
        (``("parent", (all, any), None)``) looks the span's ``parent_span_id`` up among
        ``spans`` and fails for a root or a parent not among them. Exceptions raised by
        ``search`` (a regex over its time budget) propagate."""
    @property
    def remembered_texts(self) -> int:
        """Distinct texts whose regex answers the table remembers now."""
    @property
    def host_searches(self) -> int:
        """How many times the table has called ``search`` so far."""
    def __len__(self) -> int: ...

RULE_MEMO_TEXTS: int
"""Distinct texts a rule table's regex memo holds before it starts over."""

@final
class FieldReader:
    """The read plans of a convention set's rules (``_compile._plan``); ``read`` puts a
    span's fields, by one plan, into a draft's ``fields`` and ``redacted``."""

    def __new__(
        cls,
        sources: Sequence[Sequence[Any]],
        plans: Sequence[Sequence[Sequence[Any]]],
        parser: Callable[[str], Any],
        span_name: Callable[[str], Callable[[str], Any]],
        placeholders: frozenset[str],
        failed: Callable[[str, BaseException], None],
    ) -> FieldReader:
        """``sources``: the set's distinct sources, each ``(tag, a, b, parse, key)`` (a tuple
        or a list), ``parse`` its ``parse:`` names; ``plans``: per plan, per field ``(name,
        is_content_field, source numbers)``. Each source is resolved once: ``parser(name)``
        (asked once per distinct name; ``KeyError`` for an unknown one) gives what runs for a
        parser's name (the name of one of the core's own, a list for a chain, or a Python
        callable), a list of several names a chain of those; ``span_name(pattern)`` (once
        per distinct pattern) the function giving a span name's first group. A number with
        no source is an ``IndexError``. ``failed(field, exception)`` is told of each
        parser failure."""
    def read(
        self,
        span: SpanRecord,
        children: Sequence[SpanRecord],
        plan: int,
        fields: dict[str, Any],
        redacted: set[str],
    ) -> None:
        """Per field of plan ``plan``, the first usable source's value into ``fields``; a
        content field left with only a placeholder into ``redacted``."""

@final
class Drafter:
    """The per-span part of a draft step (``TraceDrafter``): the fields read by a
    rule's plan, the status from the error signals, the fields normalized, in one call
    (``native/python/src/draft.rs`` says what it decides, in order)."""

    def __new__(
        cls,
        reader: FieldReader,
        control_flow: frozenset[str],
        run_limit_errors: bool,
        vocabulary: dict[str, str],
        error_code: int,
        hooks: tuple[
            Callable[[Any], str | None],
            Callable[[Any], int | None],
            Callable[[Any], list[dict[str, Any]]],
            Callable[[dict[str, Any]], str | None],
        ],
    ) -> Drafter:
        """``hooks``: ``(parse_string, parse_int, output_messages, run_limit)``, the Python
        functions called for what the core leaves to them."""
    def draft(
        self,
        span: SpanRecord,
        children: Sequence[SpanRecord],
        plan: int,
        fields: dict[str, Any],
        redacted: set[str],
        attributes: dict[str, Any],
    ) -> Literal["ok", "error", "unset"]:
        """Read plan ``plan`` of ``span`` into ``fields`` / ``redacted``, decide its status
        from the error signals and normalize the fields; ``run_limit`` and
        ``structured_output`` go into ``attributes``. Returns the status."""

def assign_agents(
    drafts: list[Any],
    draft_by_span: dict[str, Any],
    by_id: dict[str, SpanRecord],
    read_deferred: Callable[[Any, Any], None],
    compiled: Any,
) -> None:
    """Each draft's agent scope and enclosing agent (``mapping._mapper.map_trace``;
    ``native/python/src/passes.rs``); ``read_deferred(draft, compiled)`` reads a rule's
    deferred fields when no agent encloses a draft."""

def flag_aggregated_usage(
    drafts: list[Any], draft_by_span: dict[str, Any], by_id: dict[str, SpanRecord]
) -> None:
    """``attributes["usage_aggregated"]`` on each model call with model calls below it."""

def tools_running_agents(drafts: list[Any]) -> None:
    """Rules with ``agent_inside_is_delegation``: a tool step that ran an agent becomes a
    handoff to it (``native/python/src/passes.rs``)."""

def nested_agent_handoffs(
    drafts: list[Any],
    draft_by_span: dict[str, Any],
    by_id: dict[str, SpanRecord],
    draft_cls: Callable[..., Any],
) -> list[Any]:
    """Rules with ``nested_agent_is_handoff``: a handoff (a new ``draft_cls``) placed before
    each agent nested directly in another agent; ``drafts`` itself when no rule asks."""

def handoff_targets(drafts: list[Any]) -> None:
    """A handoff naming no target gets the next agent to start after it."""

def run_wrappers(
    unrecognised: list[SpanRecord],
    draft_by_span: dict[str, Any],
    by_id: dict[str, SpanRecord],
) -> tuple[int, dict[str, int]]:
    """How many different span ids among ``unrecognised`` enclose every drafted span (the
    run's wrappers), and the other unrecognised spans counted by name, first-seen order."""

def written_request_candidates(drafts: list[Any]) -> list[Any]:
    """The model calls whose reply may be written tool requests (a generation's output of
    one message of one part whose ``content`` holds a ``{`` or a ``<tool_call>``), for
    ``mapping._text_requests.requests_in_text``."""

def requests_from_next_input(drafts: list[Any]) -> None:
    """Rules with ``requests_from_next_input``: a model call's requests read from the next
    model call's input of its scope (``mapping._mapper._requests_from_next_input``)."""

def requested_handoffs(
    drafts: list[Any],
    patterns: tuple[str, ...],
    agent_group: Callable[[str, str], str | None],
) -> None:
    """A synthesized call of a ``handoff_requests`` tool naming the agent that starts next
    becomes the handoff to it; ``agent_group(pattern, tool)`` is the agent a pattern reads
    from the tool name, or ``None`` (``mapping._mapper._requested_handoffs``)."""

# -- stacked layers of one call (native/python/src/stacked.rs) -------------------------------

def merge_stacked_generations(
    drafts: list[Any], draft_by_span: dict[str, Any], by_id: dict[str, SpanRecord]
) -> list[Any]:
    """``drafts`` without the inner drafts of stacked pairs, each absorbed into its outer
    draft (``mapping/_stacked.py`` says when); ``drafts`` itself when nothing merges."""

def sibling_layer_calls(drafts: list[Any]) -> list[Any]:
    """The tool-call and handoff drafts with a span, in order; empty when fewer than two or
    all of one instrumentation scope (``mapping._stacked.merge_sibling_layers``)."""

def nearest_draft(
    span: SpanRecord, draft_by_span: dict[str, Any], by_id: dict[str, SpanRecord]
) -> Any | None:
    """The draft of ``span``'s nearest ancestor that has one."""

def same_tool(name: Any, inner: Any) -> bool:
    """Whether the outer layer's tool ``name`` is the ``inner`` draft's tool."""

def compatible_models(a: Any, b: Any) -> bool:
    """Whether two model names may name the same model."""

def absorb_layer(kept: Any, inner: Any, draft_by_span: dict[str, Any]) -> None:
    """Fold ``inner`` (``kept``'s call recorded by another layer) into ``kept``."""

def outcome_from_layers(group: list[Any], by_id: dict[str, SpanRecord], in_time: bool) -> None:
    """The layers' view of one call's outcome folded into ``group[0]``; a layer inside a
    hiding one by nesting, or with ``in_time`` by time."""

@final
class TraceDrafter:
    """A trace's spans drafted in one call (``mapping._mapper.map_trace``;
    ``native/python/src/draft.rs`` says how)."""

    def __new__(
        cls,
        drafter: Drafter,
        rules: Sequence[tuple[Any, bool]],
        draft_cls: type,
        finish: Callable[[Any], None],
        run_limit_prompts: Sequence[str],
        results: ResultRules,
        hooks: tuple[Callable[[Any, Any, bool], None], Callable[[Any, tuple[str, Any]], None]],
    ) -> TraceDrafter:
        """``rules``: per compiled rule (the rule table's numbering) the rule and whether
        ``finish(draft)`` (Python) completes its drafts (between their outcome and their
        result); ``draft_cls``: the mapper's ``Draft``, made with every slot set by the core;
        ``run_limit_prompts``: the files' final-answer request texts, searched in a model
        call's system and user messages; ``results``: the tool-result rules a tool step's
        result is judged by; ``hooks``: ``(apply_outcome(draft, value, undeclared_unknown),
        apply_judgement(draft, said))``, what an ``outcome`` value and a judgement do."""
    def draft_trace(
        self,
        spans: list[SpanRecord],
        children: dict[str, list[SpanRecord]],
        selected: Sequence[int],
    ) -> tuple[list[Any], dict[str, Any], dict[str, int], list[SpanRecord], dict[str, SpanRecord]]:
        """``(drafts, draft_by_span, used_files, unrecognised, by_id)`` of the trace's spans,
        by the rules the rule table selected (``-1``: none); ``by_id``: every span by its id,
        the last of an id kept (``{s.span_id: s for s in spans}``)."""

def build_trajectory(
    cls: type[Trajectory],
    agent_kind: StepKind,
    trace: Trace,
    steps: list[Step],
    unmapped: dict[str, int],
    used_files: dict[str, int],
    final_answer_tools: tuple[str, ...],
    model_status: tuple[tuple[str, ...], tuple[str, ...]],
) -> Trajectory:
    """A trace's ``Trajectory`` around its built steps (``mapping._mapper.map_trace``):
    ``cls.from_normalized`` when every id and name is ``None`` or an exact ``str``, else
    ``cls(**values)``."""

@final
class StepBuilder:
    """A trace's finished drafts made into ``Step``s, in one call per trace
    (``mapping._mapper.map_trace``; ``native/python/src/step.rs`` says how)."""

    def __new__(
        cls,
        step: type[Step],
        span_ref: type[SpanRef],
        field_types: dict[str, type | None],
        parse_string: Callable[[Any], str | None],
        kind_cls: type[StepKind],
        tool_hooks: tuple[
            Callable[[Any, Any, Any], StepKind],
            Callable[[str], str],
            tuple[str, ...],
            tuple[str, ...],
            tuple[str, ...],
        ],
    ) -> StepBuilder:
        """``field_types``: per draft field the exact type of a value that needs no
        validation, ``None`` for any value; ``tool_hooks``: ``(tool_class, normalize_path,
        PATH_KEYS, CONTENT_KEYS, COMMAND_KEYS)``, ``tool_class`` an ``lru_cache`` (its
        ``__wrapped__`` is called for names that are no exact ``str``)."""
    def build_steps(
        self,
        drafts: list[Any],
        trace_id: str,
        tool_kinds: dict[tuple[str, str], Any],
    ) -> list[Step]:
        """Every step of the trace: each draft (a ``mapping._mapper.Draft``), then its
        ``follows``, numbered in that order."""
    def build(
        self,
        index: int,
        kind: StepKind,
        fields: dict[str, Any],
        status: str,
        span: SpanRecord | None,
        synthesized: bool,
        redacted: set[str],
        attributes: dict[str, Any],
        convention: str,
        trace_id: str,
        path: str | None,
        content: str | None,
        command: str | None,
    ) -> Step | dict[str, Any]:
        """One step (what ``build_steps`` does per draft, once its kind and the path,
        content or command are decided): the ``Step``, or its values as a ``dict`` for
        ``Step(**values)`` when one is not exactly of its field's type."""

# -- the text command and network checks search (native/python/src/scan.rs) ----------------

@final
class ScanFields:
    """``Step``'s behaviour fields (declaration order, provenance left out) with their types,
    given once by ``otel_oracles.model.step``: reads a step's scan text from its fields."""

    def __new__(cls, fields: Sequence[tuple[str, str, type | None]]) -> ScanFields:
        """``(name, type, enum class or None)``; type one of ``any``, ``str``, ``int``,
        ``bool``, ``enum``, ``str_tuple``, ``str_list``, ``dict``, ``dict_list``."""
    def scan_text(
        self, values: dict[str, Any], int_max_str_digits: int, with_strings: bool
    ) -> str | None:
        """The scan text of a step whose field values are ``values`` (its ``__dict__``; only
        its sorted JSON unless ``with_strings``), ``None`` when a value is not plain data of
        its field's exact type (then dump the step with pydantic and call ``scan_data``)."""

def scan_data(data: dict[str, Any], int_max_str_digits: int, with_strings: bool) -> str:
    """The scan text of ``model_dump(mode="json", exclude_none=True)`` output."""

def raw_json(raw: dict[str, Any]) -> str | None:
    """``json.dumps(raw, ensure_ascii=False, sort_keys=True)`` of plain JSON data, ``None``
    for anything else (then call ``json.dumps`` with ``default=str``)."""

@final
class PatternSearch:
    """Which of some patterns occur in a text, ignoring case as ``str.lower()`` does."""

    def __new__(cls, patterns: Sequence[str]) -> PatternSearch: ...
    @property
    def strings_only(self) -> bool:
        """Whether every pattern occurs, wherever it does, within one string of a scan text
        (never in or across its JSON syntax, numbers or literals), so that ``violations``
        searches a step's strings instead of its written text."""
    def occurring(self, text: str) -> list[int]:
        """Indexes of the patterns that occur in ``text``, ascending."""
    def violations(
        self,
        steps: Iterable[Step],
        fields: ScanFields,
        int_max_str_digits: int,
        toolish: Container[StepKind],
        fallback: Callable[[Step], str],
    ) -> list[tuple[int, str | None, int]]:
        """``(step.index, step.tool, pattern index)`` of every pattern occurring in the scan
        text of a scanned step (``raw`` set, or ``kind`` in ``toolish``), in step order: the
        text read by ``fields`` or written from ``raw`` into one reused buffer and searched
        there (no ``str`` made of an ASCII text), else ``fallback(step)``."""

# ---- the JSON report (otel_oracles.report) --------------------------------------------------

def json_indented(value: Any, indent: int, level: int = 0) -> str | None:
    """``json.dumps(value, indent=indent, ensure_ascii=False)`` of plain data, every line
    after the first indented ``level`` steps more, or ``None`` for anything left to
    ``json.dumps`` (other types, non-``str`` keys, lone surrogates, integers beyond 64 bits,
    deep nesting)."""

def report_text(value: Any, level: int = 0) -> bytes:
    """The JSON report's text of ``value`` (``native/python/src/report_json.rs``):
    ``json.dumps(value, indent=2, ensure_ascii=False)``, every line after the first indented
    ``2 * level`` more spaces, ``json_safe``, as UTF-8; raises what ``json.dumps`` raises
    (``TypeError``, ``ValueError`` for a cycle) and ``UnicodeEncodeError`` for a lone
    surrogate."""

def escape_surrogates(text: str) -> str:
    """``text`` itself when it has a UTF-8 encoding, else a new ``str`` with each surrogate
    written as its escape (``\\udcff``, ``encode("utf-8", "backslashreplace")``'s spelling):
    the core's one escaper (``json_text::escape_surrogates``), which the reports and the
    emitter apply as they write, for the in-process reader's SDK records."""

@final
class VerdictJson:
    """One verdict's text in the JSON report, written from the models' field values
    (``native/python/src/report_json.rs``): ``json.dumps`` of the verdict's
    ``model_dump(mode="json")`` (each result's message and details passed through the privacy
    filter ``shown`` as they are written)
    plus its derived ``verdict``, as ``report_text`` writes it at ``level``. A model held
    otherwise than validation leaves it is read through its ``model_dump``; details or params
    that are not plain JSON data through ``dump``. Raises as ``report_text`` does, and what
    the filter raises."""

    def __new__(
        cls,
        verdict_fields: Sequence[str],
        result_fields: Sequence[str],
        counts_fields: Sequence[str],
        level: int,
        dump: Callable[[Any], Any],
    ) -> VerdictJson: ...
    def write(self, verdict: Any, shown: ShownFilter | None = None) -> bytes: ...

@final
class VerdictMarkup:
    """One verdict's text in the JUnit and HTML reports, written from the models' field
    values (``native/python/src/report_markup.rs``). ``junit`` is its testcase (line break
    and indent first) with its suite's label (``id@version``), its failures and errors
    (0 or 1 each) and its duration in nanoseconds; ``html`` its summary row and its section
    of the page, the ``index``-th verdict. Each message (and the page's details) is what the
    privacy filter ``shown`` shows of it when given. Every text is written as ``markup_text``
    writes it; a details value that is neither a ``str``, an exact ``int`` nor plain JSON
    data is written as ``detail_json`` gives it, each cut at ``value_limit`` characters,
    the list once ``details_limit`` were shown; ``marks`` are the outcomes' markers."""

    def __new__(
        cls,
        verdict_fields: Sequence[str],
        result_fields: Sequence[str],
        counts_fields: Sequence[str],
        marks: list[tuple[str, str]],
        detail_json: Callable[[Any], str],
        value_limit: int,
        details_limit: int,
    ) -> VerdictMarkup: ...
    def junit(
        self, verdict: Any, shown: ShownFilter | None = None
    ) -> tuple[str, bytes, int, int, int]: ...
    def html(
        self, verdict: Any, index: int, shown: ShownFilter | None = None
    ) -> tuple[bytes, bytes]: ...

@final
class VerdictReports:
    """Every report a run asks for of one verdict in one call
    (``native/python/src/report_markup.rs``): the verdict's, its counts' and its results'
    field values read once, and each result's shown message rendered once, for all of
    them. ``write`` gives its JSON text (``json``'s ``write``, when ``json`` is given), its
    testcase (``markup``'s ``junit``, with ``junit``) and its page row and section
    (``markup``'s ``html``, the ``index``-th verdict, with ``html``), ``None`` for each
    report not asked for; the same bytes as each writer's alone. ``json`` and ``markup``
    must be built for the same models. Its fourth value is the verdict's ``verdict``
    (``pass``/``fail``/``error``) as the JSON text holds it, ``None`` without ``json``:
    what the run's tally counts by, not asking the property again."""

    def __new__(
        cls,
        json: VerdictJson | None,
        markup: VerdictMarkup | None,
        junit: bool,
        html: bool,
    ) -> VerdictReports: ...
    def write(
        self, verdict: Any, index: int, shown: ShownFilter | None = None
    ) -> tuple[
        bytes | None,
        tuple[str, bytes, int, int, int] | None,
        tuple[bytes, bytes] | None,
        str | None,
    ]: ...

def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (``native/python/src/report_markup.rs``), for a table cell or
    a message line: ``" ".join(text.split())`` cut to ``limit`` characters (at least 1),
    its last one an ellipsis when cut. The one implementation: the table, the JUnit input
    errors and the testcases' failure messages."""

def markup_text(text: str, how: Literal["html", "text", "attribute", "terminal"]) -> str:
    """``text`` as the reports write it (``native/python/src/report_markup.rs``): what
    ``terminal_safe`` escapes (C0 controls but tab and newline, DEL, C1, the bidirectional
    overrides and isolates, surrogates) written as its Python escape (``terminal``: only
    that, the one implementation of ``report.terminal_safe``), and ``html`` as
    ``html.escape`` then escapes, ``text`` as XML character data (``&``, ``<``, ``>``; and
    U+FFFE, U+FFFF as escapes), ``attribute`` as an XML attribute value (those, ``"``,
    newline and tab as character references)."""

@final
class ShownFilter:
    """The report's privacy filter, its one implementation (``emit.SHOWN_FILTER``;
    ``native/python/src/scrub.rs``). ``scrub(details)`` is a new dict of the numbers and
    booleans of ``details`` under keys ``safe_identifier`` gives back, and, under
    ``identifier_keys``, strings, lists' first ``max_items`` items and dicts' first
    ``max_items`` name -> int pairs, each string as ``safe_identifier(s) or redacted``;
    everything else is dropped. ``explain(result)`` is the result's template explanation:
    its outcome's template (only ``{name}`` and ``{budget}`` in braces) with the check's name
    (itself when ``safe_identifier`` gives it back, else capped at ``max_value_chars``, and
    its type or ``check`` when ``looks_secret`` says so), ``error.type`` and the message of
    an error of ``shown_error_types``, the first steps, and unless it is ``pass_outcome``
    the details ``key=value`` sorted by key; capped at ``max_chars``. ``VerdictJson.write``
    applies it as it writes. Exact ``str``s ``safe_identifier`` gave back are remembered (up
    to ``max_known``) and not asked again. Raises what ``safe_identifier`` raises."""

    def __new__(
        cls,
        identifier_keys: frozenset[str],
        safe_identifier: Callable[[Any], str | None],
        looks_secret: Callable[[str], bool],
        redacted: str,
        max_items: int,
        max_known: int,
        templates: Sequence[tuple[Any, str]],
        pass_outcome: Any,
        error_outcome: Any,
        shown_error_types: frozenset[str],
        max_chars: int,
        max_value_chars: int,
    ) -> ShownFilter: ...
    def scrub(self, details: dict[str, Any]) -> dict[str, Any]: ...
    def explain(self, result: Any) -> str: ...
    def shown_message(self, result: Any) -> str:
        """``explain(result)`` without the check's name in front (``name: ``), as reports
        show it; a pass without steps answered from the kept heads, not rendered."""

# ---- evidence (otel_oracles.grade.evidence) --------------------------------------------------

def is_placeholder(value: Any) -> bool:
    """A redaction placeholder or an empty string, or a non-empty dict/list of only such
    values (``native/core/src/placeholder.rs``); raises ``RecursionError`` past 1,000
    levels of nesting."""

def message_text(message: Any) -> str | None:
    """The text a message carries, several texts joined by a newline, or ``None``
    (``native/python/src/evidence/messages.rs``)."""

def message_tool_names(messages: Any) -> list[str]:
    """Tool names requested inside messages (GenAI ``tool_call`` parts, OpenAI
    ``tool_calls``)."""

def messages_empty(messages: Any) -> bool:
    """Whether ``messages`` is a list whose messages carry no text and request no tool."""

def unnamed_request(messages: Any) -> bool:
    """Whether the messages hold a ``tool_call`` part whose name was not recorded."""

@final
class EvidencePlan:
    """The core's evidence names of an evidence-name tuple, each with its probe, made once
    per tuple (``evidence.Plan``) and asked of each trajectory in one call
    (``native/python/src/evidence/probes.rs``)."""

    outcomes: bool
    """Whether ``tool_outcomes`` is among the names (``lacking`` then needs ``answering``)."""

    def __new__(
        cls,
        entries: Sequence[tuple[int, str, str | None]],
        matches: Callable[[str, str, bool], bool],
        file_edit: StepKind,
        /,
    ) -> EvidencePlan: ...
    def lacking(
        self,
        view: StepView,
        steps: Sequence[Step],
        answering: frozenset[int] | None,
        fragmented: bool = False,
        /,
    ) -> tuple[tuple[int, int, list[Step] | None], ...]:
        """``(position, read, gaps)`` of each name the trajectory lacks, by position: the
        steps its probe read and those lacking what it asks for (``None`` for ``steps``,
        ``agents``, and ``tokens`` without model calls); ``()`` when none lacks.
        ``entries``' probes: ``arguments``, ``result``, ``outcomes``, ``inputs``,
        ``tokens``, ``file_edits``, ``timing``, ``steps``, ``agents``, ``names`` (else
        ``ValueError``). ``names`` lacks with the nameless calls, else (``read`` 0, no
        gaps) when ``fragmented`` or when no tool span nor an AgentBench trajectory lists
        every call. Each walk's answer is kept in ``view`` for the next plan: the lists are
        shared, read them only."""

@final
class InMemoryReplay:
    """A workspace's own files written in memory, from which each trajectory's file edits
    are replayed on the usual path of ``replay._InMemory.write`` (``replay.WorkspaceReplay``,
    ``native/python/src/replay.rs``)."""

    def __new__(
        cls,
        files: dict[str, bytes],
        dirs: Iterable[str],
        limit: int,
        file_edit: StepKind,
        max_parts: int,
        name_max: int,
        path_max: int,
        /,
    ) -> InMemoryReplay: ...
    def replay(self, steps: Sequence[Step], /) -> dict[str, bytes] | None:
        """The files after ``steps``' file edits (a new dict), or ``None`` at the first edit
        off the usual path (a path not in normal form or past the bounds, text not
        encodable as UTF-8, a file where a directory is needed or the reverse, the count
        past ``limit``): the Python replay then decides the whole trajectory."""

@final
class StepView:
    """A trajectory's steps sorted by kind, and the fields the per-trajectory facts read,
    in one pass (``native/python/src/evidence/view.rs``): ``Evidence.groups``, made by
    ``evidence.group_steps``. The groups are read-only members."""

    def __new__(
        cls,
        steps: Sequence[Step],
        toolish: frozenset[StepKind],
        generation: StepKind,
        agent: StepKind,
        handoff: StepKind,
        other: StepKind,
    ) -> StepView: ...
    @property
    def calls(self) -> tuple[Step, ...]: ...
    @property
    def generations(self) -> tuple[Step, ...]: ...
    @property
    def agents(self) -> tuple[Step, ...]: ...
    @property
    def handoffs(self) -> tuple[Step, ...]: ...
    @property
    def nameless(self) -> tuple[Step, ...]: ...
    @property
    def tool_spans(self) -> bool: ...
    @property
    def all_raw(self) -> bool: ...
    def last_generation(self) -> Step | None:
        """The model call that ended last among those no later call started during."""
    def leaf_generations(self) -> list[Step]:
        """The model calls containing no other in time, wrappers left out
        (``trace_budget.leaf_generations``)."""
    def run_error_step(self, last: Step | None, /) -> Step | None:
        """The step whose error ended the run (``last``, or the run's agent span), or ``None``."""
    def last_run_agents(self) -> list[Step]:
        """The agent steps of the run that ended last, outermost first."""
    def unread_work(self, last: Step, answering: frozenset[int], /) -> list[Step]:
        """The calls ``Evidence.stopped_short`` finds left unread after ``last``."""
    def final_answer_calls(
        self,
        names: tuple[str, ...],
        first_match: Callable[[str | None, tuple[str, ...], bool], str | None],
        /,
    ) -> list[Step]:
        """The final-answer calls (``evidence.final_answer_calls``), in answer order; the
        tools ``names`` names matched by the core's matcher kept per tuple, ``first_match``
        asked for what it leaves to Python."""
    def final_output(self, cut: dict[str, str], /) -> tuple[str, Step | None, Any]:
        """``(found, step, value)``: the final answer once no final-answer call delivered it
        (``text``, ``structured``) or the fact that says it is missing (``error``, ``cut``,
        ``thoughts``, ``none``, ``absent``, ``empty``) (``evidence._final_output_of``)."""
    def fragment(
        self,
        root_span_id: str | None,
        asks_tools: frozenset[str],
        history_ids: Callable[[Any], tuple[list[str], list[str]]],
        /,
    ) -> tuple[str, Step | None, Any] | None:
        """``(found, step, value)``: why the trace holds only part of a run (``outside``,
        ``unanswered``, ``unstarted``), or ``None`` (``Evidence.fragment_gap``)."""

def tool_repeats(
    calls: Sequence[Step],
    generations: Sequence[Step],
    after: Container[int] | None = None,
    /,
) -> list[tuple[Step, Step]]:
    """(call, the previous call of its tool in its agent) for each of ``calls`` (sorted by
    index), without the pairs the model asked for together; with ``after``, only the pairs
    whose earlier call's ``id()`` is in it (``grade.oracles.trace_tools._repeats``)."""

def ground_ids(
    ids: list[str],
    source: Callable[[int, bool], str | Literal[False] | None],
    continues_id: Callable[[str], bool],
    searched: bool,
    budget: int,
    /,
) -> tuple[list[int | None], int] | None:
    """For each cited id, the index of the first source holding it as a whole id (``None``:
    none), and what is left of ``budget`` scanned characters; ``None`` past the budget.
    ``source(i, searched)``: the ``i``-th source's text, ``None`` when not captured,
    ``False`` past the last (``grade.oracles.trace_answers._ground``); ``continues_id``
    answers for characters beyond ASCII."""

def cited_ids(pattern: str, text: str, /) -> list[str] | None:
    """The ids ``text`` cites under ``pattern`` in first-seen order, each once, when the core
    answers it: ``pattern`` a literal and a digit run (``doc-\\d+``, its whole or its run in a
    group) and ``text`` within 100,000 characters, no lone surrogate, no character beyond
    ASCII where a ``\\d`` run could take it; else ``None`` (the regex engine answers:
    ``grade.oracles.trace_answers._cited_ids``)."""

MAX_LISTED_STEPS: int

def where(step: Step) -> str:
    """``step 3 (search_docs, span ab12...)``: how messages point at a step
    (``native/python/src/evidence/naming.rs``)."""

def list_steps(steps: Sequence[Step]) -> str:
    """The first ``MAX_LISTED_STEPS`` steps as ``where`` names them, then `` and N more``."""

def absent(step: Step, field: str) -> bool:
    """Whether ``field`` of ``step`` was not captured (redacted, ``None`` or a placeholder)."""

def calls_of(
    evidence: Any, names: tuple[str, ...], unknown_namespace_matches: bool = False, /
) -> tuple[Step, ...]:
    """``Evidence.calls_of``: the tool calls of ``evidence`` (an ``Evidence``) one of
    ``names`` names (every call for none), kept in its ``memo``
    (``native/python/src/evidence.rs``)."""

def lacking_of(evidence: Any, plan: Any, /) -> tuple[tuple[str, str], ...]:
    """``Evidence.lacking_of``: ``(name, message)`` for each evidence name of ``plan`` (an
    ``evidence.Plan``) that ``evidence`` (an ``Evidence``) lacks, kept in its ``memo``
    under the plan (``native/python/src/evidence.rs``)."""

def answer_calls(evidence: Any, /) -> list[Step]:
    """``Evidence._answer_calls``: the trajectory's final-answer calls, in answer order,
    kept in ``evidence``'s ``memo`` (``native/python/src/evidence.rs``)."""

def answering(evidence: Any, /) -> frozenset[int]:
    """``Evidence.answering``: ``id()`` of each final-answer call, kept in the ``memo``."""

def last_generation(evidence: Any, /) -> Step | None:
    """``Evidence.last_generation``: the run's last model call, kept in the ``memo``."""

def fragment_gap(evidence: Any, /) -> str | None:
    """``Evidence.fragment_gap``: why the trace holds only part of its run (worded by
    ``evidence._fragment_words``), or ``None``, kept in the ``memo``."""

def stopped_short(evidence: Any, /) -> str | None:
    """``Evidence.stopped_short``: why the run's framework ended it (worded by
    ``evidence._stopped_words``), or ``None``, kept in the ``memo``."""

def known_clear(evidence: Any, plan: Any, incomplete: bool, /) -> tuple[bool, bool]:
    """``evaluator._known_clear``: ``(clear, gapless)`` of a contract's evidence ``plan``
    on ``evidence``'s trajectory (``incomplete``: graded on timeout), each ``False`` when
    working it out raised (``KeyboardInterrupt`` excepted)."""

def tool_sequence_diff(
    mode: str,
    items: tuple[tuple[Any, tuple[str, ...], bool], ...],
    tools: tuple[str, ...],
    calls: Sequence[Step],
    first_match: Callable[[str | None, tuple[str, ...]], str | None],
    why_of: Callable[[Any, Step], Callable[[], str] | None],
    assign: Callable[[list[list[int]]], tuple[list[int], list[int]]],
    /,
) -> tuple[bool, dict[str, int], list[str | None], list[dict[str, Any]], list[Step], str]:
    """``tool_sequence``'s diff of ``items`` (``(item, tool patterns, constrains
    arguments)``, tools ``tools``) against ``calls`` in ``mode``: ``(holds, counts per op,
    the calls' tools, the diff's entries as details, the steps the finding points at, the
    message's tail)`` (``grade.oracles.trace_tools.ToolSequence``). ``first_match`` names
    an item's tool in a recorded name, ``why_of`` is ``args_mismatch_why``, ``assign`` the
    unordered modes' optimal assignment."""

def repeated_args_candidates(
    evidence: Any,
    calls: Sequence[Step],
    threshold: int,
    meta: frozenset[str],
    plain: tuple[type, ...],
) -> list[Step]:
    """The calls that may share normalized arguments with ``threshold - 1`` others of their
    tool, each call's screen (a hash of its normalized top-level strings, their characters
    below ``!`` left out) kept in the step view of ``evidence`` (an ``Evidence``), by the
    call's place among the trajectory's calls
    (``grade.oracles.trace_common.repeated_args_candidates``)."""

# ---- the evaluator (otel_oracles.grade.evaluator) ---------------------------------------------

_Model = TypeVar("_Model", bound=BaseModel)

def fill_model(model: type[_Model], values: dict[str, Any], fields: Iterable[str]) -> _Model:
    """An instance of ``model`` holding ``values`` as validation leaves them, unvalidated,
    its fields set ``fields``' items (``model.result._filled``; ``native/python/src/checks.rs``)."""

@final
class CheckHead:
    """What the evaluator's loop reads of a compiled check for each result, made once
    (``grade.compiled.CompiledCheck.head``; ``native/python/src/checks.rs``)."""

    def __new__(
        cls,
        oracle_type: Any,
        name: Any,
        layer: Any,
        params: Any,
        budget: Any,
        why: Any,
        oracle: Any,
        setup_error: BaseException | None,
        foreign: bool,
        /,
    ) -> CheckHead: ...
    @property
    def oracle_type(self) -> Any: ...
    @property
    def name(self) -> Any: ...
    @property
    def layer(self) -> Any: ...
    @property
    def params(self) -> Any: ...
    @property
    def budget(self) -> Any: ...
    @property
    def why(self) -> Any: ...

_Finding = TypeVar("_Finding")

@final
class CheckPlans(Generic[_Finding]):
    """How the built-in checks make their ``native_plan`` (``grade.oracles.trace_common.PLANS``;
    ``native/python/src/check_plans.rs``): ``finding`` the check's ``Finding`` class,
    ``screens`` what ``repeated_args_candidates``' screens read (``RAW_STEP_META``, the plain
    value types), the helper a call's normalized arguments are asked through, and
    ``failures`` what judging a call's failure
    reads (``failures.rs``: the error pattern's search in a result's text, ``DENIED``,
    ``DEFAULT_ERROR_PATTERN``); a failure lists its steps as ``evidence.list_steps`` does,
    calling the core's own (``evidence/naming.rs``)."""

    def __new__(
        cls,
        finding: type[_Finding],
        screens: tuple[frozenset[str], Sequence[type]],
        step_normalized_args: Callable[[Any, Step], str],
        failures: tuple[Callable[[Any, Step, str], bool], str, str],
    ) -> CheckPlans[_Finding]: ...
    def call_failures(self, evidence: Any, error_pattern: str | None) -> dict[int, str | None]:
        """``id()`` of each tool call of ``evidence``'s trajectory -> why it failed, or
        ``None``, memoized in it (``trace_common.call_failures``)."""
    def failed_calls(self, evidence: Any, error_pattern: str | None) -> dict[int, str]:
        """The failed entries of ``call_failures``, memoized (``trace_common.failed_calls``)."""
    def call_failure(self, evidence: Any, step: Step, error_pattern: str | None) -> str | None:
        """Why ``step`` failed: its entry of ``call_failures``, else judged on its own
        (``trace_common.call_failure``)."""
    def tool_not_called(self, tools: tuple[str, ...], max: int) -> CheckPlan[_Finding]: ...
    def tool_errors(
        self, error_pattern: str | None, tools: tuple[str, ...], max: int
    ) -> CheckPlan[_Finding]: ...
    def tool_retries(
        self,
        error_pattern: str | None,
        tools: tuple[str, ...],
        max: int,
        max_per_tool: int | None,
    ) -> CheckPlan[_Finding]: ...
    def find_retries(
        self, evidence: Any, tools: tuple[str, ...], error_pattern: str | None
    ) -> tuple[tuple[Step, Step, str], ...]:
        """``(retry, failed call it repeats, why)`` of ``tools``' calls failed under
        ``error_pattern`` on ``evidence`` (an ``Evidence``), memoized in it
        (``trace_tools.find_retries``)."""
    def loop_detected(
        self, tools: tuple[str, ...], threshold: int, max: int
    ) -> CheckPlan[_Finding]: ...
    def max_tool_calls(self, tools: tuple[str, ...], max: int) -> CheckPlan[_Finding]: ...
    def latency(self, max_ms: float, max: int) -> CheckPlan[_Finding]: ...
    def max_steps(
        self,
        kinds: frozenset[StepKind],
        generation: StepKind,
        max: int,
        toolish: frozenset[StepKind],
        agent: StepKind,
    ) -> CheckPlan[_Finding]: ...
    def tokens(
        self,
        max_input_tokens: int | None,
        max_output_tokens: int | None,
        max_total_tokens: int | None,
    ) -> CheckPlan[_Finding]: ...
    def tool_sequence(
        self,
        mode: str,
        items: tuple[tuple[Any, tuple[str, ...], bool], ...],
        named: tuple[str, ...],
        ignore: tuple[str, ...],
        first_match: Callable[[str | None, tuple[str, ...]], str | None],
        why_of: Callable[[Any, Step], Callable[[], str] | None],
        assign: Callable[[list[list[int]]], tuple[list[int], list[int]]],
    ) -> CheckPlan[_Finding]: ...
    def tool_called(
        self,
        params: Any,
        constrains: bool,
        helpers: tuple[Callable[[Any, Step], str | None], Callable[[Step], bool], str],
    ) -> CheckPlan[_Finding]: ...
    def handoff(
        self,
        required: Sequence[Any],
        forbidden: Sequence[Any],
        helpers: tuple[Callable[[str, str], bool], Callable[[Any], Any]],
    ) -> CheckPlan[_Finding]: ...
    def citations_grounded(
        self,
        pattern: str,
        sources: list[str],
        budget: int,
        helpers: tuple[
            Callable[[str, str], list[str]],
            Callable[[Step, Sequence[str]], str | None],
            Callable[[Any], str],
            Callable[[Any, Step], str | None],
            Callable[[Step], list[Any]],
            Callable[[Any], bool],
            str,
            Callable[[str], bool],
            type[Exception],
        ],
    ) -> CheckPlan[_Finding]: ...
    def citation_required(
        self,
        params: Any,
        helpers: tuple[
            Callable[[str, str], list[str]],
            Callable[[Any, Any], Any],
        ],
    ) -> CheckPlan[_Finding]: ...
    def degraded_answer(
        self,
        dependencies: tuple[str, ...],
        degraded_attribute: str | None,
        error_pattern: str | None,
        empty_pattern: str | None,
        must_disclose: str | None,
        uncertainty_pattern: str,
        helpers: tuple[
            Callable[[str | None, tuple[str, ...], bool], str | None],
            Callable[[str, str], Any],
            Callable[[Any, str], tuple[bool, Any, Step | None]],
            Callable[[Any], bool],
            Callable[[Any], bool],
            Callable[[Any, Step], str],
        ],
    ) -> CheckPlan[_Finding]: ...
    def evidence(self, message: str) -> CheckPlan[_Finding]: ...
    def no_network(
        self,
        search: PatternSearch,
        scan: tuple[ScanFields, Container[StepKind], Callable[[Step], str], Callable[[], int]],
        outbound: Callable[[Any], Sequence[Any]],
    ) -> CheckPlan[_Finding]: ...
    def file_not_modified(
        self, path: str, target: str, name: str, file_edit: StepKind
    ) -> CheckPlan[_Finding]: ...
    def assertion_exists(
        self,
        path: str,
        target: str,
        name: str,
        file_edit: StepKind,
        command_keys: tuple[str, ...],
    ) -> CheckPlan[_Finding]: ...

@final
class CheckPlan(Generic[_Finding]):
    """One built-in check's usual answer, computed by the core (``OracleCheck.native_plan``)."""

    def finding(self, ctx: Any) -> _Finding | None:
        """The check's finding on ``ctx`` when it is the usual answer, else ``None``."""
    def within(self, ctx: Any, count: int) -> _Finding:
        """The finding with nothing over the check's bound, ``count`` calls counted."""
    def over(self, calls: tuple[Step, ...]) -> _Finding:
        """``max_tool_calls``' failure: ``calls`` (every one counted) over its ``max``."""

@final
class ModelFill:
    """How the evaluator builds a pydantic model's instances of values in field order:
    filled unvalidated when vouched for and ``trusted``, else validated
    (``model.result.RESULTS``; ``native/python/src/checks.rs``)."""

    def __new__(
        cls,
        model: type[BaseModel],
        trusted: bool,
        validate: Callable[[dict[str, Any]], Any] | None = None,
    ) -> ModelFill: ...

@final
class CheckRunner:
    """The evaluator's loop over a contract's checks (``evaluator.run_checks``;
    ``native/python/src/checks.rs``)."""

    def __new__(
        cls,
        results: ModelFill,
        outcomes: tuple[Any, Any, Any, Any, Any],
        fails_with: Callable[[BaseException], tuple[Any, Any, dict[str, object]]],
        unwritable: Callable[[BaseException], tuple[Any, Any, dict[str, object]]],
        gapped: Callable[[Any, Any], Any],
        refuse_commands: Callable[[Any], None],
        fail_closed: Callable[[Any, Any, Any], Any],
        finding: type,
        compiled_check: type,
        verdicts: Verdicts,
        complete: Callable[[Any, Any], list[Any]],
        clock: Callable[[], int],
    ) -> CheckRunner: ...
    def run(
        self, checks: Sequence[Any], ctx: Any, clear: bool, gapless: bool
    ) -> tuple[list[Any], Tally]:
        """One result per check, in order (``evaluator.run_checks``), and their tally."""
    def verdict(
        self,
        compiled: Any,
        trajectory: Any,
        results: list[Any],
        start: int,
        tally: Tally | None = None,
    ) -> Any:
        """The contract's verdict of ``results`` (``evaluator.grade``'s epilogue), going on
        from ``run``'s ``tally`` of the results that begin ``results``."""

@final
class Tally:
    """``CheckRunner.run``'s count of the results it made, which ``verdict`` goes on from
    (``native/python/src/checks.rs``)."""

@final
class Verdicts:
    """The verdict's epilogue: the results' tally and the verdict built
    (``model.result.VERDICTS``; ``native/python/src/checks.rs``)."""

    def __new__(
        cls,
        verdict: ModelFill,
        counts: ModelFill,
        counted: dict[str, str],
        pass_: Any,
        result: type[BaseModel],
        /,
    ) -> Verdicts: ...
    def tally(self, results: Sequence[Any]) -> tuple[bool, Any]:
        """``(passed, counts)`` of ``results`` (``model.result.verdict_tally``)."""
    def trusted(
        self,
        contract_id: Any,
        contract_version: Any,
        contract_hash: Any,
        contract_name: Any,
        subject: Any,
        trace_id: Any,
        root_span_id: Any,
        root_name: Any,
        agent_name: Any,
        passed: Any,
        results: Any,
        counts: Any,
        duration_ns: Any,
        /,
    ) -> Any:
        """A verdict of values the caller vouches for, every field in declaration order
        (what ``CheckRunner.verdict`` builds each verdict with)."""

def words_search(pattern: object, text: object, /) -> tuple[int, int] | tuple[()] | None:
    """``safe_regex.search(pattern, text)``'s span as the core finds it: ``(start, end)``,
    ``()`` for no match; ``None`` when the core does not answer (``pattern`` not a ``str`` of
    words between word boundaries, ``otel_oracles_core::words::WordsPattern``; ``text`` not an
    ASCII ``str`` within 100,000 characters: the engine answers). ``degraded_answer``'s plan
    asks it for ``must_disclose`` and ``uncertainty_pattern``."""

MAX_TOOL_NAME: int

KEPT_TUPLES: int
"""The most contract tool-name tuples whose matcher the core keeps for the process; a tuple
past them gets a matcher for each ask."""

def tool_first_match(
    recorded: object, patterns: tuple[str, ...], unknown_namespace_matches: bool = False, /
) -> tuple[int] | tuple[()] | None:
    """``model.tool_name.first_match(recorded, patterns, unknown_namespace_matches)`` as the
    core answers it (``otel_oracles_core::tool_glob``, what the plans ask instead of a Python
    call): ``(index,)`` of the first pattern naming ``recorded``, ``()`` for none; ``None``
    when Python's answers (a ``[`` in a pattern, a name that is no exact ``str`` of UTF-8
    text, longer than ``MAX_TOOL_NAME`` bytes or ending in a line break)."""
