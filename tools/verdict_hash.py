"""A short hash of what `otel-oracles grade --json` decided, for "verdicts are byte-identical"
checks across two trees (a refactor, a native port): every key of the report except the
time it took (``duration_ns``), serialized with sorted keys.

    otel-oracles grade tests/testdata/traces -c examples/contracts --json -q > before.json
    ... (the other tree) ... > after.json
    python tools/verdict_hash.py before.json after.json    # equal hashes: same verdicts

Exit status 1 when the files' hashes differ, so a script can use it as a check.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

TIMING_KEYS = frozenset({"duration_ns"})
"""Keys whose values are measurements of the run, not decisions."""


def without_timings(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: without_timings(v) for k, v in node.items() if k not in TIMING_KEYS}
    if isinstance(node, list):
        return [without_timings(v) for v in node]
    return node


def verdict_hash(report: Any) -> str:
    text = json.dumps(without_timings(report), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    hashes = set()
    for path in paths:
        try:
            report = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return 2
        digest = verdict_hash(report)
        hashes.add(digest)
        print(digest, path)
    return 0 if len(hashes) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
