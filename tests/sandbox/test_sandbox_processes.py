"""The process-count limit holds for code a trace wrote, whoever runs the grader (root
included, whom the kernel exempts from ``RLIMIT_NPROC``): a fork bomb in a trace-written
test file reaches the limit, no further, and the grader and the other checks carry on."""

from __future__ import annotations

import os
import re
import time

from otel_oracles.grade import grade
from otel_oracles.grade.loader import parse_contract
from otel_oracles.model.result import Outcome
from otel_oracles.model.step import Trajectory
from otel_oracles.sandbox import CommandPolicy, SandboxLimits, sandbox_problem

LIMIT = 32
ATTEMPTS = 300
"""Forks the bomb tries: far past the limit, few enough that an uncontained run stays
harmless to a shared machine."""
SLEEP = 60
"""How long each forked child lives: longer than the test may take, so only the end of the
sandbox (not the children's own exit) lets the check finish in time."""

BOMB = f"""\
import os
import time


def test_bomb():
    forked = 0
    for _ in range({ATTEMPTS}):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep({SLEEP})
            os._exit(0)
        forked += 1
    print(f"forked {{forked}} processes")
    assert forked == 0
"""


def test_a_fork_bomb_in_a_trace_written_test_is_contained() -> None:
    assert sandbox_problem() is None, sandbox_problem()
    contract = parse_contract(
        {
            "id": "bomb", "name": "bomb", "description": "d", "prompt": "p",
            "workspace": {"README.md": "calc\n"},
            "oracles": [
                {"type": "test_must_pass", "command": "python -m pytest -q -s", "timeout": 50},
                {"type": "test_must_pass", "command": "echo still-running"},
            ],
        },
        "bomb.json",
    )  # fmt: skip
    write = {"tool": "write_file", "args": {"path": "tests/test_bomb.py", "content": BOMB}}
    trajectory = Trajectory.from_agentbench({"steps": [write]}, source="traj.json")
    policy = CommandPolicy(limits=SandboxLimits(processes=LIMIT))

    start = time.monotonic()
    bomb, after = grade(contract, trajectory, commands=policy).results
    elapsed = time.monotonic() - start

    found = re.search(r"forked (\d+) processes", bomb.details["stdout"])
    assert found, bomb.details
    forked = int(found.group(1))
    print(f"running as uid {os.geteuid()}: the bomb forked {forked} of {ATTEMPTS} (limit {LIMIT})")
    assert 0 < forked <= LIMIT, f"the bomb reached {forked} processes past the limit of {LIMIT}"
    assert bomb.details["process_limit"] == "enforced"
    assert bomb.outcome == Outcome.INVARIANT_FAILURE and not bomb.details.get("timeout")
    assert elapsed < SLEEP, "the bomb's sleeping children outlived the check"
    assert after.outcome == Outcome.PASS and after.details["stdout"] == "still-running\n"
