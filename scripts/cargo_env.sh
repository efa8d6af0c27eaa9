# Sourced by scripts/test.sh and tools/build_native.sh: where cargo is and where it builds.
#
# The Rust toolchain comes from rustup (~/.cargo/bin), which a non-login shell may not have
# on PATH. Builds go to a target directory outside the repository keyed by native/Cargo.lock,
# so a fresh clone reuses the compiled dependencies of the last build with the same lock file
# and a changed lock file never mixes with an old cache. Set CARGO_TARGET_DIR to override.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
    _oo_lock_hash="$(sha256sum "$(dirname "${BASH_SOURCE[0]}")/../native/Cargo.lock" | cut -c1-16)"
    export CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/otel-oracles/cargo/$_oo_lock_hash"
    unset _oo_lock_hash
fi
