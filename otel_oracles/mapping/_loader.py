"""Loading the mapping files: the bundled ``conventions/`` plus the user's own directories."""

import os
import time
from collections.abc import Callable, Sequence
from importlib.machinery import SourceFileLoader, SourcelessFileLoader
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError

from otel_oracles.config_bytes import ConfigTooLarge, read_config_file
from otel_oracles.errors import ConventionError
from otel_oracles.mapping._cache import ConventionCache, settled
from otel_oracles.mapping.parsers import ParserRegistry, load_parsers
from otel_oracles.model.contract import describe_validation_error

if TYPE_CHECKING:
    # The schema's models: a warm start reads the compiled set from the cache and never
    # imports them (``mapping/__init__``).
    from otel_oracles.mapping.config import ConventionFile, Rule


class ToolKinds(NamedTuple):
    """A rule's own tool names that are file edits and shell commands (``Rule.file_edit_tools``,
    ``Rule.command_tools``), beside the names AgentBench knows (``model/step.py``)."""

    file_edit: frozenset[str]
    command: frozenset[str]


SUFFIXES: tuple[str, ...] = (".yaml", ".yml")
"""libyaml's safe loader when PyYAML was built with it: 10x faster than the pure-Python one."""


def parser_problems(conv: "ConventionFile", parsers: ParserRegistry) -> list[str]:
    """One message per ``parse:`` name that ``parsers`` cannot supply, located by key path
    (``rules[0].fields.tool[0].parse: unknown parser 'jsn' (did you mean 'json'?); ...``)."""
    problems = []
    for i, rule in enumerate(conv.rules):
        for field_name, sources in rule.fields.items():
            for j, src in enumerate(sources):
                for name in src.parse:
                    problem = parsers.problem(name)
                    if problem is not None:
                        problems.append(f"rules[{i}].fields.{field_name}[{j}].parse: {problem}")
    if problems:
        known = ", ".join(parsers.registrations())
        problems[-1] += f" (known parsers: {known}; a plug-in's appear once it is installed)"
    return problems


class ConventionSet:
    """Every mapping file in effect, highest priority first, and the parsers they may name.
    Compiled once, on first use, into match predicates and field extractors (see
    ``_compile``); share one set across traces.

    A set ``load_conventions`` builds from its cache's compiled set (``_cache``) holds no
    file at first: its ``files`` are validated from their entries when first asked for
    (``validate``, ``explain``, ``inspect``, an error), as a grade needs only the compiled
    set and validating the bundled files' entries was ~51 M instructions of every warm start
    (docs/performance-history.md, "Start-up: the conventions' files built when asked for").
    Checked when built from files: every ``parse:`` name known to ``parsers``, every
    ``field`` condition reading a field its rule has sources for."""

    __slots__ = ("_compiled", "_files", "_read_files", "_rules", "parsers")

    def __init__(self, files: "Sequence[ConventionFile]", parsers: ParserRegistry | None = None):
        self.parsers = load_parsers() if parsers is None else parsers
        """What ``parse:`` names mean: built-ins plus the plug-ins installed at load time."""
        self._files: list[ConventionFile] | None = list(files)
        self._read_files: Callable[[], list[ConventionFile]] | None = None
        self._compiled: Any = None
        self._rules: dict[tuple[str, str], Rule] | None = None
        self._parsers_known()
        self._tested_fields_read()

    @classmethod
    def _kept(
        cls, files: "Callable[[], list[ConventionFile]]", parsers: ParserRegistry, compiled: Any
    ) -> "ConventionSet":
        """A set built from its compiled form (``_compile.CompiledSet``), its files read by
        ``files`` when first asked for. Its checks passed when the compiled set was kept;
        its ``parse:`` names are checked by ``load_conventions``."""
        kept = cls.__new__(cls)
        kept.parsers = parsers
        kept._files = None
        kept._read_files = files
        kept._compiled = compiled
        kept._rules = None
        return kept

    @property
    def files(self) -> "list[ConventionFile]":
        """The files, highest priority first (read on first use for a kept set)."""
        if self._files is None:
            assert self._read_files is not None
            self._files = self._read_files()
            self._read_files = None
        return self._files

    def _parsers_known(self) -> None:
        for conv in self.files:
            problems = parser_problems(conv, self.parsers)
            if problems:
                raise ConventionError("; ".join(problems), conv.source)

    def _tested_fields_read(self) -> None:
        """A ``field`` condition tests content the rule reads: a rule without sources for
        that field (``extends`` applied) is an error when loading, not a rule that never
        matches."""
        from otel_oracles.mapping._compile import _resolved_fields

        for conv in self.files:
            for rule in conv.rules:
                tested = [c.field for c in (*rule.match.all, *rule.match.any) if c.field]
                if not tested:
                    continue
                fields = _resolved_fields(rule, self)
                missing = [f for f in tested if not fields.get(f)]
                if missing:
                    raise ConventionError(
                        f"rules.{rule.id}.match: tests field(s) {missing} it has no sources for",
                        conv.source,
                    )

    def file(self, name: str) -> "ConventionFile | None":
        return next((f for f in self.files if f.name == name), None)

    def rule(self, ref: str) -> "Rule | None":
        """``file/rule`` -> the rule, or None (the first file of that name, as ``file``).
        Looked up in an index made on first use: loading and compiling the set resolve
        each ``extends`` (226 in the bundled files) several times, and a scan of every
        file's rules for each was ~4% of loading the conventions."""
        if self._rules is None:
            index: dict[tuple[str, str], Rule] = {}
            named: set[str] = set()
            for f in self.files:
                if f.name not in named:
                    named.add(f.name)
                    for r in f.rules:
                        index.setdefault((f.name, r.id), r)
            self._rules = index
        file_name, _, rule_id = ref.partition("/")
        return self._rules.get((file_name, rule_id))

    def tool_kinds(self) -> dict[tuple[str, str], ToolKinds]:
        """``(file, rule id)`` -> the rule's ``file_edit_tools`` / ``command_tools``, for the
        rules that declare any (``_compile.set_facts``)."""
        kinds: dict[tuple[str, str], ToolKinds] = self.compiled().tool_kinds
        return kinds

    def final_answer_tools(self) -> tuple[str, ...]:
        """Every file's ``final_answer_tools``, first-seen order, no repeats (a union: the
        span that carries the answer may be mapped by another file than the one that knows
        the framework; ``_compile.set_facts``)."""
        tools: tuple[str, ...] = self.compiled().final_answer_tools
        return tools

    def handoff_requests(self) -> tuple[str, ...]:
        """Every file's ``handoff_requests`` patterns, first-seen order, no repeats (a
        union, as ``final_answer_tools``: the request is a model call's, mapped by whichever
        file reads the model calls)."""
        found: tuple[str, ...] = self.compiled().handoff_requests
        return found

    def model_status_errors(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Every file's ``model_errors``: the ``status_errors`` class names and the
        ``status_pattern`` regexes, each first-seen order, no repeats (a union, as
        ``final_answer_tools``: the model client that raised may be traced by another file's
        rules than the one that knows it)."""
        found: tuple[tuple[str, ...], tuple[str, ...]] = self.compiled().model_status
        return found

    def compiled(self) -> Any:
        """The compiled form (``_compile.CompiledSet``), built once and cached."""
        found = self._compiled
        if found is None:
            from otel_oracles.mapping._compile import compile_set

            found = self._compiled = compile_set(self)
        return found


def builtin_dir() -> Path:
    """The bundled mapping files (``otel_oracles/conventions``, shipped in the wheel).

    Where the package was loaded from its directory (the usual install), that is the
    directory beside its ``__init__``, two levels above this module (found from this
    module's own spec and file, since the mapping stage imports nothing above it): what
    ``importlib.resources.files`` answers for such a package, without importing its readers
    and building a reader at every start (~2 M instructions of a one-trace ``grade``). A
    package loaded otherwise (from a zip, by another loader) asks ``importlib.resources``."""
    loader = __spec__.loader  # this module's: loaded as its package was
    if type(loader) is SourceFileLoader or type(loader) is SourcelessFileLoader:
        return Path(__file__).parent.parent / "conventions"
    import importlib.resources

    return Path(str(importlib.resources.files("otel_oracles") / "conventions"))


def load_convention_file(
    path: Path, parsers: ParserRegistry | None = None, cache: ConventionCache | None = None
) -> "ConventionFile":
    """Read and validate one mapping file; errors name the file and the key path. ``parse:``
    names are checked against ``parsers`` (default: built-ins plus installed plug-ins). With
    a ``cache``, the validated file is taken from it when it holds this very file, and kept
    in it otherwise (``_cache``: an entry is data, validated again, never trusted)."""
    parsers = load_parsers() if parsers is None else parsers
    if cache is None:
        conv = _parse_convention_file(path, _read_bytes(path))
    else:
        conv, _ = _validated(_read(path, cache), cache)
    _check_parsers(conv, parsers)
    return conv


class _Read:
    """A mapping file's bytes, its status once they were read and its cache key, hashed
    when first asked for: a warm start whose kept set records the files' status
    (``ConventionCache.inputs``) hashes none (its entry is read when its content is
    needed: ``_validated``)."""

    __slots__ = ("_cache", "_key", "path", "raw", "stat")

    def __init__(self, path: Path, cache: ConventionCache) -> None:
        self.path = path
        self.raw, self.stat = _read_file(path)
        self._cache = cache
        self._key: str | None = None

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = self._cache.key(self.path.stem, str(self.path), self.raw)
        return self._key


def _read_bytes(path: Path) -> bytes:
    return _read_file(path)[0]


def _read_file(path: Path) -> tuple[bytes, os.stat_result]:
    try:
        return read_config_file(path)
    except OSError as exc:
        raise ConventionError(f"cannot read: {exc.strerror}", str(path)) from None
    except ConfigTooLarge as exc:
        raise ConventionError(f"invalid YAML: {exc.problem}", str(path)) from None


def _read(path: Path, cache: ConventionCache) -> _Read:
    return _Read(path, cache)


def _validated(
    read: _Read, cache: ConventionCache, recorded: str | None = None
) -> "tuple[ConventionFile, str | None]":
    """The file validated from its entry when that is this very file's (and, with
    ``recorded``, the entry of that digest: the one a kept set was compiled from), else
    from its YAML (then kept): with the digest of the entry it is in (``None`` when it is
    not kept)."""
    source = str(read.path)
    entry = cache.entry(source)
    if entry is not None and (recorded is None or entry[1] == recorded):
        body, digest = entry
        conv = cache.file_of(body, read.key, source)
        if conv is not None:
            return conv, digest
    conv = _parse_convention_file(read.path, read.raw)
    return conv, cache.put(read.key, conv)


def _check_parsers(conv: "ConventionFile", parsers: ParserRegistry) -> None:
    problems = parser_problems(conv, parsers)
    if problems:
        raise ConventionError("; ".join(problems), conv.source)


def _parse_convention_file(path: Path, raw: bytes) -> "ConventionFile":
    # YAML only now: a start whose files all come from the cache does not import it.
    import yaml

    from otel_oracles.config_yaml import load_yaml
    from otel_oracles.mapping.config import ConventionFile

    source = str(path)
    try:
        data = load_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConventionError("not UTF-8 text", source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ConventionError(
            f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", source
        ) from None
    if not isinstance(data, dict):
        raise ConventionError("expected a mapping at the top level", source)
    data = {"name": path.stem, **data, "source": source}
    try:
        return ConventionFile.model_validate(data)
    except ValidationError as exc:
        raise ConventionError(describe_validation_error(exc), source) from None


def _files_in(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
    if path.is_file():
        return [path]
    raise ConventionError("no such file or directory", str(path))


def load_conventions(
    extra_dirs: Sequence[Path | str] = (), cache: ConventionCache | None = None
) -> ConventionSet:
    """The bundled mapping files plus those in ``extra_dirs`` (files or directories).

    A user file whose ``name`` equals a bundled one replaces it; any other is added. Raises
    ``ConventionError`` naming the file and key path for the first invalid file (a ``parse:``
    name that no built-in or installed plug-in registers included), and for an ``extends``
    that names no rule. Parser plug-ins are discovered once, here. ``cache`` (see
    ``load_convention_file``) spares parsing the YAML of files seen before, and compiling
    a set of files seen before: then the set is built from its compiled form and its files
    are validated from their entries only when asked for (``ConventionSet.files``).
    """
    parsers = load_parsers()
    paths = [
        *_files_in(builtin_dir()),
        *(p for extra in extra_dirs for p in _files_in(Path(extra))),
    ]
    reads: list[_Read] | None = None
    stated = time.time_ns()
    """Before any file is read: a kept set's inputs are looked at after it (``_cache``,
    ``settled``)."""
    if cache is not None:
        try:
            reads = [_read(path, cache) for path in paths]
        except ConventionError:
            reads = None  # read again one by one below: the same error, in the same order
        if reads is not None:
            kept = _kept_set(reads, parsers, cache, stated)
            if kept is not None:
                return kept
    by_name: dict[str, ConventionFile] = {}
    digests: list[str] = []
    """Per file read, its entry's digest (kept with the compiled set)."""
    kept_all = reads is not None
    """Whether every file is kept in ``cache`` (else the compiled set is not kept either)."""
    parse_names: set[str] = set()
    for n, path in enumerate(paths):
        if reads is None or cache is None:
            conv = _parse_convention_file(path, _read_bytes(path))
        else:
            conv, digest = _validated(reads[n], cache)
            if digest is None:
                kept_all = False
            else:
                digests.append(digest)
        _check_parsers(conv, parsers)
        parse_names.update(_parse_names(conv))
        by_name[conv.name] = conv
    files = sorted(by_name.values(), key=lambda f: (-f.priority, f.name))
    result = ConventionSet(files, parsers)
    for conv in files:
        for i, rule in enumerate(conv.rules):
            if rule.extends is not None and result.rule(rule.extends) is None:
                raise ConventionError(
                    f"rules[{i}].extends: no rule {rule.extends!r} (write file/rule-id)",
                    conv.source,
                )
    # Compile now: a bad file fails at load time, not mid-run.
    if not kept_all or cache is None:
        result.compiled()
        return result
    from otel_oracles.mapping._compile import blueprint, build_set

    assert reads is not None  # kept_all
    plan = blueprint(result)
    key = cache.set_key([read.key for read in reads])
    inputs = cache.inputs([read.stat for read in reads])
    sources = [str(p) for p in paths]
    cache.put_set(key, sources, plan, sorted(parse_names), digests, inputs, stated)
    result._compiled = build_set(plan, parsers)
    return result


def _parse_names(conv: "ConventionFile") -> set[str]:
    """Every ``parse:`` name ``conv``'s sources use."""
    return {
        name
        for rule in conv.rules
        for sources in rule.fields.values()
        for src in sources
        for name in src.parse
    }


def _kept_set(
    reads: list[_Read], parsers: ParserRegistry, cache: ConventionCache, stated: int
) -> ConventionSet | None:
    """The set of the files ``reads`` holds built from the compiled set ``cache`` keeps for
    them (keyed by every file's bytes: ``ConventionCache.set_key``; its key not computed
    when the status of its inputs stands for them: ``ConventionCache.inputs``), or
    ``None`` when it keeps none, a ``parse:`` name of the set is not among the parsers now
    installed (the files are read then, and the error names the file) or the kept data is
    of another shape. No file's entry is read here; the files, when asked for, are
    validated from the very entries the set was compiled from (their digests are kept with
    it), or from their YAML when an entry is gone or another. A set found by its key whose
    inputs' status did not stand (a file touched, or changed within ``SETTLED_NS`` of the
    entry) is written again with their status now, once every time in it is settled
    (``stated`` is when this load started), so the next start hashes nothing."""
    from otel_oracles.mapping._compile import build_set

    sources = [str(read.path) for read in reads]
    try:
        inputs = cache.inputs([read.stat for read in reads])
    except OSError:
        return None
    found = cache.get_set(sources, inputs, lambda: cache.set_key([read.key for read in reads]))
    if found is None:
        return None
    kept, parse_names, digests, stood = found.compiled, found.parsers, found.entries, found.stood
    by_source = {
        str(read.path): (read, digest) for read, digest in zip(reads, digests, strict=True)
    }
    try:
        if any(parsers.problem(name) is not None for name in parse_names):
            return None
        order = [by_source[source] for source in kept["set"]["sources"]]
        compiled = build_set(kept, parsers)
    except (KeyError, TypeError, ValueError, IndexError, ArithmeticError, RecursionError):
        return None
    if not stood and settled(inputs, stated):
        key = cache.set_key([read.key for read in reads])
        cache.put_set(key, sources, kept, parse_names, digests, inputs, stated)

    def files() -> "list[ConventionFile]":
        return [_validated(read, cache, digest)[0] for read, digest in order]

    return ConventionSet._kept(files, parsers, compiled)
