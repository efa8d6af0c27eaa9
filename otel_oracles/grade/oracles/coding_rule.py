"""What the coding-agent rules (``network_access``, ``package_install``,
``destructive_command``, ``write_outside_root``, ``protected_path_edit``,
``secret_in_command``) share: a severity, and how they read a session's actions.

They are ordinary oracles: ``otel-oracles watch`` grades every session with a default
contract made of them (``otel_oracles/watch/contract.yaml``), and any contract may use them.
A coding-agent session arrives as an AgentBench trajectory (``otel_oracles.watch``), whose
steps may carry three keys besides the AgentBench ones, read here: ``cwd`` (the session's
working directory, when the agent exports it or ``watch --project`` names it), ``missing``
(what the agent did not export for this step and the setting that turns it on) and
``decision`` (the permission decision). A rule that needs a detail a step lacks reports
missing evidence naming that setting, never a pass.
"""

import posixpath
from typing import Literal

from otel_oracles._lazy_pattern import lazy_pattern
from otel_oracles.grade.oracles.base import Finding, OracleParams
from otel_oracles.model.step import COMMAND, FILE_EDIT, Step, Trajectory

Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")
"""Severities from least to most severe; ``watch --fail-on`` takes one of them."""


class RuleParams(OracleParams):
    """Params every coding-agent rule has."""

    severity: Severity = "high"
    """How bad a violation is; ``watch`` shows it and ``--fail-on`` compares against it."""


def detail_missing(step: Step) -> str | None:
    """What the agent did not export for this step (and how to turn it on), if anything."""
    if step.raw is None:
        return None
    missing = step.raw.get("missing")
    return missing if isinstance(missing, str) and missing else None


def step_cwd(step: Step) -> str | None:
    if step.raw is None:
        return None
    cwd = step.raw.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def commands(t: Trajectory) -> tuple[list[tuple[Step, str]], list[Step]]:
    """(step, command) for every command step whose command is known, and the command steps
    whose command the agent did not export."""
    known: list[tuple[Step, str]] = []
    unknown: list[Step] = []
    for step in t.steps:
        if step.kind != COMMAND:
            continue
        if step.command:
            known.append((step, step.command))
        else:
            unknown.append(step)
    return known, unknown


_WRITE_COMMANDS = frozenset({"tee", "touch", "mkdir", "rm", "rmdir", "truncate", "shred"})
"""Commands whose every non-option argument is a path they write (or delete)."""
_DEST_COMMANDS = frozenset({"cp", "mv", "install", "ln"})
"""Commands whose last argument is the path they write."""
_REDIRECTS = frozenset({">", ">>", "&>", ">|"})
_INPUTS = frozenset({"<", "<<", "<<<"})
"""Input redirections: the word after them is read (or a here-document tag), not written."""


_SHLEX_SPECIAL = lazy_pattern(r"['\"\\#;&|<>]")
"""The characters that make ``shlex`` (POSIX mode, ``punctuation_chars=";&|<>"``) do more
than split words at whitespace: quotes, the escape, the comment sign and the operators."""

_SHLEX_BLANKS = lazy_pattern(r"[ \t\r\n]+")
"""``shlex``'s whitespace (``str.split()`` splits at other characters too)."""


def shell_words(command: str) -> list[str] | None:
    """The tokens ``shlex`` reads from ``command`` (``shell_written_paths``' lexer) when it
    holds none of ``_SHLEX_SPECIAL``: then every token is a run of characters between
    ``shlex``'s whitespace, and a split finds them without the pure-Python lexer, which read
    a character at a time (most recorded commands are plain: ``pytest -q tests/test_x.py``).
    ``None`` when only the lexer can tell."""
    if _SHLEX_SPECIAL().search(command) is not None:
        return None
    return [word for word in _SHLEX_BLANKS().split(command) if word]


def shell_written_paths(command: str) -> list[str]:
    """Paths a shell command visibly writes: redirection targets, ``tee``/``touch``/``rm``
    arguments, ``sed -i`` files, ``cp``/``mv`` destinations. A heuristic over the command
    text (no expansion, no aliases): what it finds was written, what it misses is not
    proof of nothing."""
    words = shell_words(command)
    if words is not None:
        # No operator, redirection or separator can be among the words: one segment.
        return [p for p in _segment_writes(words) if p and p != "/dev/null"]
    # Imported here: most commands take the split above, and ``shlex`` compiles its pattern
    # at import, at every start of ``grade`` that loads a command-reading oracle.
    import shlex

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []
    paths: list[str] = []
    segment: list[str] = []
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in _REDIRECTS:
            if following and not following.startswith("&"):
                paths.append(following)
            continue
        if token in {";", "&&", "||", "|", "&"}:
            paths += _segment_writes(segment)
            segment = []
            continue
        if i > 0 and (tokens[i - 1] in _REDIRECTS or tokens[i - 1] in _INPUTS):
            continue
        if token in _INPUTS or (token.isdigit() and following in _REDIRECTS):
            continue
        segment.append(token)
    paths += _segment_writes(segment)
    return [p for p in paths if p and p != "/dev/null" and not p.startswith("<")]


def _segment_writes(words: list[str]) -> list[str]:
    if not words:
        return []
    name = posixpath.basename(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    if name in _WRITE_COMMANDS:
        return args
    if name in _DEST_COMMANDS and len(args) >= 2:
        return [args[-1]]
    if name == "sed" and any(w == "-i" or w.startswith(("-i", "--in-place")) for w in words):
        return args[1:]
    return []


def written_paths(step: Step) -> list[str]:
    """Normalized paths a step writes: a file edit's path, a command's visible targets."""
    if step.kind == FILE_EDIT and step.path:
        return [step.path]
    if step.kind == COMMAND and step.command:
        return [posixpath.normpath(p) for p in shell_written_paths(step.command)]
    return []


def missing_details(steps: list[Step], what: str) -> Finding:
    """Missing evidence for steps whose ``what`` the agent did not export."""
    first = steps[0]
    how = detail_missing(first) or "the agent did not export it"
    return Finding.missing(
        f"step {first.index} ({first.tool}) has no {what}: {how}"
        + (f" ({len(steps) - 1} more step(s))" if len(steps) > 1 else ""),
        step_indexes=tuple(s.index for s in steps),
    )
