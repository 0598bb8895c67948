#!/usr/bin/env bash
# Builds the page and starts gpu-endpoint serving it at http://127.0.0.1:8000 (installs missing tools first).
# Extra arguments go to `gpu-endpoint serve`, e.g. `scripts/run.sh --port 8123`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
scripts/install-tools.sh
trunk build --release --skip-version-check
cargo build --release -p gpu-endpoint
exec target/release/gpu-endpoint serve --web-dir dist "$@"
