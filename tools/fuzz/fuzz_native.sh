#!/usr/bin/env bash
# Coverage-guided fuzzing of the native core's decoders (native/fuzz, cargo-fuzz/libFuzzer).
#
# The atheris targets (tools/fuzz/fuzz.py) see only Python coverage, so they are blind inside
# the Rust decoders; these targets are instrumented in Rust. Usage:
#
#   tools/fuzz/fuzz_native.sh [--runs N] [--max-time SECONDS] [--dir DIR] [TARGET ...]
#
# TARGET: proto_traces, proto_logs, otlp_json, python_literal, structured, tool_names, rule_regex
# (default: all, one after the other; the last two start without seeds). --runs: inputs per
# target (default 1000000); --max-time: seconds per target (default none); --dir: corpora,
# findings, logs (default ~/.cache/otel-oracles/fuzz-native, never the work tree). Needs cargo-fuzz
# (`cargo install cargo-fuzz --locked`); runs on the stable toolchain without sanitizers
# (`-s none`: the core has no `unsafe`, and debug assertions, overflow checks included, stay
# on). Seeds come from the repository's real traces (native_seeds.py). Each target's inputs,
# seconds and findings are printed at the end; a finding (crash-*, timeout-*, oom-* under
# DIR/artifacts/TARGET) makes the script exit 1. docs/security.md says how to turn a finding
# into a regression test.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runs=1000000
max_time=0
dir=${XDG_CACHE_HOME:-$HOME/.cache}/otel-oracles/fuzz-native
all_targets=(proto_traces proto_logs otlp_json python_literal structured tool_names rule_regex)
targets=()
while (($#)); do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --max-time) max_time=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz_native.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            [[ " ${all_targets[*]} " == *" $1 "* ]] ||
                { echo "fuzz_native.sh: unknown target $1; one of: ${all_targets[*]}" >&2; exit 2; }
            targets+=("$1"); shift ;;
    esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
command -v cargo-fuzz >/dev/null 2>&1 ||
    { echo "fuzz_native.sh: cargo-fuzz not found; install it with: cargo install cargo-fuzz --locked" >&2; exit 1; }
python=${PYTHON:-$repo/.venv/bin/python}
[[ -x $python ]] || python=python3

mkdir -p "$dir/logs"
"$python" "$repo/tools/fuzz/native_seeds.py" "$dir/corpus"
(cd "$repo/native" && cargo +stable fuzz build -s none -a --fuzz-dir fuzz)
status=0
printf '%-14s %10s %8s %9s  %s\n' target inputs seconds inputs/s findings >"$dir/logs/summary.txt"
for target in "${targets[@]}"; do
    mkdir -p "$dir/corpus/$target" "$dir/artifacts/$target"
    log=$dir/logs/$target.log
    start=$(date +%s)
    # libFuzzer exits non-zero on a finding; the summary below reports it.
    (cd "$repo/native" && cargo +stable fuzz run -s none -a --fuzz-dir fuzz "$target" "$dir/corpus/$target" -- \
        -runs="$runs" -max_total_time="$max_time" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/$target/") >"$log" 2>&1 || true
    seconds=$(($(date +%s) - start))
    inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    inputs=${inputs:-0}
    findings=$(find "$dir/artifacts/$target" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
    ((findings == 0)) || status=1
    printf '%-14s %10s %8s %9s  %s\n' "$target" "$inputs" "$seconds" "$((inputs / (seconds ? seconds : 1)))" \
        "$findings" >>"$dir/logs/summary.txt"
done
cat "$dir/logs/summary.txt"
exit $status
