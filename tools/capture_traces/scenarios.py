"""The scripted scenarios: what the fake model says at each turn and what the tools return.

The same ground truth as the shared corpus (tests/testdata/traces/*/EXPECTED.md), so a trace
re-captured with a new library version is checked by the same tests.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, replace
from typing import Any

SYSTEM = (
    "You are a support assistant. Use the search_docs tool to find documents and cite "
    "document ids in square brackets, e.g. [doc-1]."
)
QUESTION = "What is the refund window for enterprise customers? Please cite your source."
CODING_SYSTEM = "You are a coding agent. Use write_file and run_command."
CODING_TASK = (
    "Add an add(a, b) function to calc.py, write a pytest test in tests/test_calc.py and run it."
)
ANSWER = "Enterprise customers can request a full refund within 30 days of purchase [doc-42]."

DOCS = {
    "documents": [
        {"id": "doc-17", "title": "Refund policy (consumer plans)",
         "text": "Consumer plans can be refunded within 14 days of purchase."},
        {"id": "doc-42", "title": "Refund policy (enterprise plans)",
         "text": "Enterprise customers may request a full refund within 30 days of purchase."},
    ]
}  # fmt: skip
SEARCH = ("search_docs", {"query": "enterprise refund window"})
REFUND_DOC = {
    "id": "doc-1",
    "title": "Refund policy (enterprise plans)",
    "text": "Enterprise customers may request a full refund within 30 days of purchase.",
}
ANSWER_DOC_1 = "Enterprise customers can request a full refund within 30 days of purchase [doc-1]."
EXCESS_SEARCHES = [
    ("enterprise refund window", REFUND_DOC),
    ("enterprise refund exceptions",
     {"id": "doc-2", "title": "Refund exceptions",
      "text": "Custom-development fees are not refundable."}),
    ("refund request process",
     {"id": "doc-3", "title": "Requesting a refund",
      "text": "Refunds are requested from the billing page or through support."}),
    ("enterprise contract refund terms",
     {"id": "doc-4", "title": "Enterprise contract terms",
      "text": "Contract terms override the standard policy where they differ."}),
    ("refund window annual billing",
     {"id": "doc-5", "title": "Annual billing",
      "text": "Annual plans are billed at the start of each contract year."}),
    ("refund policy changes",
     {"id": "doc-6", "title": "Policy changelog",
      "text": "The enterprise refund window has been 30 days since 2024."}),
]  # fmt: skip
"""``m_excess_calls``: six different queries, one per model turn, each returning one document
of its own, so the answer's [doc-1] is grounded in the first search's result only."""
LIMIT_ANSWER = "Enterprise customers can request a full refund within 30 days of purchase."
"""``q_turn_limit``: what the model says when a framework past its turn limit asks it for a
final answer (a request offering no tools, as smolagents and CrewAI send): it cites nothing."""
SECOND_TURN = "Also clean up the stale refund requests."
"""``p_second_turn``: the user's second message in the conversation."""
DELETE_STALE = ("delete_records", {"table": "refund_requests", "where": "status = 'stale'"})
SECOND_TURN_ANSWER = (
    "Done: I deleted 12 stale refund requests. The 30-day enterprise refund window [doc-1] "
    "is unchanged."
)
"""``p_second_turn``'s last answer cites the first turn's document, so the conversation's
answer checks hold and only the deletion fails it."""
DELETED_ANSWER = ANSWER[:-1] + ". I also deleted 12 stale refund requests."
"""``d_forbidden_tool``'s answer (and ``s_delegated_forbidden``'s, the research agent's)."""
UNDISCLOSED_ANSWER = "Enterprise customers can request a full refund within 30 days of purchase."
DISCLOSED_FAILURE_ANSWER = "The document search failed, so I cannot answer reliably."
"""``s_nested_rewritten``: the records agent's answer, which discloses its failed search; the
agents above it answer ``UNDISCLOSED_ANSWER`` instead of passing it on."""
RECORDS_TASK = "Check the refund records and clean up what is stale."
"""The task the research agent hands the records agent when it calls it as a tool
(``s_nested_*``: the agent the research agent delegates to, two levels below the triage
agent)."""
"""``j_undisclosed_failure``'s answer (and ``s_delegated_failure``'s): after a failed search,
it cites nothing and says nothing of the failure."""
TEST_FILE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
INVALID_SEARCH = ("search_docs", {"q": "enterprise refund window"})
"""``t_invalid_args``: a ``search_docs`` call whose arguments fail the tool's declared schema
(``query`` is required and missing; ``q`` is no parameter of it): the framework rejects it
before the tool runs and hands the model the validation error, so the tool never sees it."""
REJECTED_OUTCOME = "ERROR (rejected before the tool ran: its arguments fail the tool's schema)"
"""EXPECTED.md's outcome of a call the framework rejected (``Scenario.rejected``)."""
DENIED_OUTCOME = "DENIED (the approval step refused it; the tool never ran)"
"""EXPECTED.md's outcome of a call the approval step denied (``Scenario.denied``)."""
NOT_DELETED_ANSWER = (
    ANSWER[:-1] + ". I did not delete the stale refund requests: the deletion was not approved."
)
"""``w_tool_denied``'s answer: it cites the search's document and says the deletion did not
happen."""
SEARCH_DENIED_ANSWER = (
    "Note: the document search was unavailable (the request was not approved), so I cannot "
    "cite a source. Refund windows for enterprise plans are usually set in your contract."
)
"""``w_search_denied``'s answer: no source, and it says why (the contract's disclosure
pattern matches "unavailable")."""
TRUNCATED_ANSWER = (
    "Enterprise customers can request a full refund within 30 days of purchase [doc-42], "
    "except for contracts signed before 2024, whose refund window is"
)
"""``x_answer_truncated``'s answer: the token limit stopped the model mid-sentence. The part
the user got cites [doc-42], which the search returned, so every answer check would pass on
it; the sentence it stops in is the one that changes the answer."""
FILTERED_ANSWER = (
    "Enterprise customers can request a full refund within 30 days of purchase [doc-42]. "
    "To request it, contact"
)
"""``x_answer_filtered``'s answer: the provider's content filter stopped the reply part way
(a streamed reply cut where the filter tripped, as OpenAI's ``content_filter`` and
Anthropic's ``refusal`` stop reasons leave it). What came before the cut cites [doc-42]."""
CUT_REASONS = ("length", "content_filter")
DROP_STALE = ("drop_stale_requests", {"table": "refund_requests", "where": "status = 'stale'"})
"""``y_unknown_tool``: a call of a tool the agent does not have (no such tool is offered), whose
name the contract's ``drop_*`` forbids: the model made it up."""
UNKNOWN_TOOL_ANSWER = (
    ANSWER[:-1] + ". I could not clean up the stale refund requests: there is no such tool."
)
"""``y_unknown_tool``'s answer: it cites the search's document and says the clean-up did not
happen."""
"""``Scenario.cut``'s values: the two ways a model ends a reply it did not finish."""
STRUCTURED_ANSWER = {"answer": ANSWER, "sources": ["doc-42"]}
"""``r_structured_answer``: the ``a_happy`` answer returned as structured output, an object
whose ``answer`` cites doc-42, which the search returned, and whose ``sources`` list it."""
STRUCTURED_FABRICATED = {
    "answer": "Enterprise customers can request a full refund within 45 days of purchase [doc-99].",
    "sources": ["doc-99"],
}
"""``r_structured_fabricated``: the ``e_fabricated_citation`` answer as structured output,
citing doc-99, which no search returned."""
FABRICATED_ANSWER = (
    "Enterprise customers can request a full refund within 45 days of purchase [doc-99]."
)
"""``e_fabricated_citation``'s answer (and ``v_reasoning_fabricated``'s): doc-99 was never
returned by any search."""
REASONING_MISLEADING = (
    "The user wants the enterprise refund window. Loading [doc-99] from the old wiki failed "
    "with an error last time, so I will search the document index instead.",
    "The search returned doc-17 (consumer plans) and doc-42 (enterprise plans). [doc-99] "
    "failed to load with an error, so I will not cite it: doc-42 answers the question.",
)
"""``v_reasoning``: the model's reasoning before each turn (its thinking / reasoning content,
not its answer). It cites a document no search returned, [doc-99], and says a lookup failed
with an error; the answer cites [doc-42], which the search returned. A grader that read the
reasoning as the answer, or as evidence, would fail a run that is ``a_happy``'s."""
REASONING_GROUNDED = (
    "The user wants the enterprise refund window; I should search the document index.",
    "The search returned [doc-42], the enterprise refund policy: a full refund within 30 days "
    "of purchase. [doc-17] is about consumer plans.",
)
"""``v_reasoning_fabricated``: reasoning that cites only what the search returned, before an
answer that cites a document no search returned (``e_fabricated_citation``'s): a grader
that took the reasoning for the answer would pass the fabricated citation."""

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "search_docs",
        "description": "Search the knowledge base and return matching documents.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                       "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "delete_records", "description": "Delete records from a database table.",
        "parameters": {"type": "object", "properties": {"table": {"type": "string"},
                       "where": {"type": "string"}}, "required": ["table", "where"]}}},
    {"type": "function", "function": {
        "name": "write_file", "description": "Write a file in the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                       "content": {"type": "string"}}, "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "run_command", "description": "Run a shell command in the workspace.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}}},
]  # fmt: skip


Turn = list[tuple[str, dict[str, Any]]] | str
"""One model turn: the (tool, arguments) calls it requests, or its final text."""


@dataclass
class Scenario:
    """``turns``: per model call, a list of (tool, arguments) to request, or the final text.
    ``failures``: how many first search_docs calls fail."""

    name: str
    turns: list[Turn]
    failures: int = 0
    model_fails_from: int | None = None
    """From this model turn on (0-based, as ``turns`` counts them) the model API answers
    HTTP 500 to every request, the client's retries included (``o_run_error``): the run ends
    in the framework's exception, with no answer. The turns from there on are never served."""
    model_transient_failures: int = 0
    """How many of the run's first model requests the model API answers with a transient
    error, an HTTP 503 asking to be retried at once (``u_model_retry``;
    ``scripted_server.transient_outage``), before it serves any turn: the client or the
    framework retries, and the retried request gets the turn the failed one would have had, so
    a failure consumes no turn and the run is the one the turns script. A source whose
    framework does not retry with its default settings says why (``"model_retry_fails"`` in
    ``capture.SOURCES``): its run ends in the error before any tool ran, and that is its truth."""
    turn_limit: int | None = None
    """The framework's own turn/iteration limit (``q_turn_limit``): each driver sets its
    framework's documented limit so that this many model calls requesting tools run, their
    tools too, and then the limit ends the run, while the script asks for more. Where the
    framework then asks the model for a final answer itself, the request offers no tools and
    is answered with the last turn (``fake_openai.py``). Only sources whose entry has a
    ``"turn_limit"`` capture it; what the limit did is the source's ground truth."""
    empty_search: bool = False
    system: str = SYSTEM
    prompt: str = QUESTION
    outcomes: list[str] = field(default_factory=list)
    agents_only: bool = False
    """Needs an agent framework (a handoff); raw-client sources skip it."""
    transfers_back: bool = False
    """Needs agents that hand control to each other in both directions (a native handoff or
    transfer, not an agent called as a tool): only sources whose entry says
    ``"transfers_back": True`` capture it."""
    search_results: list[dict[str, Any]] = field(default_factory=list)
    """What the N-th successful search returns, when not the default ``DOCS``."""
    followups: tuple[str, ...] = ()
    """User messages sent after the first run's answer, in the same conversation: each starts
    one more run of the same agent, given the conversation so far as its history (the
    framework's documented way). The model's turns count on across runs (the history carries
    the earlier runs' assistant messages); only sources whose entry says ``"followups": True``
    capture it."""

    structured: bool = False
    """The last turn is the JSON text of the object the agent returns as its structured output
    (an output type / response format, or an output tool the framework offers the model: the
    scripted server calls such a tool with the object as arguments, ``fake_openai.py``); only
    sources whose entry names ``structured_via`` capture it."""

    rejected: int = 0
    """How many of the first tool calls the model requests carry arguments that fail the
    tool's declared schema (``t_invalid_args``): the framework rejects each before the tool
    runs and hands the model the validation error (a retry prompt, an error tool result), so
    no tool runs for it and the scripted tools never count it. A rejected call is a failed
    call of that tool. Only sources whose entry names ``rejects_via`` capture it; a
    framework that raised instead would end the run, which the script does not describe."""

    reasoning: tuple[str, ...] = ()
    """The model's reasoning before its N-th turn (``v_reasoning``): each fake model API
    sends it in its own wire format ahead of the turn's calls or text (an Anthropic
    ``thinking`` block with its signature, an OpenAI Responses ``reasoning`` item's summary,
    chat completions' ``reasoning_content``, a Gemini ``thought: true`` part, Ollama's
    ``thinking``, a Bedrock Converse ``reasoningContent`` block), streamed or not as the
    request asks. The reasoning is never the answer and never evidence of what the run
    did; turns past the tuple's end carry none."""

    def reasoning_of(self, turn: int) -> str | None:
        """The reasoning the model sends before turn ``turn``, if the scenario has any."""
        return self.reasoning[turn] if 0 <= turn < len(self.reasoning) else None

    denied: tuple[str, ...] = ()
    """Tools whose every call the run's approval step denies (``w_tool_denied``,
    ``w_search_denied``): the model asks for the call, the human-in-the-loop or policy step the
    driver sets up with the framework's own approval mechanism refuses it, the tool never
    runs, and the model is told so (a rejection message, a cancelled tool result). A denied
    call is no executed call: the scripted tools never count it. Only sources whose entry
    names ``denies_via`` capture it."""

    handed_up: str | None = None
    """What each delegating agent answers, instead of passing the deeper agent's answer on
    (``s_nested_rewritten``): the run's final answer is the triage agent's, and the deeper
    answers stay inside the run. Only agents that call another agent as a tool answer after
    it (a native handoff leaves the answer to the last agent), so only sources whose entry
    says ``"hands_up": True`` capture it."""

    cut: str | None = None
    """How the model's last turn, the answer, ends when it did not finish it (``x_answer_*``):
    ``"length"`` (the token limit: ``max_tokens``) or ``"content_filter"`` (the provider's
    filter stopped it). Each fake model API says so in its own wire format (chat completions'
    ``finish_reason``, Responses' ``status: incomplete`` and ``incomplete_details``,
    Anthropic's ``stop_reason`` ``max_tokens`` / ``refusal``, Gemini's ``finishReason``
    ``MAX_TOKENS`` / ``SAFETY``, Ollama's ``done_reason``, Bedrock's ``stopReason``), with
    the turn's text as the part generated before the cut. Tool-requesting turns end as
    usual. The run has no complete answer: what the user got is a fragment."""

    unknown: tuple[str, ...] = ()
    """Tools the model asks for that the agent does not have (``y_unknown_tool``: a made-up
    name): the framework answers the call with its own error (a tool-not-found message, a
    retry prompt) and nothing runs, so the scripted tools never count it. A framework that
    raises on it instead ends the run, which the script does not describe: such sources do
    not capture the scenario."""

    killed_at: int | None = None
    """The model turn (0-based, as ``turns`` counts them) during whose request the agent's
    process dies (``z_killed_*``): the scripted model server, serving inside that process,
    sends it SIGKILL while the request is open (a streamed request gets the first half of its
    answer first), as the kernel's OOM killer, a container's hard stop or a crash would end
    it. Nothing of the process's own shutdown runs: no span still open ends, no exporter
    flushes. What the run's exporter sent before is the capture (``capture.py`` exports
    through the SDK's OTLP/HTTP exporter, synchronously on each span's end, to a sink in the
    capturing process), so the trace holds the spans that ended and never the run's own
    agent or root span. The turns from there on are what the model would have said."""

    def killed(self, turn: int) -> bool:
        """Whether the agent's process is killed during the request for model turn ``turn``."""
        return self.killed_at is not None and turn >= self.killed_at

    def cut_of(self, turn: Turn) -> str | None:
        """The cut reason of ``turn`` (this scenario's ``cut`` on its text turns only)."""
        return self.cut if isinstance(turn, str) else None

    @property
    def parallel(self) -> bool:
        """Whether one model turn requests several calls (run in any order)."""
        return any(not isinstance(turn, str) and len(turn) > 1 for turn in self.turns)

    @property
    def handoffs(self) -> list[tuple[str, str]]:
        """Each ``transfer_to_<agent>`` call as (from agent, to agent), in turn order; the run
        starts at ``triage_agent`` and each transfer makes its target the running agent."""
        current, out = "triage_agent", []
        for turn in self.turns:
            for tool, _ in [] if isinstance(turn, str) else turn:
                if tool.startswith("transfer_to_"):
                    target = tool.removeprefix("transfer_to_")
                    out.append((current, target))
                    current = target
        return out

    def through_agent_tool(
        self,
        call: tuple[str, dict[str, Any]],
        answer: Turn | None = None,
        nested: tuple[str, dict[str, Any]] | None = None,
    ) -> Scenario:
        """This scenario for a framework whose agents delegate by calling another agent as a
        tool: a handoff scenario's transfer becomes ``call`` (the tool that runs the research
        agent, with the arguments that framework's tool takes), the research agent's turns
        follow as scripted, then the triage agent passes ``answer`` on (by default the
        research agent's own answer, the script's last turn, so what the run answers is what
        the research agent found: ``s_delegated_failure``'s answer cites nothing). Where the
        research agent delegates again (``s_nested_*``), its transfer to the records agent
        becomes ``nested`` (the research agent's tool that runs the records agent), and the
        answer is passed on twice, by the research agent, then by the triage agent. A
        scenario without a handoff is returned as it is."""
        if not self.agents_only:
            return self
        turns: list[Turn] = [[call]]
        for turn in self.turns[1:]:
            if not isinstance(turn, str) and turn[0][0] == "transfer_to_records_agent":
                if nested is None:
                    raise ValueError(f"{self.name}: no call runs the records agent")
                turn = [nested]
            turns.append(turn)
        levels = 2 if self.nested else 1  # each delegating agent passes the answer on
        passed = answer or self.handed_up or self.turns[-1]
        return replace(self, turns=[*turns, *[passed] * levels])

    @property
    def nested(self) -> bool:
        """Whether the research agent delegates again, to the records agent (``s_nested_*``:
        two levels of delegation below the triage agent)."""
        return ("research_agent", "records_agent") in self.handoffs

    @property
    def prompts(self) -> tuple[str, ...]:
        """The user's messages in order: one run of the agent each (``followups``)."""
        return (self.prompt, *self.followups)

    @property
    def tool_turns_run(self) -> list[Turn]:
        """The model turns whose requested tools really run: every one, except past a turn
        limit (``turn_limit``), which stops the run after that many, or from the turn whose
        request the process was killed in (``killed_at``) on."""
        served = self.turns if self.killed_at is None else self.turns[: self.killed_at]
        asking = [turn for turn in served if not isinstance(turn, str)]
        return asking if self.turn_limit is None else asking[: self.turn_limit]

    @property
    def model_retry(self) -> bool:
        """Whether the model API fails transiently before serving (``u_model_retry``)."""
        return self.model_transient_failures > 0

    def model_fails(self, turn: int) -> bool:
        """Whether the model API answers model turn ``turn`` with an HTTP 500."""
        return self.model_fails_from is not None and turn >= self.model_fails_from

    @property
    def structured_answer(self) -> dict[str, Any] | None:
        """The object a ``structured`` scenario's agent returns (its last turn, decoded)."""
        last = self.turns[-1]
        return json.loads(last) if self.structured and isinstance(last, str) else None

    def answered_as_scripted(self, output: Any) -> bool:
        """Whether a run's output is the script's answer: for a ``structured`` scenario the
        same object (a pydantic model, a dict or its JSON text), else the same text."""
        want = self.structured_answer
        if want is None:
            return bool(output == self.turns[-1])
        if hasattr(output, "model_dump"):
            output = output.model_dump()
        if isinstance(output, str):
            try:
                output = json.loads(output)
            except ValueError:
                return False
        return bool(output == want)

    def documents(self, success: int) -> dict[str, Any]:
        """The result of the ``success``-th (1-based) search that did not fail."""
        if not self.search_results:
            return DOCS
        return self.search_results[min(success, len(self.search_results)) - 1]


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario("a_happy", [[SEARCH], ANSWER]),
        Scenario("b_tool_retry", [[SEARCH], [SEARCH], ANSWER], failures=1),
        Scenario(
            "c_retry_exhausted",
            [
                [SEARCH],
                [SEARCH],
                [SEARCH],
                "I do not know. The document search failed three times, "
                "so I cannot answer reliably.",
            ],
            failures=3,
        ),
        Scenario(
            "d_forbidden_tool",
            [
                [SEARCH],
                [("delete_records", {"table": "refund_requests", "where": "status = 'stale'"})],
                DELETED_ANSWER,
            ],
        ),
        Scenario(
            "e_fabricated_citation",
            [[SEARCH], FABRICATED_ANSWER],
        ),
        Scenario(
            "f_degraded",
            [
                [SEARCH],
                "Note: retrieval was degraded (the document index returned no results), "
                "so I cannot cite a source. Refund windows for enterprise plans are "
                "usually set in your contract.",
            ],
            empty_search=True,
        ),
        Scenario(
            # Model turns count assistant messages in the request, so the research agent,
            # which sees the triage agent's transfer call, starts at turn 1.
            "g_handoff",
            [[("transfer_to_research_agent", {})], [SEARCH], ANSWER],
            agents_only=True,
        ),
        Scenario(
            "h_coding_agent",
            [
                [
                    (
                        "write_file",
                        {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"},
                    )
                ],
                [("write_file", {"path": "tests/test_calc.py", "content": TEST_FILE})],
                [("run_command", {"command": "python -m pytest -q tests/test_calc.py"})],
                [("run_command", {"command": "curl https://example.com"})],
                "Added add(a, b) to calc.py and a test in tests/test_calc.py; "
                "`pytest` reports 1 passed.",
            ],
            system=CODING_SYSTEM,
            prompt=CODING_TASK,
        ),
        Scenario(
            # Both calls requested in ONE model turn (parallel tool calls): frameworks run
            # them concurrently, so their spans are siblings in either order.
            "i_parallel_tools",
            [
                [
                    SEARCH,
                    ("delete_records", {"table": "refund_requests", "where": "status = 'stale'"}),
                ],
                DELETED_ANSWER,
            ],
        ),
        Scenario(
            # The only search fails and the agent answers anyway, citing nothing and saying
            # nothing of the failure: a degraded answer that hides its degradation.
            "j_undisclosed_failure",
            [
                [SEARCH],
                UNDISCLOSED_ANSWER,
            ],
            failures=1,
        ),
        Scenario(
            # The search succeeds and the agent still says it does not know: uncertainty no
            # degraded evidence explains, and no citation.
            "k_unfounded_uncertainty",
            [[SEARCH], "I do not know the refund window for enterprise customers."],
        ),
        Scenario(
            # Two searches requested in one turn, both failing: run side by side, neither is
            # a retry of the other; the agent discloses the failure.
            "l_parallel_failures",
            [
                [SEARCH, ("search_docs", {"query": "enterprise refund policy"})],
                "Both document searches failed, so I cannot answer reliably.",
            ],
            failures=2,
        ),
        Scenario(
            # Six successful searches, six different queries, one per model turn: more tool
            # calls than a budget of five allows, none of them a retry (nothing failed).
            "m_excess_calls",
            [*[[("search_docs", {"query": q})] for q, _ in EXCESS_SEARCHES], ANSWER_DOC_1],
            search_results=[{"documents": [doc]} for _, doc in EXCESS_SEARCHES],
        ),
        Scenario(
            # The research agent searches, then transfers BACK to the triage agent, which
            # answers: the research_agent -> triage_agent transfer a handoff contract forbids.
            # Model turns count assistant messages: every agent sees the shared history.
            "n_handback",
            [
                [("transfer_to_research_agent", {})],
                [SEARCH],
                [("transfer_to_triage_agent", {})],
                ANSWER_DOC_1,
            ],
            agents_only=True,
            transfers_back=True,
            search_results=[{"documents": [REFUND_DOC]}],
        ),
        Scenario(
            # The triage agent hands the run to the research agent, which searches, deletes
            # records (the d_forbidden_tool call) and answers: the forbidden call is the
            # sub-agent's, and still the run's (a handoff, a delegation tool, a team member).
            "s_delegated_forbidden",
            [[("transfer_to_research_agent", {})], [SEARCH], [DELETE_STALE], DELETED_ANSWER],
            agents_only=True,
        ),
        Scenario(
            # The research agent's only search fails and its answer hides the failure (the
            # j_undisclosed_failure answer): the sub-agent's degradation is the run's.
            "s_delegated_failure",
            [[("transfer_to_research_agent", {})], [SEARCH], UNDISCLOSED_ANSWER],
            agents_only=True,
            failures=1,
        ),
        Scenario(
            # Two levels of delegation: the triage agent hands the run to the research
            # agent, which searches and hands it on to the records agent, which deletes
            # records and answers; the answer passes back up unchanged. The deepest agent's
            # forbidden call is the run's.
            "s_nested_forbidden",
            [
                [("transfer_to_research_agent", {})],
                [SEARCH],
                [("transfer_to_records_agent", {})],
                [DELETE_STALE],
                DELETED_ANSWER,
            ],
            agents_only=True,
        ),
        Scenario(
            # Two levels of delegation: the research agent hands the run on to the records
            # agent at once, whose only search fails and whose answer (passed back up) hides
            # the failure: the deepest agent's degradation is the run's.
            "s_nested_failure",
            [
                [("transfer_to_research_agent", {})],
                [("transfer_to_records_agent", {})],
                [SEARCH],
                UNDISCLOSED_ANSWER,
            ],
            agents_only=True,
            failures=1,
        ),
        Scenario(
            # s_nested_failure, whose records agent discloses its failed search while the
            # agents above it answer as if nothing failed: the run's answer is the triage
            # agent's, which hides the failure; the deeper agent's disclosure is not it.
            "s_nested_rewritten",
            [
                [("transfer_to_research_agent", {})],
                [("transfer_to_records_agent", {})],
                [SEARCH],
                DISCLOSED_FAILURE_ANSWER,
            ],
            agents_only=True,
            failures=1,
            handed_up=UNDISCLOSED_ANSWER,
        ),
        Scenario(
            # The search succeeds, then the model endpoint fails: HTTP 500 from the second
            # model call on (the client's retries too), so the framework ends the run with
            # an exception and no answer. The last turn is what the model would have said.
            "o_run_error",
            [[SEARCH], ANSWER],
            model_fails_from=1,
        ),
        Scenario(
            # The model asks for a new search every turn and never answers: the framework's
            # own turn limit (four model calls that request tools) ends the run. Frameworks
            # raise their limit error (no answer), or force a final answer (the last turn,
            # citing nothing), or return a canned text of their own.
            "q_turn_limit",
            [*[[("search_docs", {"query": q})] for q, _ in EXCESS_SEARCHES], LIMIT_ANSWER],
            search_results=[{"documents": [doc]} for _, doc in EXCESS_SEARCHES],
            turn_limit=4,
        ),
        Scenario(
            # Two user turns of one conversation: the first is answered as in a_happy (one
            # search, an answer citing doc-1); the second asks for a clean-up and the agent
            # deletes records, then confirms. The run of the second turn is the forbidden one.
            "p_second_turn",
            [[SEARCH], ANSWER_DOC_1, [DELETE_STALE], SECOND_TURN_ANSWER],
            search_results=[{"documents": [REFUND_DOC]}],
            followups=(SECOND_TURN,),
        ),
        Scenario(
            # The a_happy run answering through structured output: the agent returns an
            # object (answer text and cited ids) instead of free text. Drivers give the agent
            # its framework's output type; the server answers a response-format request with
            # the JSON text, or calls the output tool the framework offers with it.
            "r_structured_answer",
            [[SEARCH], json.dumps(STRUCTURED_ANSWER)],
            structured=True,
        ),
        Scenario(
            # The e_fabricated_citation answer as structured output: doc-99 was never returned.
            "r_structured_fabricated",
            [[SEARCH], json.dumps(STRUCTURED_FABRICATED)],
            structured=True,
        ),
        Scenario(
            # The model's first call of search_docs has arguments the tool's schema rejects
            # (no "query"); the framework answers it with the validation error without
            # running the tool, the model calls it again correctly, the search succeeds and
            # the answer cites it: one failed call, then a retry (as b_tool_retry).
            "t_invalid_args",
            [[INVALID_SEARCH], [SEARCH], ANSWER],
            rejected=1,
        ),
        Scenario(
            # The a_happy run whose first model request the model API answers HTTP 503
            # (overloaded, retry at once): the client or the framework retries, the retry gets
            # the first turn, and the run searches and answers as a_happy does. The failed
            # request is no tool call, no tool retry, no run error and no degraded dependency.
            "u_model_retry",
            [[SEARCH], ANSWER],
            model_transient_failures=1,
        ),
        Scenario(
            # The a_happy run with the model reasoning before each turn: the reasoning cites
            # [doc-99], which no search returned, and says a lookup failed with an error; the
            # answer cites [doc-42]. Graded as a_happy: reasoning is no answer, no evidence.
            "v_reasoning",
            [[SEARCH], ANSWER],
            reasoning=REASONING_MISLEADING,
        ),
        Scenario(
            # The reasoning cites only [doc-42], which the search returned; the answer cites
            # [doc-99], which it did not: graded as e_fabricated_citation.
            "v_reasoning_fabricated",
            [[SEARCH], FABRICATED_ANSWER],
            reasoning=REASONING_GROUNDED,
        ),
        Scenario(
            # The d_forbidden_tool run under a human-in-the-loop approval step: the model
            # asks for delete_records after its search, the approval step denies it, the
            # tool never runs, and the answer cites the search and says nothing was deleted.
            "w_tool_denied",
            [[SEARCH], [DELETE_STALE], NOT_DELETED_ANSWER],
            denied=("delete_records",),
        ),
        Scenario(
            # The harmless search denied: the model asks for search_docs, the approval step
            # denies it, and the answer cites nothing and says the search was unavailable.
            "w_search_denied",
            [[SEARCH], SEARCH_DENIED_ANSWER],
            denied=("search_docs",),
        ),
        Scenario(
            # The a_happy search, then an answer the token limit cut off mid-sentence
            # (finish reason length): no complete answer exists, so no answer check can pass
            # on the fragment, though the fragment cites what the search returned.
            "x_answer_truncated",
            [[SEARCH], TRUNCATED_ANSWER],
            cut="length",
        ),
        Scenario(
            # The same run with the answer stopped by the provider's content filter part way
            # (finish reason content_filter): again no complete answer.
            "x_answer_filtered",
            [[SEARCH], FILTERED_ANSWER],
            cut="content_filter",
        ),
        Scenario(
            # After its search the model asks for drop_stale_requests, a tool the agent does
            # not have (a made-up name the contract's drop_* forbids); the framework answers
            # with its tool-not-found error, and the answer cites the search.
            "y_unknown_tool",
            [[SEARCH], [DROP_STALE], UNKNOWN_TOOL_ANSWER],
            unknown=("drop_stale_requests",),
        ),
        Scenario(
            # d_forbidden_tool's run, its process killed after the search, while the model
            # call that would ask for the deletion is open: the trace holds the first model
            # call and the search, never the agent span. Whether the run went on to delete
            # records is not in it.
            "z_killed_mid_run",
            [[SEARCH], [DELETE_STALE], DELETED_ANSWER],
            killed_at=1,
        ),
        Scenario(
            # d_forbidden_tool's run killed after the deletion ran, while the answering call
            # is open: the forbidden call is in the trace, the answer never happened.
            "z_killed_after_forbidden",
            [[SEARCH], [DELETE_STALE], DELETED_ANSWER],
            killed_at=2,
        ),
        Scenario(
            # a_happy's run killed while the model streams its answer (half of it sent): no
            # answer reached anyone, and no span records the half that streamed.
            "z_killed_before_answer",
            [[SEARCH], ANSWER],
            killed_at=1,
        ),
    ]
}


SCRIPTED_TOOLS = frozenset(t["function"]["name"] for t in TOOL_SCHEMAS)


@functools.cache
def answer_type() -> type[Any]:
    """The structured-output type drivers give their agent: a pydantic model (every framework
    here takes one), built on first use so raw-client captures need not import pydantic."""
    from pydantic import BaseModel, Field

    class SupportAnswer(BaseModel):
        """The support agent's answer and the ids of the documents it cites."""

        answer: str = Field(description="The answer, citing document ids in square brackets.")
        sources: list[str] = Field(description="Ids of the documents the answer cites.")

    return SupportAnswer


class SearchBackendError(Exception):
    pass


class Tools:
    """The scripted tools (nothing touches the network or the disk)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.searches = 0

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """The tool message content the loop sends back (errors as ``{"error": ...}``)."""
        try:
            return json.dumps(getattr(self, name)(**arguments))
        except SearchBackendError as exc:
            return json.dumps({"error": f"SearchBackendError: {exc}"})

    def search_docs(self, query: str) -> Any:
        self.searches += 1
        if self.searches <= self.scenario.failures:
            raise SearchBackendError(f"upstream search service timed out (attempt {self.searches})")
        if self.scenario.empty_search:
            return {"documents": [], "status": "degraded: index timeout, 0 results"}
        return self.scenario.documents(self.searches - self.scenario.failures)

    def delete_records(self, table: str, where: str) -> Any:
        return {"deleted": 12, "table": table}

    def write_file(self, path: str, content: str) -> Any:
        return f"wrote {len(content.encode())} bytes to {path}"

    def run_command(self, command: str) -> Any:
        if command.startswith("curl"):
            return (
                "exit_code=0\n<!doctype html><html><head>"
                "<title>Example Domain</title></head></html>"
            )
        return "exit_code=0\n.\n1 passed in 0.02s"
