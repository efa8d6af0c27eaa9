#!/usr/bin/env bash
# Rebuild the compiled core (otel_oracles/_native) after a change under native/, without
# reinstalling the package: `pip install -e .` builds it once; this is the edit-compile loop.
#
#   bash tools/build_native.sh           # release build (what the benchmarks and tests use)
#   bash tools/build_native.sh --debug   # faster to compile, slower to run
#
# The new module replaces the old one by rename, so processes that loaded the old one keep
# running on it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cargo_env.sh

profile=release
args=(--release)
if [ "${1:-}" = "--debug" ]; then
    profile=debug
    args=()
fi
cargo build "${args[@]}" --manifest-path native/python/Cargo.toml --features extension-module,mimalloc
built="$CARGO_TARGET_DIR/$profile/lib_native.so"
[ -f "$built" ] || built="$CARGO_TARGET_DIR/$profile/lib_native.dylib"
cp "$built" otel_oracles/_native.abi3.so.new
mv -f otel_oracles/_native.abi3.so.new otel_oracles/_native.abi3.so
echo "built otel_oracles/_native.abi3.so ($profile) from $built" >&2
