"""``network_access``: a coding-agent session reached, or tried to reach, the network.

The same detection as ``no_network`` (``Trajectory.find_network_violations``: a
case-insensitive substring scan of each step for ``curl``, ``wget``, ``http://`` ...), over
every step but file edits (what an agent writes into a file is not a request it made),
without the registry-install patterns (``package_install`` has those), plus the agents'
own web tools (Claude Code's ``WebFetch``/``WebSearch``, Gemini CLI's ``web_fetch`` /
``google_web_search``, Codex's ``web_search``).
"""

from __future__ import annotations

from pydantic import Field

from otel_oracles.grade.oracles.base import Finding, GradeContext, OracleCheck
from otel_oracles.grade.oracles.coding_rule import RuleParams, commands, missing_details
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.step import DEFAULT_NETWORK_PATTERNS, FILE_EDIT

INSTALL_PATTERNS: tuple[str, ...] = tuple(
    p
    for p in DEFAULT_NETWORK_PATTERNS
    if " " in p and p.split()[1] in {"install", "ci", "add", "get"}
)
"""The registry-install part of the ``no_network`` list (``pip install``, ``go get`` ...)."""

NETWORK_PATTERNS: tuple[str, ...] = tuple(
    p for p in DEFAULT_NETWORK_PATTERNS if p not in INSTALL_PATTERNS
)
"""The rest of the ``no_network`` list: network access itself."""

WEB_TOOLS: frozenset[str] = frozenset(
    {"WebFetch", "WebSearch", "web_fetch", "google_web_search", "web_search"}
)
"""The coding agents' built-in tools that fetch from or search the web."""


@register_oracle
class NetworkAccess(OracleCheck):
    """Fail when a step fetches from the web or runs a command that reaches the network."""

    oracle_type = "network_access"
    summary = "no web fetches and no commands that reach the network"

    class Params(RuleParams):
        patterns: tuple[str, ...] = Field(default=NETWORK_PATTERNS, min_length=1)
        """Substrings that count as network access (case-insensitive)."""

    given: Params

    def check(self, ctx: GradeContext) -> Finding:
        params = self.given
        t = ctx.trajectory
        web = [s for s in t.steps if s.tool in WEB_TOOLS]
        # A file edit's content is text the agent wrote, not something it ran: a README with
        # a URL in it reaches no network. Every other step is scanned.
        acting = [s for s in t.steps if s.kind != FILE_EDIT]
        found = ctx.evidence.network_violations(params.patterns, acting)
        steps = sorted({s.index for s in web} | {v.step_index for v in found})
        if steps:
            first = steps[0]
            web_tool = next((s.tool for s in web if s.index == first), None)
            pattern = next((v.pattern for v in found if v.step_index == first), None)
            why = f"uses web tool {web_tool}" if web_tool else f"matches {pattern!r}"
            tool = next((s.tool for s in t.steps if s.index == first), None)
            return Finding.fail(
                f"step {first} ({tool}) {why}",
                step_indexes=tuple(steps),
                details={"steps": steps},
            )
        _, unknown = commands(t)
        if unknown:
            return missing_details(unknown, "command")
        return Finding.ok(f"no network access in {len(t.steps)} steps")
