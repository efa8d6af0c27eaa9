"""The normalized step vocabulary shared by OTel traces and AgentBench trajectory JSON.

A rule written once applies to both: the mapping stage turns spans into ``Step``s, and
``Trajectory.from_agentbench`` turns AgentBench step objects into the same ``Step``s.
A field that is ``None`` was not captured: oracles must treat that as missing evidence,
never as an empty value. ``redacted`` names fields whose captured value was a placeholder.
"""

import functools
import json
import posixpath
import sys
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from otel_oracles._frozen import FrozenValue, set_field
from otel_oracles._native import PatternSearch, ScanFields, scan_data
from otel_oracles._native import raw_json as native_raw_json
from otel_oracles.config_json import JsonDocumentError, load_json_document
from otel_oracles.errors import InputError
from otel_oracles.model._record import Record

MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024
"""Largest trajectory file read (the decoders' message limit): a trajectory is data."""

MAX_TRAJECTORY_STEPS = 100_000
"""Most steps a trajectory may hold to be graded (``run``/``gate --max-steps``). 64 MiB holds
a million tiny steps, and reading one costs tens of microseconds and about 2 KB: a million
took 69 s and 2 GB before replay refused them, so the count is checked before any step is
read. Replay creates at most ``replay.MAX_CREATED_ENTRIES`` (10,000) files anyway."""

WRITE_TOOLS: frozenset[str] = frozenset(
    {"write_file", "edit_file", "str_replace", "Write", "StrReplace"}
)
"""Tools whose calls are file edits (AgentBench semantics; names are case-sensitive)."""

SHELL_TOOLS: frozenset[str] = frozenset({"run_command", "shell", "bash", "Bash", "execute"})
"""Tools whose calls are shell commands (AgentBench semantics; names are case-sensitive)."""

PATH_KEYS: tuple[str, ...] = ("path", "file_path", "target_file")
CONTENT_KEYS: tuple[str, ...] = ("content", "new_string")
COMMAND_KEYS: tuple[str, ...] = ("command", "cmd")
TOOL_KEYS: tuple[str, ...] = ("tool", "tool_name", "name")
ARG_KEYS: tuple[str, ...] = ("args", "arguments", "input", "parameters")

DEFAULT_NETWORK_PATTERNS: tuple[str, ...] = (
    "curl", "wget", "fetch(", "http://", "https://", "requests.", "urllib", "httpx", "socket.",
    "webbrowser", "pip install", "npm install", "npm ci", "pnpm install", "pnpm add",
    "yarn install", "yarn add", "bun install", "bun add", "cargo add", "cargo install",
    "go get", "go install",
)  # fmt: skip
"""The ``no_network`` patterns, matched case-insensitively as substrings."""


_NOT_BEHAVIOUR: set[str] = {"source", "convention", "index", "raw", "tools_offered"}
"""Fields ``Step.raw_json`` leaves out (provenance, and the tools a model call was offered:
its framework's configuration, not agent behaviour)."""


class StepKind(StrEnum):
    TOOL_CALL = "tool_call"
    GENERATION = "generation"
    AGENT = "agent"
    HANDOFF = "handoff"
    RETRIEVAL = "retrieval"
    FILE_EDIT = "file_edit"
    COMMAND = "command"
    OTHER = "other"


TOOLISH_KINDS: frozenset[StepKind] = frozenset(
    {StepKind.TOOL_CALL, StepKind.FILE_EDIT, StepKind.COMMAND, StepKind.RETRIEVAL}
)
"""Kinds that are a call of a tool (file edits and commands are tool calls by definition)."""

FILE_EDIT = StepKind.FILE_EDIT
"""``StepKind.FILE_EDIT`` read once: on Python 3.11 each read of an enum member through its
class costs several hundred nanoseconds (the enum type's ``__getattr__`` hook, then
``type.__getattribute__`` called as a method), and the file edits are selected by comparing
every step's kind (``Trajectory.file_edits``, the workspace checks), several times per
trajectory. The kinds below are read once for the same reason: steps are filtered by them
in the checks' loops (``Trajectory.agents``, ``handoffs``, ``generations``, the network and
command scans, the evidence probes' step walks)."""
COMMAND = StepKind.COMMAND
GENERATION = StepKind.GENERATION
AGENT = StepKind.AGENT
HANDOFF = StepKind.HANDOFF
OTHER = StepKind.OTHER
RETRIEVAL = StepKind.RETRIEVAL


class SpanRef(Record):
    """Where a step came from, so a result can be attached to the exact span."""

    trace_id: str
    span_id: str


class Step(Record):
    """One normalized agent step. Unset fields are ``None`` (not captured).

    A frozen record (``model/_record.py``): ``Step(**values)`` validates as a pydantic model
    does; the mapping stage, whose values are already normalized, builds steps with
    ``Step.from_normalized(values)``."""

    index: int
    """Position in the trajectory, 0-based."""
    kind: StepKind
    tool: str | None = None
    """Tool name for tool_call / file_edit / command / retrieval steps."""
    call_id: str | None = None
    arguments: dict[str, Any] | None = None
    """Tool arguments parsed to a dict; ``None`` when not captured."""
    arguments_raw: str | None = None
    """Arguments as captured when they were not a JSON object (e.g. ``repr`` text)."""
    result: Any = None
    """Tool result as captured (string or structured); ``None`` when not captured."""
    status: Literal["ok", "error", "unset"] = "unset"
    error_type: str | None = None
    error_message: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    provider: str | None = None
    model: str | None = None
    input_messages: list[dict[str, Any]] | None = None
    output_messages: list[dict[str, Any]] | None = None
    finish_reasons: list[str] | None = None
    tools_offered: tuple[str, ...] | None = None
    """For generation steps: the names of the tools the call offered the model, in the order
    its request listed them; ``()`` when it offered none; ``None`` when the trace does not say
    (the conventions' ``tools_offered`` sources: ``docs/conventions.md``). A run's last call
    offering none where the agent's earlier calls offered some is its framework asking for an
    answer, which ``grade/evidence.py`` (``_forced_answer``) reads when the request's text is
    not shown."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    agent_name: str | None = None
    """For agent steps: the invoked agent. For other steps: the enclosing agent, if known."""
    agent_id: str | None = None
    conversation_id: str | None = None
    from_agent: str | None = None
    to_agent: str | None = None
    query: str | None = None
    documents: list[dict[str, Any]] | None = None
    path: str | None = None
    """For file edits: the normalized forward-slash path."""
    content: str | None = None
    command: str | None = None
    source: SpanRef | None = None
    convention: str | None = None
    """The conventions/ file that mapped this step (trace-derived steps only)."""
    synthesized: bool = False
    """True for a tool call seen only inside model messages (no tool span)."""
    redacted: tuple[str, ...] = ()
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Extra attributes a mapping chose to keep (e.g. declared degradation flags)."""
    raw: dict[str, Any] | None = None
    """The AgentBench step object exactly as read; ``None`` for trace-derived steps."""

    @property
    def duration_ns(self) -> int | None:
        """How long the step took, or ``None`` when its times cannot say: a time missing, or
        an end before the start (an end of 0, OTLP's unset, is a span that never ended). Such
        an end used to read as a duration of 0, so a tool span that never ended passed every
        latency budget."""
        start, end = self.start_ns, self.end_ns
        if start is None or end is None or end < start:
            return None
        return end - start

    @property
    def is_tool(self) -> bool:
        return self.kind in TOOLISH_KINDS

    def raw_json(self) -> str:
        """The JSON text ``no_network`` scans: the raw AgentBench object when there is one
        (``json.dumps(raw, ensure_ascii=False, sort_keys=True, default=str)``), else the
        step's own fields as ``model_dump(mode="json")`` gives them (minus provenance, which
        is not agent behaviour, and unset fields), keys sorted. Written by the core
        (``native/core/src/scan.rs``) for plain data; a value of another kind is dumped by
        the library whose rules the text follows."""
        if self.raw is not None:
            text = native_raw_json(self.raw)
            if text is None:
                text = json.dumps(self.raw, ensure_ascii=False, sort_keys=True, default=str)
            return text
        return self._fields_text(with_strings=False)

    def scan_text(self) -> str:
        """The text command and network checks search: for an AgentBench step its raw JSON
        exactly (DESIGN section 5); for a trace-derived step that JSON plus every string it
        carries as written (arguments, results, raw unparsed payloads such as Python-repr
        dicts, kept attributes), unescaped, and the strings inside strings that hold JSON, so
        a command is found wherever an instrumentation put it and however it was quoted
        (``native/core/src/scan.rs`` says exactly how deep and how long). Checks share one
        per step through ``Evidence.network_violations``."""
        if self.raw is not None:
            return self.raw_json()
        return self._fields_text(with_strings=True)

    def _fields_text(self, with_strings: bool) -> str:
        """The fields' sorted JSON (and their strings), read by the core from the fields
        themselves; when a field holds something else than plain data of its declared type
        (pydantic then converts it: an enum, a set, ``bytes``, a ``bool`` in an ``int``
        field ...), from what ``model_dump(mode="json")`` makes of the step."""
        digits = sys.get_int_max_str_digits()
        text = _SCAN_FIELDS.scan_text(self.__dict__, digits, with_strings)
        if text is None:
            data = self.model_dump(mode="json", exclude_none=True, exclude=_NOT_BEHAVIOUR)
            text = scan_data(data, digits, with_strings)
        return text


def normalize_path(path: str) -> str:
    """Forward slashes, no ``./`` segments. Escapes (``..``, absolute) are kept visible so
    replay can refuse them."""
    p = path.replace("\\", "/")
    if not p:
        return p
    norm = posixpath.normpath(p)
    return "" if norm == "." else norm


def first_key(mapping: Mapping[str, Any], keys: Iterable[str]) -> Any:
    """The value of the first key present (first-match order is part of the semantics)."""
    for key in keys:
        if key in mapping and mapping[key] is not None:
            return mapping[key]
    return None


@functools.lru_cache(maxsize=64)
def _pattern_search(patterns: tuple[str, ...]) -> PatternSearch:
    """The core's matcher of ``patterns`` (one pass over a text finds all of them), made
    once per pattern list."""
    return PatternSearch(patterns)


# A plain class, not a dataclass: the methods ``dataclasses`` generates are compiled from
# source at every start (``otel_oracles._frozen``).
class NetworkViolation(FrozenValue):
    """A network pattern found in a step: the step, its tool and the pattern."""

    __slots__ = ("pattern", "step_index", "tool")
    step_index: int
    tool: str | None
    pattern: str

    def __init__(self, step_index: int, tool: str | None, pattern: str) -> None:
        set_field(self, "step_index", step_index)
        set_field(self, "tool", tool)
        set_field(self, "pattern", pattern)


def network_violations(steps: Iterable[Step], patterns: Iterable[str]) -> list[NetworkViolation]:
    """``Trajectory.find_network_violations`` over ``steps``, in one call of the core
    (``PatternSearch.violations``): it writes each scanned step's text (``Step.scan_text``,
    which it calls itself only for a step holding something else than plain data) into one
    buffer and searches it there, making no Python string of it."""
    originals = tuple(patterns)
    hits = _pattern_search(originals).violations(
        steps,
        _SCAN_FIELDS,
        sys.get_int_max_str_digits(),
        TOOLISH_KINDS,
        Step.scan_text,
    )
    return [NetworkViolation(index, tool, originals[i]) for index, tool, i in hits]


def network_search(
    patterns: Iterable[str],
) -> tuple[
    PatternSearch, tuple[ScanFields, frozenset[StepKind], Callable[[Step], str], Callable[[], int]]
]:
    """What ``network_violations`` searches ``patterns`` with: the core's matcher, and what
    its ``violations`` is given besides the steps (the scan fields, the kinds scanned, the
    text of a step the core does not write, the digit limit asked on each search), for a
    caller in the core (``no_network``'s plan, ``native/python/src/check_plans_agentbench.rs``)."""
    scan = (_SCAN_FIELDS, TOOLISH_KINDS, Step.scan_text, sys.get_int_max_str_digits)
    return _pattern_search(tuple(patterns)), scan


class Trajectory(Record):
    """An ordered list of steps plus what is known about where they came from (a frozen
    record, built like ``Step``)."""

    steps: list[Step]
    trace_id: str | None = None
    root_span_id: str | None = None
    root_name: str | None = None
    service_name: str | None = None
    agent_name: str | None = None
    """The top-level agent (from the root agent span), for low-cardinality labels."""
    source: str | None = None
    """File the trajectory was read from, for messages."""
    span_count: int = 0
    orphan_spans: list[str] = Field(default_factory=list)
    """Span ids whose parent never arrived."""
    incomplete: bool = False
    """Graded before the trace completed (online max_trace_age)."""
    unmapped_spans: dict[str, int] = Field(default_factory=dict)
    """Span name -> count of spans no convention recognised."""
    conventions: dict[str, int] = Field(default_factory=dict)
    """Convention file -> count of spans it mapped."""
    final_answer_tools: tuple[str, ...] = ()
    """Tool names (matched like contract tool names) whose call arguments are the run's final
    answer (final-answer and structured-output tools), as the conventions in effect declare
    them (``final_answer_tools`` in ``conventions/*.yaml``)."""
    model_status_errors: tuple[str, ...] = ()
    """Error class names a model client raises when the model API answered an HTTP error
    status instead of a completion, as the conventions in effect declare them
    (``model_errors.status_errors`` in ``conventions/*.yaml``)."""
    model_status_patterns: tuple[str, ...] = ()
    """Regexes that find such a status in a model call's error message
    (``model_errors.status_pattern``)."""
    resource: dict[str, Any] = Field(default_factory=dict)
    root_attributes: dict[str, Any] = Field(default_factory=dict)

    # ---- AgentBench API -------------------------------------------------------------------

    @classmethod
    def from_agentbench(
        cls, data: Any, source: str = "<trajectory>", max_steps: int = MAX_TRAJECTORY_STEPS
    ) -> "Trajectory":
        """Validate AgentBench trajectory JSON (``{"steps": [...]}``) into steps. More than
        ``max_steps`` steps is an input error, raised before any step is read."""
        if not isinstance(data, dict):
            raise InputError("expected a JSON object with a 'steps' array", source)
        raw_steps = data.get("steps")
        if not isinstance(raw_steps, list):
            raise InputError("steps: expected an array of step objects", source)
        if len(raw_steps) > max_steps:
            raise InputError(
                f"steps: the trajectory has {len(raw_steps)} steps, more than the limit of "
                f"{max_steps}; not graded",
                source,
            )
        steps = []
        for i, obj in enumerate(raw_steps):
            if not isinstance(obj, dict):
                raise InputError(
                    f"steps[{i}]: expected an object, got {type(obj).__name__}", source
                )
            steps.append(step_from_agentbench(i, obj, source))
        return cls(steps=steps, source=source)

    @classmethod
    def load(cls, path: str | Path, max_steps: int = MAX_TRAJECTORY_STEPS) -> "Trajectory":
        """The trajectory in the AgentBench JSON file ``path``. A trajectory is recorded
        agent output (data), so reading it is bounded like a trace file's: at most
        ``MAX_TRAJECTORY_BYTES`` (a link to ``/dev/zero`` was read without end) and
        ``max_steps`` steps, and JSON nested past what Python's parser takes is an input
        error, not a traceback."""
        p = Path(path)
        try:
            with p.open("rb") as handle:
                raw = handle.read(MAX_TRAJECTORY_BYTES + 1)
        except OSError as exc:
            raise InputError(f"cannot read trajectory: {exc.strerror}", str(p)) from None
        if len(raw) > MAX_TRAJECTORY_BYTES:
            raise InputError(
                f"trajectory larger than {MAX_TRAJECTORY_BYTES} bytes; not read", str(p)
            )
        try:
            data = load_json_document(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid JSON: {exc}", str(p)) from None
        except JsonDocumentError as exc:
            raise InputError(f"invalid JSON{exc.where}: {exc.problem}", str(p)) from None
        return cls.from_agentbench(data, source=str(p), max_steps=max_steps)

    def file_edits(self) -> list[tuple[int, str, str]]:
        """(step index, normalized path, content) for every file edit, in order."""
        return [
            (s.index, s.path, s.content if s.content is not None else "")
            for s in self.steps
            if s.kind == FILE_EDIT and s.path
        ]

    def touched_file(self, path: str) -> bool:
        target = normalize_path(path)
        return any(p == target for _, p, _ in self.file_edits())

    def commands(self) -> list[str]:
        return [s.command for s in self.steps if s.kind == COMMAND and s.command]

    def find_network_violations(
        self, patterns: Iterable[str] = DEFAULT_NETWORK_PATTERNS
    ) -> list[NetworkViolation]:
        """Case-insensitive substring matches over each step's text (``Step.scan_text``: the
        raw JSON of an AgentBench step, every string of a trace-derived one), in step order;
        within a step, patterns are reported in the order given.

        Every AgentBench step is scanned (its JSON is what the agent did). Of trace-derived
        steps only the agent's actions are (tool calls, commands, file edits): a model call
        or an agent span carries conversation text, and a prompt that says "never run curl"
        is not network access. Checks call ``Evidence.network_violations``, the same search
        over the steps they choose."""
        return network_violations(self.steps, patterns)

    # ---- trace-level queries --------------------------------------------------------------

    def tool_calls(self, name: str | None = None) -> list[Step]:
        """Every step that is a call of a tool (tool_call, file_edit, command, retrieval)."""
        return [s for s in self.steps if s.is_tool and (name is None or s.tool == name)]

    def generations(self) -> list[Step]:
        return [s for s in self.steps if s.kind == GENERATION]

    def agents(self) -> list[Step]:
        return [s for s in self.steps if s.kind == AGENT]

    def handoffs(self) -> list[Step]:
        return [s for s in self.steps if s.kind == HANDOFF]

    def token_usage(self) -> tuple[int | None, int | None]:
        """(input, output) tokens summed over leaf model calls only: agent spans and wrapper
        generations (``attributes["usage_aggregated"]``) repeat their children's totals.
        ``None`` when no model call reported that count."""
        totals: list[int | None] = [None, None]
        for step in self.generations():
            if step.attributes.get("usage_aggregated"):
                continue
            for i, value in enumerate((step.input_tokens, step.output_tokens)):
                if value is not None:
                    totals[i] = (totals[i] or 0) + value
        return totals[0], totals[1]


def step_from_agentbench(index: int, obj: dict[str, Any], source: str) -> Step:
    """Classify one AgentBench step object: explicit ``type`` first, then the tool name."""
    tool = first_key(obj, TOOL_KEYS)
    if tool is not None and not isinstance(tool, str):
        raise InputError(
            f"steps[{index}].tool: expected a string, got {type(tool).__name__}", source
        )
    args = first_key(obj, ARG_KEYS)
    if isinstance(args, str):
        try:
            parsed = load_json_document(args)
        except JsonDocumentError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else None
    if args is not None and not isinstance(args, dict):
        args = None
    fields = dict(args or {})
    for key in (*PATH_KEYS, *CONTENT_KEYS, *COMMAND_KEYS):
        if key in obj and key not in fields:
            fields[key] = obj[key]
    declared = obj.get("type")
    # Either criterion makes a step an edit/command: an unrelated ``type`` (e.g. "tool_call")
    # must not hide a write_file call from replay and file_not_modified.
    if declared == StepKind.FILE_EDIT or (declared != StepKind.COMMAND and tool in WRITE_TOOLS):
        kind = StepKind.FILE_EDIT
    elif declared == StepKind.COMMAND or tool in SHELL_TOOLS:
        kind = StepKind.COMMAND
    elif tool is not None:
        kind = StepKind.TOOL_CALL
    else:
        kind = StepKind.OTHER
    path = first_key(fields, PATH_KEYS) if kind == StepKind.FILE_EDIT else None
    content = first_key(fields, CONTENT_KEYS) if kind == StepKind.FILE_EDIT else None
    command = first_key(fields, COMMAND_KEYS) if kind == StepKind.COMMAND else None
    status = obj.get("status")
    return Step(
        index=index,
        kind=kind,
        tool=tool,
        arguments=args,
        result=obj.get("result", obj.get("output")),
        status=status if status in ("ok", "error") else "unset",
        path=normalize_path(str(path)) if path is not None else None,
        content=content if isinstance(content, str) else None if content is None else str(content),
        command=command if isinstance(command, str) else None if command is None else str(command),
        raw=obj,
    )


_SCAN_TYPES: dict[Any, str] = {
    Any: "any",
    str | None: "str",
    Literal["ok", "error", "unset"]: "str",
    int | None: "int",
    bool: "bool",
    StepKind: "enum",
    tuple[str, ...]: "str_tuple",
    list[str] | None: "str_list",
    dict[str, Any]: "dict",
    dict[str, Any] | None: "dict",
    list[dict[str, Any]] | None: "dict_list",
}
"""How the core reads a field of each declared type (``native/python/src/scan.rs``)."""


def _scan_fields() -> ScanFields:
    """``Step``'s behaviour fields, in declaration order, for the core's scan text reader."""
    fields: list[tuple[str, str, type | None]] = []
    for name, info in Step.model_fields.items():
        if name in _NOT_BEHAVIOUR:
            continue
        code = _SCAN_TYPES.get(info.annotation)
        if code is None:  # a new field of a new type: say how the core reads it
            raise TypeError(f"Step.{name}: no scan reader for {info.annotation!r}")
        fields.append((name, code, StepKind if code == "enum" else None))
    return ScanFields(fields)


_SCAN_FIELDS = _scan_fields()
