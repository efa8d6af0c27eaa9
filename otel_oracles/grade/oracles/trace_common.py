"""Shared pieces of the trace-level oracles: param types that validate at contract load
(regexes, JSON Schemas), argument matching, tool-name globs and what counts as a failed call.

Kept in one module so ``tool_called``, ``tool_sequence`` and ``schema_valid`` agree on
what "the arguments match" means, and ``tool_retries``, ``tool_errors`` and
``degraded_answer`` agree on what "the call failed" means.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from otel_oracles import safe_regex
from otel_oracles._frozen import Frozen, set_field
from otel_oracles._native import CheckPlans
from otel_oracles._native import repeated_args_candidates as native_repeated_args_candidates
from otel_oracles.grade.evidence import Evidence, absent, is_placeholder
from otel_oracles.grade.oracles.base import Finding, OracleParams
from otel_oracles.model.defaults import new_dict
from otel_oracles.model.step import GENERATION, Step
from otel_oracles.model.tool_name import first_match


def _check_regex(value: str) -> str:
    problem = safe_regex.syntax_error(value)
    if problem is not None:
        raise ValueError(f"invalid regular expression {value!r}: {problem}")
    return value


def _validator_class(schema: dict[str, Any]) -> Any:
    """The ``jsonschema`` validator class for ``schema``'s draft. The library is imported
    here, by the first contract that holds a JSON Schema: with ``referencing``, ``attrs`` and
    ``rpds`` it costs about 60 ms, a sixth of ``grade``'s start-up, which most contracts never
    need (docs/performance-history.md, "Start-up")."""
    import jsonschema

    return jsonschema.validators.validator_for(schema)


def _check_schema(value: dict[str, Any]) -> dict[str, Any]:
    from jsonschema.exceptions import SchemaError  # see _validator_class

    try:
        _validator_class(value).check_schema(value)
    except SchemaError as exc:
        raise ValueError(f"invalid JSON Schema: {exc.message}") from None
    return value


Regex = Annotated[str, AfterValidator(_check_regex)]
"""A Python regular expression, compiled once at contract load so a typo is a ContractError."""

JsonSchema = Annotated[dict[str, Any], AfterValidator(_check_schema)]
"""A JSON Schema (any draft ``jsonschema`` knows), checked against its metaschema at load."""


def _split_meta(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    meta: dict[str, Any] = {
        k: schema.pop(k) for k in ("title", "description", "default") if k in schema
    }
    return meta, dict(schema)


def one_string_or_list(schema: dict[str, Any]) -> None:
    """JSON Schema hook: a list param that may also be written as one string (``tool: x``)."""
    meta, original = _split_meta(schema)
    schema.clear()
    schema.update({**meta, "anyOf": [{"type": "string"}, original]})


def string_items(schema: dict[str, Any]) -> None:
    """JSON Schema hook: a list whose items may be written as strings (``[a, b]``)."""
    schema["items"] = {"anyOf": [{"type": "string"}, schema["items"]]}


def as_list(value: Any) -> Any:
    """A list param written as one string (``must_match: x``) as the one-item list it
    stands for; any other value as it is, for pydantic to judge (``one_string_or_list``
    says so in the schema)."""
    return [value] if isinstance(value, str) else value


DEFAULT_ERROR_PATTERN = r'^\s*\{\s*"error"\s*:'
"""A result that is a JSON object whose first key is ``error``: how raw-client tool loops
(no tool spans) hand a tool failure back to the model."""

TIMEOUT_PATTERN = r"(?i)time[ d]?out|timed out|deadline"
"""Compiled on its first text by ``safe_regex`` (its cache), not at import."""


def glob_any(
    name: str | None, patterns: Iterable[str], unknown_namespace_matches: bool = False
) -> str | None:
    """The first contract tool name or glob in ``patterns`` naming the tool ``name``
    (``model.tool_name`` rules: a bare name matches its plugin/toolset/MCP-qualified forms),
    else ``None``. ``unknown_namespace_matches`` for checks that fail closed."""
    return first_match(name, tuple(patterns), unknown_namespace_matches)


def step_glob(
    step: Step, patterns: Iterable[str], unknown_namespace_matches: bool = False
) -> str | None:
    """``glob_any`` on the step's tool, else on the name the MCP server ran the call under
    (``mcp_tool``: the mapping merged the MCP protocol's span of the call into the framework's
    span, whose name qualifies the server's with a toolset prefix such as ``docs_``): the
    server's own name shows which of its tools ran."""
    hit = glob_any(step.tool, patterns, unknown_namespace_matches)
    served = step.attributes.get("mcp_tool") if hit is None else None
    if isinstance(served, str):
        return glob_any(served, patterns, unknown_namespace_matches)
    return hit


def span_ids(steps: Iterable[Step]) -> tuple[str, ...]:
    """Source span ids of ``steps`` (trace-derived steps only), first-seen order, no repeats.
    Made by a comprehension and ``dict.fromkeys`` (the same first-seen order): most results
    of most checks point at spans, and a ``setdefault`` call per step was most of it."""
    return tuple(dict.fromkeys([s.source.span_id for s in steps if s.source is not None]))


def indexes(steps: Iterable[Step]) -> tuple[int, ...]:
    """The steps' indexes, in order (a list comprehension: cheaper than a generator)."""
    return tuple([s.index for s in steps])


_RESULT_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
"""``json.dumps(..., ensure_ascii=False, default=str)`` without building an encoder per call
(``dumps`` does exactly ``JSONEncoder(**options).encode``; encoders keep no state)."""

_ARGS_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str, sort_keys=True)


def result_text(result: Any) -> str:
    """A tool result as text for pattern matching (structured results as compact JSON)."""
    if isinstance(result, str):
        return result
    return _RESULT_ENCODER.encode(result)


def parsed_result(value: Any) -> Any:
    """A tool result that is JSON text, parsed; anything else (text that is not JSON
    included) as it is. What ``degraded_answer`` judges empty and ``schema_valid``
    validates of a call's result."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def step_result_text(ev: Evidence, step: Step) -> str:
    """``result_text(step.result)``, computed once per step of ``ev``'s trajectory."""
    text: str = ev.step_memoized(step, "result_text", result_text, step.result)
    return text


def is_denied(step: Step) -> bool:
    """Whether an approval step (a human in the loop, a policy hook) refused this call before
    the tool ran (``attributes.denied``, set by the mapping: ``tool_results.denied_pattern``
    in ``conventions/``). Such a call is the agent's request (``tool_not_called`` and the
    counts count it) but no call that happened (``tool_called``) and no tool failure
    (``tool_retries``, ``tool_errors``); the dependency was unavailable to the run
    (``degraded_answer``)."""
    return step.attributes.get("denied") is True


DENIED = "denied by an approval step (the tool never ran)"


def shown_run(step: Step) -> bool:
    """Whether the trace shows that this call ran (DESIGN section 8: a check that needs a
    call to have happened passes only on data that shows it): a span of the tool's own (or
    a recorded AgentBench step), a result captured from the model's next input (a status the
    mapping judged from it: a result a length limit cut is dropped afterwards, its judgement
    kept), a failure, or documents returned. A call seen only as the model's request
    (``synthesized``) whose answer was not captured shows nothing: the application may have
    run it, refused it (an approval step's refusal text is only in that answer) or never
    answered it. An answer whose content was hidden (content capture off) shows that
    something answered, not that the tool ran, so it shows nothing either. A denied call
    never ran (``is_denied``); callers leave it out first."""
    if not step.synthesized:
        return True
    return (
        not absent(step, "result")
        or step.status != "unset"
        or bool(step.error_type or step.error_message)
        or step.documents is not None
    )


def is_timeout(ev: Evidence, step: Step) -> bool:
    text = " ".join(
        t
        for t in (
            step.error_type,
            step.error_message,
            None if absent(step, "result") else step_result_text(ev, step),
        )
        if t
    )
    return bool(safe_regex.search(TIMEOUT_PATTERN, text))


RAW_STEP_META: frozenset[str] = frozenset(
    {"tool", "tool_name", "name", "type", "result", "output", "status", "args", "arguments",
     "input", "parameters"}
)  # fmt: skip
"""Keys of an AgentBench step object that are not the call's inputs."""


def effective_args(step: Step) -> dict[str, Any] | None:
    """The call's arguments; for an AgentBench step written flat (``{"tool": "write_file",
    "path": ..., "content": ...}``) the step's own input fields."""
    if step.arguments is not None:
        return step.arguments
    if step.raw is not None:
        return {k: v for k, v in step.raw.items() if k not in RAW_STEP_META}
    return None


def step_normalized_args(ev: Evidence, step: Step) -> str:
    """``normalize_args`` of a call's effective arguments, computed once per step."""
    text: str = ev.step_memoized(step, "normalized_args", _normalized_args, step)
    return text


def _normalized_args(step: Step) -> str:
    """``step_normalized_args`` when first asked of ``step``."""
    return normalize_args(effective_args(step), step.arguments_raw)


def normalize_args(args: dict[str, Any] | None, raw: str | None = None) -> str:
    """Canonical text of arguments for "same arguments" comparisons: sorted keys, strings
    with collapsed whitespace and case-folded, so cosmetic differences do not hide a loop."""

    if args is None:
        return " ".join((raw or "").split())
    return _ARGS_ENCODER.encode(_norm(args))


def _norm(value: Any) -> Any:
    """Strings whitespace-collapsed and case-folded, dicts and lists (subclasses included)
    rebuilt as plain ones, anything else as it is."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, dict):
        return _norm_dict(value)
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def _norm_dict(value: dict[str, Any]) -> dict[str, Any]:
    # ``_norm`` of each value, with the common leaves (strings, numbers) handled inline:
    # arguments are mostly flat objects, and a call per value was most of the cost.
    out: dict[str, Any] = {}
    for k, v in value.items():
        if isinstance(v, str):
            out[k] = " ".join(v.split()).casefold()
        elif isinstance(v, (dict, list)):
            out[k] = _norm(v)
        else:
            out[k] = v
    return out


_PLAIN_VALUES: tuple[type, ...] = (str, int, float, bool, type(None), dict, list)
"""The exact types of a top-level argument value a screen can vouch for."""


def repeated_args_candidates(ev: Evidence, calls: Sequence[Step], threshold: int) -> list[Step]:
    """The calls (in order) that may share normalized arguments with ``threshold - 1``
    other calls of their tool; every call left out has fewer than ``threshold`` calls
    with its tool and normalized arguments.

    Equal normalized texts of two plain JSON objects mean equal key sets and, key by key,
    equal JSON values: a string value's twin is a string with the same normalized text. So
    calls whose normalized top-level strings differ cannot be equal, nor can calls whose
    *screens* differ (a call's screen: its effective arguments' top-level strings,
    normalized and then stripped of their characters below ``!``, the spaces and control
    characters, as a set of ``(key, text)``; texts that normalize alike are alike so
    stripped), and a tool's calls split by their screens
    need the (costly) full normalization only in groups of ``threshold`` or more. A tool with a
    call whose arguments are no plain JSON object (none captured, a non-string key, a
    value JSON would render through ``str()``) keeps all its calls.

    The core's (``native/python/src/evidence.rs``): a call's screen is made once per
    trajectory (kept in ``ev``'s step view, by the call's place among the trajectory's
    calls), whatever threshold and tools the trajectory's ``loop_detected`` checks ask
    with, as a 64-bit hash of that set (no Python string, pair or set per argument): equal
    screens hash alike, and two that clash only keep more calls for the full normalization,
    which decides. The plans find the candidates with the same function
    (``evidence::candidates``, handed ``RAW_STEP_META`` and ``_PLAIN_VALUES`` with
    ``PLANS``), without this frame."""
    return native_repeated_args_candidates(ev, calls, threshold, RAW_STEP_META, _PLAIN_VALUES)


def _matches(ev: Evidence, step: Step, error_pattern: str) -> bool:
    """Whether ``error_pattern`` matches the call's result text (``step_result_text``, made
    once per step), searched by ``safe_regex`` under its budget: what ``call_failures`` asks
    of a captured result the other signals left undecided (under the default pattern, only
    of a ``str`` result: a structured one is judged by its first key)."""
    return safe_regex.search(error_pattern, step_result_text(ev, step)) is not None


PLANS = CheckPlans(
    Finding,
    (RAW_STEP_META, _PLAIN_VALUES),
    step_normalized_args,
    (_matches, DENIED, DEFAULT_ERROR_PATTERN),
)
"""What the built-in checks make their ``native_plan`` with (``OracleCheck.native_plan``):
the core's answers, asking the evidence as the Python did (``repeated_args_candidates``
found by the core from what its screens read, the screens' table in the same memo entry;
``step_normalized_args`` called back), so a plan and Python code that asks after it share
each memoized answer; and why each tool call failed (``call_failures``)."""

call_failures = PLANS.call_failures
"""``call_failures(ev, error_pattern)``: ``id()`` of each tool call of ``ev``'s trajectory
(``Evidence.groups.calls``) -> why it failed, or ``None`` when nothing says it did, decided
in one pass over the calls once per pattern (kept in ``ev``'s memo): every failure-counting
check (``tool_errors``, ``tool_retries``, ``degraded_answer``) of every contract asks the
same of the same calls, most of them with the default pattern. (A step's ``id()`` cannot
name another live step, and the trajectory keeps its steps alive while ``ev`` exists.)

Signals, in order: an approval step refused the call (``DENIED``), span status ERROR,
``error.type``, an error message (exception event), a captured result matching
``error_pattern`` (or a dict result with a truthy ``error``). Under no pattern or the
default one, a result that is no ``str`` is judged without its text: the default pattern
asks whether the JSON text starts with an object whose first key is ``error``, and
``result_text`` of a structured result starts with ``{"<first key>": `` for a non-empty dict
and with ``[``, ``{}``, a number, ``true``/``false``/``null`` or a quoted string otherwise,
so the first key decides it without serializing the (often kilobytes of) result. Any other
pattern is searched by ``_matches``. The core's (``native/python/src/failures.rs``; the
plans read the table without a Python frame)."""

failed_calls = PLANS.failed_calls
"""``failed_calls(ev, error_pattern)``: the failed entries of ``call_failures`` (``id()`` of
a call -> why it failed), made once per pattern. Most trajectories hold no failed call: then
this is empty, and ``tool_retries`` and ``tool_errors`` are decided without pairing calls
or reading twins (no failure, no retry and no failed call, whatever the pairs)."""


def call_failure(
    ev: Evidence, step: Step, error_pattern: str | None = DEFAULT_ERROR_PATTERN
) -> str | None:
    """Why ``step`` (a tool call) failed, or ``None`` when nothing says it did
    (``call_failures``' signals). A call of ``ev``'s trajectory is looked up in
    ``call_failures``; any other step is judged on its own."""
    return PLANS.call_failure(ev, step, error_pattern)


class ArgsMatch(OracleParams):
    """How a tool call's arguments must look. All given parts must hold."""

    args: dict[str, Any] | None = None
    """Expected argument values (compared as parsed JSON)."""
    args_mode: Literal["subset", "exact"] = "subset"
    """``subset``: the given keys must have these values, other keys may exist;
    ``exact``: the arguments must equal ``args``."""
    args_regex: dict[str, Regex] = Field(default_factory=new_dict)
    """Field -> regex the field's value (as text) must match (``re.search``)."""
    args_schema: JsonSchema | None = None
    """A JSON Schema the whole arguments object must validate against."""

    def constrains_args(self) -> bool:
        return self.args is not None or bool(self.args_regex) or self.args_schema is not None


def args_mismatch(spec: ArgsMatch, step: Step) -> str | None:
    """Why ``step``'s arguments do not satisfy ``spec`` (``None`` = they do).

    The caller must have made sure the arguments were captured (evidence)."""
    why = args_mismatch_why(spec, step)
    return None if why is None else why()


Why = Callable[[], str]
"""A message made when asked for (``args_mismatch_why``)."""


def args_mismatch_why(spec: ArgsMatch, step: Step) -> Why | None:
    """``args_mismatch``, deciding now and writing the message only when it is called:
    ``tool_sequence`` tests every call against every expected item its name matches and
    shows the messages of the few pairs its alignment keeps (each message serializes the
    arguments). Every test (regexes, the schema) runs here, once."""
    if not spec.constrains_args():
        return None
    return constrained_mismatch_why(spec, step)


def constrained_mismatch_why(spec: ArgsMatch, step: Step) -> Why | None:
    """``args_mismatch_why`` of a ``spec`` that constrains the arguments
    (``ArgsMatch.constrains_args``): what the core's ``tool_sequence`` plan asks, only of the
    items it knows constrain them, where its ``Subset`` does not decide (``args`` in subset
    mode and the regexes its analysis answers are decided there) and for the message of each
    mismatched pair a diff shows: ~600 times a grade of data-2000 (the test's frame, and
    ``effective_args``'s for a call whose arguments were captured, saved on each)."""
    args = step.arguments
    if args is None:
        args = effective_args(step)
    if args is None or is_placeholder(args):
        return partial(str, "arguments not captured")
    if spec.args is not None:
        if spec.args_mode == "exact" and args != spec.args:
            return partial(_unequal, args, spec.args)
        if spec.args_mode == "subset":
            for key, want in spec.args.items():
                if key not in args:
                    return partial(_absent, key)
                if args[key] != want:
                    return partial(_other_value, key, args[key], want)
    for key, pattern in spec.args_regex.items():
        if key not in args:
            return partial(_absent, key)
        value = args[key] if isinstance(args[key], str) else result_text(args[key])
        if not safe_regex.search(pattern, value):
            return partial(_no_match, key, args[key], pattern)
    if spec.args_schema is not None:
        error = _validator_class(spec.args_schema)(spec.args_schema)
        problem = next(iter(error.iter_errors(args)), None)
        if problem is not None:
            path = "/".join(str(p) for p in problem.absolute_path) or "(root)"
            return partial(str, f"arguments fail the schema at {path}: {problem.message}")
    return None


def _unequal(args: Any, expected: Any) -> str:
    return f"arguments {_short(args)} != {_short(expected)}"


def _absent(key: str) -> str:
    return f"argument {key!r} absent"


def _other_value(key: str, value: Any, expected: Any) -> str:
    return f"argument {key!r} is {_short(value)}, expected {_short(expected)}"


def _no_match(key: str, value: Any, pattern: str) -> str:
    return f"argument {key!r} = {_short(value)} does not match /{pattern}/"


def _short(value: Any, limit: int = 80) -> str:
    text = _ARGS_ENCODER.encode(value)  # ``json.dumps(value, ...)`` with its options
    return text if len(text) <= limit else text[: limit - 3] + "..."


def schema_problems(schema: dict[str, Any], instance: Any, limit: int = 5) -> list[str]:
    """Every way ``instance`` breaks ``schema`` (first ``limit``), as ``path: message``."""
    validator = _validator_class(schema)(schema)
    problems = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    out = []
    for p in problems[:limit]:
        path = "/".join(str(x) for x in p.absolute_path) or "(root)"
        out.append(f"{path}: {p.message}")
    return out


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class NamelessTwins(Frozen):
    """Which calls without a recorded tool name are shown to be another record of a named
    call (``nameless_twins``)."""

    __slots__ = ("twin_of", "twinned")
    twinned: frozenset[int]
    """``id()`` of each nameless call that is a named call's twin: counted with it, once."""
    twin_of: dict[int, Step]
    """``id()`` of a named call -> its nameless twin, whose failure is that call's failure."""

    def __init__(
        self, twinned: frozenset[int] = frozenset(), twin_of: dict[int, Step] | None = None
    ) -> None:
        set_field(self, "twinned", twinned)
        set_field(self, "twin_of", {} if twin_of is None else twin_of)


def nameless_twins(ev: Evidence) -> NamelessTwins:
    """The nameless calls (``Evidence.nameless_calls``) that are the twin of a named call,
    found once per trajectory: a count that must be a lower bound where evidence is missing
    (``failure_stands_on_gaps``) counts such a pair once, and every other nameless call as
    the call it is, so a failed call whose name was not recorded is never left out.

    Twins arise where a tool span records no name while the model's request for that call
    is a named step of its own (LlamaIndex or smolagents spans without ``tool.name``: the
    mapper cannot link the request to the span by name, so the request becomes a
    synthesized call). A nameless call is shown to be a named call's twin when

    - both record the same call id; or
    - the named call is a request no span ran by name (synthesized), and the nameless call
      is a trace-derived call that ran after that request and before the requesting agent's
      next model call, each request answering one nameless call, in order (the requesting
      agent's own before any other agent's; call ids, where both record one, agree).

    Nameless layers of one call nested in a named one are merged by the mapping already
    (``mapping/_stacked``). On a trace with every name recorded this is empty."""
    if not ev.nameless_calls():
        return _NO_TWINS  # most runs record every name: nothing to pair or keep
    found: NamelessTwins = ev.memoized("nameless_twins", _pair_twins, ev)
    return found


_NO_TWINS = NamelessTwins()
"""The answer of a run without nameless calls, made once (it is read, never changed)."""


def _pair_twins(ev: Evidence) -> NamelessTwins:
    nameless = ev.nameless_calls()
    unnamed = {id(s) for s in nameless}
    named = [s for s in ev.calls_of(()) if id(s) not in unnamed]
    twin_of: dict[int, Step] = {}
    paired: set[int] = set()

    def pair(named_call: Step, nameless_call: Step) -> None:
        twin_of[id(named_call)] = nameless_call
        paired.add(id(nameless_call))

    by_call_id: dict[str, list[Step]] = {}
    for s in named:
        if s.call_id:
            by_call_id.setdefault(s.call_id, []).append(s)
    for n in nameless:
        if n.call_id:
            twin = next((s for s in by_call_id.get(n.call_id, ()) if id(s) not in twin_of), None)
            if twin is not None:
                pair(twin, n)
    # Requests no span ran by name, per requesting agent, open until its next model call.
    pending: dict[str | None, list[Step]] = {}
    for step in ev.trajectory.steps:
        if step.kind == GENERATION:
            pending[step.agent_name] = []
        elif id(step) in unnamed:
            if step.synthesized or id(step) in paired:
                continue
            twin = _open_request(step, pending)
            if twin is not None:
                pair(twin, step)
        elif step.synthesized and step.is_tool and id(step) not in twin_of:
            pending.setdefault(step.agent_name, []).append(step)
    return NamelessTwins(twinned=frozenset(paired), twin_of=twin_of)


def _open_request(call: Step, pending: dict[str | None, list[Step]]) -> Step | None:
    """The first open request ``call`` may have run (its own agent's first), removed from
    ``pending``; ``None`` when there is none (the call is a call of its own)."""
    queues = [pending.get(call.agent_name, [])]
    queues += [q for agent, q in pending.items() if agent != call.agent_name]
    for queue in queues:
        for i, request in enumerate(queue):
            if call.call_id and request.call_id and call.call_id != request.call_id:
                continue
            return queue.pop(i)
    return None
