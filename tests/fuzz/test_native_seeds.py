"""The seed corpora of the native fuzz targets (``tools/fuzz/native_seeds.py``): made from the
repository's real traces, each seed a body its target's decoder reads."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "fuzz"))

import native_seeds  # noqa: E402  (tools/fuzz/native_seeds.py, through the path above)

from otel_oracles.decode import Signal, decode  # noqa: E402
from otel_oracles.errors import InputError  # noqa: E402


def test_each_native_target_gets_real_bodies_its_decoder_reads() -> None:
    corpora = native_seeds.corpora()
    assert set(corpora) == {"proto_traces", "proto_logs", "otlp_json", "python_literal"}
    assert len(corpora["proto_traces"]) >= 100
    assert len(corpora["otlp_json"]) >= 100
    assert len(corpora["python_literal"]) >= 1000
    # Real captures: every JSON seed decodes to records without a refusal.
    for seed in corpora["otlp_json"][:50]:
        batch = decode(seed, "application/json")
        assert batch.spans or batch.logs
    for seed in corpora["proto_traces"][:50]:
        assert _records(seed, "traces") or _records(seed, "logs")


def _records(body: bytes, signal: Signal) -> int:
    """Records ``body`` holds read as ``signal``; 0 when it is not that request (a logs body
    read as traces can fail outright, a UTF-8 string field where traces have ids)."""
    try:
        batch = decode(body, "application/x-protobuf", signal=signal)
    except InputError:
        return 0
    return len(batch.logs) if signal == "logs" else len(batch.spans)


def test_seeds_are_written_once_under_their_sha1(tmp_path: Path) -> None:
    seeds = [b'{"resourceSpans": []}', b"\x0a\x00", b'{"resourceSpans": []}']
    assert native_seeds.write(tmp_path / "otlp_json", seeds) == 2
    names = sorted(p.name for p in (tmp_path / "otlp_json").iterdir())
    assert names == sorted(hashlib.sha1(s, usedforsecurity=False).hexdigest() for s in seeds[:2])
    assert native_seeds.write(tmp_path / "otlp_json", seeds) == 0
