"""Compressed and nested inputs are decoded whole or refused with a located problem.

Every gzip member and zstd frame is read; a stream that stops inside one is reported (lines
before the cut stay valid); a file that decompresses past the limit is cut there and
reported; JSON nested past the decoders' depth is a located problem, never a traceback.
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from otel_oracles.decode import read_paths
from otel_oracles.decode._compression import (
    CorruptCompression,
    DecompressedTooLarge,
    ZstdFrameWalker,
    decompress_body,
)
from otel_oracles.model.result import InputProblem

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
JSONL = TRACES / "openinference-openai" / "c_retry_exhausted.otlp.jsonl"
PB = TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb"
CLI = str(Path(sys.executable).with_name("otel-oracles"))


def read(paths: list[str], **kwargs: int) -> tuple[int, list[InputProblem]]:
    problems: list[InputProblem] = []
    spans = sum(len(b.spans) for b in read_paths(paths, problems, **kwargs))
    return spans, problems


def zstd_frames(*parts: bytes) -> bytes:
    return b"".join(zstandard.ZstdCompressor().compress(p) for p in parts)


def test_every_zstd_frame_of_a_file_is_read(tmp_path: Path) -> None:
    lines = JSONL.read_bytes()
    one, _ = read([str(JSONL)])
    target = tmp_path / "export.jsonl.zst"
    target.write_bytes(zstd_frames(lines, lines, lines))
    spans, problems = read([str(target)])
    assert problems == []
    assert spans == 3 * one


def test_a_truncated_zstd_file_is_reported_and_lines_before_the_cut_kept(tmp_path: Path) -> None:
    lines = JSONL.read_bytes()
    one, _ = read([str(JSONL)])
    packed = zstd_frames(lines, lines)
    target = tmp_path / "export.jsonl.zst"
    target.write_bytes(packed[:-20])
    spans, problems = read([str(target)])
    assert spans >= one, "the whole first frame is kept"
    assert len(problems) == 1 and problems[0].source.startswith(f"{target}:")
    assert "truncated" in problems[0].message and "ends inside frame 2" in problems[0].message


def test_a_collector_frame_of_two_zstd_frames_is_read_whole_and_a_cut_one_refused(
    tmp_path: Path,
) -> None:
    body = PB.read_bytes()
    one, _ = read([str(PB)])
    packed = zstd_frames(body[:100], body[100:])
    whole = tmp_path / "whole.binpb"
    whole.write_bytes(len(packed).to_bytes(4, "big") + packed)
    assert read([str(whole)]) == (one, [])
    cut = packed[:-5]
    broken = tmp_path / "cut.binpb"
    broken.write_bytes(len(cut).to_bytes(4, "big") + cut)
    spans, problems = read([str(broken)])
    assert spans == 0
    assert [p.source for p in problems] == [f"{broken}@0"]
    assert "corrupt or truncated" in problems[0].message


def test_a_decompression_bomb_stops_at_the_limit_with_a_clear_problem(tmp_path: Path) -> None:
    # 64 MiB of newlines is a few KB of zstd; the limit stops reading at 1 MiB.
    target = tmp_path / "bomb.jsonl.zst"
    target.write_bytes(zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 << 20)))
    assert target.stat().st_size < 64 * 1024
    spans, problems = read([str(target)], max_decompressed_bytes=1 << 20)
    assert spans == 0
    assert len(problems) == 1
    assert "decompresses to more than 1048576 bytes" in problems[0].message
    assert "--max-decompressed-bytes" in problems[0].message


def deep_request(levels: int) -> dict[str, object]:
    value: dict[str, object] = {"stringValue": "leaf"}
    for _ in range(levels):
        value = {"arrayValue": {"values": [value]}}
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "root",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": "deep", "value": value}],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def test_json_nested_ten_thousand_levels_is_a_located_problem(tmp_path: Path) -> None:
    normal = json.dumps(deep_request(2))
    target = tmp_path / "deep.jsonl"
    # json.dumps recurses too; build the deep line from text.
    deep = normal.replace(
        '{"stringValue": "leaf"}',
        '{"arrayValue": {"values": [' * 10_000 + '{"stringValue": "leaf"}' + "]}}" * 10_000,
    )
    target.write_text(normal + "\n" + deep + "\n" + normal + "\n")
    spans, problems = read([str(target)])
    assert spans == 2, "the lines around the deep one are read"
    assert [p.source for p in problems] == [f"{target}:2"]
    assert "nests more than 256 levels deep (at byte" in problems[0].message


def test_grade_exits_2_with_one_line_for_deep_json(tmp_path: Path) -> None:
    text = json.dumps(deep_request(2)).replace(
        '{"stringValue": "leaf"}',
        '{"arrayValue": {"values": [' * 10_000 + '{"stringValue": "leaf"}' + "]}}" * 10_000,
    )
    target = tmp_path / "deep.json"
    target.write_text(text)
    contract = tmp_path / "c.yaml"
    contract.write_text("id: c\ninvariants:\n  - {type: tool_not_called, tool: wipe}\n")
    done = subprocess.run(
        [CLI, "grade", "-q", "-c", str(contract), str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert f"{target}:1: JSON nests more than 256 levels deep" in output


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_bodies_of_several_parts_decode_whole_and_cut_ones_are_refused(encoding: str) -> None:
    parts = [b"first part " * 100, b"second part " * 100]
    gzipped = b"".join(gzip.compress(p) for p in parts)
    body = gzipped if encoding == "gzip" else zstd_frames(*parts)
    assert decompress_body(body, encoding, 1 << 20) == b"".join(parts)
    with pytest.raises(CorruptCompression):
        decompress_body(body[:-3], encoding, 1 << 20)
    with pytest.raises(CorruptCompression):
        decompress_body(body + b"junk", encoding, 1 << 20)
    with pytest.raises(DecompressedTooLarge):
        decompress_body(body, encoding, 1500)


def test_the_zstd_frame_walker_finds_every_cut_of_a_real_stream() -> None:
    out = io.BytesIO()
    writer = zstandard.ZstdCompressor(write_checksum=True).stream_writer(out, closefd=False)
    for chunk in (JSONL.read_bytes()[:20_000], PB.read_bytes()[:20_000]):
        writer.write(chunk)
        writer.flush(zstandard.FLUSH_BLOCK)
    writer.close()
    stream = out.getvalue() + zstd_frames(b"x" * 1000)
    walker = ZstdFrameWalker()
    walker.feed(stream)
    walker.finish()
    ends = _frame_ends(stream)
    assert len(ends) == 2
    for cut in range(1, len(stream)):
        walker = ZstdFrameWalker()
        walker.feed(stream[:cut])
        if cut in ends:
            walker.finish()
        else:
            with pytest.raises(CorruptCompression):
                walker.finish()


def _frame_ends(stream: bytes) -> set[int]:
    """Offsets where a zstd frame ends, as the zstd library itself sees them."""
    ends = set()
    offset = 0
    while offset < len(stream):
        d = zstandard.ZstdDecompressor().decompressobj()
        d.decompress(stream[offset:])
        offset = len(stream) - len(d.unused_data)
        ends.add(offset)
    return ends


_STACK_PROBE = """
import sys, threading
from otel_oracles.decode._json import decode_json_body

depth, stack_kib = int(sys.argv[1]), int(sys.argv[2])
body = ('{"resourceSpans":[{"x":' + "[" * depth + "]" * depth + "}]}").encode()
threading.stack_size(stack_kib << 10)
outcome = []
worker = threading.Thread(target=lambda: outcome.append(len(decode_json_body(body).spans)))
worker.start()
worker.join()
print("decoded", outcome)
"""


def test_json_at_the_depth_limit_decodes_on_a_small_thread_stack() -> None:
    """The deepest document the decoder accepts (1,024 levels: the request's three plus
    1,021) is parsed by the built extension within 512 bytes of stack a level (docs/ingest.md):
    a thread of 512 KiB, far below a thread's usual 8 MiB, finishes it. The compiled
    parser recurses per level, so a larger frame would crash the process (a segfault, which
    is why this runs in a subprocess), not raise."""
    run = subprocess.run(
        [sys.executable, "-c", _STACK_PROBE, "1021", "512"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "decoded [0]"
