#!/usr/bin/env bash
# Runs attention.cu on the CPU through an emulation of the warp instructions it uses (ldmatrix, mma.sync,
# shuffles, cp.async; one std::thread per CUDA thread) for 15 configurations, each against an f64 reference.
# Needs g++ with C++20. Usage: tests/gpu/emulate/check.sh [CONFIG SHAPE] (one case; see the list below).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
here=tests/gpu/emulate
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
python3 $here/gen.py "$build/emu_kernel.h"
# One case: "HEAD_DIM DV_SLICE BLOCK_N WR WK MT Q_FMT KV_FMT O_FMT SHARED_KV" "B H KVH Sq Skv causal window splits".
run() {
  read -r d dv bn wr wk mt q kv o sh <<<"$1"
  local bin="$build/emu_$(echo "$1" | tr ' ' _)"
  [ -x "$bin" ] || g++ -std=c++20 -O2 -w -pthread -I"$here" -I"$build" -DHEAD_DIM=$d -DDV_SLICE=$dv -DBLOCK_N=$bn \
    -DWR=$wr -DWK=$wk -DMT=$mt -DQ_FMT=$q -DKV_FMT=$kv -DO_FMT=$o -DSHARED_KV=$sh "$here/harness.cpp" -o "$bin"
  # shellcheck disable=SC2086
  echo "[$1 / $2] $("$bin" $2)"
}
if [ $# -eq 2 ]; then run "$1" "$2"; exit; fi
failed=0
while read -r cfg shape comment; do
  run "${cfg//,/ }" "${shape//,/ }" || failed=1
done <<'CASES'
128,128,64,1,4,1,0,0,0,0 2,8,2,1,700,1,0,3 GQA decode, key warps, split
128,128,64,1,4,1,0,0,0,0 1,8,2,1,700,1,0,1 no split
128,128,64,4,1,1,0,0,0,0 1,4,2,150,150,1,0,1 causal prefill
128,128,64,8,1,1,0,0,0,0 1,4,2,150,150,1,0,1 8 row warps
128,128,32,4,1,2,0,0,0,0 1,4,2,150,150,1,0,1 2 m-tiles per warp
128,128,64,4,1,2,0,0,0,0 1,4,2,150,150,1,0,1 2 m-tiles, 64-key tiles
256,256,64,1,4,1,0,0,0,0 2,4,2,1,500,1,100,3 sliding-window decode
256,256,32,4,1,1,0,0,0,0 1,4,2,200,200,1,64,1 sliding-window prefill
576,192,32,4,1,1,0,0,0,1 1,64,1,1,200,1,0,2 MLA: shared K/V, output slices
128,128,64,1,4,1,0,2,0,0 2,8,2,1,300,1,0,2 BF16 Q, FP8 cache
128,128,64,1,4,1,2,2,1,0 2,8,2,1,300,1,0,2 FP8 Q and cache, FP16 out
128,128,64,4,1,1,2,2,1,0 1,4,2,100,100,1,0,1 FP8 prefill
96,96,64,4,1,1,0,0,0,0 2,12,3,37,101,0,0,2 non-causal, odd sizes, split
128,128,64,4,1,1,1,1,1,0 1,4,2,64,300,1,0,2 chunked prefill, FP16, split
64,64,64,2,2,1,0,0,0,0 1,8,1,3,200,1,0,2 2 row warps × 2 key warps
CASES
exit $failed
