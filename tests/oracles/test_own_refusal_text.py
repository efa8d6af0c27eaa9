"""An application's own refusal text for a denied call (``docs/contracts.md``, "A denied
call"): the bundled conventions know the frameworks' default refusal texts
(``tool_results.denied_pattern``), not an application's. With the text declared in a
convention file of the application's own, every ``w_search_denied`` capture grades as it does
with the framework's text; the joined patterns are the mechanism, no code knows the words.

The captures are the real ones with the framework's refusal replaced by another text, as an
application that passes its own message to the approval step (pydantic-ai's
``ToolDenied(message)``, Strands' ``cancel_tool = "..."``, the OpenAI Agents SDK's rejection
message) hands it to the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from otel_oracles.mapping import ConventionSet, load_conventions
from otel_oracles.model.result import Outcome
from otel_oracles.pipeline import grade_trace, read_traces
from tests.oracles.test_contracts_on_real_traces import (
    TRACES,
    contract_named,
    conventions,
    trace_file,
)

FRAMEWORK_REFUSALS = re.compile(
    r"Tool execution was not approved\.|The tool call was denied\.|tool cancelled by user"
    r"|User rejected the tool call for `|This tool call is rejected\."
    r"|Tool execution blocked by hook\. Tool: "
)
"""The default refusal texts of the captured frameworks (as ``conventions/otel-genai.yaml``
lists them), each replaced by ``OWN``."""
OWN = "Searching is switched off for this account: "
APP_CONVENTION = """\
name: support-app
description: The support application's own words for a call its approval step refused.
tool_results:
  denied_pattern: '^\\s*Searching is switched off for this account:'
rules: []
"""

SOURCES = sorted(
    p.parent.name
    for p in TRACES.glob("*/w_search_denied.otlp.json")
    if FRAMEWORK_REFUSALS.search(p.read_text())
)


@pytest.fixture(scope="module")
def with_app_convention(tmp_path_factory: pytest.TempPathFactory) -> ConventionSet:
    """The bundled files plus the application's own (its refusal text)."""
    path = tmp_path_factory.mktemp("conventions") / "support-app.yaml"
    path.write_text(APP_CONVENTION)
    return load_conventions([path])


def outcomes(files: list[Path], convs: ConventionSet) -> dict[str, Outcome]:
    problems: list[object] = []
    contract = contract_named("support-rag")
    ((verdict, _),) = [
        graded
        for trace in read_traces([str(f) for f in files], problems)
        for graded in grade_trace(trace, [contract], convs)
    ]
    assert problems == []
    return {r.name: r.outcome for r in verdict.results}


def own_words(source: str, content: bool, out: Path) -> tuple[list[Path], list[Path]]:
    """(the capture's files, the same with the application's own refusal text)."""
    trace = trace_file(source, "w_search_denied", content)
    logs = trace.parent / (trace.name.split(".otlp")[0] + ".logs.otlp.jsonl")
    originals = [trace] + ([logs] if logs.exists() else [])
    rewritten = []
    for f in originals:
        text = f.read_text()
        new = FRAMEWORK_REFUSALS.sub(OWN, text)
        (out / f.name).write_text(new)
        rewritten.append(out / f.name)
    return originals, rewritten


def test_the_captures_hold_the_frameworks_refusals() -> None:
    assert len(SOURCES) >= 10, SOURCES


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
@pytest.mark.parametrize("source", SOURCES)
def test_an_applications_refusal_declared_in_its_convention_grades_as_the_frameworks(
    source: str, content: bool, tmp_path: Path, with_app_convention: ConventionSet
) -> None:
    originals, rewritten = own_words(source, content, tmp_path)
    framework = outcomes(originals, conventions())
    declared = outcomes(rewritten, with_app_convention)
    assert declared == framework


def test_an_undeclared_refusal_reads_as_a_result(tmp_path: Path) -> None:
    """The documented limit (a known false pass): the words are the application's, no
    convention knows them, and a refused call its framework opens no span for reads as a
    call that ran. A fix makes this fail: then docs/contracts.md changes with it."""
    originals, rewritten = own_words("pydantic-ai-openinference", True, tmp_path)
    searched = "searched-the-index"
    assert outcomes(originals, conventions())[searched] == Outcome.INVARIANT_FAILURE
    assert outcomes(rewritten, conventions())[searched] == Outcome.PASS
