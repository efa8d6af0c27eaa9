"""What a command loads before it does any work (docs/performance-history.md, "Start-up").

``grade`` runs once per CI job and per file in scripts, so its fixed start-up is paid again
and again; it used to import ``serve``'s HTTP and gRPC stack, ``watch``'s terminal view and
the OpenTelemetry exporters on every start. Each test runs the real command in a fresh
interpreter and looks at ``sys.modules`` afterwards: re-adding one eager import of those
fails here.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from otel_oracles._frozen import FrozenValue, Value
from otel_oracles.cli import COMMANDS, StartUpGc, cli

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "testdata" / "traces" / "openai-v2" / "a_happy.otlp.json"

PROBE = """
import json, sys
from otel_oracles.cli import main
sys.argv = ["otel-oracles", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write("\\nLOADED " + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def probed(probe: str, label: str, *args: str) -> Any:
    """What ``probe`` (a script running ``otel-oracles ARGS`` in a fresh interpreter) wrote
    after ``label`` on the last line of its stderr, read as JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(list(args))],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    marker = proc.stderr.rfind(f"\n{label} ")
    assert marker >= 0, proc.stderr
    return json.loads(proc.stderr[marker + len(label) + 2 :])


def loaded_by(*args: str) -> tuple[int, set[str]]:
    """Exit code and every module in ``sys.modules`` after ``otel-oracles ARGS`` ran."""
    found = probed(PROBE, "LOADED", *args)
    return found["code"], set(found["modules"])


def under(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


SERVE_ONLY = ("aiohttp", "grpc", "otel_oracles.server", "otel_oracles.cli.serve")
"""The live receiver's stack."""
NOT_FOR_GRADE = (
    *SERVE_ONLY,
    "otel_oracles.watch",
    "otel_oracles.cli.watch",
    "otel_oracles.cli.run",
    "otel_oracles.cli.gate",
    "otel_oracles.cli._agentbench",
    # The exporters, metric readers and protobuf encoders: built only with --export or
    # --results-out.
    "otel_oracles.emit._otel",
    "otel_oracles.emit._build",
    "opentelemetry.sdk.metrics",
    "opentelemetry.sdk.trace",
    "google.protobuf",
    # Only a contract holding a JSON Schema needs it.
    "jsonschema",
    # Only --baseline compares runs; validate's loaders are validate's.
    "otel_oracles.regression",
    "otel_oracles.cli.validate",
    # Worker processes and their parent-death lifeline: only --workers N > 1.
    "otel_oracles.parallel",
    "otel_oracles.lifeline",
    "multiprocessing",
    "ctypes",
    # The JUnit and HTML writers: only --junit / --html (and nothing of ``xml``: JUnit is
    # written as text).
    "otel_oracles.report._junit",
    "otel_oracles.report._html",
    "otel_oracles.report._markup",
    "xml",
    # The file-kind sniffer: only when an input could not be read.
    "otel_oracles.cli._kinds",
    # Only a module that logs something imports it (``otel_oracles._lazy_log``); a plain
    # grade logs nothing.
    "logging",
    # The command runner: only a check that runs a command.
    "otel_oracles.sandbox._run",
    "otel_oracles.sandbox._bwrap",
    "subprocess",
    # The decompressors: only a compressed input (``decode._compression.decompressor_errors``);
    # glob: only a path that is a pattern.
    "gzip",
    "zstandard",
    "glob",
    # The emitter's settings model: only with --export or --results-out (the reports read
    # ``OTEL_ORACLES_EXPLAIN`` through ``emit._explain.explain_from_env``).
    "otel_oracles.emit.config",
)


def test_grade_loads_neither_serve_nor_the_exporters() -> None:
    code, modules = loaded_by("grade", str(TRACE), "-c", str(REPO / "bench" / "contracts"), "-q")
    assert code == 1  # graded: the fixture fails one of the bench contracts
    assert "otel_oracles.cli.grade" in modules  # the probe really ran grade
    assert under(modules, *NOT_FOR_GRADE) == []


def test_grade_loads_the_report_writers_it_is_asked_for(tmp_path: Path) -> None:
    """The lazy writers still load (and write) when their option is given."""
    code, modules = loaded_by(
        "grade",
        str(TRACE),
        "-c",
        str(REPO / "bench" / "contracts"),
        "-q",
        "--junit",
        str(tmp_path / "r.xml"),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert code == 1
    assert {"otel_oracles.report._junit", "otel_oracles.report._html"} <= modules
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")
    assert "<html" in (tmp_path / "r.html").read_text()


def test_an_export_loads_no_sdk_trace_logs_or_metrics(tmp_path: Path) -> None:
    """The package's sinks encode the records themselves: the SDK's trace and logs modules
    (the adapter for exporters a caller supplies, ``emit._sdk_adapter``) are not imported
    by an export that has none; the grader aggregates and collects its metrics itself, so
    neither the metrics API nor the SDK's meter provider is imported either. The log
    records' severities are the package's own numbers (``_records.Severity``), so neither the
    logs API nor, through it, the trace API is imported."""
    out = tmp_path / "results.jsonl"
    code, modules = loaded_by(
        "grade", str(TRACE), "-c", str(REPO / "bench" / "contracts"), "-q", "--results-out",
        str(out),
    )  # fmt: skip
    assert code == 1
    assert '"resourceMetrics"' in out.read_text()  # the probe really exported metrics
    assert "otel_oracles.emit._otel" in modules
    assert (
        under(
            modules,
            "opentelemetry.sdk.trace",
            "opentelemetry.sdk._logs",
            "opentelemetry.sdk.metrics",
            "opentelemetry.metrics",
            "opentelemetry._logs",
            "opentelemetry.trace",
            "otel_oracles.emit._sdk_adapter",
        )
        == []
    )


def test_group_help_imports_no_command() -> None:
    code, modules = loaded_by("--help")
    assert code == 0
    commands = {f"{entry.module}" for entry in COMMANDS.values()}
    assert sorted(commands & modules) == []


def test_serve_help_still_loads_serve() -> None:
    """The guard above is not vacuous: the probe sees a command's imports."""
    code, modules = loaded_by("serve", "--help")
    assert code == 0
    assert "otel_oracles.cli.serve" in modules


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_group_summary_is_the_commands_own(name: str) -> None:
    """The group lists commands from ``COMMANDS`` without importing them; each summary must
    shorten to what the command's own help shortens to, at any width."""
    ctx = click.Context(cli, info_name="otel-oracles")
    command = cli.get_command(ctx, name)
    assert command is not None
    assert command.name == name
    stand_in = click.Command(name, help=COMMANDS[name].summary)
    for limit in (30, 45, 72, 94, 200, 1000):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_group_lists_exactly_its_commands() -> None:
    ctx = click.Context(cli, info_name="otel-oracles")
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    assert cli.get_command(ctx, "no-such-command") is None


GC_PROBE = """
import gc, sys
from otel_oracles.cli import cli, main

@cli.command("probe-gc")
def probe() -> None:
    print("enabled", gc.isenabled(), "frozen", gc.get_freeze_count() > 0)
    print("thresholds", *gc.get_threshold())

sys.argv = ["otel-oracles", "probe-gc"]
main()
"""


def test_a_command_runs_with_the_collector_on() -> None:
    """``main`` pauses the garbage collector for start-up only: a command (``serve`` runs for
    days) gets it back, with what start-up allocated frozen out of its scans, and collecting
    less often than CPython's default (this test process keeps the default)."""
    proc = subprocess.run(
        [sys.executable, "-c", GC_PROBE], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    state, thresholds = proc.stdout.splitlines()
    assert state.split() == ["enabled", "True", "frozen", "True"]
    assert tuple(map(int, thresholds.split()[1:])) == StartUpGc.THRESHOLDS != gc.get_threshold()


COMPILE_PROBE = """
import sys, regex
compiled = []
engine_compile = regex.compile

def counting(pattern, flags=0, **kw):
    compiled.append(pattern)
    return engine_compile(pattern, flags, **kw)

regex.compile = counting
from otel_oracles.mapping import ConventionCache, load_conventions
conventions = load_conventions([], ConventionCache.from_env())
conventions.compiled()
print(len(conventions.files), len(compiled))
"""


def test_loading_the_conventions_compiles_no_pattern(tmp_path: Path) -> None:
    """A start with the conventions cache warm compiles none of the bundled files' ~400
    patterns: the rule table's, the ``span_name`` sources' and the tool-result patterns are
    compiled on their first text (docs/performance-history.md, "Start-up: the conventions' patterns
    and the cache's hashing"). The cold start, validating the YAML, compiles each to check
    it: the probe sees
    the engine's compiles."""
    env = {**os.environ, "OTEL_ORACLES_CONVENTIONS_CACHE": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", COMPILE_PROBE],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        files, compiled = map(int, proc.stdout.split())
        runs.append(compiled)
    assert files > 20
    cold, warm = runs
    assert cold > 100
    assert warm == 0


def test_a_warm_grade_imports_no_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench contracts are YAML; once their documents are in the cache (the first run
    puts them there, beside the mapping files'), ``grade`` imports no YAML library: its
    import alone was ~90 M instructions, over 5% of a one-trace run (docs/performance-history.md,
    "Start-up: contracts without YAML")."""
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    args = ("grade", str(TRACE), "-c", str(REPO / "bench" / "contracts"), "-q")
    cold_code, cold = loaded_by(*args)
    warm_code, warm = loaded_by(*args)
    assert cold_code == warm_code == 1
    assert "yaml" in cold  # the guard is not vacuous: a cold start parses the YAML
    assert under(warm, "yaml", "otel_oracles.config_yaml") == []
    assert len(list((tmp_path / "cache").glob("contracts/*.json"))) == len(
        list((REPO / "bench" / "contracts").glob("*.yaml"))
    )


def test_a_warm_grade_imports_no_schema_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm start builds the compiled conventions from the cache's blueprint and reads no
    file's entry, so it does not import the mapping files' schema (``mapping.config``: its
    ten models made at import, ~20 M instructions, even with their schemas deferred) nor the
    cache entry's model; nor ``signal`` (its enums), which only a crashed worker's message
    needs, nor ``shlex``, which only a command the plain split cannot read needs
    (docs/performance-history.md, "Start-up: the schema's models imported when asked for").
    ``otel_oracles.mapping`` still offers the schema's models by name."""
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    args = ("grade", str(TRACE), "-c", str(REPO / "bench" / "contracts"), "-q")
    cold_code, cold = loaded_by(*args)
    warm_code, warm = loaded_by(*args)
    assert cold_code == warm_code == 1
    # the guard is not vacuous: a cold start validates the files with the schema
    assert {"otel_oracles.mapping.config", "otel_oracles.mapping._entry"} <= cold
    unneeded = ("otel_oracles.mapping.config", "otel_oracles.mapping._entry", "signal", "shlex")
    assert under(warm, *unneeded) == []

    import otel_oracles.mapping as mapping
    from otel_oracles.mapping import config

    for name in ("Condition", "ConventionFile", "Covers", "Match", "Rule", "Source"):
        assert getattr(mapping, name) is getattr(config, name)


ANNOTATIONS_PROBE = """
import builtins, json, sys
compiled = []
engine_compile = builtins.compile

def counting(source, filename, mode, *args, **kwargs):
    if mode == "eval" and isinstance(source, str):
        # The class whose fields are being collected, if it is the project's.
        frame = sys._getframe(1)
        while frame is not None:
            cls = frame.f_locals.get("cls")
            if isinstance(cls, type) and cls.__module__.startswith("otel_oracles."):
                compiled.append([cls.__module__, source])
                break
            frame = frame.f_back
    return engine_compile(source, filename, mode, *args, **kwargs)

builtins.compile = counting
from otel_oracles.cli import main
sys.argv = ["otel-oracles", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nCOMPILED " + json.dumps(compiled) + "\\n")
"""


def test_grade_parses_no_field_annotation_from_text() -> None:
    """The field annotations of the models and records a ``grade`` builds are objects, not
    text: with ``from __future__ import annotations`` pydantic (and ``Record``) turn each one
    into a ``typing.ForwardRef``, whose constructor parses the text (~72,000 instructions
    each, ~330 of them: docs/performance-history.md, "Start-up: one entry-point scan, field
    annotations as objects"). Only a field naming a class defined later stays text."""
    compiled = probed(
        ANNOTATIONS_PROBE,
        "COMPILED",
        "grade",
        str(TRACE),
        "-c",
        str(REPO / "bench" / "contracts"),
        "-q",
    )
    by_module: dict[str, list[str]] = {}
    for module, source in compiled:
        by_module.setdefault(module, []).append(source)
    # Condition's nested matches name Match, defined after it (parsed when the class is
    # made and again when the module's end rebuilds it); only a cold start imports the
    # schema's module (``test_a_warm_grade_imports_no_schema_module``).
    assert set(by_module.pop("otel_oracles.mapping.config", [])) <= {"Match | None"}
    # Before, ~330 (each model's and record's fields, and OracleParams' ClassVar for each
    # oracle's params); a few are left that are not the project's fields.
    assert sum(map(len, by_module.values())) <= 5, by_module


GENERATED_PROBE = """
import builtins, json, sys
generated = []
engine_exec = builtins.exec

def counting(source, *args, **kwargs):
    if isinstance(source, str):
        # The class ``dataclasses`` is writing a method for, if it is the project's.
        frame = sys._getframe(1)
        while frame is not None:
            cls = frame.f_locals.get("cls")
            if isinstance(cls, type) and cls.__module__.startswith("otel_oracles."):
                generated.append(cls.__module__ + "." + cls.__qualname__)
                break
            frame = frame.f_back
    return engine_exec(source, *args, **kwargs)

builtins.exec = counting
from otel_oracles.cli import main
sys.argv = ["otel-oracles", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nGENERATED " + json.dumps(generated) + "\\n")
"""

PLAIN_RECORDS = (
    "otel_oracles.grade.budget.Budget",
    "otel_oracles.grade.budget.BudgetCheck",
    "otel_oracles.cli._baseline.BaselineCheck",
    "otel_oracles.grade.compiled.CompiledCheck",
    "otel_oracles.grade.compiled.CompiledContract",
    "otel_oracles.grade.loader._Parsed",
    "otel_oracles.grade.network.OutboundRequest",
    "otel_oracles.grade.oracles.agentbench._workspace._CommandWrites",
    "otel_oracles.grade.oracles.trace_answers.Degradation",
    "otel_oracles.grade.oracles.trace_common.NamelessTwins",
    "otel_oracles.grade.registry.Registration",
    "otel_oracles.mapping._tool_results.ToolResultRules",
    "otel_oracles.mapping.parsers._registry.ParserRegistration",
    "otel_oracles.cli.LazyCommand",
    "otel_oracles.mapping._cache.KeptSet",
    "otel_oracles.mapping._compile.CompiledRule",
    "otel_oracles.mapping._compile.CompiledSet",
    "otel_oracles.mapping._compile.ContentReads",
)
"""Internal records nobody compares or prints, written as plain (``otel_oracles._frozen``)
classes: ``dataclasses`` would write and compile their methods at every start."""

VALUE_RECORDS = (
    "otel_oracles.emit._own.OwnShape",
    "otel_oracles.mapping.parsers._registry.ParserChain",
    "otel_oracles.model.step.NetworkViolation",
    "otel_oracles.model.tool_name.ToolName",
    "otel_oracles.session._input.InputLimits",
    "otel_oracles.session._session.Resume",
    "otel_oracles.session._session.SessionSpec",
    "otel_oracles.session._session.Shard",
    "otel_oracles.grade.evidence.FinalOutput",
)
"""Frozen records that are compared, hashed or printed, written as ``FrozenValue``s
(``otel_oracles._frozen``): their equality, hash and text are written once, not generated
per class."""

MUTABLE_RECORDS = (
    "otel_oracles.assemble._offline.AssemblyStats",
    "otel_oracles.assemble._sessions.SessionStats",
    "otel_oracles.mapping._mapper.Draft",
    "otel_oracles.report._common.Tally",
    "otel_oracles.session._counts.GradeRun",
)
"""Mutable records that are compared or printed, written as ``Value``s
(``otel_oracles._frozen``), for the same reason."""


def _class(path: str) -> type[Any]:
    module, name = path.rsplit(".", 1)
    cls: type[Any] = getattr(importlib.import_module(module), name)
    return cls


@pytest.mark.parametrize("path", [*PLAIN_RECORDS, *VALUE_RECORDS, *MUTABLE_RECORDS])
def test_the_plain_records_are_neither_dataclasses_nor_tuples(path: str) -> None:
    """What the probe below cannot see: a ``NamedTuple``'s ``__new__`` is compiled by
    ``eval`` before its class exists. Each record is slotted, without an instance dict."""
    cls = _class(path)
    assert not dataclasses.is_dataclass(cls) and not issubclass(cls, tuple)
    assert "__slots__" in cls.__dict__ and "__dict__" not in dir(cls)
    if path in VALUE_RECORDS:
        assert issubclass(cls, FrozenValue)
    if path in MUTABLE_RECORDS:
        assert issubclass(cls, Value) and cls.__hash__ is None


def test_grade_generates_no_method_for_the_plain_records() -> None:
    """The methods ``dataclasses`` generates are source compiled at every start (each ~0.3-1 M
    instructions; docs/performance-history.md, "Start-up: plain classes for the internal
    records"): the internal records and the values a ``grade`` builds generate none, and
    the project's generated methods stay under a ceiling (~140 before, ~100 after, ~45 with
    the frozen values' methods written once: "Start-up: frozen values without generated
    methods, the AgentBench oracles a module each"; 21 with the run's counts, the draft, the
    compiled rules and the final answer plain: "Start-up: the run's counts, the drafts, the
    compiled rules and the final answer as plain classes")."""
    generated = probed(
        GENERATED_PROBE, "GENERATED", "grade", str(TRACE), "-c", str(REPO / "bench" / "contracts")
    )
    assert "otel_oracles.model.span.SpanRecord" in generated  # the probe sees a dataclass
    assert sorted(set(generated) & {*PLAIN_RECORDS, *VALUE_RECORDS, *MUTABLE_RECORDS}) == []
    assert len(generated) <= 25, sorted(generated)


BUILT_PROBE = """
import json, sys
from pydantic import BaseModel
from otel_oracles.cli import main
sys.argv = ["otel-oracles", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass

def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)

built = sorted(
    {c.__module__ + "." + c.__qualname__ for c in subclasses(BaseModel) if c.__pydantic_complete__}
)
sys.stdout.flush()
sys.stderr.write("\\nBUILT " + json.dumps(built) + "\\n")
"""


def test_a_warm_grade_builds_no_convention_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm start reads the conventions from their cache without validating a file, so the
    mapping files' models (``mapping.config``) and the cache entry's are built (their
    schema made, ~24 M instructions) only when something validates one: a cold start, or
    ``validate``, ``explain`` and ``inspect`` (docs/performance-history.md, "Start-up: plain
    classes for the internal records, the conventions' models built when asked for")."""
    monkeypatch.setenv("OTEL_ORACLES_CONVENTIONS_CACHE", str(tmp_path / "cache"))
    args = ("grade", str(TRACE), "-c", str(REPO / "bench" / "contracts"), "-q")
    cold = probed(BUILT_PROBE, "BUILT", *args)
    warm = probed(BUILT_PROBE, "BUILT", *args)
    # the guard is not vacuous: a cold start validates the files
    assert "otel_oracles.mapping.config.ConventionFile" in cold
    assert "otel_oracles.model.contract.Contract" in warm  # the probe sees what a grade built
    assert [m for m in warm if m.startswith("otel_oracles.mapping.")] == []
