"""Decode-stage limits and their defaults."""

from __future__ import annotations

from otel_oracles._native import MAX_ANY_VALUE_DEPTH as _CORE_MAX_ANY_VALUE_DEPTH

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest JSON line, JSON document or protobuf message read into memory (64 MiB).

The OTLP/gRPC default receive limit is 4 MiB and the collector's file exporter writes one
batch per line, so real lines are far smaller; the bound exists so one corrupt or hostile
line (a 200 MB single line) is reported and skipped instead of exhausting memory.
"""

DEFAULT_MAX_DECOMPRESSED_BYTES = 1024 * 1024 * 1024
"""Most bytes one compressed input file may decompress to (1 GiB; ``grade
--max-decompressed-bytes``).

zstd reaches ratios beyond 30,000:1, so a 0.3 MB file can stand for 10 GiB: without a bound,
reading it runs for minutes on nothing. A real day of collector exports that is larger is
split into files, or read with a larger limit.
"""

READ_CHUNK_BYTES = 1024 * 1024
"""Buffer size for streaming reads, and the step used to skip past an oversize line."""

FILE_BUFFER_BYTES = 4 * 1024 * 1024
"""Read buffer of an uncompressed input file: the OTLP/gRPC default message limit. A line of
the collector's file exporter is one export request, often a megabyte or more: a line that
fits in the buffer is returned with one copy, a longer one is gathered from a refill per
buffer and joined. With Python's default 8 KiB buffer, reading the 83 MB benchmark file line
by line took three times the CPU it takes with this one (docs/performance-history.md, "Imports,
reading input and the report"). The memory is one buffer per file being read; ``grade``'s
progress bar advances once per buffer read."""

MAX_ANY_VALUE_DEPTH: int = _CORE_MAX_ANY_VALUE_DEPTH
"""Most arrays/kvlists one attribute value or log body may nest; a deeper one reads as null
with a problem. Real telemetry nests a few levels; protobuf bodies cannot go much deeper
(the parser's recursion limit of 100 messages, three per level); the bound keeps converting a
hostile value far from the interpreter's recursion limit wherever it is read."""

MAX_PROBLEMS_PER_FILE = 1000
"""Problems listed per input file while it is read; the rest are counted in one last problem
(``... more problems in this file are not listed``). A hostile file of skipped items would
otherwise grow the problem list past the memory its own size suggests."""
