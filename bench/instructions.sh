#!/usr/bin/env bash
# The instructions of one whole `grade` in a source tree: the recipe every change in
# docs/performance-history.md was measured by (docs/performance.md, "Instructions, for a
# single change"). Seconds on a shared VM move by more than most changes are worth;
# instruction counts repeat within ±0.3%.
#
#   bench/instructions.sh TREE [INPUT] [OUT] [grade options...]
#
# TREE is a source tree of the project (a detached `git worktree`, byte-compiled with
# `python -m compileall -q otel_oracles`, its native module built from its own source); it is
# put first on PYTHONPATH, so the environment's installed dependencies serve every tree.
# INPUT defaults to the synthetic 2,000-trace OTLP/JSON file (`bench/gen_traces.py --traces
# 2000 --concurrency 64 --out bench/out/data-2000-c64`); OUT keeps cachegrind's file
# (`cg_annotate --auto=no OUT` shows where the instructions go). The grade runs twice under
# `valgrind --tool=cachegrind --cache-sim=no` with PYTHONHASHSEED=0 and a private
# conventions cache, and the second run is counted: the first fills the conventions cache,
# as every grade after the first finds it. Prints "<millions> M TREE INPUT".
#
# Example, a change against its parent, side by side:
#   git worktree add --detach /tmp/before HEAD~1 && (cd /tmp/before && bash tools/build_native.sh)
#   bench/instructions.sh /tmp/before; bench/instructions.sh .
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$1" && pwd)
input=${2:-$here/out/data-2000-c64/traces.jsonl}
out=${3:-$(mktemp -t instructions.XXXXXX)}
shift $(($# < 3 ? $# : 3))
grade=${OTEL_ORACLES:-$(command -v otel-oracles)}
cache=$(mktemp -d -t instructions-cache.XXXXXX)
trap 'rm -rf "$cache"' EXIT
export PYTHONHASHSEED=0 OTEL_ORACLES_CACHE="$cache" PYTHONPATH="$tree"
cd "$tree"
for _ in 1 2; do
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
        "$grade" grade "$input" -c "$here/contracts" --quiet --json "$@" >/dev/null 2>&1 || true
done
total=$(awk '/^summary:/ {print $2}' "$out")
if [ -z "$total" ]; then
    echo "no cachegrind summary in $out (is valgrind installed, and does the grade run?)" >&2
    exit 1
fi
awk -v n="$total" -v t="$tree" -v i="$input" 'BEGIN {printf "%.1f M %s %s\n", n / 1e6, t, i}'
