#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
# README.md ("Run the tests") and .ci/run both run exactly this script.
#
# What it installs, and why:
#   .venv/                 the project and its test dependencies (pip, editable); maturin
#                          compiles the Rust core (native/) with the machine's rustup toolchain,
#                          into a cargo target directory cached outside the repository
#   prometheus (apt)       the collector e2e tests scrape real metrics with a real Prometheus;
#                          its promtool checks and tests the alert rules (tests/alerts)
#   bubblewrap (apt)       the sandbox test_must_pass runs trace-written code in (docs/security.md)
#   chromium (apt)         the HTML report is rendered and checked in a real headless browser
#   tmux (apt)             `watch` is driven in a real terminal (send-keys, capture-pane)
#   tests/server/node/     the OpenTelemetry JS SDK client that sends OTLP/JSON to `serve`
#   collector binary       built from tests/collector/otelcol, cached outside the repository
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

PYTHON="${PYTHON:-python3}"
source scripts/cargo_env.sh
command -v cargo >/dev/null 2>&1 ||
    { echo "cargo not found: the Rust core needs a Rust toolchain (https://rustup.rs)" >&2; exit 1; }
step "Python environment (.venv) and the Rust core (cargo target: $CARGO_TARGET_DIR)"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'

# Debian packages are installed without starting or enabling their services: a policy-rc.d
# that denies service starts is put in place for the install (only when the machine has none)
# and removed after it; units a package enabled are disabled again. Nothing is ever killed
# by name: the tests start and stop their own processes, by pid.
apt_install() {
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        return 1
    fi
    local policy=/usr/sbin/policy-rc.d ours=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# otel-oracles scripts/test.sh: no service starts during its install\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        ours=1
    fi
    local rc=0
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
        rc=$?
    [ -n "$ours" ] && rm -f "$policy"
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        local pkg
        for pkg in "$@"; do
            if systemctl list-unit-files "$pkg.service" >/dev/null 2>&1; then
                systemctl disable --quiet "$pkg.service" >/dev/null 2>&1 || true
            fi
        done
    fi
    return "$rc"
}

if ! command -v prometheus >/dev/null 2>&1; then
    step "Prometheus (Debian package; its system service is neither started nor enabled)"
    apt_install prometheus ||
        echo "prometheus is not installed and this shell cannot apt-get it; its tests fail" >&2
fi

if ! command -v bwrap >/dev/null 2>&1; then
    step "bubblewrap (Debian package): the sandbox for command-running checks"
    apt_install bubblewrap ||
        echo "bwrap is not installed and this shell cannot apt-get it; test_must_pass checks" \
            "will give 'error' and the sandbox tests fail" >&2
fi

if ! command -v chromium >/dev/null 2>&1; then
    step "Chromium (Debian package): the HTML report is checked in a real headless browser"
    apt_install chromium ||
        echo "chromium is not installed and this shell cannot apt-get it; the HTML tests fail" >&2
fi

if ! command -v tmux >/dev/null 2>&1; then
    step "tmux (Debian package): the watch screen is tested in a real terminal"
    apt_install tmux ||
        echo "tmux is not installed and this shell cannot apt-get it; the watch screen tests fail" >&2
fi

if [ -f tests/server/node/package-lock.json ]; then
    step "Node.js test client (npm ci)"
    (cd tests/server/node && npm ci --no-audit --no-fund --loglevel=error)
fi

step "OpenTelemetry Collector binary (built once from the Go module proxy, cached by input hash)"
# Go 1.26+ lives in /usr/local/go on these machines; a cold build takes ~11 minutes on 2 cores.
export PATH="$PATH:/usr/local/go/bin"
bash tests/collector/build.sh >/dev/null

step "Rust core: format, lints, tests (cargo fmt, clippy -D warnings, cargo test)"
for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
        rustup component add "$component" >/dev/null
    fi
done
cargo fmt --manifest-path native/Cargo.toml --all --check
cargo clippy --manifest-path native/Cargo.toml --workspace --all-targets --quiet -- -D warnings
# The SIMD paths are compiled for x86-64 only: lint the code the other wheels build too
# (aarch64; a check build, nothing linked, the abi3 bindings need no target interpreter).
if command -v rustup >/dev/null; then
    rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 || true
fi
PYO3_CROSS_PYTHON_VERSION=3.11 cargo clippy --manifest-path native/Cargo.toml --workspace \
    --all-targets --quiet --target aarch64-unknown-linux-gnu -- -D warnings
cargo test --manifest-path native/Cargo.toml --workspace --quiet

step "Lint and types (ruff, mypy --strict)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy

step "Tests (pytest)"
.venv/bin/python -m pytest "$@"
