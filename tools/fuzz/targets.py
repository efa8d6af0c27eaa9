"""Fuzz targets: each public entry point that reads untrusted bytes, with its invariant.

DESIGN.md section 8: traces (and, defensively, contract and convention files) are untrusted
input. A target's ``run(data)`` feeds one input to one entry point and returns when the input
was read, reported (``InputProblem``, ``DecodedBatch.problems``) or refused with the project's
documented user error (``OtelOraclesError`` subclasses; for the ``serve`` body path also the
receiver's own refusals, answered as HTTP 4xx). Any other exception escapes: that is a
finding. Hangs and memory growth are bounded by the fuzzing engine (``fuzz.py``).

This module does not import atheris, so the regression tests replay committed inputs through
the same ``run`` functions without the fuzzing engine.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import zstandard

if TYPE_CHECKING:  # imported lazily everywhere else: the fuzzer instruments it first
    from otel_oracles.decode import Signal, WireLog, WireSpan

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "testdata" / "traces"
EXAMPLES = REPO / "examples"
CATCH_ALL_CONTRACT = REPO / "bench" / "contracts" / "any-agent.yaml"

#: Largest seed kept (bytes): small inputs run fast; real captures are mostly well below.
MAX_SEED_BYTES = 64 * 1024
#: Limits the targets run with: small, so that the fuzzer reaches them.
MESSAGE_LIMIT = 256 * 1024
DECOMPRESSED_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class Target:
    """One fuzz target: ``run`` checks one input, ``seeds`` yields the initial corpus."""

    name: str
    summary: str
    run: Callable[[bytes], None]
    seeds: Callable[[], Iterator[bytes]]
    structured: bool = False
    """Whether the structure-aware trace mutator (``mutations``) drives it."""
    selftest: bool = False
    """A target that fails on purpose, to prove findings are caught; not in ``--all``."""


# -- scratch files -------------------------------------------------------------------------


@cache
def _scratch_dir() -> Path:
    """Where file-reading targets write their input (one file, rewritten per input); on a
    RAM disk when there is one. ``OTEL_ORACLES_FUZZ_SCRATCH`` overrides it."""
    chosen = os.environ.get("OTEL_ORACLES_FUZZ_SCRATCH")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return Path(tempfile.mkdtemp(prefix="otel-oracles-fuzz-", dir=base))


def _scratch(name: str, data: bytes) -> Path:
    path = _scratch_dir() / f"{os.getpid()}-{name}"
    path.write_bytes(data)
    return path


# -- decoders ------------------------------------------------------------------------------


def _touch_spans(spans: Iterable[Any], logs: Iterable[Any]) -> None:
    """Read every attribute: values are converted lazily, so a converter bug only shows when
    something reads them (as mapping and grading do)."""
    for span in spans:
        dict(span.attributes)
        dict(span.resource)
        for event in span.events:
            dict(event.attributes)
        for link in span.links:
            dict(link.attributes)
    for log in logs:
        dict(log.attributes)
        dict(log.resource)
        log.body  # noqa: B018  (a lazily converted AnyValue)


def _decode_body(data: bytes, content_type: str, signals: tuple[Signal, ...]) -> None:
    from otel_oracles.decode import decode
    from otel_oracles.errors import OtelOraclesError

    for signal in signals:
        try:
            batch = decode(data, content_type, signal=signal)
        except OtelOraclesError:
            continue
        _touch_spans(batch.spans, batch.logs)


def run_proto_body(data: bytes) -> None:
    _decode_body(data, "application/x-protobuf", ("traces", "logs"))


def run_json_body(data: bytes) -> None:
    _decode_body(data, "application/json", ("traces",))  # JSON names its signal by key


def _read_file(name: str, data: bytes) -> None:
    from otel_oracles.decode import read_paths
    from otel_oracles.model.result import InputProblem

    path = _scratch(name, data)
    problems: list[InputProblem] = []
    for batch in read_paths(
        [str(path)],
        problems,
        max_message_bytes=MESSAGE_LIMIT,
        max_decompressed_bytes=DECOMPRESSED_LIMIT,
    ):
        _touch_spans(batch.spans, batch.logs)


def run_file_frames(data: bytes) -> None:
    _read_file("export.binpb", data)


def run_file_json(data: bytes) -> None:
    _read_file("export.otlp.json", data)


def run_file_jsonl(data: bytes) -> None:
    _read_file("export.jsonl", data)


_COMPRESSORS: tuple[Callable[[bytes], bytes], ...] = (
    gzip.compress,
    lambda b: zstandard.ZstdCompressor().compress(b),
    lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b),
)


def wrap_compressed(data: bytes) -> bytes:
    """The input as a compressed file: ``data[0]`` even means ``data[1:]`` already is one
    (mutated at the byte level); odd means compress ``data[2:]`` here, split into several
    members/frames at a point ``data[1]`` picks, and cut short when bit 1 of ``data[0]`` is
    set, so well-formed multi-member and truncated streams are reached too."""
    if len(data) < 2 or not data[0] & 1:
        return data[1:]
    mode, where, plain = data[0], data[1], data[2:]
    compress = _COMPRESSORS[(mode >> 2) % len(_COMPRESSORS)]
    cut = len(plain) * where // 256
    packed = compress(plain[:cut]) + compress(plain[cut:])
    if mode & 2:
        packed = packed[: max(1, len(packed) - 1 - where % 16)]
    return packed


def run_file_compressed(data: bytes) -> None:
    _read_file("export.jsonl.zst" if data[:1] == b"\x00" else "export.binpb.gz", data)
    _read_file("export.otlp.json.zst", wrap_compressed(data))


_ENCODINGS = ("gzip", "zstd", "deflate", "identity", "x-gzip", "br")


def run_serve_body(data: bytes) -> None:
    """What the OTLP/HTTP receiver does with a body: ``Content-Encoding`` undone under the
    request limit, then decoded as the ``Content-Type`` says (``data[0]`` picks both). With
    bit 6 set, as ``serve --processes`` does: lightweight records now, and the full records
    decoded again from the accepted body, as a grading worker does."""
    from otel_oracles.decode import body_contents, decode
    from otel_oracles.errors import OtelOraclesError
    from otel_oracles.server._http import decompress, media_type
    from otel_oracles.server._service import decoded_parts
    from otel_oracles.server._status import BadEncoding, TooLarge, UnsupportedMediaType

    if not data:
        return
    selector, body = data[0], data[1:]
    encoding = _ENCODINGS[selector % len(_ENCODINGS)]
    content_type = ("application/x-protobuf", "application/json; charset=utf-8")[
        (selector >> 3) & 1
    ]
    signal: Signal = "logs" if selector & 0x10 else "traces"
    transfer = bool(selector & 0x40)
    if encoding == "deflate" and selector & 0x20:
        import zlib

        body = zlib.compress(body)
    elif encoding in ("gzip", "x-gzip") and selector & 0x20:
        body = gzip.compress(body)
    elif encoding == "zstd" and selector & 0x20:
        body = zstandard.ZstdCompressor().compress(body)
    try:
        plain = decompress(body, encoding, MESSAGE_LIMIT)
        batch = decode(plain, media_type(content_type), signal=signal, for_transfer=transfer)
    except (BadEncoding, TooLarge, UnsupportedMediaType, OtelOraclesError):
        return
    spans, logs, _, _ = decoded_parts(batch)
    if transfer and (spans or logs):
        # An accepted body must decode again in the worker: it raises nothing there.
        wire_spans, wire_logs = cast("list[WireSpan]", spans), cast("list[WireLog]", logs)
        request = (wire_spans[0] if wire_spans else wire_logs[0]).body
        contents = body_contents(request.kind, request.payload)
        _touch_spans(
            [contents[0][w.index] for w in wire_spans],
            [contents[1][w.index] for w in wire_logs],
        )
        return
    _touch_spans(spans, logs)


# -- configuration loaders -----------------------------------------------------------------


def run_contract(data: bytes) -> None:
    """``load_contract`` on the bytes as a YAML file (``data[0]`` odd: as a JSON file)."""
    from otel_oracles.errors import ContractError
    from otel_oracles.grade.loader import load_contract

    name = "contract.json" if data[:1] and data[0] & 1 else "contract.yaml"
    try:
        load_contract(_scratch(name, data))
    except ContractError:
        return


def run_convention(data: bytes) -> None:
    """``load_convention_file`` and compiling the result, as ``load_conventions`` does."""
    from otel_oracles.errors import ConventionError
    from otel_oracles.mapping import ConventionSet
    from otel_oracles.mapping._loader import load_convention_file

    try:
        conv = load_convention_file(_scratch("fuzzed.yaml", data))
        ConventionSet(files=[conv]).compiled()
    except ConventionError:
        return


# -- the whole pipeline --------------------------------------------------------------------


@cache
def _grading() -> tuple[list[Any], Any, Any]:
    from otel_oracles.grade.loader import load_contract
    from otel_oracles.mapping import load_conventions
    from otel_oracles.sandbox import CommandPolicy

    # The examples select their own agents; the catch-all grades every trace that decodes.
    files = [*sorted((EXAMPLES / "contracts").glob("*.yaml")), CATCH_ALL_CONTRACT]
    contracts = [load_contract(p) for p in files]
    return contracts, load_conventions(), CommandPolicy(mode="off")


def run_pipeline(data: bytes) -> None:
    """decode -> assemble -> join sessions -> map -> grade with the example contracts and a
    catch-all one; every verdict is serialized as a report would."""
    from otel_oracles.assemble import assemble_offline, join_sessions
    from otel_oracles.decode import decode
    from otel_oracles.errors import OtelOraclesError
    from otel_oracles.pipeline import grade_trace

    contracts, conventions, commands = _grading()
    try:
        batch = decode(data, "application/json")
    except OtelOraclesError:
        return
    for trace in join_sessions(assemble_offline([batch])):
        for verdict, _ in grade_trace(trace, contracts, conventions, commands=commands):
            verdict.model_dump(mode="json")


CANARY = b"otel-oracles fuzz canary"


def run_canary(data: bytes) -> None:
    """Fails on one input, which is its seed: the driver must report it as a finding."""
    if data.startswith(CANARY):
        raise ValueError("the canary input (a deliberate finding)")


# -- seeds ---------------------------------------------------------------------------------


def _files(patterns: Iterable[str], roots: Iterable[Path] = (TRACES, EXAMPLES)) -> list[Path]:
    found: set[Path] = set()
    for root in roots:
        for pattern in patterns:
            found.update(root.rglob(pattern))
    return sorted(p for p in found if p.is_file() and p.stat().st_size <= MAX_SEED_BYTES)


def _pb_seeds() -> Iterator[bytes]:
    for path in _files(["*.pb"]):
        yield path.read_bytes()


def _json_doc_seeds() -> Iterator[bytes]:
    for path in _files(["*.otlp.json"]):
        yield path.read_bytes()


def _jsonl_seeds() -> Iterator[bytes]:
    for path in _files(["*.jsonl"]):
        yield path.read_bytes()


def _frame_seeds() -> Iterator[bytes]:
    """The collector file exporter's layout, built from real request bodies: each message
    after its 4-byte big-endian length, some frames compressed as the exporter does."""
    for path in _files(["*.pb"]):
        body = path.read_bytes()
        frame = len(body).to_bytes(4, "big") + body
        yield frame + frame
        packed = zstandard.ZstdCompressor().compress(body)
        yield len(packed).to_bytes(4, "big") + packed


def _compressed_seeds() -> Iterator[bytes]:
    for plain in [*_jsonl_seeds(), *_json_doc_seeds()][:40]:
        yield b"\x00" + zstandard.ZstdCompressor().compress(plain) * 2
        yield b"\x02" + gzip.compress(plain) + gzip.compress(plain)
        yield b"\x05\x80" + plain
        yield b"\x03\x40" + plain


def _serve_seeds() -> Iterator[bytes]:
    for body in _pb_seeds():
        yield bytes([0x03]) + body  # identity protobuf
        yield bytes([0x20]) + body  # gzip, compressed here
        yield bytes([0x21]) + body  # zstd, compressed here
        yield bytes([0x43]) + body  # identity protobuf, for a grading worker
    for body in _json_doc_seeds():
        yield bytes([0x0B]) + body  # identity JSON
        yield bytes([0x2A]) + body  # deflate JSON
        yield bytes([0x4B]) + body  # identity JSON, for a grading worker


def _contract_seeds() -> Iterator[bytes]:
    roots = [EXAMPLES, REPO / "bench" / "contracts", REPO / "tests"]
    for path in _files(["*.yaml", "*.yml"], roots):
        if "conventions" not in path.parts and "serve" not in path.name:
            yield b"\x00" + path.read_bytes()
    for path in _files(["tasks/*.json"], [EXAMPLES]):
        yield b"\x01" + path.read_bytes()


def _convention_seeds() -> Iterator[bytes]:
    for path in sorted((REPO / "otel_oracles" / "conventions").glob("*.yaml")):
        yield path.read_bytes()


TARGETS: dict[str, Target] = {
    t.name: t
    for t in [
        Target("proto-body", "OTLP protobuf request body (decode)", run_proto_body, _pb_seeds),
        Target("json-body", "OTLP/JSON request body (decode)", run_json_body, _json_doc_seeds),
        Target(
            "file-frames",
            "collector length-framed protobuf file (read_paths)",
            run_file_frames,
            _frame_seeds,
        ),
        Target("file-json", "OTLP/JSON document file (read_paths)", run_file_json, _json_doc_seeds),
        Target("file-jsonl", "OTLP/JSON lines file (read_paths)", run_file_jsonl, _jsonl_seeds),
        Target(
            "file-compressed",
            "gzip/zstd file, multi-member and truncated (read_paths)",
            run_file_compressed,
            _compressed_seeds,
        ),
        Target(
            "serve-body",
            "serve request body: Content-Encoding under the limit, then decode",
            run_serve_body,
            _serve_seeds,
        ),
        Target("contract", "contract/task file (load_contract)", run_contract, _contract_seeds),
        Target(
            "convention",
            "convention file (load_convention_file, compiled)",
            run_convention,
            _convention_seeds,
        ),
        Target(
            "pipeline",
            "mutated real traces: decode -> assemble -> map -> grade (example contracts)",
            run_pipeline,
            _json_doc_seeds,
            structured=True,
        ),
        Target(
            "canary",
            "fails on its seed on purpose: checks that the driver reports findings",
            run_canary,
            lambda: iter([CANARY]),
            selftest=True,
        ),
    ]
}


def write_seeds(target: Target, directory: Path) -> int:
    """Write ``target``'s seeds into ``directory`` (named by content hash); return how many."""
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for seed in target.seeds():
        (directory / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        count += 1
    return count
