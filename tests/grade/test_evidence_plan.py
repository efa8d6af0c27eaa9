"""The core's answer to "which evidence names does this trajectory lack, and why"
(``EvidencePlan``, asked by ``Evidence.lacking``) is the one the Python probes it replaced
gave (``tests/support/evidence_reference.py``), message for message, over the captured
traces of real instrumentations (``tests/testdata/traces``): every name alone, scoped, and
the name tuples the bench contracts and their checks ask.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from otel_oracles.grade.evidence import CORE_PROBES, PROBES, Evidence
from otel_oracles.grade.loader import compile_contract
from otel_oracles.model.step import Step, StepKind, Trajectory
from tests.support.captured import captured_trajectories
from tests.support.evidence_reference import REFERENCE, reference_lacking

ROOT = Path(__file__).resolve().parents[2]

SCENARIOS = ("a_happy", "b_tool_retry", "d_forbidden_tool", "f_degraded", "h_coding_agent")
"""The scenarios read from each captured source (with content and without): a plain run,
a retried and a forbidden call, a degraded run, file edits."""

SCOPES = ("search_*", "run_command", "write_file", "get_*", "nothing")

NAMES: tuple[str, ...] = (
    *sorted(PROBES.keys() - {"attribute"}),
    *(f"{base}:{scope}" for base in REFERENCE for scope in SCOPES),
)
"""Every evidence name, and the core-probed ones scoped (only the tool-call probes read
a scope; the others ignore it, as their Python did)."""


def _contract_tuples() -> list[tuple[str, ...]]:
    tuples: set[tuple[str, ...]] = set()
    for path in sorted((ROOT / "bench" / "contracts").glob("*.yaml")):
        compiled = compile_contract(path)
        tuples.add(compiled.evidence)
        tuples.update(check.evidence for check in compiled.checks if check.evidence)
    return sorted(tuples)


def test_core_plans_answer_as_the_python_probes_did_on_captured_traces() -> None:
    assert set(REFERENCE) == set(CORE_PROBES), "every core-probed name has its reference"
    rng = random.Random(3101)
    tuples = _contract_tuples()
    assert tuples, "the bench contracts ask evidence"
    seen = 0
    lacked: dict[str, int] = dict.fromkeys(REFERENCE, 0)
    for where, trajectory in captured_trajectories(SCENARIOS):
        seen += 1
        asked = [
            *tuples,
            *((name,) for name in NAMES),
            tuple(sorted(rng.sample(NAMES, 6))),
            tuple(sorted(REFERENCE)),
        ]
        for names in asked:
            got = Evidence(trajectory).lacking(names)
            want = reference_lacking(Evidence(trajectory), names)
            assert got == want, (where, names)
            for name, _ in got:
                base = name.partition(":")[0]
                if base in lacked:
                    lacked[base] += 1
        # One Evidence asked every tuple in turn (later tuples reuse what earlier probed).
        shared, fresh = Evidence(trajectory), Evidence(trajectory)
        for names in asked:
            assert shared.lacking(names) == reference_lacking(fresh, names), (where, names)
    assert seen > 500, "the captured traces are read"
    # Every captured trace has steps, and every span its times (``timing``: below).
    for base, count in lacked.items():
        if base not in ("steps", "timing"):
            assert count > 0, f"some captured trace must lack {base} to test its message"


def test_an_empty_trajectory_lacks_every_core_name_as_before() -> None:
    ev = Evidence(Trajectory(steps=[]))
    names = tuple(sorted(REFERENCE))
    got = ev.lacking(names)
    assert got == reference_lacking(Evidence(Trajectory(steps=[])), names)
    assert [name for name, _ in got] == [
        "agents",
        "input_messages",
        "output_messages",
        "steps",
        "token_usage",
    ]


def test_steps_without_times_lack_timing_as_before() -> None:
    """A step from a span without its start or end time lacks ``timing``; a synthesized one
    (seen only in messages) has none to lack."""
    times = [(None, 5), (1, None), (None, None), (1, 5)]
    steps = [
        Step.from_normalized(
            {
                "index": i,
                "kind": StepKind.TOOL_CALL if i % 3 else StepKind.GENERATION,
                "tool": "search_docs",
                "start_ns": start,
                "end_ns": end,
                "synthesized": synthesized,
            }
        )
        for i, ((start, end), synthesized) in enumerate(
            (t, s) for s in (False, True) for t in times * 2
        )
    ]
    trajectory = Trajectory(steps=steps)
    got = Evidence(trajectory).lacking(("timing",))
    assert got == reference_lacking(Evidence(trajectory), ("timing",))
    assert got[0][1].startswith("start/end times missing on 6 step(s): step 0 (")
    assert got[0][1].endswith(" and 1 more")


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_a_core_name_probed_alone_answers_as_in_its_tuple(name: str) -> None:
    """``Evidence.probed`` of a core-probed name asks that name's own plan."""
    ev = Evidence(Trajectory(steps=[]))
    assert ev.probed(name) == dict(ev.lacking(tuple(sorted(REFERENCE)))).get(name)
