"""Loading the mapping files: the bundled ``conventions/`` plus the user's own directories."""

import importlib.resources
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from otel_oracles.config_bytes import ConfigTooLarge, read_config_bytes
from otel_oracles.errors import ConventionError
from otel_oracles.mapping._cache import ConventionCache
from otel_oracles.mapping.config import ConventionFile, Rule
from otel_oracles.mapping.parsers import ParserRegistry, load_parsers
from otel_oracles.model.contract import describe_validation_error


class ToolKinds(NamedTuple):
    """A rule's own tool names that are file edits and shell commands (``Rule.file_edit_tools``,
    ``Rule.command_tools``), beside the names AgentBench knows (``model/step.py``)."""

    file_edit: frozenset[str]
    command: frozenset[str]


SUFFIXES: tuple[str, ...] = (".yaml", ".yml")
"""libyaml's safe loader when PyYAML was built with it: 10x faster than the pure-Python one."""


def parser_problems(conv: ConventionFile, parsers: ParserRegistry) -> list[str]:
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


class ConventionSet(BaseModel):
    """Every mapping file in effect, highest priority first, and the parsers they may name.
    Compiled once, on first use, into match predicates and field extractors (see
    ``_compile``); share one set across traces."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    files: list[ConventionFile]
    parsers: ParserRegistry = Field(default_factory=load_parsers)
    """What ``parse:`` names mean: built-ins plus the plug-ins installed at load time."""
    _compiled: Any = PrivateAttr(default=None)
    _final_answer_tools: tuple[str, ...] | None = PrivateAttr(default=None)
    _model_status: tuple[tuple[str, ...], tuple[str, ...]] | None = PrivateAttr(default=None)
    _tool_kinds: dict[tuple[str, str], ToolKinds] | None = PrivateAttr(default=None)
    _handoff_requests: tuple[str, ...] | None = PrivateAttr(default=None)
    _rules: dict[tuple[str, str], Rule] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _parsers_known(self) -> "ConventionSet":
        for conv in self.files:
            problems = parser_problems(conv, self.parsers)
            if problems:
                raise ConventionError("; ".join(problems), conv.source)
        return self

    @model_validator(mode="after")
    def _tested_fields_read(self) -> "ConventionSet":
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
        return self

    def file(self, name: str) -> ConventionFile | None:
        return next((f for f in self.files if f.name == name), None)

    def rule(self, ref: str) -> Rule | None:
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
        rules: dict[tuple[str, str], Rule] = self._rules
        return rules.get((file_name, rule_id))

    def tool_kinds(self) -> dict[tuple[str, str], ToolKinds]:
        """``(file, rule id)`` -> the rule's ``file_edit_tools`` / ``command_tools``, for the
        rules that declare any (computed once)."""
        if self._tool_kinds is None:
            self._tool_kinds = {
                (f.name, r.id): ToolKinds(frozenset(r.file_edit_tools), frozenset(r.command_tools))
                for f in self.files
                for r in f.rules
                if r.file_edit_tools or r.command_tools
            }
        kinds: dict[tuple[str, str], ToolKinds] = self._tool_kinds
        return kinds

    def final_answer_tools(self) -> tuple[str, ...]:
        """Every file's ``final_answer_tools``, first-seen order, no repeats (computed once).
        A union: the span that carries the answer may be mapped by another file than the
        one that knows the framework."""
        if self._final_answer_tools is None:
            names = dict.fromkeys(n for f in self.files for n in f.final_answer_tools)
            self._final_answer_tools = tuple(names)
        tools: tuple[str, ...] = self._final_answer_tools
        return tools

    def handoff_requests(self) -> tuple[str, ...]:
        """Every file's ``handoff_requests`` patterns, first-seen order, no repeats (computed
        once). A union, as ``final_answer_tools``: the request is a model call's, mapped by
        whichever file reads the model calls."""
        if self._handoff_requests is None:
            patterns = dict.fromkeys(p for f in self.files for p in f.handoff_requests)
            self._handoff_requests = tuple(patterns)
        found: tuple[str, ...] = self._handoff_requests
        return found

    def model_status_errors(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Every file's ``model_errors``: the ``status_errors`` class names and the
        ``status_pattern`` regexes, each first-seen order, no repeats (computed once). A
        union, as ``final_answer_tools``: the model client that raised may be traced by
        another file's rules than the one that knows it."""
        if self._model_status is None:
            names = dict.fromkeys(n for f in self.files for n in f.model_errors.status_errors)
            patterns = dict.fromkeys(
                f.model_errors.status_pattern for f in self.files if f.model_errors.status_pattern
            )
            self._model_status = (tuple(names), tuple(patterns))
        found: tuple[tuple[str, ...], tuple[str, ...]] = self._model_status
        return found

    def compiled(self) -> Any:
        """The compiled form (``_compile.CompiledSet``), built once and cached. Asked once per
        mapped trace, so it is read from the model's private values directly: ``self._compiled``
        goes through pydantic's ``__getattr__``, which raises and catches an
        ``AttributeError`` on every read."""
        private = self.__pydantic_private__
        found = private.get("_compiled") if private is not None else None
        if found is None:
            from otel_oracles.mapping._compile import compile_set

            found = self._compiled = compile_set(self)
        return found

    def compiled_from(self, cache: ConventionCache, digests: list[str]) -> Any:
        """``compiled()``, its blueprint (``_compile.blueprint``) read from ``cache`` when it
        holds one for these files (``digests``: their entries', priority order), else made
        and kept there. A blueprint the core's objects cannot be made of (of another shape:
        a forged entry) is made again."""
        from otel_oracles.mapping._compile import blueprint, build_set

        key = cache.set_key(digests)
        sources = [f.source for f in self.files]
        kept = cache.get_set(key, sources)
        found = None
        if kept is not None:
            try:
                found = build_set(kept, self)
            except (KeyError, TypeError, ValueError, IndexError, ArithmeticError, RecursionError):
                found = None
        if found is None:
            plan = blueprint(self)
            cache.put_set(key, sources, plan)
            found = build_set(plan, self)
        self._compiled = found
        return found


def builtin_dir() -> Path:
    """The bundled mapping files (``otel_oracles/conventions``, shipped in the wheel)."""
    return Path(str(importlib.resources.files("otel_oracles") / "conventions"))


def load_convention_file(
    path: Path, parsers: ParserRegistry | None = None, cache: ConventionCache | None = None
) -> ConventionFile:
    """Read and validate one mapping file; errors name the file and the key path. ``parse:``
    names are checked against ``parsers`` (default: built-ins plus installed plug-ins). With
    a ``cache``, the validated file is taken from it when it holds this very file, and kept
    in it otherwise (``_cache``: an entry is data, validated again, never trusted)."""
    conv, _ = _load_file(path, parsers, cache)
    return conv


def _load_file(
    path: Path, parsers: ParserRegistry | None, cache: ConventionCache | None
) -> tuple[ConventionFile, str | None]:
    """``load_convention_file``, with the digest of the file's cache entry (``None``
    without one): what ``load_conventions`` keys the compiled set by."""
    source = str(path)
    try:
        raw = read_config_bytes(path)
    except OSError as exc:
        raise ConventionError(f"cannot read: {exc.strerror}", source) from None
    except ConfigTooLarge as exc:
        raise ConventionError(f"invalid YAML: {exc.problem}", source) from None
    digest: str | None = None
    key = cache.key(path.stem, source, raw) if cache is not None else ""
    found = cache.get(key, source) if cache is not None else None
    if found is not None:
        conv, digest = found
    else:
        conv = _parse_convention_file(path, raw)
        if cache is not None:
            digest = cache.put(key, conv)
    problems = parser_problems(conv, load_parsers() if parsers is None else parsers)
    if problems:
        raise ConventionError("; ".join(problems), source)
    return conv, digest


def _parse_convention_file(path: Path, raw: bytes) -> ConventionFile:
    # YAML only now: a start whose files all come from the cache does not import it.
    import yaml

    from otel_oracles.config_yaml import load_yaml

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
    ``load_convention_file``) spares parsing the YAML of files seen before.
    """
    parsers = load_parsers()
    by_name: dict[str, ConventionFile] = {}
    digests: dict[str, str | None] = {}
    paths = [
        *_files_in(builtin_dir()),
        *(p for extra in extra_dirs for p in _files_in(Path(extra))),
    ]
    for path in paths:
        conv, digests[str(path)] = _load_file(path, parsers, cache)
        by_name[conv.name] = conv
    files = sorted(by_name.values(), key=lambda f: (-f.priority, f.name))
    result = ConventionSet(files=files, parsers=parsers)
    for conv in files:
        for i, rule in enumerate(conv.rules):
            if rule.extends is not None and result.rule(rule.extends) is None:
                raise ConventionError(
                    f"rules[{i}].extends: no rule {rule.extends!r} (write file/rule-id)",
                    conv.source,
                )
    # Compile now: a bad file fails at load time, not mid-run.
    keys = [digests[f.source] for f in files]
    if cache is None or None in keys:
        result.compiled()
    else:
        result.compiled_from(cache, [key for key in keys if key is not None])
    return result
