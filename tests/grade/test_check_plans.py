"""The built-in checks' usual answers computed by the core (``CheckPlan``, asked by the
evaluator's loop instead of the oracle's ``check``) are the findings their whole Python
bodies gave (``tests/support/check_reference.py``), byte for byte, over the captured traces
of real instrumentations and hand-built edge cases (no steps, unknown, qualified and
nameless tool names, answering calls, failed and retried calls, loops, a run a framework's
limit ended); and a result the loop builds from a plan is the one it builds from ``check``.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from otel_oracles import _native, safe_regex
from otel_oracles._native import known_clear
from otel_oracles.errors import ContractError, ReplayError, WorkBudgetExceeded
from otel_oracles.grade import evidence as evidence_module
from otel_oracles.grade.compiled import CompiledCheck, compile_check
from otel_oracles.grade.evaluator import _context, run_compiled
from otel_oracles.grade.evidence import PROBES, Evidence, Plan
from otel_oracles.grade.loader import compile_contract, parse_contract
from otel_oracles.grade.oracles import trace_answers
from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.grade.oracles.trace_common import DEFAULT_ERROR_PATTERN
from otel_oracles.grade.oracles.trace_tools import find_retries
from otel_oracles.model.contract import Contract, OracleSpec
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory
from otel_oracles.replay import replayed_workspace
from otel_oracles.sandbox import SANDBOXED
from tests.oracles.trace_builders import MS, gen, tool, traj
from tests.support import check_reference
from tests.support.captured import captured_trajectories
from tests.support.check_reference import REFERENCE
from tests.support.check_reference import _cited_ids as engine_cited_ids
from tests.support.check_reference import find_retries as reference_retries

LONE = "\udcff"
"""A lone surrogate (``surrogateescape``'s decoding of a byte that is not UTF-8): a ``str``
an application hands the grader may hold one, which Rust's text cannot."""

BIG = 10**30
"""A contract number past every ``usize``: the Python bodies compared and showed it as any
``int``."""

SCENARIOS = (
    "a_happy",
    "b_tool_retry",
    "d_forbidden_tool",
    "f_degraded",
    "h_coding_agent",
    "m_excess_calls",
    "q_turn_limit",
)
"""The scenarios read from each captured source (with content and without): a plain run,
a retried and a forbidden call, a degraded run, file edits, too many calls, a run a
framework's turn limit ended (``stopped_short``)."""

PARAMS: dict[str, list[dict[str, Any]]] = {
    "tool_not_called": [
        {"tool": ["delete_records"]},
        {"tool": ["delete_records", "drop_*"]},
        {"tool": ["search_docs"]},
        {"tool": ["search_docs"], "max": 1},
        {"tool": ["docs.search_docs"]},
        {"tool": ["*"], "max": 2},
        {"tool": ["no_such_tool"]},
        {"tool": [f"se{LONE}", "drop_*"]},
        {"tool": ["delete_records", "*"], "max": BIG},
        {"tool": ["delete_*", f"fetch{LONE}"], "max": 1},
    ],
    "tool_errors": [
        {},
        {"max": 2},
        {"tools": ["search_*"]},
        {"error_pattern": None},
        {"error_pattern": "(?i)timeout|unavailable"},
        {"max": BIG, "tools": ["fetch_*", "search_docs"]},
        {"max": 1, "tools": [f"se{LONE}*", f"fetch{LONE}"]},
    ],
    "tool_retries": [
        {"max": 1},
        {"max": 0, "tools": ["search_docs"]},
        {"max": 3, "max_per_tool": 0},
        {"max": 3, "max_per_tool": 1},
        {"max": BIG, "max_per_tool": BIG},
        {"error_pattern": None},
        {"max": 0, "tools": [f"se{LONE}"]},
        {"max": 9, "max_per_tool": 0},
    ],
    "loop_detected": [
        {"threshold": 2},
        {"threshold": 3},
        {"threshold": 4, "max": 1},
        {"threshold": 2, "tools": ["search_*"]},
        {"threshold": 2, "tools": ["no_such_tool"]},
        {"threshold": BIG},
        {"threshold": 2, "tools": [f"se{LONE}"]},
        {"threshold": 2, "max": 5},
        {"threshold": 3, "max": BIG, "tools": ["search_*", f"se{LONE}"]},
    ],
    "max_tool_calls": [
        {"max": 0},
        {"max": 1},
        {"max": 8},
        {"max": 40},
        {"max": 1, "tools": ["search_docs"]},
        {"max": 0, "tools": ["final_answer", "final_result"]},
        {"max": 0, "tools": ["no_such_tool"]},
        {"max": BIG},
        {"max": 1, "tools": [f"se{LONE}"]},
    ],
    "tokens": [
        {"max_total_tokens": 200000},
        {"max_input_tokens": 10},
        {"max_output_tokens": 0, "max_total_tokens": 5},
        {"max_input_tokens": BIG},
        {"max_input_tokens": BIG, "max_output_tokens": 0, "max_total_tokens": BIG},
    ],
    "max_steps": [
        {"max": 60},
        {"max": 2},
        {"max": 0},
        {"max": 5, "kinds": ["tool_call"]},
        {"max": 5, "kinds": ["generation", "agent"]},
        {"max": BIG},
    ],
    "latency": [
        {"max_ms": 120000},
        {"max_ms": 0.001},
        {"max_ms": 12.5, "max": 1},
        {"max_ms": 1e-7},
        {"max_ms": 35.0000001},
        {"max_ms": 0.001, "max": BIG},
    ],
    "tool_sequence": [
        {"expected": ["search_docs"]},
        {"expected": ["search_docs"], "ignore": ["transfer_to_*", "delegate_to_*"]},
        {
            "expected": [{"tool": "search_docs", "args": {"q": "a"}}, "final_answer"],
            "mode": "exact",
        },
        {"expected": ["search_docs", "search_docs"], "mode": "any_order"},
        {"expected": ["search_*"], "mode": "subset"},
        {"expected": [{"tool": "search_docs", "args_regex": {"q": "^a"}}], "mode": "superset"},
        {"expected": ["docs.search_docs", "final_answer"], "mode": "exact", "ignore": ["drop_*"]},
        {
            "expected": [
                {"tool": "write_file", "args": {"path": "calc.py"}},
                {"tool": "write_file", "args_regex": {"path": "^tests/test_.*\\.py$"}},
                {"tool": "run_command", "args_regex": {"command": "pytest"}},
            ]
        },
        {"expected": [], "mode": "exact"},
        {"expected": [f"se{LONE}", "search_docs"], "ignore": [f"fetch{LONE}"]},
        {"expected": [f"se{LONE}*"], "mode": "any_order"},
    ],
    "tool_called": [
        {"tool": "search_docs"},
        {"tool": "search_docs", "min": 2, "max": 2},
        {"tool": "search_*", "min": 0, "max": 0},
        {"tool": "docs.search_docs", "min": 3},
        {"tool": "delete_records"},
        {"tool": "search_docs", "args": {"q": "a"}, "min": 2},
        {"tool": "search_docs", "args_regex": {"q": "^zzz"}},
        {"tool": "write_file", "args_regex": {"path": "^tests/"}, "max": 1},
        {"tool": "search_docs", "min": BIG},
        {"tool": "search_docs", "min": 0, "max": BIG},
        {"tool": "*", "min": BIG, "max": BIG},
        {"tool": f"se{LONE}", "max": 1},
        {"tool": f"se{LONE}*", "min": 0, "max": 0},
    ],
    "handoff": [
        {
            "required": ["researcher -> research_assistant"],
            "forbidden": ["research_assistant -> researcher"],
        },
        {"required": ["triage -> *"]},
        {"forbidden": ["* -> helper"]},
        {"required": ["research* -> [hr]elper", "* -> *"]},
        {"required": [{"from": "?esearcher", "to": "*"}], "forbidden": ["*assistant -> *"]},
        {},
        {"required": [f"res{LONE} -> *"], "forbidden": [f"* -> b{LONE}"]},
    ],
    "citations_grounded": [
        {},
        {"pattern": r"\[(doc-\d+)\]"},
        {"pattern": r"(x)?doc-\d+|(y)"},
        {"pattern": r"doc \d+"},
        {"sources": ["search_*"]},
        {"sources": ["no_such_tool"]},
        {"pattern": f"(?:doc|{LONE})-\\d+"},
        {"pattern": r"\[(\d+)"},
    ],
    "citation_required": [
        {},
        {"min": 2},
        {"min": BIG},
        {"min": 3, "unless_degraded": True},
        {"min": BIG, "unless_degraded": True, "dependencies": ["search_docs"]},
        {"pattern": f"{LONE}-\\d+", "unless_degraded": True, "dependencies": ["fetch_*"]},
    ],
    "degraded_answer": [
        {},
        {
            "dependencies": ["search_docs"],
            "must_disclose": r"(?i)\b(degraded|failed|unavailable)\b",
        },
        {"dependencies": ["search_*"], "allowed": False, "must_disclose": None},
        {"dependencies": ["docs"], "error_pattern": None},
        {"empty_pattern": "(?i)no results", "degraded_attribute": "degraded"},
        {"uncertainty_pattern": "."},
        {"dependencies": [f"se{LONE}"], "uncertainty_pattern": f"(?i)done|{LONE}"},
        {"must_disclose": f"x{LONE}|search", "degraded_attribute": f"d{LONE}"},
        {"degraded_attribute": "", "empty_pattern": "", "must_disclose": ""},
        {"must_disclose": r"\b(?:search )?fail(?:ed)?\b", "uncertainty_pattern": "(?:x|)"},
        {"must_disclose": r"(?i)\bdone\b|search", "uncertainty_pattern": r"(?i)i'?m\b"},
    ],
    "evidence": [
        {"field": "final_output"},
        {"field": "agents"},
        {"field": "tool_results", "tool": "search_docs"},
        {"field": "tool_arguments", "tool": f"se{LONE}"},
        {"attribute": "gen_ai.system"},
        {"attribute": f"k{LONE}"},
    ],
}


ANSWERING_EVERY = (
    "tool_not_called",
    "loop_detected",
    "tool_sequence",
    "tool_called",
    "handoff",
    "citations_grounded",
    "citation_required",
)
"""The checks whose plans make every answer (``check_plans.rs``' ``tool_not_called`` and
``loop_detected``, ``check_plans_more.rs``, ``check_plans_cite.rs``)."""

CITING = ("citations_grounded", "citation_required")
"""The checks of the final answer's citations: asked only of a trajectory whose final answer
is known (their declared evidence; the loop answers the others with missing evidence)."""

USUAL_ANSWERS = tuple(t for t in PARAMS if t not in ANSWERING_EVERY)
"""The checks whose plans make their usual answers (``check_plans.rs``,
``check_plans_answer.rs``)."""

NO_MISSING = ("tool_sequence", "tool_not_called")
"""The checks of ``ANSWERING_EVERY`` that never answer with missing evidence."""

JUDGED_ON_THEIR_EVIDENCE = ("degraded_answer", "evidence")
"""The checks whose ``check`` the evaluator runs only when their declared evidence is there
(the final answer for ``degraded_answer``; its name for ``evidence``): compared only there."""

EVERY_ANSWER_SCENARIOS = (
    "a_happy",
    "b_tool_retry",
    "d_forbidden_tool",
    "h_coding_agent",
    "g_handoff",
    "n_handback",
    "s_delegated_forbidden",
    "w_tool_denied",
)
"""The scenarios read for the plans that make every answer: a plain run, a retried and a
forbidden call, file edits and a command, handoffs and delegation (a forbidden one among
them), a call an approval step refused."""

CITING_SCENARIOS = (
    "a_happy",
    "c_retry_exhausted",
    "e_fabricated_citation",
    "f_degraded",
    "j_undisclosed_failure",
    "r_structured_fabricated",
    "v_reasoning_fabricated",
    "z_killed_before_answer",
)
"""The scenarios read for the citation checks: answers citing what the search returned,
an id no tool returned (in text, a structured answer and after reasoning), degraded and
failed searches, a run killed before its answer."""


PATHS: dict[str, tuple[str, str, bool]] = {
    "calls over max": ("max_tool_calls", "fail", False),
    "failed calls tolerated": ("tool_errors", "pass", True),
    "failed calls over max": ("tool_errors", "fail", True),
    "retries tolerated": ("tool_retries", "pass", True),
    "retries over max": ("tool_retries", "fail", True),
    "steps over max": ("max_steps", "fail", False),
    "tokens over a limit": ("tokens", "fail", False),
    "latency over max_ms": ("latency", "fail", True),
    "latency over max_ms tolerated": ("latency", "pass", True),
    "uncertainty tied to no degradation": ("degraded_answer", "fail", False),
}
"""Paths past the usual answer that the plans of ``check_plans.rs`` word: (oracle type,
status, something used of the budget)."""


def _oracles(types: Iterable[str]) -> list[OracleCheck]:
    built: list[OracleCheck] = []
    for oracle_type in types:
        variants = PARAMS[oracle_type]
        for params in variants:
            check = compile_check("invariant", OracleSpec(type=oracle_type, params=params))
            assert check.oracle is not None, check.setup_error
            assert check.oracle.native_plan is not None
            assert check.head is not None
            built.append(check.oracle)
    return built


def _edge_cases() -> Iterator[tuple[str, Trajectory]]:
    yield "no steps", traj()
    yield "model calls only", traj(gen("hi"), gen("done"))
    yield (
        "qualified and unknown names",
        traj(
            gen(tool_calls=["docs.search_docs"]),
            tool("docs.search_docs", {"q": "a"}),
            tool("mcp__docs__search_docs", {"q": "a"}),
            tool("search_docs", {"q": "a"}),
            tool("drop_table", {"name": "t"}),
            gen("done"),
        ),
    )
    yield (
        "failed, retried and denied calls",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, "error: timeout", status="error"),
            tool("search_docs", {"q": "a"}, "ok"),
            tool("delete_records", {"id": 1}, attributes={"denied": True}),
            tool("search_docs", {"q": "b"}, {"error": "unavailable"}),
            tool("search_docs", {"q": "b"}, "ok"),
            gen("done"),
        ),
    )
    yield (
        "a loop",
        traj(*(tool("search_docs", {"q": " same "}) for _ in range(4)), gen("done")),
    )
    yield (
        "loops of two tools, one nameless, and a call between",
        traj(
            *(tool("search_docs", {"q": "A  b"}, "ok") for _ in range(2)),
            {**tool("", {"q": "a"}, "ok"), "tool": None},
            tool("search_docs", {"q": " a B"}, "ok"),
            {**tool("", {"q": "a"}, "ok"), "tool": None},
            tool("fetch_page", {"q": "a b"}, "ok"),
            {**tool("", {"q": "a"}, "ok"), "tool": None},
            gen("done"),
        ),
    )
    yield (
        "candidates that differ once normalized",
        traj(
            tool("search_docs", {"q": "a", "page": 1}),
            tool("search_docs", {"q": "a", "page": 2}),
            tool("search_docs", {"q": "a", "page": 3}),
            gen("done"),
        ),
    )
    yield (
        "nameless calls",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, synthesized=True),
            tool("", None, "ok"),
            gen("done"),
        ),
    )
    yield (
        "ends unset, before starts, or missing",
        traj(
            gen("a", start_ns=5 * MS, end_ns=0),
            tool("search_docs", {"q": "a"}, "ok", start_ns=40 * MS, end_ns=20 * MS),
            gen("b", start_ns=None, end_ns=None),
        ),
    )
    yield (
        "an end before its start, a duration that rounds",
        traj(
            gen("a", start_ns=1_700_000_000_000_000_000, end_ns=1_700_000_000_012_345_450),
            tool("search_docs", {"q": "a"}, "ok", start_ns=1_700_000_000_000_000_300, end_ns=7),
            gen("b", start_ns=1_700_000_000_000_000_001, end_ns=1_700_000_000_000_250_001),
        ),
    )
    yield ("no times", traj(gen("a"), tool("search_docs", {"q": "a"}, "ok"), timed=False))
    yield (
        "a run of over 104 days",
        traj(gen("a", start_ns=0, end_ns=2**53 + 1), gen("b", start_ns=1, end_ns=2)),
    )
    yield "calls sharing spans, one without", _calls_sharing_spans()
    yield "handoffs and delegation", _transfers(named=True)
    yield "transfers without agent names, a nameless call", _transfers(named=False)
    yield (
        "a call an MCP server ran under its own name, ignored and out-of-order calls",
        traj(
            gen(tool_calls=["docs_search"]),
            tool("transfer_to_b", {}, "ok"),
            tool("docs_search", {"q": "b"}, "ok", attributes={"mcp_tool": "search_docs"}),
            tool("drop_table", {"name": "t"}, "ok"),
            tool("search_docs", {"q": "a"}, "ok"),
            gen("done"),
        ),
    )
    yield (
        "token counts past 64 bits",
        traj(gen("a", tokens=(2**70, None)), gen("b", tokens=(None, 3)), gen("c")),
    )
    yield (
        "ties among the heaviest model calls",
        traj(*(gen(str(i), tokens=(t, 0)) for i, t in enumerate((7, 9, 7, 9, 3, 9, 7, 0, 12)))),
    )
    yield (
        "an answering call",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, "ok"),
            gen(tool_calls=["final_answer"]),
            tool("final_answer", {"answer": "done"}, "done"),
        ),
    )
    yield (
        "failed calls over three listed, refused and retried",
        traj(
            gen(tool_calls=["fetch_page", "search_docs"]),
            tool("fetch_page", {"u": 1}, "error: 503", status="error"),
            tool("search_docs", {"q": "a"}, {"error": "timeout"}),
            tool("fetch_page", {"u": 1}, "error: 503", status="error"),
            tool("delete_records", {"id": 1}, "no", status="error", attributes={"denied": True}),
            tool("delete_records", {"id": 1}, "ok"),
            tool("search_docs", {"q": "a"}, '{"error": "again"}'),
            tool("fetch_page", {"u": 1}, "ok"),
            tool("search_docs", {"q": "a"}, "ok"),
            gen("done"),
        ),
    )
    yield (
        "a nameless call failed and retried",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, synthesized=True),
            tool("", None, "error: boom", status="error"),
            tool("", None, "error: boom", status="error"),
            tool("", None, "ok"),
            gen("done"),
        ),
    )
    yield "lone surrogates in names and texts", _surrogates(stopped=False)
    yield "lone surrogates, the run stopped short", _surrogates(stopped=True)
    yield from _citing()
    yield from _dependencies()


def _citing() -> Iterator[tuple[str, Trajectory]]:
    """Answers citing ids: found in a call's text, structured and documents results and in
    the tool results a model call was handed; near misses (``doc-12`` for ``doc-1``, a
    non-ASCII letter continuing an id); an id no source returns, with a result not captured,
    every result captured, or no work shown at all; ids with a space; lone surrogates."""
    hits = {"hits": [{"id": "doc-12", "title": "a, b"}, {"id": "doc 3"}], "n": 2.5}
    handed = [
        {"role": "user", "parts": [{"type": "text", "content": "q"}]},
        {
            "role": "tool",
            "content": {"docs": ["doc-7", "[doc-8]"]},
        },
        {"role": "user", "parts": [{"type": "tool_call_response", "response": "doc-9 é"}]},
    ]
    yield (
        "citations grounded in results, documents and model inputs",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, hits),
            tool("fetch_page", {"u": 1}, "see [doc-1] and doc-4é", documents=[{"id": "doc 5"}]),
            gen(tool_calls=["search_docs"], input_messages=handed),
            tool("search_docs", {"q": "b"}, f"doc-{LONE} doc-30 {LONE}-2"),
            gen(f"Per [doc-1], doc-12, doc 3 and doc 5, doc-7 [doc-8] doc-9 {LONE}-2 doc-30."),
        ),
    )
    yield (
        "an id no result holds, one result not captured",
        traj(
            tool("search_docs", {"q": "a"}, "doc-1 doc-2"),
            tool("search_docs", {"q": "b"}, None),
            tool("fetch_page", {"q": "b"}, None, status="error"),
            gen("See doc-1 and doc-9 and doc-4é [doc-2]."),
        ),
    )
    yield (
        "an id no result holds, every result captured",
        traj(
            tool("search_docs", {"q": "a"}, {"ids": ["doc-1", "doc-12", "doc 3"]}),
            tool("fetch_page", {"q": "b"}, "doc-12 doc-1x"),
            gen(input_messages=handed, tool_calls=["search_docs"]),
            tool("search_docs", {"q": "c"}, "doc-5", end_ns=10**12),
            gen(f"See doc-1, doc-9, doc 3, doc 4, [doc-12] and {LONE}-7.", end_ns=10**11),
        ),
    )
    yield (
        "an answer by a final-answer tool, no times",
        traj(
            gen(tool_calls=["search_docs"]),
            tool("search_docs", {"q": "a"}, "doc-1 [doc-2]"),
            gen(tool_calls=["final_answer"]),
            tool("final_answer", {"answer": "doc-1 doc-3"}, "doc-1 doc-3"),
            timed=False,
            final_answer_tools=("final_answer",),
        ),
    )
    yield (
        "no work shown",
        traj(
            {"kind": StepKind.AGENT, "agent_name": "a", "result": "See doc-1 and doc 2."},
        ),
    )
    # Digits beyond ASCII: the engine's ``\d`` takes them (the core leaves such a text to
    # it); other non-ASCII text beside ASCII ids (the core's).
    yield (
        "ids with digits beyond ASCII",
        traj(
            tool("search_docs", {"q": "a"}, "doc-\u0663 doc-1 doc-\uff12"),
            gen("Voir doc-\u0663, doc-1 et doc-\uff12 (doc-\u0664)."),
        ),
    )
    yield (
        "ids beside text beyond ASCII",
        traj(
            tool("search_docs", {"q": "a"}, "r\u00e9sultat: doc-1, doc-22"),
            gen("Voil\u00e0 \u2014 doc-1 et doc-22, pas doc-3 \u00e9t\u00e9."),
        ),
    )
    # A failure's list of the ids structured results returned: read from the indented JSON
    # the search stands in with where the pattern's literal holds no break character (a
    # digit beyond ASCII after an id there, or a lone surrogate in a text: the engine's; the
    # indented text longer than the core reads, as the compact one is not: the engine's),
    # else from the compact JSON (``\[(\d+)`` finds ``[1`` only there).
    yield (
        "an id no structured result holds",
        traj(
            tool("search_docs", {"q": "a"}, {"ids": ["doc-1", "doc-4\u00e9", "doc-\u0663"]}),
            tool("search_docs", {"q": "b"}, {"n": [1, 2], "pages": [[7, 8]], "e": []}),
            tool("fetch_page", {"q": "c"}, f"doc-3 [4] {LONE}"),
            gen("See doc-1, doc-9, [7] and [9]."),
        ),
    )
    # Compact, 100,000 characters (``MAX_ID_TEXT``, the core's); indented, 102,006.
    padded = {
        "ids": [f"doc-{i}" for i in range(1_000)],
        "pages": [[i] for i in range(1_000)],
        "pad": "x" * 82_189,
    }
    yield (
        "an id no structured result holds, its indented text past what the core reads",
        traj(tool("search_docs", {"q": "a"}, padded), gen("See doc-1, doc-9999, [1] and [9].")),
    )
    # Answers on each side of the longest text the core reads (``MAX_ID_TEXT``).
    for size in (99_990, 100_010):
        answer = "doc-1 " + "x" * (size - 12) + " doc-2"
        yield (
            f"an answer of {len(answer):,} characters",
            traj(tool("search_docs", {"q": "a"}, "doc-1"), gen(answer)),
        )


RESULTS: tuple[Any, ...] = (
    {"documents": [{"id": "doc-1"}], "status": "ok"},
    {"status": "ok"},
    {"a": [], "b": [1]},
    [1],
    "hello",
    " 42",
    "\t true",
    '{"documents": [1]}',
    '"x"',
    "null, then text",
    "\x0bhello",
    f"{LONE}",
    0,
    2.5,
    {},
    [],
    {"documents": [], "status": "ok"},
    "   ",
    "[]",
    " null",
    '{"documents": []}',
    '""',
    "\x0b \x0c",
    "no results here",
)
"""Tool results, healthy and empty (as ``is_empty_result`` or ``empty_pattern`` sees
them), of every type and shape the plan decides itself or hands to Python."""

ANSWERS = (
    "done",
    "I don't know the answer",
    "the search failed",
    f"done{LONE}",
    "I'm not sure: it TIMED OUT",
    "caf\u00e9: no results",
)
"""Final answers: plain, voicing uncertainty, disclosing a failure, with a lone surrogate,
both in capitals, beyond ASCII."""


def _dependencies() -> Iterator[tuple[str, Trajectory]]:
    """Runs whose dependency calls are healthy, degraded or unknown in each way
    ``find_degradation`` tells apart, under each kind of answer."""
    for result in RESULTS:
        yield (
            f"a search returning {result!r}",
            traj(
                gen(tool_calls=["search_docs"]),
                tool("search_docs", {"q": "a"}, result),
                gen("done"),
            ),
        )
    search = tool("search_docs", {"q": "a"}, {"documents": [{"id": "doc-1"}]})
    for answer in ANSWERS:
        yield f"a healthy search, answering {answer!r}", traj(search, gen(answer))
        yield (
            f"a failed search, answering {answer!r}",
            traj(tool("search_docs", {"q": "a"}, "error: timed out", status="error"), gen(answer)),
        )
    kinds = {
        "documents and no result": {"documents": [{"id": "doc-1"}], "result": None},
        "no documents": {"documents": []},
        "neither documents nor result": {"result": None},
        "a redacted result": {"redacted": ("result",)},
        "redacted documents": {"redacted": ("documents",), "documents": []},
        "a result the mapping saw empty": {"attributes": {"result_empty": True}},
        "an unknown outcome": {"attributes": {"outcome_unknown": True}},
        "a degradation attribute": {"attributes": {"degraded": "true", f"d{LONE}": "ok"}},
        "a healthy degradation attribute": {"attributes": {"degraded": "ok"}},
    }
    for name, fields in kinds.items():
        call = {**tool("search_docs", {"q": "a"}, "found doc-1"), **fields}
        yield f"a search with {name}", traj(call, gen("done"))
    yield (
        "a failure then a retry that worked, two agents, a namespaced and a served call",
        traj(
            tool("search_docs", {"q": "a"}, "error: boom", status="error"),
            tool("search_docs", {"q": "a"}, "found doc-1"),
            tool("search_docs", {"q": "b"}, "found doc-2", agent="helper"),
            tool("docs_search_docs", {"q": "c"}, "found doc-3"),
            tool("docs_lookup", {"q": "d"}, "found doc-4", attributes={"mcp_tool": "search_docs"}),
            tool(f"se{LONE}", {"q": "e"}, "found doc-5"),
            gen("done"),
        ),
    )
    yield (
        "a namespaced call that failed last",
        traj(
            tool("search_docs", {"q": "a"}, "found doc-1"),
            tool("docs_search_docs", {"q": "c"}, "error: boom", status="error"),
            gen("done"),
        ),
    )
    yield (
        "another agent's search failed last",
        traj(
            tool("search_docs", {"q": "a"}, "found doc-1"),
            tool("search_docs", {"q": "b"}, {"error": "down"}, agent="helper"),
            gen("search failed"),
        ),
    )


def _surrogates(stopped: bool) -> Trajectory:
    """Tool names, results, error texts and agent names holding a lone surrogate: calls over
    a max, failed and retried, a loop, a handoff; ``stopped``, the run also ends in the
    middle of its work, so ``stopped_short``'s text names a call by its tool."""
    named = f"se{LONE}"
    steps = [
        gen(tool_calls=[named]),
        tool(named, {"q": LONE}, f"error: time{LONE}out", status="error", agent=f"res{LONE}"),
        tool(named, {"q": LONE}, {"error": f"again{LONE}"}, agent=f"res{LONE}"),
        tool(named, {"q": LONE}, "ok", agent=f"res{LONE}"),
        tool(f"fetch{LONE}", {"u": 1}, f"error: 50{LONE}", status="error"),
        {"kind": StepKind.HANDOFF, "from_agent": f"res{LONE}", "to_agent": f"b{LONE}"},
        gen(tool_calls=[named]),
        tool(named, {"q": "b"}, "ok") if stopped else gen("done"),
    ]
    return traj(*steps)


def _transfers(named: bool) -> Trajectory:
    """Handoffs (one repeated) and agents run inside others' time spans (a tie of starts
    among the outer ones); without agent names (``named`` off) a handoff records neither
    agent and a call records no tool name."""
    agent = StepKind.AGENT

    def run(name: str | None, start: int, end: int | None) -> dict[str, Any]:
        return {"kind": agent, "agent_name": name, "start_ns": start * MS, "end_ns": end}

    steps = [
        run("researcher", 0, 100 * MS),
        run("research_assistant", 10, 50 * MS),
        run("reviewer", 10, 60 * MS),
        run("helper", 20, 30 * MS),
        run("helper", 25, 28 * MS),
        run("researcher", 30, None),
        run(None, 31, 32 * MS),
        {"kind": StepKind.HANDOFF, "from_agent": "researcher", "to_agent": "research_assistant"},
        {"kind": StepKind.HANDOFF, "from_agent": "research_assistant", "to_agent": None},
        {"kind": StepKind.HANDOFF, "from_agent": "researcher", "to_agent": "research_assistant"},
    ]
    if not named:
        steps = [
            {"kind": StepKind.HANDOFF, "from_agent": None, "to_agent": None},
            tool("", None, "ok"),
            run("triage", 0, 10 * MS),
        ]
    return traj(*steps, timed=False)


def _calls_sharing_spans() -> Trajectory:
    """Seven calls (more than a failure lists), two pairs recorded by one span each and one
    call with no source span: what ``max_tool_calls``' failure points at, without repeats."""
    spans = ["a", "a", "b", None, "c", "c", "d"]
    steps = [
        Step(
            index=i,
            source=None if span is None else SpanRef(trace_id="t1", span_id=span),
            **tool("search_docs", {"q": str(i)}, "ok"),
        )
        for i, span in enumerate(spans)
    ]
    return Trajectory(steps=steps, trace_id="t1")


def _findings_agree(
    trajectories: Iterator[tuple[str, Trajectory]], types: Iterable[str] = tuple(PARAMS)
) -> dict[str, int]:
    """Every oracle's ``check`` and its plan against the reference on each trajectory (each
    asked of a fresh ``Evidence`` too, so no answer leans on another's memo); how often
    each check's plan answered, and how many trajectories a framework's limit stopped, held
    an answering call, held a nameless call (the paths the plans leave or word apart)."""
    oracles = _oracles(types)
    contract = parse_contract(
        {"id": "plans", "invariants": [{"type": "max_steps", "max": 1}]}, "plans"
    )
    answered: dict[str, int] = dict.fromkeys(
        [*types, *PATHS, "stopped", "answering", "nameless"], 0
    )
    seen = 0
    for where, trajectory in trajectories:
        seen += 1
        shared = GradeContext(trajectory, contract)
        ev = shared.evidence
        answered["stopped"] += ev.stopped_short() is not None
        answered["answering"] += bool(ev.answering())
        answered["nameless"] += bool(ev.nameless_calls())
        for oracle in oracles:
            if oracle.oracle_type in CITING and ev.final_output().text is None:
                continue
            if oracle.oracle_type in JUDGED_ON_THEIR_EVIDENCE and ev.gaps(
                tuple(sorted(oracle.required_evidence()))
            ):
                continue
            fresh = GradeContext(trajectory, contract, evidence=Evidence(trajectory))
            want = REFERENCE[oracle.oracle_type](oracle, fresh)
            got = oracle.check(shared)
            assert repr(got) == repr(want), (where, oracle.oracle_type, oracle.given)
            assert got == want
            plan = oracle.native_plan
            assert plan is not None
            planned = plan.finding(GradeContext(trajectory, contract))
            if planned is None and oracle.oracle_type == "degraded_answer":
                key = f"degraded_answer: {want.status} left to Python"
                answered[key] = answered.get(key, 0) + 1
            if planned is not None:
                answered[oracle.oracle_type] += 1
                if oracle.oracle_type in ANSWERING_EVERY:
                    key = f"{oracle.oracle_type}: {planned.status}"
                    answered[key] = answered.get(key, 0) + 1
                for path, (oracle_type, status, used) in PATHS.items():
                    answered[path] += (
                        oracle.oracle_type == oracle_type
                        and planned.status == status
                        and (planned.used > 0) == used
                    )
                assert type(planned) is Finding
                assert repr(planned) == repr(want), (where, oracle.oracle_type, oracle.given)
                assert type(planned.details) is dict and type(planned.message) is str
    assert seen
    answered["trajectories"] = seen
    return answered


def test_plans_answer_as_the_python_checks_did_on_captured_traces() -> None:
    answered = _findings_agree(captured_trajectories(SCENARIOS), USUAL_ANSWERS)
    # The plans answer the usual paths (every check's plan answered some trajectory), and
    # the captures reach the paths they leave to Python or word apart.
    assert all(answered.values()), answered


def test_plans_answer_every_trajectory_as_the_python_checks_did_on_captured_traces() -> None:
    types = tuple(t for t in ANSWERING_EVERY if t not in CITING)
    answered = _findings_agree(captured_trajectories(EVERY_ANSWER_SCENARIOS), types)
    # Each answered every trajectory, passes and failures among them.
    for oracle_type in types:
        assert answered[oracle_type] == answered["trajectories"] * len(PARAMS[oracle_type])
    for oracle_type in types:
        assert answered.get(f"{oracle_type}: pass"), answered
        assert answered.get(f"{oracle_type}: fail"), answered


def test_citation_plans_answer_as_the_python_checks_did_on_captured_traces() -> None:
    answered = _findings_agree(captured_trajectories(CITING_SCENARIOS), CITING)
    # Each answered every trajectory with a known answer: passes, failures and missing
    # evidence (``citations_grounded``) among them.
    assert answered["citations_grounded"] > answered["trajectories"], answered
    for status in ("pass", "fail", "missing"):
        assert answered.get(f"citations_grounded: {status}"), answered
    for status in ("pass", "fail"):
        assert answered.get(f"citation_required: {status}"), answered


def test_plans_answer_as_the_python_checks_did_on_edge_cases() -> None:
    answered = _findings_agree(_edge_cases())
    assert all(answered[oracle_type] for oracle_type in PARAMS), answered
    assert answered["nameless"], answered
    assert all(answered[path] for path in PATHS), answered
    # Each answer of the plans that make every answer is reached.
    for oracle_type in ANSWERING_EVERY:
        for status in ("pass", "fail", "missing"):
            if status != "missing" or oracle_type not in NO_MISSING:
                assert answered.get(f"{oracle_type}: {status}"), (oracle_type, status, answered)
    # A degradation, found or unknown, is the Python body's to word (a pass, a failure, a
    # missing answer), never the plan's.
    for status in ("pass", "fail", "missing"):
        assert answered.get(f"degraded_answer: {status} left to Python"), (status, answered)


def _without_plan(check: CompiledCheck) -> CompiledCheck:
    """``check`` as the loop sees a plug-in's (``foreign``): asked through ``check``."""
    return CompiledCheck(
        check.layer,
        check.spec,
        check.oracle,
        check.evidence,
        check.setup_error,
        check.budget,
        foreign=True,
    )


@pytest.mark.parametrize("layer", ["invariant", "tolerance"])
def test_the_loop_builds_the_same_result_from_a_plan(layer: str) -> None:
    contract = parse_contract(
        {"id": "plans", "invariants": [{"type": "max_steps", "max": 1}]}, "plans"
    )
    for _, trajectory in _edge_cases():
        for oracle_type, variants in PARAMS.items():
            for params in variants:
                spec = OracleSpec(type=oracle_type, params=params, why="w")
                check = compile_check(layer, spec)  # type: ignore[arg-type]
                for clear, gapless in ((True, True), (False, False)):
                    ctx = GradeContext(trajectory, contract)
                    got = run_compiled(check, ctx, clear, gapless)
                    ctx = GradeContext(trajectory, contract)
                    want = run_compiled(_without_plan(check), ctx, clear, gapless)
                    assert got.model_dump(exclude={"duration_ns"}) == want.model_dump(
                        exclude={"duration_ns"}
                    ), (oracle_type, params, clear, gapless)


BENCH_PARAMS: dict[str, list[dict[str, Any]]] = {
    "no_network": [
        {},
        {"patterns": ["pytest"]},
        {"patterns": ["calc", "no such pattern"]},
        {"patterns": ["WRITE_FILE", f"q{LONE}"]},
        {"patterns": ['"', "\n"]},
    ],
    "file_not_modified": [
        {"path": "pytest.ini"},
        {"path": "./pytest.ini"},
        {"path": "calc.py"},
        {"path": "tests/test_calc.py"},
        {"path": "docs/notes.md"},
        {"path": f"data/{LONE}.txt"},
        {"path": "not_in_the_workspace.txt"},
    ],
    "assertion_exists": [
        {"path": "tests/test_calc.py", "pattern": r"^\s*assert add\("},
        {"path": "calc.py", "pattern": "calculator"},
        {"path": "./calc.py", "pattern": "^zzz"},
        {"path": "pytest.ini", "pattern": "testpaths"},
        {"path": "missing.py", "pattern": "x"},
        {"path": "docs/notes.md", "pattern": "."},
        {"path": f"data/{LONE}.txt", "pattern": "."},
    ],
}
"""The AgentBench checks whose usual answers the core makes (``check_plans_agentbench.rs``):
the defaults and patterns the steps hold, files of the task's workspace (one written as
``./``, one in a directory), files it lacks (one named with a lone surrogate)."""

BENCH_WORKSPACE = {
    "calc.py": "# calculator\n",
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    "docs/notes.md": "notes\n",
}

BENCH_SCENARIOS = ("a_happy", "h_coding_agent", "d_forbidden_tool", "m_excess_calls")
"""Captured scenarios for the AgentBench checks: a plain run, a coding run (file edits and
commands), a forbidden call, many calls."""


def _bench_edge_cases() -> Iterator[tuple[str, Trajectory]]:
    edit, command = StepKind.FILE_EDIT, StepKind.COMMAND
    yield "no steps", traj()
    yield (
        "calls naming nothing judged",
        traj(gen(tool_calls=["search_docs"]), tool("search_docs", {"q": "a"}, "ok"), gen("done")),
    )
    yield (
        "edits of the judged files, then calls",
        traj(
            tool("write_file", {"path": "calc.py"}, kind=edit, path="calc.py", content="x\n"),
            tool("run_command", {"command": "cat calc.py"}, kind=command, command="cat calc.py"),
            tool("write_file", {}, kind=edit, path="tests/test_calc.py", content="assert add(1)"),
            tool("write_file", {}, kind=edit, path="pytest.ini", content="[pytest]\n"),
            tool("search_docs", {"q": "pytest"}, "ok"),
        ),
    )
    yield (
        "an edit unchanged, an edit without a path",
        traj(
            tool(
                "write_file",
                {},
                kind=edit,
                path="pytest.ini",
                content=BENCH_WORKSPACE["pytest.ini"],
            ),
            tool("write_file", {"path": "pytest.ini"}, kind=edit, path=None, content="x"),
        ),
    )
    yield (
        "commands that name or write a file",
        traj(
            tool("run_command", {"command": "pytest -q tests/test_calc.py"}, kind=command),
            tool("bash", {"cmd": "echo x > pytest.ini"}),
            tool("bash", {"cmd": "sed -i 's/a/b/' calc.py"}),
            tool("shell", {"command": "ls *.md"}, kind=command, command="ls *.md"),
        ),
    )
    yield (
        "a quoted command, an unquoted one naming nothing",
        traj(
            tool("bash", {"command": "echo 'x' > out.txt"}),
            tool("bash", {"command": "echo x > out.txt"}),
        ),
    )
    yield (
        "names deep in arguments, in raw arguments, in a path",
        traj(
            tool("edit", {"changes": [{"file": {"name": "docs/notes.md"}}]}),
            tool("patch", None, arguments_raw='{"target": "calc.py"}'),
            tool("open", {}, path="./pytest.ini"),
            tool("glob", {"pattern": ["tests/test_?alc.py"]}),
        ),
    )
    yield (
        "network access and requests",
        traj(
            tool("run_command", {"command": "pip install requests"}, kind=command),
            tool("fetch", {"url": "https://example.com"}, "ok"),
            {"kind": StepKind.OTHER, "attributes": {"http.request.method": "GET"}},
        ),
    )
    yield (
        "a request alone, a model call's own transport",
        traj(
            gen("a", start_ns=0, end_ns=100 * MS),
            {
                "kind": StepKind.OTHER,
                "attributes": {"http.method": "POST", "url.full": "https://api.example.com/v1"},
                "start_ns": 10 * MS,
                "end_ns": 20 * MS,
            },
            {"kind": StepKind.OTHER, "attributes": {"note": "not a request"}},
            timed=False,
        ),
    )
    # A glob character's byte stands for nothing else in UTF-8; the full-width ones are no
    # glob characters.
    yield (
        "texts beyond ASCII, no glob character",
        traj(tool("note", {"text": "café \uff1f ünïcode \uff0a ✓"}, "ok"), tool("x", {"t": "é"})),
    )
    yield "a text beyond ASCII with a glob character", traj(tool("note", {"text": "naïve ✓?"}))
    yield (
        "lone surrogates in inputs",
        traj(
            tool("search_docs", {"q": f"pytest{LONE}"}, "ok"),
            tool("bash", {"command": f"ls data/{LONE}.txt"}, kind=command),
        ),
    )
    deep: Any = "calc.py"
    for _ in range(80):
        deep = [deep]
    yield "arguments nested deep", traj(tool("edit", {"a": deep}))


def _replaying_context(
    contract: Contract, trajectory: Trajectory, stack: contextlib.ExitStack
) -> GradeContext:
    """The context the evaluator makes for ``contract`` (which has a workspace) on
    ``trajectory``: replayed in memory, or on disk when the memory replay refuses."""
    compiled = compile_contract(contract)
    assert compiled.workspace is not None
    return _context(compiled, compiled.workspace, Evidence(trajectory), [stack], SANDBOXED)


def _bench_contexts(
    trajectory: Trajectory, contract: Contract, stack: contextlib.ExitStack, on_disk: bool
) -> list[Callable[[], GradeContext]]:
    """Makers of the contexts the evaluator makes of ``trajectory``, each with its own
    evidence: ``contract``'s workspace replayed in memory (when the replay takes the
    edits), none, and with ``on_disk`` replayed lazily on disk."""
    spec = contract.workspace
    none = parse_contract({"id": "none", "invariants": [{"type": "no_network"}]}, "none")
    makers: list[Callable[[], GradeContext]] = [lambda: GradeContext(trajectory, none)]
    if on_disk:
        makers.append(
            lambda: GradeContext(
                trajectory,
                contract,
                initial_workspace=dict(spec),
                materialize=lambda: stack.enter_context(replayed_workspace(spec, trajectory)),
                evidence=Evidence(trajectory),
            )
        )
    try:
        _replaying_context(contract, trajectory, stack)
    except ReplayError:
        return makers
    return [lambda: _replaying_context(contract, trajectory, stack), *makers]


def _outcome(call: Callable[..., Finding], *args: Any) -> tuple[str, str]:
    """``repr`` of what ``call(*args)`` returns, or the type and text of the error it raises
    (a task naming a file its workspace lacks, a replay refused, arguments nested past
    Python's recursion)."""
    try:
        return "returned", repr(call(*args))
    except (ContractError, ReplayError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _bench_agree(trajectories: Iterator[tuple[str, Trajectory]], on_disk: bool) -> dict[str, int]:
    """Each AgentBench check's ``check`` and plan against the reference on each trajectory
    and context (``_bench_contexts``); how often each plan answered, and with what."""
    checks = [
        (
            oracle_type,
            params,
            compile_check("invariant", OracleSpec(type=oracle_type, params=params)),
        )
        for oracle_type, variants in BENCH_PARAMS.items()
        for params in variants
    ]
    contract = parse_contract(
        {"id": "bench", "workspace": BENCH_WORKSPACE, "invariants": [{"type": "no_network"}]},
        "bench",
    )
    answered: dict[str, int] = {}
    seen = 0
    for where, trajectory in trajectories:
        seen += 1
        with contextlib.ExitStack() as stack:
            for made in _bench_contexts(trajectory, contract, stack, on_disk):
                for oracle_type, params, compiled in checks:
                    check = compiled.oracle
                    assert check is not None, compiled.setup_error
                    want = _outcome(REFERENCE[oracle_type], check, made())
                    got = _outcome(check.check, made())
                    assert got == want, (where, oracle_type, params)
                    plan = check.native_plan
                    assert plan is not None
                    planned = plan.finding(made())
                    key = f"{oracle_type}: {'-' if planned is None else planned.status}"
                    answered[key] = answered.get(key, 0) + 1
                    if planned is not None:
                        assert type(planned) is Finding
                        assert ("returned", repr(planned)) == want, (where, oracle_type, params)
                        assert type(planned.details) is dict
    answered["trajectories"] = seen
    return answered


def test_agentbench_plans_answer_as_the_python_checks_did_on_captured_traces() -> None:
    answered = _bench_agree(captured_trajectories(BENCH_SCENARIOS), on_disk=False)
    for key in ("no_network: pass", "file_not_modified: pass", "assertion_exists: fail"):
        assert answered.get(key), answered
    for oracle_type in BENCH_PARAMS:
        assert answered.get(f"{oracle_type}: -"), answered


def test_agentbench_plans_answer_as_the_python_checks_did_on_edge_cases() -> None:
    answered = _bench_agree(_bench_edge_cases(), on_disk=True)
    for key in ("no_network: pass", "file_not_modified: pass", "assertion_exists: fail"):
        assert answered.get(key), answered
    for oracle_type in BENCH_PARAMS:
        assert answered.get(f"{oracle_type}: -"), answered


def test_a_glob_character_is_met_beyond_ascii_as_itself() -> None:
    # A call whose input holds `*` or `?` may name any file: the plan leaves the check to
    # Python. Other characters (the full-width U+FF1F and U+FF0A among them) name nothing.
    contract = parse_contract(
        {"id": "bench", "workspace": BENCH_WORKSPACE, "invariants": [{"type": "no_network"}]},
        "bench",
    )
    check = compile_check(
        "invariant", OracleSpec(type="file_not_modified", params={"path": "pytest.ini"})
    ).oracle
    assert check is not None and check.native_plan is not None
    answered = []
    for text in ("café \uff1f ünïcode \uff0a ✓", "naïve ✓?", "naïve ✓*", "plain", "pytest.ini"):
        with contextlib.ExitStack() as stack:
            ctx = _replaying_context(contract, traj(tool("note", {"text": text})), stack)
            answered.append(check.native_plan.finding(ctx) is not None)
    assert answered == [True, False, False, True, False]


@pytest.mark.parametrize("layer", ["invariant", "tolerance"])
def test_the_loop_builds_the_same_result_from_an_agentbench_plan(layer: str) -> None:
    contract = parse_contract(
        {"id": "bench", "workspace": BENCH_WORKSPACE, "invariants": [{"type": "no_network"}]},
        "bench",
    )
    for _, trajectory in _bench_edge_cases():
        for oracle_type, variants in BENCH_PARAMS.items():
            for params in variants:
                spec = OracleSpec(type=oracle_type, params=params, why="w")
                check = compile_check(layer, spec)  # type: ignore[arg-type]
                for clear, gapless in ((True, True), (False, False)):
                    results = []
                    for compiled in (check, _without_plan(check)):
                        with contextlib.ExitStack() as stack:
                            try:
                                ctx = _replaying_context(contract, trajectory, stack)
                            except ReplayError:
                                continue
                            got = run_compiled(compiled, ctx, clear, gapless)
                            results.append(got.model_dump(exclude={"duration_ns"}))
                    assert len(set(map(repr, results))) <= 1, (oracle_type, params, results)


def test_the_cores_retries_are_those_the_python_found() -> None:
    """``find_retries`` (the core's, ``retries.rs``) finds the retries the Python did, for
    every tool selection and error pattern, on the captured traces and the edge cases, and
    answers a second ask from the evidence's memo."""
    trajectories = [*captured_trajectories(SCENARIOS), *_edge_cases()]
    selections: list[tuple[str, ...]] = [
        (),
        ("search_docs",),
        ("fetch_*", "search_docs"),
        (f"se{LONE}",),
        ("no_such_tool",),
    ]
    retried = 0
    for where, trajectory in trajectories:
        for tools in selections:
            for pattern in (DEFAULT_ERROR_PATTERN, None, "(?i)timeout|503"):
                ev = Evidence(trajectory)
                got = find_retries(ev, tools, pattern)
                assert find_retries(ev, tools, pattern) is got
                want = reference_retries(Evidence(trajectory), tools, pattern)
                assert [(id(s), id(f), why) for s, f, why in got] == [
                    (id(s), id(f), why) for s, f, why in want
                ], (where, tools, pattern)
                retried += bool(got)
    assert retried


def _served_calls() -> Trajectory:
    """Calls a framework qualified (``mcp_tool``: the MCP server's own name), with tools a
    selection names, a placeholder and no tool, and an ``mcp_tool`` that is no ``str``."""
    steps = [
        Step(
            index=0,
            kind=StepKind.TOOL_CALL,
            tool="mcp__docs__search",
            attributes={"mcp_tool": "search"},
        ),
        Step(
            index=1, kind=StepKind.TOOL_CALL, tool="search_docs", attributes={"mcp_tool": "lookup"}
        ),
        Step(index=2, kind=StepKind.GENERATION, model="m"),
        Step(index=3, kind=StepKind.TOOL_CALL, tool=None, attributes={"mcp_tool": "search"}),
        Step(index=4, kind=StepKind.TOOL_CALL, tool="", attributes={"mcp_tool": None}),
        Step(index=5, kind=StepKind.RETRIEVAL, tool=f"se{LONE}", attributes={}),
        Step(index=6, kind=StepKind.TOOL_CALL, tool="search_docs", attributes={"mcp_tool": ""}),
        Step(index=7, kind=StepKind.TOOL_CALL, tool="fetch_page", attributes={"mcp_tool": "x"}),
    ]
    return Trajectory(steps=steps)


def test_the_cores_call_selections_are_those_the_python_made() -> None:
    """``Evidence.calls_of`` (the core's, ``evidence.rs``) selects the calls the Python did
    (``check_reference.calls_named``), in step order, for every selection and mode, on the
    captured traces, the edge cases and calls named through ``mcp_tool``; a second ask is
    the memo's tuple, and the plans' and the Python checks' asks share it."""
    trajectories = [
        *captured_trajectories(SCENARIOS),
        *_edge_cases(),
        ("served", _served_calls()),
    ]
    selections: list[tuple[str, ...]] = [
        (),
        ("search_docs",),
        ("search",),
        ("fetch_*", "search_docs"),
        ("lookup", "no_such_tool"),
        ("",),
        (f"se{LONE}",),
        ("*",),
    ]
    chosen = 0
    for where, trajectory in trajectories:
        ev = Evidence(trajectory)
        for tools in selections:
            for lenient in (False, True):
                got = ev.calls_of(tools, lenient)
                assert _native.calls_of(ev, tools, lenient) is got
                assert ev.calls_of(tuple(tools), lenient) is got
                want = (
                    trajectory.tool_calls()
                    if not tools
                    else check_reference.calls_named(ev.groups.calls, tools, lenient)
                )
                assert [id(s) for s in got] == [id(s) for s in want], (where, tools, lenient)
                chosen += 0 < len(got) < len(ev.groups.calls)
    assert chosen


EVIDENCE_NAMES = (
    *sorted(PROBES),
    "attribute:gen_ai.system",
    "attribute:no.such.key",
    "tool_arguments:search_*",
    "tool_results:fetch_*",
    "tool_outcomes:search_docs",
)
"""Every evidence name, plain and scoped: the core's probes and the Python's together."""


def _plans() -> list[Plan]:
    """Plans of each name alone, of every name, and of random sets of them (sorted, unique,
    as a contract's): core-probed and Python-probed names mixed."""
    rng = random.Random(38)
    tuples = [(name,) for name in EVIDENCE_NAMES if name != "attribute"]
    tuples.append(tuple(sorted(n for n in EVIDENCE_NAMES if n != "attribute")))
    for _ in range(24):
        picked = rng.sample([n for n in EVIDENCE_NAMES if n != "attribute"], rng.randint(2, 6))
        tuples.append(tuple(sorted(picked)))
    return [Plan(names) for names in tuples]


def test_the_cores_lacking_answers_are_those_the_python_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Evidence.lacking_of`` and the evaluator's ``known_clear`` (the core's,
    ``evidence.rs``) answer as the Python did (``check_reference.lacking_of``,
    ``known_clear``) for plans of core-probed, Python-probed and scoped names, on the
    captured traces and the edge cases: the same names and messages in position order,
    kept in the memo under the plan (a second ask is the same tuple). A probe raising
    leaves the contract not clear; ``KeyboardInterrupt`` escapes."""
    plans = _plans()
    lacked = 0
    for where, trajectory in [*captured_trajectories(SCENARIOS), *_edge_cases()]:
        ev, reference = Evidence(trajectory), Evidence(trajectory)
        for plan in plans:
            got = ev.lacking_of(plan)
            assert got == check_reference.lacking_of(reference, plan), (where, plan)
            assert ev.lacking_of(plan) is got and ev.memo[plan] is got
            lacked += bool(got)
            for incomplete in (False, True):
                want = check_reference.known_clear(Evidence(trajectory), plan, incomplete)
                assert known_clear(Evidence(trajectory), plan, incomplete) == want, where
    assert lacked > 100

    def broken(ev: Evidence, scope: str | None) -> str | None:
        raise failure

    trajectory = next(t for _, t in _edge_cases())
    plan = Plan(("final_output", "steps"))
    monkeypatch.setitem(evidence_module.PROBES, "final_output", broken)
    failure: BaseException = RuntimeError("probe broke")
    assert known_clear(Evidence(trajectory), plan, False) == (False, True)
    with pytest.raises(RuntimeError):
        Evidence(trajectory).lacking_of(plan)
    failure = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        known_clear(Evidence(trajectory), plan, False)


def _named_steps() -> Iterator[Step]:
    """Steps of every kind and naming: tools, models, agents, kinds alone, with and without
    a span, lone surrogates in names and span ids, placeholders and redactions."""
    for _, trajectory in [*captured_trajectories(SCENARIOS), *_edge_cases(), *_citing()]:
        yield from trajectory.steps
    spans = (None, SpanRef(trace_id="t", span_id="ab12"), SpanRef(trace_id="t", span_id=LONE))
    names: list[dict[str, Any]] = [
        {"kind": StepKind.TOOL_CALL, "tool": "search_docs", "model": "m"},
        {"kind": StepKind.TOOL_CALL, "tool": "", "agent_name": "a"},
        {"kind": StepKind.GENERATION, "model": f"gpt{LONE}", "agent_name": "a"},
        {"kind": StepKind.GENERATION, "agent_name": "a"},
        {"kind": StepKind.AGENT, "model": "m", "agent_name": ""},
        {"kind": StepKind.AGENT, "model": "m"},
        {"kind": StepKind.HANDOFF},
        {"kind": StepKind.RETRIEVAL, "tool": f"t{LONE}", "result": "[REDACTED]"},
        {"kind": StepKind.TOOL_CALL, "tool": "t", "result": {"a": "***"}, "redacted": []},
        {"kind": StepKind.TOOL_CALL, "tool": "t", "result": "x", "redacted": ["result"]},
        {"kind": StepKind.TOOL_CALL, "tool": "t", "result": [], "arguments": {}},
    ]
    for index in (0, 7, BIG):
        for source in spans:
            for fields in names:
                yield Step(index=index, source=source, **fields)


def test_where_list_steps_and_absent_are_what_the_python_said() -> None:
    """The core's ``where``, ``list_steps`` and ``absent`` (``evidence/naming.rs``, what
    ``otel_oracles.grade.evidence`` exports) word and judge every step as the Python
    functions did."""
    steps = list(_named_steps())
    assert len(steps) > 200
    for step in steps:
        assert _native.where(step) == check_reference.where(step), step
        for field in ("result", "arguments", "documents", "input_messages"):
            want = check_reference.absent(step, field)
            assert _native.absent(step, field) is want, (step, field)
    for count in (0, 1, 5, 6, 40):
        for chosen in (steps[:count], tuple(steps[-count:]) if count else ()):
            assert _native.list_steps(chosen) == check_reference.list_steps(chosen)
    assert _native.MAX_LISTED_STEPS == 5


ID_PATTERNS = (
    r"doc-\d+",
    r"(doc-\d+)",
    r"doc-(\d+)",
    "doc-[0-9]+",
    r"doc \d+",
    r"a\.b\-\(\d+",
    r"aa\d+",
    r"\#\d+",
    "x_:/@=!,;'\"%&~<>`\\d+",
    r"\\\d+",
)
"""Patterns the core answers (a literal and a digit run), its escapes and punctuation."""

OTHER_PATTERNS = (
    r"\d+",
    r"doc-\d+?",
    r"doc-\d*",
    r"(?i)doc-\d+",
    r"(doc-(\d+))",
    r"\[(doc-\d+)\]",
    r"doc-\w+",
    r"doc-\d{2}",
    f"{LONE}-\\d+",
    r"doc-\d+\b",
    r"#\d+",
)
"""Patterns it leaves to the engine."""


def _id_texts() -> Iterator[str]:
    """Texts holding ids and near misses, digits beyond ASCII, lone surrogates, overlapping
    literals, every pattern's literal; and random texts over those characters."""
    yield from ("", "doc-", "doc-1", "doc-12 doc-1 doc-12", "doc-doc-7", "aaa1", "doc-1x2")
    yield from ("doc-\u0663", "doc-1\u0663", "doc-1 \u0663", "\u00e9doc-2\u00e9", f"doc-{LONE}")
    yield from (f"{LONE} doc-3", "doc-\uff11", "a.b-(9 a.b-(x", "#1#2 ##3", "\\12")
    yield "x_:/@=!,;'\"%&~<>`7 doc 4 doc  5"
    yield "doc-1 " * 20_000
    alphabet = ["doc-", "d", "o", "-", "1", "23", " ", "\u0663", "\u00e9", LONE, "aa", "#"]
    rng = random.Random(36)
    for _ in range(400):
        yield "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))


def test_a_failure_searched_past_the_budget_on_stand_in_texts_lists_what_the_reference_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A budget the indented stand-in texts run past and the made ones do not: the search
    stops part way through the stand-ins (at the second result, a third of it newlines
    indented) and answers on the made texts; the failure's list of the ids the sources
    returned reads the stand-ins the first search kept and makes the third again
    (``check_plans_cite.rs``), as the reference lists them from the made texts."""
    results = [
        tool("search_docs", {"q": "a"}, {"ids": ["doc-500"]}),
        tool("search_docs", {"q": "b"}, {"pages": [[i] for i in range(300)]}),
        tool("search_docs", {"q": "c"}, {"ids": ["doc-700"]}),
    ]
    ids = ["doc-9"]
    trajectory = traj(*results, gen("See doc-9."))
    made = [trace_answers.result_text(step["result"]) for step in results]
    found = _native.ground_ids(
        ids,
        lambda i, _: made[i] if i < len(made) else False,
        trace_answers._continues_id,
        False,
        trace_answers.CITATION_SCAN_BUDGET,
    )
    assert found is not None and found[0] == [None] * len(ids)
    budget = trace_answers.CITATION_SCAN_BUDGET - found[1]
    stand_ins = [check_reference._search_text(step["result"])[0] for step in results]
    asked: list[int] = []

    def stand_in(i: int, _: bool) -> str | bool:
        asked.append(i)
        return stand_ins[i] if i < len(stand_ins) else False

    searched = _native.ground_ids(ids, stand_in, trace_answers._continues_id, True, budget)
    assert searched is None and asked == [0, 1]  # the third never asked
    monkeypatch.setattr(trace_answers, "CITATION_SCAN_BUDGET", budget)
    [oracle] = _oracles(["citations_grounded"])[:1]
    contract = parse_contract(
        {"id": "plans", "invariants": [{"type": "max_steps", "max": 1}]}, "plans"
    )
    got = oracle.check(GradeContext(trajectory, contract))
    want = REFERENCE["citations_grounded"](oracle, GradeContext(trajectory, contract))
    assert repr(got) == repr(want)
    assert got.status == "fail" and got.details["returned"] == ["doc-500", "doc-700"], got.message
    # One character less: the made texts run past it too.
    monkeypatch.setattr(
        trace_answers, "CITATION_SCAN_BUDGET", trace_answers.CITATION_SCAN_BUDGET - 1
    )
    [oracle] = _oracles(["citations_grounded"])[:1]
    with pytest.raises(WorkBudgetExceeded):
        oracle.check(GradeContext(trajectory, contract))


def test_the_cores_cited_ids_are_the_engines() -> None:
    """``cited_ids`` (the core's ``IdPattern``) finds the ids the regex engine finds for every
    pattern of its shape, answers every text within its reach that holds nothing beyond
    ASCII, and leaves every other pattern, and a text past ``MAX_ID_TEXT``, to the engine."""
    answered = 0
    for text in _id_texts():
        for pattern in ID_PATTERNS:
            got = _native.cited_ids(pattern, text)
            if got is None:
                assert not text.isascii() or len(text) > 100_000, (pattern, text)
                continue
            answered += 1
            assert got == engine_cited_ids(pattern, text), (pattern, text)
        for pattern in OTHER_PATTERNS:
            assert _native.cited_ids(pattern, text) is None, (pattern, text)
    assert answered > 2_000
    # Every character the core reads as itself in a literal, escaped and plain.
    chars = [(f"\\{c}", c) for c in "-_:/@=!,;'\"%&~.^$*+?{}[]()|\\# "]
    chars += [(c, c) for c in "-_:/@=!,;'\"%&~<>`"]
    for literal, c in chars:
        pattern, text = f"{literal}\\d+", f"a{c}12 {c}x{c}3{c}{c}4"
        got = _native.cited_ids(pattern, text)
        assert got is not None and got == engine_cited_ids(pattern, text), pattern
    huge = "doc-1 " + "x" * 100_000
    assert _native.cited_ids(r"doc-\d+", huge) is None
    assert trace_answers._cited_ids(r"doc-\d+", huge) == ["doc-1"]
    assert trace_answers._cited_ids(r"doc-\d+", "doc-\u0663 doc-2") == ["doc-\u0663", "doc-2"]


WORDS_PATTERNS = (
    trace_answers.DEFAULT_DISCLOSURE,
    trace_answers.DEFAULT_UNCERTAINTY,
    r"(?i)\b(degraded|failed|unavailable)\b",
    r"\bfail(?:ed)?\b|FAIL",
    r"(?i)(?:a|ab)(c|bcd)?\b",
    r"(?i)k\b|s",
    "(?:x|)",
    "",
    r"a\b\bb|\b",
    r"(?i)\-\.\(-,'\\",
    r"(?i)\b(a|b|c|d|e|f|g|h)(i|j|k|l|m|n|o|p)?\b",
)
"""Patterns the core answers (words between word boundaries): the defaults, the order of
alternatives and of a greedy ``?``, empty matches, a boundary that cannot hold, escapes, and
more spellings (72) than the vectorised skip to a match's possible start takes (64)."""

OTHER_WORDS_PATTERNS = (
    r"(?i)\w+",
    "a*",
    "a??",
    "(?=a)a",
    "(?s)a",
    "[ab]",
    r"a{2}",
    "(a|)?",
    r"\d",
    "\u00e9",
    f"x{LONE}",
)
"""Patterns it leaves to the engine."""


def _words_texts() -> Iterator[str]:
    """Answers with the patterns' words in each case, glued to word characters (``_`` and
    digits), at the ends, beyond ASCII (``\u212a`` folds to ``k``, ``\u017f`` to ``s``, ``\u00e9``
    is a word character), with a lone surrogate; and random texts over those pieces."""
    yield from ("", " ", "failed", "FAILED.", "_failed", "failed_", "1failed", "failed1")
    yield from ("timed out", "Timedout", "time  out", "tim out", "could not find it")
    yield from ("I don't know", "i AM NOT SURE", "I'm not sure", "no relevant information")
    yield from ("\u212a", "\u017f", "\u00e9failed", "failed\u00e9", f"{LONE} failed", "abcd")
    yield from ("-.(-,'\\", "A\tfailed\n", "x" * 100_001 + " failed")
    pieces = ["fail", "ed", " ", "_", "1", "K", "k", "s", "S", "a", "b", "c", "d", "timed"]
    pieces += [" out", "x", "\u212a", "\u017f", "\u00e9", LONE, "\n", "'", "-", "i'm"]
    rng = random.Random(18)
    for _ in range(500):
        yield "".join(rng.choice(pieces) for _ in range(rng.randrange(10)))
    # Longer texts, where the skip to a match's possible start runs in blocks of 16 and 32
    # bytes: a match in the last bytes, after many places whose boundaries do not hold.
    for n in (14, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000):
        yield from ("x" * n + " failed", "x" * n + "failed", " " * n + "FaiLed" + "_" * n)
    yield "failedx _failed timeoutx " * 40 + "time out."
    yield "The lookup TIMED_OUT; the service was unavailablE. " * 20
    ascii_pieces = [p for p in pieces if p.isascii()]
    for _ in range(300):
        yield "".join(rng.choice(ascii_pieces) for _ in range(rng.randrange(10, 80)))


def test_the_cores_word_searches_are_the_engines() -> None:
    """``words_search`` (the core's ``WordsPattern``, ``degraded_answer``'s plan of
    ``must_disclose`` and ``uncertainty_pattern``) matches where the regex engine matches
    for every pattern of its shape and every ASCII text within ``MAX_WORDS_TEXT``, and
    leaves every other text and pattern to the engine."""
    answered = 0
    for text in _words_texts():
        for pattern in WORDS_PATTERNS:
            got = _native.words_search(pattern, text)
            if got is None:
                assert not text.isascii() or len(text) > 100_000, (pattern, text)
                continue
            answered += 1
            found = safe_regex.search(pattern, text)
            assert got == (found.span() if found else ()), (pattern, text)
        for pattern in OTHER_WORDS_PATTERNS:
            assert _native.words_search(pattern, text) is None, (pattern, text)
    assert answered > 2_000
