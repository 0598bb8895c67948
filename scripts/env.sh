# Sourced by the other scripts: puts the project's pinned tools first on PATH.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/.tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver || echo /usr/bin/chromedriver)}"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
# NVRTC for the CUDA kernels' compile tests (scripts/install-tools.sh); no GPU needed.
export LD_LIBRARY_PATH="$root/.tools/nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$root"
