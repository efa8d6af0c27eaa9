"""The four AgentBench oracles: ``test_must_pass``, ``file_not_modified``, ``no_network`` and
``assertion_exists``, with the exact semantics of DESIGN.md section 5.

Three of them judge the replayed workspace (``ctx.workspace``). A trajectory graded by a
contract without a workspace (a trace-derived one) gives them nothing to look at, so they
report missing evidence instead of guessing. ``no_network`` reads only the trajectory and
works for both. Each declares the evidence a trace-derived run must carry (which tools ran,
what the edits wrote or the calls were given), so content capture off is missing evidence,
not a replay of nothing. On a trace, replay applies the recorded file edits only, so a call
that is not one but may have changed a judged file (``steps_naming``, ``steps_writing``) makes
the three report missing evidence naming it rather than judge a workspace the run may never
have had; on an AgentBench trajectory only file edits change files, as DESIGN section 5 says.

Each oracle is its own module, which the registry imports when a contract first names its
type: ``no_network`` (which most contracts that name one of the four name) needs none of what
the other three share (``_workspace``: the workspace's paths, the calls of a trace that may
have written a file unseen). The package's names are resolved on first read (``_LAZY``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_oracles._lazy_names import lazy_names

if TYPE_CHECKING:
    from otel_oracles.grade.oracles.agentbench._workspace import (
        MESSAGE_LINE_LIMIT,
        first_line,
        steps_naming,
        steps_writing,
        steps_writing_workspace,
    )
    from otel_oracles.grade.oracles.agentbench.assertion_exists import AssertionExists
    from otel_oracles.grade.oracles.agentbench.file_not_modified import FileNotModified
    from otel_oracles.grade.oracles.agentbench.must_pass import TestMustPass, python_command
    from otel_oracles.grade.oracles.agentbench.no_network import NoNetwork

_HERE = __name__ + "."

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "MESSAGE_LINE_LIMIT",
            "first_line",
            "steps_naming",
            "steps_writing",
            "steps_writing_workspace",
        ),
        _HERE + "_workspace",
    ),
    "AssertionExists": _HERE + "assertion_exists",
    "FileNotModified": _HERE + "file_not_modified",
    "NoNetwork": _HERE + "no_network",
    "TestMustPass": _HERE + "must_pass",
    "python_command": _HERE + "must_pass",
}
"""Each public name -> the module defining it."""

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "MESSAGE_LINE_LIMIT",
    "AssertionExists",
    "FileNotModified",
    "NoNetwork",
    "TestMustPass",
    "first_line",
    "python_command",
    "steps_naming",
    "steps_writing",
    "steps_writing_workspace",
]
