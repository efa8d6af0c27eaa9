"""The schema of a ``conventions/*.yaml`` mapping file, validated when loaded.

A mapping file says how spans of one convention (or instrumentation) become steps:

- a header (``name``, ``description``, ``covers``, ``priority``) that states what it covers;
- ``rules``: each rule has a ``match`` (conditions on attributes, span name, span kind,
  instrumentation scope, direct children), the ``step`` kind it produces, and ``fields``:
  for every step field an ordered list of ``sources`` tried until one yields a value, so one
  rule reads several convention versions (``gen_ai.provider.name`` then ``gen_ai.system``);
- optional shared vocabulary (redaction placeholders, tool-call finish reasons).

Everything is checked at load time: a typo in a key, a bad regex or a field that steps do not
have fails here, and a parser name that no built-in or installed plug-in registers fails in the
loader (``parser_problems``), each with the file and the key path, never later while mapping.
"""

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from otel_oracles import safe_regex
from otel_oracles.model.defaults import DEFAULT_PLACEHOLDERS, new_dict, new_list

StepName = Literal[
    "tool_call", "generation", "agent", "handoff", "retrieval", "other", "none"
]  # fmt: skip
"""Step kinds a rule may produce; ``none`` = a recognised structural span that is no step
(e.g. a framework's per-turn wrapper), counted in coverage but not graded."""

SPAN_KINDS: dict[str, int] = {
    "unspecified": 0,
    "internal": 1,
    "server": 2,
    "client": 3,
    "producer": 4,
    "consumer": 5,
}

FIELD_NAMES: frozenset[str] = frozenset(
    {
        "tool", "call_id", "arguments", "result", "error_type", "error_message", "provider",
        "model", "input_messages", "output_messages", "finish_reasons", "input_tokens",
        "output_tokens", "agent_name", "agent_id", "conversation_id", "from_agent", "to_agent",
        "query", "documents", "output", "outcome", "structured_output", "tools_offered",
    }
)  # fmt: skip
"""Step fields a rule may fill. ``output`` is an agent's final output (stored as an assistant
message in ``output_messages`` when that field has no value of its own).
``structured_output`` is the object an agent run returned as its structured answer (kept in
the step's ``attributes.structured_output``; an object only): grading reads it as the run's
answer, and a call of an output tool no span ran whose arguments are that object as the
answer's delivery (LangChain's ``create_agent`` tool strategy). ``outcome`` is a
tool's own success/failure attribute (``gen_ai.tool.status``), read through the files'
``tool_outcomes`` vocabulary into the step's status; a value the vocabulary does not
declare makes the outcome unknown, unless the source reads it from inside a payload
(``Source.undeclared``). ``tools_offered`` is the names of the tools a model call offered
the model (``Step.tools_offered``), read by the ``tool_names`` / ``request_tool_names``
parsers; a source whose attribute is written only when tools were offered leaves it unset
for a call that offered none (absence says nothing)."""

DEFAULT_TOOL_CALL_FINISH_REASONS: tuple[str, ...] = (
    "tool_calls", "tool_call", "tool-calls", "tool_use", "function_call", "function_calls",
)  # fmt: skip


class _Strict(BaseModel):
    """The files' models: strict, frozen, and built (their schema and validator made) when
    first used. A warm start reads the compiled set from the conventions cache and validates
    no file, so a ``grade`` builds none of them (~24 M instructions a start); a cold start,
    ``validate``, ``explain`` and ``inspect`` build them on their first file. ``Condition``'s
    ``child``/``parent`` name ``Match``, defined after it: resolved at that first build."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


CHECKED = "checked_when_written"
"""Validation context key (``model_validate_json(..., context={CHECKED: True})``): the data
passed every check of this schema when it was written, so the checks written in Python (a
pattern's syntax, a ``span_name`` source's capture group, one subject per condition, one
origin per source, known fields and kinds, unique rule ids...) are not run again; pydantic
still checks every value's type and refuses unknown keys. Only the conventions cache passes
it (``mapping/_cache.py``): an entry is written only after its file passed every check, its
key names this schema's source, pydantic's and the ``regex`` engine's versions, and it is
read only when its digest matches and the grader's own user owns it and no one else may
write it. Compiling every pattern of the bundled files only to check it was about 12% of a
one-trace ``grade``, and running the other checks again about half of validating the
bundled entries (21 M instructions of a one-trace ``grade``; docs/performance-history.md,
"Start-up: the conventions' checks run once");
the rule table compiles a pattern only when it first searches a text with it."""


def _checked(info: ValidationInfo) -> bool:
    """Whether the data being validated passed this schema's checks when it was written
    (``CHECKED``)."""
    return bool(info.context and info.context.get(CHECKED))


def _check_regex(value: str | None, info: ValidationInfo) -> str | None:
    if _checked(info):
        return value
    if value is not None and (problem := safe_regex.syntax_error(value)) is not None:
        raise ValueError(f"invalid regex {value!r}: {problem}")
    return value


class Condition(_Strict):
    """One test on a span. Exactly one subject (``attr``, ``field``, ``span_name``, ``kind``,
    ``scope``, ``status``, ``child``) per condition; ``attr`` takes one of
    ``equals``/``exists``/``regex``, ``field`` takes ``regex``."""

    attr: str | None = None
    """Attribute key to test."""
    field: str | None = None
    """A step field of the rule (``output_messages``): ``regex`` is searched in its content
    wherever the rule's own sources for that field read it (a span attribute, span events,
    log records attached to the span), the first source that has a value, as raw text
    (structured values as JSON). Content a tracer writes as events instead of attributes
    (another version, another setting) then matches as the attribute does, so a rule that
    recognises a step by its content does not silently stop matching."""
    equals: Any = None
    """Exact value, or a list of accepted values."""
    exists: bool | None = None
    """True: the attribute must be present; false: absent."""
    regex: str | None = None
    """``re.search`` on the attribute's string value."""
    span_name: str | None = None
    """``re.search`` on the span name."""
    kind: list[str] | None = None
    """Accepted span kinds (internal, server, client, producer, consumer, unspecified)."""
    scope: str | None = None
    """``re.search`` on the instrumentation scope name."""
    status: Literal["error", "ok", "unset"] | None = None
    child: "Match | None" = None
    """Holds when at least one direct child span matches this nested match."""
    parent: "Match | None" = None
    """Holds when the span's direct parent (found in the trace by ``parent_span_id``)
    matches this nested match. A root, or a span whose parent is not in the trace, never
    matches (the rule fails closed). The parent is seen alone: its own parent and children
    cannot be tested."""

    _check_regexes = field_validator("regex", "span_name", "scope")(_check_regex)

    @field_validator("kind")
    @classmethod
    def _known_kinds(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is not None and not _checked(info):
            bad = [k for k in value if k.lower() not in SPAN_KINDS]
            if bad:
                raise ValueError(f"unknown span kind(s) {bad}; known: {sorted(SPAN_KINDS)}")
        return value

    @model_validator(mode="after")
    def _one_subject(self, info: ValidationInfo) -> "Condition":
        if _checked(info):
            return self
        subjects = [
            n
            for n in ("attr", "field", "span_name", "kind", "scope", "status", "child", "parent")
            if getattr(self, n) is not None
        ]
        if len(subjects) != 1:
            raise ValueError(
                "a condition needs exactly one of attr, field, span_name, kind, scope, status,"
                f" child, parent (got {subjects or 'none'})"
            )
        tests = [n for n in ("equals", "exists", "regex") if getattr(self, n) is not None]
        if self.field is not None:
            if self.field not in FIELD_NAMES:
                raise ValueError(f"unknown field {self.field!r}; known: {sorted(FIELD_NAMES)}")
            if tests != ["regex"]:
                raise ValueError(f"field {self.field!r} needs regex (and nothing else)")
        elif self.attr is not None and len(tests) != 1:
            raise ValueError(f"attr {self.attr!r} needs exactly one of equals, exists, regex")
        elif self.attr is None and tests:
            raise ValueError(f"{tests[0]} applies to attr and field conditions only")
        if self.child is not None and any(
            c.field is not None for c in (*self.child.all, *self.child.any)
        ):
            # The fields read are the rule's own, from its own span.
            raise ValueError("a child condition cannot test a field: fields are the rule's own")
        if self.child is not None and any(
            c.child is not None for c in (*self.child.all, *self.child.any)
        ):
            # A rule sees a span and its direct children only; a grandchild test would
            # silently never hold, and the rule with it never match.
            raise ValueError(
                "a child condition cannot hold another child condition: a rule sees its "
                "span's direct children only"
            )
        if self.child is not None and any(
            c.parent is not None for c in (*self.child.all, *self.child.any)
        ):
            raise ValueError("a child condition cannot hold a parent condition")
        if self.parent is not None and any(
            c.field is not None or c.child is not None or c.parent is not None
            for c in (*self.parent.all, *self.parent.any)
        ):
            # The parent is seen alone, as a child is: a test of its fields, its children or
            # its own parent would silently never hold.
            raise ValueError(
                "a parent condition tests the parent span alone: no field, child or parent "
                "condition inside it"
            )
        return self


class Match(_Strict):
    """All of ``all`` and at least one of ``any`` (when given) must hold."""

    all: list[Condition] = Field(default_factory=new_list)
    any: list[Condition] = Field(default_factory=new_list)

    @model_validator(mode="after")
    def _not_empty(self, info: ValidationInfo) -> "Match":
        if not self.all and not self.any and not _checked(info):
            raise ValueError("a match needs at least one condition in 'all' or 'any'")
        return self


class Source(_Strict):
    """Where one field value may come from. Exactly one of ``attr``, ``attrs``,
    ``attr_prefix``, ``event``, ``span_name``, ``status_message``, ``child_attr``, ``const``;
    ``event`` may be combined with ``attr`` (that attribute of the event) or ``body``.
    ``parse`` names parsers applied in order, by their registered names (built-ins in
    ``otel_oracles.mapping.parsers``, plug-ins by entry point); the names are checked
    against the registry when the file is loaded (``parser_problems``)."""

    attr: str | None = None
    attrs: list[str] | None = None
    """Several attributes handed to the parser together as a dict (missing keys omitted)."""
    attr_prefix: str | None = None
    """Flattened indexed attributes under this prefix (``llm.input_messages``), handed to the
    parser as a dict of suffix -> value."""
    event: list[str] | None = None
    """Span events or log-based events with these names, in order."""
    body: bool = False
    """With ``event``: the first matching event's body (log-based events)."""
    span_name: str | None = None
    """Regex on the span name; the value is its first group."""
    status_message: bool = False
    child_attr: str | None = None
    """The attribute of the first direct child span that carries it."""
    const: Any = None
    parse: list[str] = Field(default_factory=new_list)
    key: str | None = None
    """After the parsers: the value under this key of the object they produced (the
    ``coworker`` of a delegation tool's JSON arguments); no value when there is none."""
    undeclared: Literal["unknown", "ignored"] | None = None
    """For an ``outcome`` source only: what a value the ``tool_outcomes`` vocabulary does not
    declare means. ``unknown``: the call's outcome is unknown (status ``unset``,
    ``attributes.outcome_unknown``), never a success: a status attribute of the tool's own
    (``gen_ai.tool.status: timeout``) said something the grader cannot read. ``ignored``:
    the value says nothing and the step keeps the status its span shows: a ``status`` the
    tool's author writes inside the result payload is free text (Google ADK's ``{"status":
    "found 3 documents"}``), where only a declared value means anything. Unset: ``ignored``
    for a source with ``key`` (a value inside a payload), ``unknown`` for any other."""

    _check_span_name = field_validator("span_name")(_check_regex)

    @field_validator("event", "parse", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_origin(self, info: ValidationInfo) -> "Source":
        if _checked(info):
            return self
        origins = [
            n
            for n in ("attrs", "attr_prefix", "event", "span_name", "child_attr", "const")
            if getattr(self, n) is not None
        ]
        if self.status_message:
            origins.append("status_message")
        if self.attr is not None and self.event is None:
            origins.append("attr")
        if len(origins) != 1:
            raise ValueError(
                "a source needs exactly one of attr, attrs, attr_prefix, event, span_name,"
                f" status_message, child_attr, const (got {origins or 'none'})"
            )
        if self.body and self.event is None:
            raise ValueError("body applies to event sources only")
        if self.span_name is not None and safe_regex.compile_pattern(self.span_name).groups < 1:
            raise ValueError(f"span_name regex {self.span_name!r} needs a capture group")
        return self

    @property
    def undeclared_unknown(self) -> bool:
        """Whether an undeclared ``outcome`` value read from here is an unknown outcome
        (``undeclared``, defaulted by whether the value is read under a ``key``)."""
        if self.undeclared is not None:
            return self.undeclared == "unknown"
        return self.key is None


class SynthesizeOptions(_Strict):
    """How tool calls seen only inside this rule's model messages become steps."""

    enabled: bool = True
    error_keys: list[str] = Field(default_factory=new_list)
    """A tool result that is a JSON object with one of these keys marks the call failed
    (raw-client loops send a failed tool's error back to the model this way)."""
    results_show_failures: bool = True
    """False: this instrumentation's tool results cannot tell a failure from a success (the
    framework hands the model a raised exception's bare message, Mirascope's ``str(e)``, and
    writes no error flag), so a call whose result is not error-shaped has an unknown outcome
    (status unset), never a success; an error-shaped result still fails it."""


class ToolResults(_Strict):
    """What a tool call's result says about its outcome, for every tool step (spans and
    synthesized calls) of every convention: instrumentations differ in whether a failure
    shows in the span, but a tool that answers ``Error: ...`` or ``[]`` says the same."""

    error_keys: list[str] = Field(default_factory=new_list)
    """A result that is a JSON object with a non-null value under one of these keys failed."""
    error_pattern: str | None = None
    """A text result whose start matches this regex failed (``Error: ...`` strings that
    frameworks hand back to the model instead of raising). Matched on the first 512
    characters only, so its cost does not grow with the result."""
    empty_pattern: str | None = None
    """A text result whose start matches this regex came back empty (``No results found``);
    structurally empty results (``[]``, ``{}``, ``""``) always count. Empty calls carry
    ``attributes.result_empty`` so ``degraded_answer`` sees a degraded dependency."""
    denied_pattern: str | None = None
    """A text result whose start matches this regex is what a framework hands the model in
    place of a call its approval step (a human in the loop, a policy hook) refused: the tool
    never ran. The call fails (status ``error``) and carries ``attributes.denied``: it is no
    executed call (``tool_called``), no tool failure to retry (``tool_retries``,
    ``tool_errors``), but still the agent's request (``tool_not_called``) and a dependency
    the run went without (``degraded_answer``)."""
    denied_outcomes: list[str] = Field(default_factory=new_list)
    """Values of a tool's own outcome attribute (``gen_ai.tool.call.outcome``) that say the
    call was refused before it ran (``denied``): read as ``denied_pattern`` is."""

    _check_patterns = field_validator("error_pattern", "empty_pattern", "denied_pattern")(
        _check_regex
    )


class Rule(_Strict):
    """One way a span becomes a step."""

    id: str
    step: StepName
    match: Match
    extends: str | None = None
    """``file/rule`` whose fields this rule starts from (own fields replace them)."""
    fields: dict[str, list[Source]] = Field(default_factory=new_dict)
    keep: list[str] = Field(default_factory=new_list)
    """Attributes copied as they are into ``Step.attributes`` (e.g. retry counters)."""
    synthesize_tool_calls: SynthesizeOptions = Field(default_factory=SynthesizeOptions)
    result_error_keys: list[str] = Field(default_factory=new_list)
    """For instrumentations whose tool spans never show a failure (the app returns an error
    object instead of raising): a result that is a JSON object with one of these keys marks
    the call failed, and with the result not captured the outcome is ``unset`` (unknown)."""
    nested_agent_is_handoff: bool = False
    """For ``step: agent`` rules of frameworks whose sub-agents run inside their manager's
    span with no tool or handoff span of their own (smolagents managed agents): an agent
    step of this rule nested in another agent step, with no handoff step between them, is a
    delegation, so the mapper adds a handoff step from the enclosing agent to it."""
    agent_inside_is_delegation: bool = False
    """For ``step: tool_call`` rules of tracers whose tool span holds the run of an agent the
    tool called with no typed agent span of its own (the LangSmith SDK: the agent's graph
    run): a step of this rule whose span directly holds a span mapped to an agent step is a
    delegation, a handoff to that agent (it keeps the tool's name, arguments and result). So
    is the one sibling step of this rule whose span's time holds an agent run opened beside it,
    under the calling agent (any-agent's callbacks and AgentScope 1.x start spans without
    making them current)."""
    run_limit_call: str | None = None
    """For ``step: generation`` rules of a model call that is its framework asking for a
    final answer once its own step limit was reached, where the call's place in the trace
    says so (smolagents' ``provide_final_answer`` runs right under the agent's span, outside
    the ``Step N`` spans of its loop: a ``parent`` condition finds it): a step of this rule
    is marked ``run_limit`` with this text, as a call holding one of the
    ``run_limit_prompts`` is, so that, when it is the run's last model call, the run was
    stopped short. Where the prompt is captured too, the prompt's mark is kept."""
    delivers_answer: bool = False
    """For ``step: tool_call`` rules of a framework's structured-output tool that no name can
    declare (Strands names it after the user's output type and describes it as its
    ``StructuredOutputTool``): a step of this rule is a final-answer tool call, as a call of
    a tool ``final_answer_tools`` names is (its arguments are the run's answer; it is not
    counted as work). Its steps carry ``attributes.delivers_answer``."""
    merged_model_calls: bool = False
    """For ``step: generation`` rules of spans that record every model call of a run, each
    call's attributes over the last's (OpenInference's ADK instrumentor on ADK's
    ``invoke_agent`` span): the step stands for an unknown number of calls, so a check that
    counts model calls cannot pass on it (its steps carry ``attributes.merged_model_calls``);
    read no usage from such a span, as it is one call's, not the run's."""
    thoughts_unmarked: bool = False
    """For ``step: generation`` rules of model-call spans whose messages write the model's
    thoughts (reasoning) as plain text parts, the mark that told them apart dropped (Google
    ADK's GenAI writer turns a Gemini ``thought: true`` part into ``{"type": "text"}``): an
    answering message with more than one text part may hold the reasoning beside the answer,
    and which part is which cannot be told, so such a call's text is no final answer (its
    steps carry ``attributes.thoughts_unmarked``; ``grade/evidence.py``): the answer checks
    report missing evidence instead of reading the reasoning as the answer."""
    result_from_messages: bool = False
    """For ``step: tool_call`` rules of tool spans that never record the tool's result while
    the model calls around them do (Google ADK's own spans beside OpenLIT's model-call
    spans): a step of this rule linked to a model's request that has a call id, with no
    result of its own, takes the result the model was handed for that call in a later call's
    input messages (the ``tool_call_response`` with that id, or an id-less one in the order of
    the calls). A result hidden there stays hidden."""
    requests_from_next_input: bool = False
    """For ``step: generation`` rules of model-call spans whose recorded output drops the
    calls the model requested (MLflow's CrewAI autolog writes LiteLLM's tool-call objects as
    ``{}``) while the next call's input holds them: a step of this rule that shows neither
    text nor a requested call takes as its output the assistant message with tool calls that
    the next model call of its scope was handed right after this call's own input messages
    (that input starting with as many messages, of the same roles). Nothing else there is
    read: a next input that does not continue this one leaves the output as recorded."""
    file_edit_tools: list[str] = Field(default_factory=new_list)
    """For ``step: tool_call`` rules of an agent whose own file-writing tools have names no
    AgentBench rule knows (GitHub Copilot CLI's ``create`` and ``edit``): a call of one of
    these tools (by its bare name) is a file edit, as a ``write_file`` call is. Its path and
    content are read from the same argument keys; where the arguments hold no whole-file
    content (a string replacement), the edit's content is unknown, so the checks that replay
    the workspace or look for edits report missing evidence instead of replaying the
    workspace without the edit (a tool read as a plain call never touches a file)."""
    command_tools: list[str] = Field(default_factory=new_list)
    """For ``step: tool_call`` rules: the agent's own shell tools with names no AgentBench
    rule knows; a call of one of them is a command, its ``command`` read from the same keys."""
    delegate_works_inside: bool = False
    """For ``step: handoff`` rules of delegation spans inside which the delegated agent
    works with no agent span of its own (CrewAI's coworker tools, default mode): the steps
    under such a handoff belong to its ``to_agent``, scoped as an agent's steps are. With
    the target unknown (content capture off) they stay with the delegating agent."""

    @field_validator("fields", mode="before")
    @classmethod
    def _listify_sources(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: [v] if isinstance(v, dict) else v for k, v in value.items()}
        return value

    @field_validator("fields")
    @classmethod
    def _known_fields(
        cls, value: dict[str, list[Source]], info: ValidationInfo
    ) -> dict[str, list[Source]]:
        if _checked(info):
            return value
        bad = sorted(set(value) - FIELD_NAMES)
        if bad:
            raise ValueError(f"unknown step field(s) {bad}; known: {sorted(FIELD_NAMES)}")
        misplaced = sorted(
            name
            for name, sources in value.items()
            if name != "outcome" and any(s.undeclared is not None for s in sources)
        )
        if misplaced:
            raise ValueError(f"undeclared applies to outcome sources only (on {misplaced})")
        return value


class Covers(_Strict):
    """What a mapping file was written for and checked against."""

    conventions: list[str] = Field(default_factory=new_list)
    instrumentations: list[str] = Field(default_factory=new_list)
    fixtures: list[str] = Field(default_factory=new_list)
    """Test traces (under tests/testdata/traces) that exercise this file."""


class ModelErrors(_Strict):
    """How a model client's error says that the model API answered an HTTP error status
    instead of a completion (or could not be reached). Such a call got no answer, so it
    spent no tokens: a ``tokens`` budget counts it as 0, not as usage not recorded
    (``grade/evidence.py``, ``refused_model_call``, which also takes an ``error.type`` that
    is a 4xx/5xx status, the semantic conventions' value for an HTTP error). The lists of
    all files in effect are joined (the client that raised may be traced by another file's
    rules than the one that knows it)."""

    status_errors: list[str] = Field(default_factory=new_list)
    """Error class names (the last dotted part of the step's error type, without the Vercel
    AI SDK's ``AI_`` prefix) that a model client raises for an HTTP error status:
    ``RateLimitError``, ``InternalServerError``. Name only classes that stand for a status
    the API answered (or a request that got no answer at all): a timeout or a parsing error
    after an answer came back may have spent tokens."""
    status_pattern: str | None = None
    """A regex searched in the first 2,000 characters of a failed model call's error message
    (a client names the status at the start): a match is the status the API answered
    (``Error code: 503``)."""

    _check_patterns = field_validator("status_pattern")(_check_regex)


class ConventionFile(_Strict):
    """One mapping file, as written."""

    name: str
    description: str = ""
    covers: Covers = Field(default_factory=Covers)
    priority: int = 0
    """Files are tried from the highest priority down (ties: by name); the first matching
    rule wins, so a specific file (one instrumentation) outranks a general one."""
    redaction_placeholders: list[str] = Field(default_factory=lambda: list(DEFAULT_PLACEHOLDERS))
    tool_call_finish_reasons: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TOOL_CALL_FINISH_REASONS)
    )
    finish_reasons: dict[str, list[str]] = Field(default_factory=new_dict)
    """Shared finish-reason vocabulary: canonical reason -> the spellings instrumentations
    and vendor attributes use for it (compared case-insensitively), e.g. ``stop: [end_turn,
    STOP]``. A step's ``finish_reasons`` hold the canonical names; unlisted values are kept
    as they are. The spellings of ``tool_call`` also count as tool-call finish reasons."""
    control_flow_exceptions: list[str] = Field(default_factory=new_list)
    """Exception type names (the last dotted part: ``ParentCommand`` for
    ``langgraph.errors.ParentCommand``) that a framework raises to steer its own run, not
    because something failed: LangGraph's handoff tools jump to another agent by raising
    ``ParentCommand`` through the caller's spans. A span whose error signals
    (``error.type``, ``exception`` events; its ERROR status, if any, set for them) all name
    such exceptions is not a failed step."""
    run_limit_errors: list[str] = Field(default_factory=new_list)
    """Errors a framework raises when its own turn, iteration or model-call limit ends a run
    (the OpenAI Agents SDK's ``MaxTurnsExceeded``): each entry is an exception type name (the
    last dotted part of the step's error type) or a text the error message holds (a tracer
    that records only the message). A failed step whose error is one is marked
    ``run_limit``: the run did not end because the agent had finished, so counts of its
    effort are lower bounds (``grade/evidence.py``, ``stopped_short``)."""
    run_limit_prompts: list[str] = Field(default_factory=new_list)
    """Texts a framework puts in the request by which, its own step or iteration limit
    reached, it asks the model for a final answer itself instead of raising (smolagents'
    "An agent tried to answer a user query but it got stuck ...", CrewAI's "Now it's time you
    MUST give your absolute best final answer ..."). A model call whose system or user
    messages hold one (plain substring search) is marked ``run_limit``: when it is the run's
    last model call, the run was stopped short, and counts of its effort are lower bounds,
    as for ``run_limit_errors``. Its reply is still the run's answer. Without content the text
    is not in the trace, and nothing marks the call."""
    final_answer_tools: list[str] = Field(default_factory=new_list)
    """Tools whose call arguments are the run's final answer (final-answer and
    structured-output tools: ``final_answer``, ``final_result``). Names or globs, matched
    like contract tool names (qualified forms included). Grading takes the answer from the
    last such call before model text or agent output; see ``grade/evidence.py``."""
    handoff_requests: list[str] = Field(default_factory=new_list)
    """Regexes for tool names that request a handoff (``^transfer_to_(?P<agent>.+)$``), each
    with a named group ``agent``: the target agent's name as the tool name writes it. A
    model's request for such a tool that no span ran (a synthesized call) is the handoff when
    an agent of that name (compared case-insensitively, spaces as ``_``) runs after the
    request: frameworks that turn a handoff into a tool call the model makes (the OpenAI
    Agents SDK's ``transfer_to_<agent>``) may trace the agent switch but not the tool, and
    then the request read with the switch is the only record of the transfer. A request
    with no such agent after it stays a call never run."""
    tool_results: ToolResults = Field(default_factory=ToolResults)
    model_errors: ModelErrors = Field(default_factory=ModelErrors)
    tool_outcomes: dict[Literal["ok", "error"], list[str]] = Field(default_factory=new_dict)
    """Values of a tool's own status attribute (the ``outcome`` field) meaning success or
    failure, compared case-insensitively (``gen_ai.tool.status``: ``success`` / ``error``).
    Any other value read from a status attribute makes the call's outcome unknown
    (``Source.undeclared``), so a file declares every value its framework writes."""
    rules: list[Rule]
    source: str = ""
    """Path the file was read from."""

    @field_validator("finish_reasons")
    @classmethod
    def _one_meaning_per_spelling(
        cls, value: dict[str, list[str]], info: ValidationInfo
    ) -> dict[str, list[str]]:
        if _checked(info):
            return value
        seen: dict[str, str] = {}
        for canonical, spellings in value.items():
            for spelling in (canonical, *spellings):
                other = seen.setdefault(spelling.lower(), canonical)
                if other != canonical:
                    raise ValueError(
                        f"{spelling!r} is listed under both {other!r} and {canonical!r}"
                    )
        return value

    @field_validator("handoff_requests")
    @classmethod
    def _agent_group(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if _checked(info):
            return value
        for pattern in value:
            _check_regex(pattern, info)
            if "(?P<agent>" not in pattern:
                raise ValueError(f"handoff request pattern {pattern!r} has no group 'agent'")
        return value

    @model_validator(mode="after")
    def _unique_rule_ids(self, info: ValidationInfo) -> "ConventionFile":
        if _checked(info):
            return self
        seen: set[str] = set()
        for rule in self.rules:
            if rule.id in seen:
                raise ValueError(f"duplicate rule id {rule.id!r}")
            seen.add(rule.id)
        return self
