"""Write the seed corpora of the native (cargo-fuzz) targets from the repository's real traces.

Usage:
    python tools/fuzz/native_seeds.py DIR

Writes ``DIR/<target>/<sha1>`` for the targets of ``native/fuzz`` (``tools/fuzz/fuzz_native.sh``
calls it): protobuf request bodies for ``proto_traces`` and ``proto_logs`` (both get every
body: a traces body read as logs is the mismatch the decoder's plausibility check exists for),
OTLP/JSON documents and the single lines of OTLP/JSON lines files for ``otlp_json``, and for
``python_literal`` the text inputs of the parser corpus's ``python_literal`` and
``python_repr`` rows (``tests/testdata/parsers``: reprs recorded from real traces and corner
cases). The seeds
are the same files the atheris targets start from (``targets.py``), so the corpora are made
on demand rather than committed. ``structured`` takes no seeds: its inputs are ``arbitrary``
byte streams, not trace files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import targets  # noqa: E402  (the sibling module, found through the path above)


def _json_line_seeds() -> Iterator[bytes]:
    for document in targets._jsonl_seeds():
        for line in document.splitlines():
            if line.strip():
                yield line


PARSER_CORPUS = HERE.parents[1] / "tests" / "testdata" / "parsers"


def _repr_seeds() -> Iterator[bytes]:
    """The text inputs of the parser corpus's Python-repr rows, once each."""
    seen: set[str] = set()
    for path in sorted(PARSER_CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="ascii").splitlines():
            parser, given, _ = json.loads(line)
            repr_text = parser in ("python_literal", "python_repr") and isinstance(given, str)
            if repr_text and given not in seen:
                seen.add(given)
                yield given.encode("utf-8", "surrogatepass")


def corpora() -> dict[str, list[bytes]]:
    """The seeds of each native target."""
    pb = list(targets._pb_seeds())
    return {
        "proto_traces": pb,
        "proto_logs": pb,
        "otlp_json": [*targets._json_doc_seeds(), *_json_line_seeds()],
        "python_literal": list(_repr_seeds()),
    }


def write(directory: Path, seeds: Iterable[bytes]) -> int:
    """Write each distinct seed once, named by its SHA-1 (as libFuzzer names corpus files)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for seed in seeds:
        path = directory / hashlib.sha1(seed, usedforsecurity=False).hexdigest()
        if not path.exists():
            path.write_bytes(seed)
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="corpus root: one directory per target")
    args = parser.parse_args(argv)
    for target, seeds in corpora().items():
        count = write(args.dir / target, seeds)
        print(f"{target}: {count} new seeds in {args.dir / target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
