"""Trace oracles about the answer's shape: ``final_output`` (the final answer matches its
patterns) and ``schema_valid`` (the answer, or tool arguments or results, against a JSON
Schema).

A module of their own, apart from ``trace_answers``: the registry imports only the modules
a contract names (``registry.BUILTIN_TYPES``), and a contract naming the citation or
degradation checks pays nothing for these two (docs/performance-history.md, "Start-up: the
answer's shape a module of its own"). Both declare ``final_output`` (or tool
arguments/results) as evidence, so a trace recorded without message content gets
``missing_evidence`` from them, never a pass.
"""

import json
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from otel_oracles import safe_regex
from otel_oracles.grade.evidence import where
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck, OracleParams
from otel_oracles.grade.oracles.trace_common import (
    JsonSchema,
    Regex,
    as_list,
    indexes,
    one_string_or_list,
    parsed_result,
    schema_problems,
    span_ids,
    step_glob,
)
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.defaults import new_list
from otel_oracles.model.step import Step


class FinalOutputParams(OracleParams):
    must_match: list[Regex] = Field(default_factory=new_list, json_schema_extra=one_string_or_list)
    """Regexes the final answer must each match (``re.search``)."""
    must_not_match: list[Regex] = Field(
        default_factory=new_list, json_schema_extra=one_string_or_list
    )
    """Regexes the final answer must not match."""

    @field_validator("must_match", "must_not_match", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return as_list(value)


@register_oracle
class FinalOutput(OracleCheck):
    """The final answer matches every must_match regex and no must_not_match regex."""

    oracle_type = "final_output"
    Params = FinalOutputParams
    evidence: ClassVar[frozenset[str]] = frozenset({"final_output"})
    params: FinalOutputParams
    given: FinalOutputParams

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
        out = ctx.evidence.final_output()
        assert out.text is not None
        spans = span_ids([out.step]) if out.step else ()
        missing = [rx for rx in p.must_match if not safe_regex.search(rx, out.text)]
        present = [
            (rx, m.group(0)) for rx in p.must_not_match if (m := safe_regex.search(rx, out.text))
        ]
        problems = [f"does not match /{rx}/" for rx in missing] + [
            f"matches /{rx}/ ({hit!r})" for rx, hit in present
        ]
        if problems:
            return Finding.fail("final answer " + "; ".join(problems), span_ids=spans)
        return Finding.ok("final answer matches its patterns", span_ids=spans)


def _json_of(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    fenced = safe_regex.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, safe_regex.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    try:
        return True, json.loads(stripped)
    except ValueError:
        return False, None


class SchemaValidParams(OracleParams):
    schema_: JsonSchema = Field(alias="schema")
    """The JSON Schema (any draft the ``jsonschema`` library knows)."""
    target: Literal["final_output", "tool_arguments", "tool_results"] = "final_output"
    """What to validate. The final answer must be JSON (a fenced ```json block is fine)."""
    tools: list[str] = Field(default_factory=new_list)
    """For tool targets: tool globs to validate (empty = every tool)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


@register_oracle
class SchemaValid(OracleCheck):
    """The final output, tool arguments or tool results validate against a JSON Schema."""

    oracle_type = "schema_valid"
    Params = SchemaValidParams
    params: SchemaValidParams
    given: SchemaValidParams

    def required_evidence(self) -> frozenset[str]:
        p = self.given
        if p.target == "final_output":
            return frozenset({"final_output"})
        base = p.target
        names = {f"{base}:{t}" for t in p.tools} if p.tools else {base}
        return frozenset({"tool_names", *names})

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
        if p.target == "final_output":
            out = ctx.evidence.final_output()
            assert out.text is not None
            spans = span_ids([out.step]) if out.step else ()
            # A structured answer (a final-answer tool's arguments) is validated as it is.
            ok, value = (True, out.value) if out.value is not None else _json_of(out.text)
            if not ok:
                return Finding.fail(f"final answer is not JSON: {out.text[:80]!r}", span_ids=spans)
            problems = schema_problems(p.schema_, value)
            if problems:
                return Finding.fail(
                    "final answer fails the schema: " + "; ".join(problems),
                    span_ids=spans,
                    details={"problems": problems},
                )
            return Finding.ok("final answer validates against the schema", span_ids=spans)
        calls = [
            s
            for s in ctx.evidence.tool_calls()
            if (not p.tools or step_glob(s, p.tools) is not None)
            and not (p.target == "tool_results" and s.status == "error")
        ]
        bad: list[tuple[Step, list[str]]] = []
        for s in calls:
            if p.target == "tool_arguments":
                value = s.arguments
                if value is None:
                    ok, value = _json_of(s.arguments_raw or "")
                    if not ok:
                        bad.append((s, ["arguments are not a JSON value"]))
                        continue
            else:
                value = parsed_result(s.result)
            problems = schema_problems(p.schema_, value)
            if problems:
                bad.append((s, problems))
        what = p.target.replace("_", " ")
        if bad:
            first = "; ".join(f"{where(s)}: {probs[0]}" for s, probs in bad[:3])
            return Finding.fail(
                f"{what} of {len(bad)} of {len(calls)} call(s) fail the schema: {first}",
                span_ids=span_ids(s for s, _ in bad),
                step_indexes=indexes(s for s, _ in bad),
                details={"failures": [{"step": s.index, "problems": pr} for s, pr in bad]},
            )
        return Finding.ok(f"{what} of {len(calls)} call(s) validate against the schema")
