"""read_paths(): files, directories, globs, stdin, compression, the collector's framings, and
every kind of bad input reported with file and line/offset while the rest is still read."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import zstandard

from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
PB = TRACES / "pydantic-ai" / "g_handoff.raw" / "1.pb"
PB2 = TRACES / "pydantic-ai" / "d_forbidden_tool.raw" / "1.pb"
LOGS_PB = TRACES / "openai-v2" / "d_forbidden_tool.raw" / "logs-1.pb"
JSONL = TRACES / "openinference-openai" / "c_retry_exhausted.otlp.jsonl"
JSON_DOC = TRACES / "pydantic-ai" / "g_handoff.otlp.json"


def read(paths: list[str], **kwargs: int) -> tuple[int, int, int, list[InputProblem]]:
    problems: list[InputProblem] = []
    spans = logs = ignored = 0
    for batch in read_paths(paths, problems, **kwargs):
        spans += len(batch.spans)
        logs += len(batch.logs)
        ignored += batch.ignored
    return spans, logs, ignored, problems


def span_count(path: Path) -> int:
    spans, _, _, problems = read([str(path)])
    assert problems == []
    return spans


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def test_directory_is_read_recursively_and_skips_non_otlp_names(tmp_path: Path) -> None:
    shutil.copytree(TRACES / "pydantic-ai" / "g_handoff.raw", tmp_path / "a" / "raw")
    shutil.copy(JSON_DOC, tmp_path / "b.otlp.json")
    (tmp_path / "NOTES.md").write_text("not a trace")
    spans, _, _, problems = read([str(tmp_path)])
    assert problems == []
    assert spans == span_count(PB) + span_count(JSON_DOC)


def test_directory_order_is_sorted_so_runs_are_reproducible(tmp_path: Path) -> None:
    for name in ("b.pb", "a.pb", "c/0.pb"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(PB if name != "a.pb" else PB2, tmp_path / name)
    problems: list[InputProblem] = []
    sources = [b.source for b in read_paths([str(tmp_path)], problems)]
    names = [Path(s.removesuffix("@0")).relative_to(tmp_path).as_posix() for s in sources]
    assert names == ["a.pb", "b.pb", "c/0.pb"]


def test_glob_pattern_expands_sorted(tmp_path: Path) -> None:
    shutil.copy(PB, tmp_path / "x1.pb")
    shutil.copy(PB2, tmp_path / "x2.pb")
    spans, _, _, problems = read([str(tmp_path / "x*.pb")])
    assert problems == [] and spans == span_count(PB) + span_count(PB2)


def test_missing_file_and_empty_glob_are_reported_and_others_still_read(tmp_path: Path) -> None:
    spans, _, _, problems = read([str(tmp_path / "nope.pb"), str(tmp_path / "*.zzz"), str(PB)])
    assert spans == span_count(PB)
    assert [(p.source, p.message) for p in problems] == [
        (str(tmp_path / "nope.pb"), "no such file or directory"),
        (str(tmp_path / "*.zzz"), "no file matches this pattern"),
    ]


@pytest.mark.parametrize("compress", ["gzip", "zstd"])
def test_compressed_files_are_detected_by_magic_bytes_not_extension(
    tmp_path: Path, compress: str
) -> None:
    data = JSONL.read_bytes()
    packed = gzip.compress(data) if compress == "gzip" else zstandard.compress(data)
    target = tmp_path / "export.jsonl"  # misleading: no .gz/.zst suffix
    target.write_bytes(packed)
    spans, _, _, problems = read([str(target)])
    assert problems == [] and spans == span_count(JSONL)


def test_stdin_dash_reads_piped_input() -> None:
    code = (
        "import sys; from otel_oracles.decode import read_paths; p = [];"
        "n = sum(len(b.spans) for b in read_paths(['-'], p)); print(n, len(p))"
    )
    with open(JSONL, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", code], stdin=stdin, capture_output=True, check=True, timeout=60
        )
    assert done.stdout.split() == [str(span_count(JSONL)).encode(), b"0"]


def test_collector_length_prefixed_proto_file_is_detected(tmp_path: Path) -> None:
    target = tmp_path / "traces.data"  # the collector's default name says nothing
    target.write_bytes(frame(PB.read_bytes()) + frame(PB2.read_bytes()))
    spans, _, _, problems = read([str(target)])
    assert problems == [] and spans == span_count(PB) + span_count(PB2)


def test_collector_frames_compressed_one_by_one_with_zstd(tmp_path: Path) -> None:
    target = tmp_path / "traces.binpb"
    target.write_bytes(
        frame(zstandard.compress(PB.read_bytes())) + frame(zstandard.compress(PB2.read_bytes()))
    )
    spans, _, _, problems = read([str(target)])
    assert problems == [] and spans == span_count(PB) + span_count(PB2)


def test_logs_protobuf_is_recognised_without_a_telling_name(tmp_path: Path) -> None:
    target = tmp_path / "body.pb"
    shutil.copy(LOGS_PB, target)
    spans, logs, _, problems = read([str(target)])
    assert problems == [] and spans == 0 and logs > 5


METRICS_RAW = TRACES / "copilot-cli-1.0" / "clean_fix.raw"
"""A capture directory as the exporters wrote it: GitHub Copilot CLI's traces and metrics."""


def test_protobuf_metrics_beside_traces_are_counted_not_reported(tmp_path: Path) -> None:
    """A folder an SDK's file exporter filled with every signal (``traces-1.pb``,
    ``metrics-1.pb``) grades its traces: the metrics body is valid OTLP the grader does not
    grade, counted as ignored like a metrics line of OTLP/JSON, whether a file of its own or
    a collector frame; before, it was an unreadable trace and ``grade`` exited 2."""
    spans, logs, ignored, problems = read([str(METRICS_RAW)])
    assert problems == []
    assert spans == span_count(METRICS_RAW / "traces-1.pb") and logs == 0 and ignored == 21
    target = tmp_path / "signals.data"
    target.write_bytes(frame((METRICS_RAW / "metrics-1.pb").read_bytes()) + frame(PB.read_bytes()))
    spans, _, ignored, problems = read([str(target)])
    assert problems == [] and spans == span_count(PB) and ignored == 21


def test_truncated_protobuf_metrics_is_still_a_problem(tmp_path: Path) -> None:
    data = (METRICS_RAW / "metrics-1.pb").read_bytes()
    target = tmp_path / "metrics-1.pb"
    target.write_bytes(data[: len(data) // 2])
    spans, _, ignored, problems = read([str(target)])
    assert spans == 0 and ignored == 0
    assert len(problems) == 1 and "not a valid protobuf" in problems[0].message


def test_json_lines_may_mix_spans_logs_and_metrics(tmp_path: Path) -> None:
    metrics = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "m"}]}]}]}
    logs_line = (TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl").read_bytes()
    target = tmp_path / "mixed.jsonl"
    target.write_bytes(JSONL.read_bytes() + logs_line + orjson.dumps(metrics) + b"\n")
    spans, logs, ignored, problems = read([str(target)])
    assert problems == []
    assert spans == span_count(JSONL) and logs > 5 and ignored == 1


def test_invalid_json_line_is_reported_with_its_line_and_other_lines_kept(tmp_path: Path) -> None:
    lines = JSONL.read_bytes().splitlines()
    target = tmp_path / "export.jsonl"
    target.write_bytes(b"\n".join([lines[0], b'{"resourceSpans": [', *lines[1:]]) + b"\n")
    spans, _, _, problems = read([str(target)])
    assert spans == span_count(JSONL)
    assert len(problems) == 1 and problems[0].source == f"{target}:2"
    assert problems[0].message.startswith("invalid JSON at column")


def test_line_that_is_not_utf8_is_reported_at_its_column_and_utf8_lines_kept(
    tmp_path: Path,
) -> None:
    """A body is checked for UTF-8 as a whole before it is parsed as text; a line that is
    not UTF-8 is still refused at the column of its bad byte, and text beside it is kept."""
    lines = JSONL.read_bytes().splitlines()
    utf8 = lines[0].replace(b'"stringValue":"', '"stringValue":"\u00e9\u4e2d'.encode(), 1)
    assert utf8 != lines[0]
    prefix = b'{"resourceSpans": [{"resource": {"attributes": [], "x": "ab'
    broken = prefix + b'\xff"}}]}'
    target = tmp_path / "export.jsonl"
    target.write_bytes(b"\n".join([utf8, broken, *lines[1:]]) + b"\n")
    problems: list[InputProblem] = []
    names = [
        value
        for batch in read_paths([str(target)], problems)
        for span in batch.spans
        for value in [*span.attributes.values(), *span.resource.values()]
        if isinstance(value, str) and value.startswith("\u00e9\u4e2d")
    ]
    assert names
    assert [(p.source, p.message) for p in problems] == [
        (
            f"{target}:2",
            f"invalid JSON at column {len(prefix) + 1}: invalid unicode code point; line skipped",
        )
    ]


def test_oversize_line_is_skipped_without_stopping_the_file(tmp_path: Path) -> None:
    lines = JSONL.read_bytes().splitlines()
    limit = max(len(line) for line in lines) + 10
    huge = b'{"resourceSpans": [' + b" " * (limit * 3) + b"]}"
    target = tmp_path / "export.jsonl"
    target.write_bytes(b"\n".join([lines[0], huge, *lines[1:]]) + b"\n")
    spans, _, _, problems = read([str(target)], max_message_bytes=limit)
    assert spans == span_count(JSONL)
    assert [p.source for p in problems] == [f"{target}:2"]
    assert f"longer than the {limit}-byte limit ({len(huge) + 1} bytes)" in problems[0].message


def test_invalid_pretty_printed_document_names_the_line(tmp_path: Path) -> None:
    text = JSON_DOC.read_text().splitlines()
    text[40] = text[40] + " oops"
    target = tmp_path / "doc.json"
    target.write_text("\n".join(text))
    spans, _, _, problems = read([str(target), str(PB)])
    assert spans == span_count(PB), "the next file is still read"
    assert len(problems) == 1 and problems[0].source == f"{target}:41"


def test_truncated_protobuf_file_is_reported_and_next_file_read(tmp_path: Path) -> None:
    data = PB.read_bytes()
    target = tmp_path / "cut.pb"
    target.write_bytes(data[: len(data) // 2])
    spans, _, _, problems = read([str(target), str(PB2)])
    assert spans == span_count(PB2)
    assert len(problems) == 1 and problems[0].source == f"{target}@0"
    assert "not a valid protobuf ExportTraceServiceRequest" in problems[0].message


def test_truncated_frame_keeps_the_frames_before_it(tmp_path: Path) -> None:
    first = frame(PB.read_bytes())
    second = frame(PB2.read_bytes())
    target = tmp_path / "traces.binpb"
    target.write_bytes(first + second[:100])
    spans, _, _, problems = read([str(target)])
    assert spans == span_count(PB)
    assert len(problems) == 1 and problems[0].source == f"{target}@{len(first)}"
    assert "truncated message" in problems[0].message


def test_truncated_gzip_is_reported_with_position_and_earlier_lines_kept(tmp_path: Path) -> None:
    packed = gzip.compress(JSONL.read_bytes() * 20)
    target = tmp_path / "export.jsonl.gz"
    target.write_bytes(packed[: len(packed) // 2])
    spans, _, _, problems = read([str(target)])
    assert spans > 0, "lines before the cut are kept"
    assert len(problems) == 1 and problems[0].source.startswith(f"{target}:")
    assert "corrupt or truncated" in problems[0].message


def test_wrong_typed_attribute_is_reported_with_file_and_line(tmp_path: Path) -> None:
    line = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "execute_tool",
                                "attributes": [{"key": "gen_ai.tool.name", "value": 12}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    target = tmp_path / "export.jsonl"
    target.write_bytes(JSONL.read_bytes() + orjson.dumps(line) + b"\n")
    problems: list[InputProblem] = []
    batches = list(read_paths([str(target)], problems))
    assert batches[-1].spans[0].attributes.get("gen_ai.tool.name") is None
    lineno = len(JSONL.read_bytes().splitlines()) + 1
    assert [p.source for p in problems] == [f"{target}:{lineno}"]
    assert "attribute 'gen_ai.tool.name'" in problems[0].message


def test_empty_file_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read([str(tmp_path / "empty.jsonl")]) == (0, 0, 0, [])


def test_bulk_ingest_gc_restores_the_collector_thresholds() -> None:
    import gc

    from otel_oracles.decode import bulk_ingest_gc

    before = gc.get_threshold()
    with bulk_ingest_gc(threshold0=12345):
        assert gc.get_threshold()[0] == 12345
    assert gc.get_threshold() == before


@pytest.mark.parametrize("pretty", [False, True])
def test_json_array_of_requests_is_read_item_by_item(tmp_path: Path, pretty: bool) -> None:
    requests = [orjson.loads(line) for line in JSONL.read_bytes().splitlines()]
    target = tmp_path / "dump.json"
    target.write_bytes(orjson.dumps(requests, option=orjson.OPT_INDENT_2 if pretty else 0))
    spans, _, _, problems = read([str(target)])
    assert problems == [] and spans == span_count(JSONL)


def test_line_over_the_default_64_mib_limit_is_reported_and_streamed_past(
    tmp_path: Path,
) -> None:
    from otel_oracles.decode import DEFAULT_MAX_MESSAGE_BYTES

    target = tmp_path / "export.jsonl"
    with open(target, "wb") as out:
        out.write(b'{"resourceSpans": ["')
        chunk = b"x" * (1 << 20)
        for _ in range(DEFAULT_MAX_MESSAGE_BYTES // len(chunk) + 2):
            out.write(chunk)
        out.write(b'"]}\n')
        out.write(JSONL.read_bytes())
    spans, _, _, problems = read([str(target)])
    assert spans == span_count(JSONL)
    assert [p.source for p in problems] == [f"{target}:1"]
    assert "longer than the 67108864-byte limit" in problems[0].message


def test_json_with_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    target = tmp_path / "export.json"
    target.write_bytes(b"\xef\xbb\xbf" + JSON_DOC.read_bytes())
    spans, _, _, problems = read([str(target)])
    assert problems == [] and spans == span_count(JSON_DOC)


@pytest.mark.parametrize("pad", [0, 63, 64, 65, 600, 5000])
def test_arrays_and_blank_lines_are_told_apart_past_long_whitespace(
    tmp_path: Path, pad: int
) -> None:
    """A line is tested for blankness and for an array on its first and last non-blank
    bytes only, without copying it: whitespace runs longer than the first look (64 bytes)
    must be seen through, and a line of spaces, tabs, vertical tabs and form feeds is
    blank (as ``strip()`` would have it), whatever its length."""
    lines = JSONL.read_bytes().splitlines()
    ws = (b" \t\r" * pad)[:pad]
    array = ws + b"[" + b",".join(lines[:2]) + b"]" + ws
    blank = b" \t\x0b\x0c" * (pad + 1)
    target = tmp_path / "export.jsonl"
    target.write_bytes(b"\n".join([array, blank, *lines[2:]]) + b"\n")
    problems: list[InputProblem] = []
    sources = [b.source for b in read_paths([str(target)], problems)]
    assert problems == []
    assert sources[:2] == [f"{target}:1[0]", f"{target}:1[1]"]
    assert sources[2:] == [f"{target}:{n}" for n in range(3, len(lines) + 1)]


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 7, 64, 1000, 1 << 20])
def test_lines_found_in_blocks_are_readlines_lines(block_bytes: int) -> None:
    """The JSON reader's lines are places in blocks it reads whole; whatever the block size
    (lines inside a block, across one or several block ends, at the stream's end without a
    newline), each is what ``readline`` returns, oversize lines are cut at the same length
    and the skips land where ``readline``'s would."""
    from otel_oracles.decode._files import _Lines

    text = b"".join(
        [
            b'{"a": 1}\n',
            b"\n",
            b"x" * 150 + b"\n",
            b"  \t\n\n \n",
            b'  {"b": [1, 2]}\n',
            b"y" * 40 + b"\n",
            b"z" * 3,
        ]
    )
    most = 100

    def by_readline() -> list[object]:
        stream = io.BufferedReader(io.BytesIO(text), 8)
        seen: list[object] = []
        while line := stream.readline(most):
            seen.append(line)
            if len(line) == most and not line.endswith(b"\n"):
                rest = stream.readline()
                seen.append(("skipped", len(rest)))
        return seen

    def by_blocks() -> list[object]:
        lines = _Lines(io.BufferedReader(io.BytesIO(text), 8), block_bytes)
        seen: list[object] = []
        while True:
            data, start, end = lines.line(most)
            if start == end:
                return seen
            seen.append(data[start:end])
            if end - start == most and data[end - 1] != ord("\n"):
                seen.append(("skipped", lines.skip_line()))

    assert by_blocks() == by_readline()

    # A blank run is consumed up to the next non-blank byte, its newlines counted.
    lines = _Lines(io.BufferedReader(io.BytesIO(b"{}\n \n\t\n  \n [1]\n{}"), 8), block_bytes)
    assert lines.line(most)[1:] == (0, 3)
    assert lines.skip_blank_run() == 3
    data, start, end = lines.line(most)
    assert data[start:end] == b"[1]\n"
    whole, start, end = lines.document(data, start, end, 10)
    assert whole[start:end] == b"[1]\n{}"


def test_a_look_at_a_files_first_bytes_reads_nothing_from_it(tmp_path: Path) -> None:
    """The format probe's look at a file's first bytes leaves the file unread (so the
    reader's first block is read from the file straight into its ``bytes``, not copied out
    of a buffer filled by the look); a pipe, which cannot be looked at in place, is peeked.
    Either way the bytes are those that follow, and all of the stream is read after."""
    from otel_oracles.decode._files import _head

    text = b'{\n  "resourceSpans": []\n}\n' * 100
    target = tmp_path / "doc.json"
    target.write_bytes(text)
    with open(target, "rb", buffering=1 << 20) as stream:
        assert _head(stream, 4) == text[:4]
        assert stream.raw.tell() == 0
        assert _head(stream, 64) == text[:64]
        assert stream.read1(1 << 20) == text
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as stream, os.fdopen(write_fd, "wb") as writer:
        writer.write(text)
        writer.close()
        assert _head(stream, 4) == text[:4]
        assert stream.read() == text
    with io.BufferedReader(io.BytesIO(text), 8) as stream:
        assert _head(stream, 5) == text[:5]
        assert stream.read() == text


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("most", [5, 30, 1000])
def test_a_document_is_its_first_line_and_the_rest_of_the_stream(
    block_bytes: int, most: int
) -> None:
    """A pretty-printed document is the stream from its first line on, at most ``most``
    bytes, whatever the block size; when the block read holds all of it, the document is
    that block, not a copy (a captured file fits in the first block)."""
    from otel_oracles.decode._files import _Lines

    text = b'\n\n  {\n  "resourceSpans": [\n    {"a": 1}\n  ]\n}\n'
    at = text.index(b"{")
    lines = _Lines(io.BufferedReader(io.BytesIO(text), 8), block_bytes)
    assert lines.line(most)[1:] == (0, 1)
    assert lines.skip_blank_run() == 1
    data, start, end = lines.line(most)
    assert data[start:end] == b"{\n"
    block = lines._block
    whole, start, end = lines.document(data, start, end, most)
    assert whole[start:end] == text[at : at + most]
    if block_bytes >= len(text) and most > len(text):
        assert whole is block and (start, end) == (at, len(text))


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 7, 64, 1000, 1 << 20])
def test_frames_taken_from_blocks_are_what_read_returns(block_bytes: int) -> None:
    """The framed-protobuf reader's messages are places in blocks it reads whole; whatever
    the block size (inside a block, across one or several block ends, longer than a block,
    cut by the stream's end), each is what ``read`` returns, skips land where ``read``'s
    would, and a run of empty frames (zero prefixes) is consumed up to the first prefix that
    is not zero. A message inside the block read is that block, not a copy."""
    from otel_oracles.decode._files import _Frames

    text = bytes(range(256)) * 4 + b"\0" * 10 + b"\0\0\0\1" + bytes(range(100))
    steps: list[tuple[str, int]] = [
        ("take", 4),
        ("take", 0),
        ("take", 100),
        ("skip", 50),
        ("take", 300),
        ("take", 1),
        ("skip", 400),
        ("take", 169),
        ("zeros", 0),
        ("take", 2),
        ("zeros", 0),
        ("take", 90),
        ("skip", 20),
        ("take", 5),
    ]

    def by_read() -> list[object]:
        stream = io.BufferedReader(io.BytesIO(text), 8)
        seen: list[object] = []
        for step, size in steps:
            if step == "take":
                seen.append(stream.read(size))
            elif step == "skip":
                seen.append(len(stream.read(size)))
            else:
                zeros = 0
                while (head := stream.read(4)) == b"\0\0\0\0":
                    zeros += 4
                seen.append((zeros, head))
        return seen

    def by_blocks() -> list[object]:
        frames = _Frames(io.BufferedReader(io.BytesIO(text), 8), block_bytes)
        seen: list[object] = []
        for step, size in steps:
            if step == "take":
                data, start, end = frames.take(size)
                seen.append(data[start:end])
            elif step == "skip":
                seen.append(frames.skip(size))
            else:
                # As the frame reader does: after an empty frame's prefix, the run of them
                # is skipped and the next prefix read (an empty one again if the run was
                # cut at a block's end).
                zeros = 0
                while True:
                    zeros += frames.skip_zero_frames()
                    data, start, end = frames.take(4)
                    if data[start:end] != b"\0\0\0\0":
                        seen.append((zeros, data[start:end]))
                        break
                    zeros += 4
        return seen

    assert by_blocks() == by_read()
    frames = _Frames(io.BufferedReader(io.BytesIO(text), 8), block_bytes)
    frames.take(4)
    data, start, end = frames.take(100)
    if block_bytes >= 104:
        assert data is frames._block and (start, end) == (4, 104)
