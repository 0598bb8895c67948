#!/usr/bin/env bash
# Installs every tool the build and the tests need, skipping those already at the right version.
# Versions are pinned; see docs/research/toolchain.md for why each one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
export PATH="$tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"

need_sudo() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "installing chromium + chromium-driver (apt)"
  need_sudo apt-get update -qq
  need_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown

if ! trunk --version 2>/dev/null | grep -q '^trunk 0.21.14$'; then
  echo "installing trunk 0.21.14 (takes about 6 minutes on 2 cores)"
  cargo install trunk --version 0.21.14 --locked --quiet
fi

# No --locked: the CLI's lockfile pins a webpki-roots the registry mirror lacks; the CLI version itself is exact.
if ! wasm-bindgen --version 2>/dev/null | grep -q ' 0.2.130$'; then
  echo "installing wasm-bindgen-cli 0.2.130 (takes about 2 minutes)"
  cargo install wasm-bindgen-cli --version 0.2.130 --quiet
fi

# Debian's binaryen 108 emits broken wasm; use npm's binaryen 132 from a project-local prefix.
if ! "$tools/node_modules/.bin/wasm-opt" --version 2>/dev/null | grep -q 'version 132'; then
  echo "installing wasm-opt (npm binaryen@132.0.0)"
  npm install --silent --prefix "$tools" binaryen@132.0.0 >/dev/null
fi

# NVRTC (PyPI's nvidia-cuda-nvrtc, the CUDA 13.0 release the H100/H200 runs had): the CUDA kernels' NVRTC
# compile tests run with it on a machine without a GPU or a CUDA toolkit. cudarc opens the unversioned name.
nvrtc="$tools/nvrtc"
if [ ! -e "$nvrtc/libnvrtc.so" ]; then
  echo "installing NVRTC 13.0.88 (pip download, 90 MB)"
  rm -rf "$nvrtc" && mkdir -p "$nvrtc"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$nvrtc" nvidia-cuda-nvrtc==13.0.88
  (cd "$nvrtc" && python3 -m zipfile -e ./*.whl unpacked && mv unpacked/nvidia/cu13/lib/* . && rm -rf unpacked ./*.whl)
  ln -sf libnvrtc.so.13 "$nvrtc/libnvrtc.so"
fi
