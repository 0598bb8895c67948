#!/usr/bin/env bash
# Runs every test: native unit/integration tests (endpoint routes, cross-crate, real-browser end-to-end against
# the built page), the in-browser wasm tests, the wasm32 build of roofline-core, the `cuda` feature check and
# clippy. Installs missing tools first. Ends with one line "N passed, M failed".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
scripts/install-tools.sh

log="$(mktemp -d)/test.log"
step() { echo; echo "==> $*"; }

step "build the page (trunk, release profile + wasm-opt)"
trunk build --release --skip-version-check

step "roofline-core builds for wasm32-unknown-unknown"
cargo build -p roofline-core --target wasm32-unknown-unknown

step "gpu-endpoint compiles with the cuda feature (no GPU needed)"
cargo check -p gpu-endpoint --features cuda

step "clippy, warnings denied"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "native tests (includes the real-browser end-to-end tests)"
cargo build -p gpu-endpoint
cargo test --workspace 2>&1 | tee -a "$log"

step "in-browser wasm tests (headless Chromium)"
cargo test -p roofline-web --target wasm32-unknown-unknown 2>&1 | tee -a "$log"

passed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
failed=$(grep -oE '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
