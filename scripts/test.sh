#!/usr/bin/env bash
# Runs every test: native unit/integration tests (endpoint routes, cross-crate, real-browser end-to-end against
# the built page), the in-browser wasm tests, the wasm32 build of roofline-core and its crates, the `cuda` feature check and
# clippy. Installs missing tools first.
#
# Ends with the skipped tests listed (a test that cannot run prints `SKIPPED <test name>: <reason>`; it is not
# counted as passed, and in CI, `CI` set, it is a failure) and one line "N passed, M failed". A test command
# that exits non-zero without a failing test (a compile error, a crashed runner) fails the script too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
scripts/install-tools.sh

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
step() { echo; echo "==> $*"; }

# Runs one test command with its output shown and kept in its own log; a non-zero exit is recorded (with
# pipefail the pipeline's status is the command's, not tee's).
broken_runs=()
n_runs=0
run_tests() {
  n_runs=$((n_runs + 1))
  local status=0
  "$@" 2>&1 | tee "$logs/$n_runs.log" || status=$?
  if [ "$status" -ne 0 ]; then
    broken_runs+=("$n_runs|$status|$*")
  fi
}

step "build the page (trunk, release profile + wasm-opt)"
trunk build --release --skip-version-check

step "roofline-core and each of its crates build for wasm32-unknown-unknown"
cargo build -p roofline-core -p roofline-base -p roofline-analysis -p roofline-serving -p roofline-wire \
  -p roofline-catalog-gen --target wasm32-unknown-unknown

step "gpu-endpoint's CUDA backend: unit tests and the kernels' NVRTC compile (no GPU needed)"
run_tests cargo test -p gpu-endpoint --features cuda --lib

step "clippy, warnings denied"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "native tests (includes the real-browser end-to-end tests)"
run_tests cargo test --workspace --no-fail-fast

step "in-browser wasm tests (headless Chromium)"
run_tests cargo test -p roofline-web --target wasm32-unknown-unknown

# Counts only libtest's own summary lines ("test result: ok. 3 passed; 1 failed; …"), one per test binary.
sum_field() {
  cat "$logs"/*.log | grep -E '^test result: ' | grep -oE "[0-9]+ $1;" | awk '{s += $1} END {print s + 0}'
}
passed=$(sum_field passed)
failed=$(sum_field failed)
# The marker may share a line with libtest's "test … " prefix, so it is matched anywhere in a line.
mapfile -t skipped < <(cat "$logs"/*.log | grep -oE 'SKIPPED [A-Za-z0-9_:]+: .*' || true)
# A skipped test returned normally, so libtest counted it as passed.
passed=$((passed - ${#skipped[@]}))

echo
ok=1
if [ "${#skipped[@]}" -gt 0 ]; then
  echo "${#skipped[@]} skipped:"
  printf '  %s\n' "${skipped[@]#SKIPPED }"
  if [ -n "${CI:-}" ]; then
    echo "skipped tests fail in CI"
    ok=0
  fi
fi
for run in "${broken_runs[@]}"; do
  IFS='|' read -r index status command <<<"$run"
  if ! grep -qE '^test result: FAILED' "$logs/$index.log"; then
    echo "\`$command\` exited with $status without a failing test (did it compile?)"
  fi
  ok=0
done
[ "$failed" -eq 0 ] || ok=0
echo "$passed passed, $failed failed"
[ "$ok" -eq 1 ]
