#!/usr/bin/env bash
# Trunk's post-build hook (Trunk.toml): writes the .br and .gz sibling of every compressible file of a release
# build in trunk's staging directory, so gpu-endpoint serves them as they are (gpu-endpoint/src/assets.rs).
# Development builds (`trunk serve`) skip it. By hand: scripts/precompress.sh dist
set -euo pipefail
dir="${1:-${TRUNK_STAGING_DIR:?run by trunk, or give the directory}}"
if [ -z "${1:-}" ] && [ "${TRUNK_PROFILE:-}" != "release" ]; then
  exit 0
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo run --quiet --package gpu-endpoint -- precompress "$dir"
