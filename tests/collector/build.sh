#!/usr/bin/env bash
# Build (or reuse) the OpenTelemetry Collector binary the e2e tests run.
#
# Why a cache outside the repository: a cold build of the collector with the
# contrib components takes minutes on 2 cores, and the binary must never be
# committed. The cache key is a hash of everything that decides the binary
# (main.go, go.mod, go.sum and the Go version), so editing the component list
# or the pinned release rebuilds, and repeated CI runs on one machine do not.
#
# Usage:
#   tests/collector/build.sh          build if needed; print the binary path
#   tests/collector/build.sh --path   print the path it would have (no build)
#
# Environment:
#   OTEL_ORACLES_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/otel-oracles)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/otelcol"

if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: the Go toolchain is not installed: install Go 1.26 or newer (https://go.dev/doc/install)" >&2
    exit 3
fi

# GOTOOLCHAIN=local: build with the Go on this machine; never fetch another one.
export GOTOOLCHAIN=local
# -mod=mod: go.sum is committed, this only lets go fill the module cache.
# -trimpath, -s -w: smaller binary, faster link, nothing machine-specific inside.
# -buildvcs=false: the source sits in a git work tree; its state must not matter.
build_flags=(-mod=mod -trimpath -buildvcs=false "-ldflags=-s -w")
key="$( { cat "$src/main.go" "$src/go.mod" "$src/go.sum"; go version; echo "${build_flags[*]}"; } \
    | sha256sum | cut -c1-16)"
root="${OTEL_ORACLES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-oracles}"
dir="$root/otelcol-$key"
bin="$dir/otelcol"

if [[ "${1:-}" == "--path" ]]; then
    echo "$bin"
    exit 0
fi

if [[ -x "$bin" ]]; then
    echo "$bin"
    exit 0
fi

mkdir -p "$dir"
# One build at a time per key: parallel test sessions wait instead of racing.
exec 9>"$dir/.lock"
flock 9
if [[ ! -x "$bin" ]]; then
    echo "build.sh: building the collector into $dir (cold builds take several minutes)" >&2
    start=$(date +%s)
    (
        cd "$src"
        GOFLAGS="" CGO_ENABLED=0 go build "${build_flags[@]}" -o "$bin.tmp" .
    )
    mv "$bin.tmp" "$bin"
    echo "build.sh: built in $(( $(date +%s) - start ))s" >&2
fi
echo "$bin"
