#!/usr/bin/env bash
# Runs the GPU validation on a machine with an NVIDIA GPU (docs/validation/README.md).
# Needs a gpu-endpoint built with `--features cuda` (BIN), Python with PyTorch, and an output folder (OUT).
#   BIN=target/release/gpu-endpoint OUT=out tests/gpu/run.sh [env|calibrate|ours|torch|steps|attention|gputests]...
# Each step writes its own files under $OUT and a failing step does not stop the others.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BIN=${BIN:-target/release/gpu-endpoint}
OUT=${OUT:-validation-out}
HARDWARE=${HARDWARE:-h100_sxm}
# The suite: GEMV (M = 1) and GEMM over M for the four N x K pairs of Llama-class layers.
SHAPES=${SHAPES:-$(python3 - <<'PY'
pairs = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192)]
shapes = [(m, 4096, 4096) for m in (1, 16, 128, 512, 2048, 4096, 8192)]
shapes += [(m, n, k) for (n, k) in pairs[1:] for m in (1, 16, 128, 512, 2048)]
print(",".join(f"{m}x{n}x{k}" for m, n, k in shapes))
PY
)}
PRECISIONS=${PRECISIONS:-FP16,BF16,FP8_E4M3,INT8,TF32,INT4,NVFP4}
# FP32 (no tensor cores) only on the memory-bound and mid shapes: the large ones take minutes each.
FP32_SHAPES=${FP32_SHAPES:-$(echo "$SHAPES" | tr ',' '\n' | grep -E '^(1|16|128)x' | paste -sd,)}
mkdir -p "$OUT"

# cudarc loads libcublasLt/libcublas/libnvrtc by unversioned or .so.12/.so.13 names; make the toolkit's visible.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

step_env() {
  {
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu,persistence_mode --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE | sed -n 1,80p
    nvcc --version 2>/dev/null | tail -2
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
    ls -l /usr/local/cuda/lib64/ 2>/dev/null | grep -E 'libcublas|libnvrtc' | head -20
  } > "$OUT/env.txt" 2>&1
  "$BIN" device --json > "$OUT/device.json" 2> "$OUT/device.log"
}
step_calibrate() {
  "$BIN" calibrate --hardware "$HARDWARE" --json > "$OUT/calibration.json" 2> "$OUT/calibrate.log"  # default precisions
}
step_ours() {
  "$BIN" bench --json --no-store --hardware "$HARDWARE" --shapes "$SHAPES" --precisions "$PRECISIONS" > "$OUT/ours.json" 2> "$OUT/ours.log"
  "$BIN" bench --json --no-store --hardware "$HARDWARE" --shapes "$FP32_SHAPES" --precisions FP32 > "$OUT/ours-fp32.json" 2> "$OUT/ours-fp32.log"
}
step_torch() {
  python3 tests/gpu/torch_bench.py --shapes "$SHAPES" --precisions "$PRECISIONS" --out "$OUT/torch.json" 2> "$OUT/torch.log"
  python3 tests/gpu/torch_bench.py --copy-mib 0 --shapes "$FP32_SHAPES" --precisions FP32 --out "$OUT/torch-fp32.json" 2> "$OUT/torch-fp32.log"
}

# Whole model steps (bench-model) beside PyTorch's unfused Llama step, the attention kernels beside SDPA, and the
# GPU integration tests (TESTS: the integration-test binary, `cargo test --release -p gpu-endpoint --features
# cuda --no-run`; its path is printed by that command).
STEP_CASES=${STEP_CASES:-"llama-3.1-8b:bf16:decode:1:4096 llama-3.1-8b:bf16:decode:32:4096 llama-3.1-8b:bf16:prefill:1:2048 llama-3.1-8b:fp8:decode:32:4096 llama-3.1-8b:fp8:prefill:1:2048 qwen3-30b-a3b:bf16:decode:16:2048 qwen3-30b-a3b:fp8:decode:16:2048 deepseek-v3:bf16:decode:8:1024 gemma-3-12b:bf16:decode:4:8192 gemma-3-12b:fp8:decode:4:8192"}
step_steps() {
  mkdir -p "$OUT/steps"
  for c in $STEP_CASES; do
    IFS=: read -r model config phase batch context <<<"$c"
    "$BIN" bench-model --model "$model" --config "$config" --phase "$phase" --batch "$batch" --context "$context" \
      --hardware "$HARDWARE" --json --no-store --max-point-seconds 4 \
      > "$OUT/steps/${model}_${config}_${phase}_b${batch}_ctx${context}.json" 2>> "$OUT/steps/bench-model.log"
  done
  python3 tests/gpu/torch_step.py --out "$OUT/steps/torch_llama-3.1-8b_steps.json" 2> "$OUT/steps/torch.log"
}
step_attention() {
  python3 tests/gpu/attention_check.py --sweep --out "$OUT/attention.json" > "$OUT/attention.log" 2>&1
}
step_gputests() {
  ROOFLINE_GPU_TESTS=1 "$TESTS" --test-threads=1 --nocapture gpu > "$OUT/gpu-tests.log" 2>&1
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(env calibrate ours torch)
for s in "${steps[@]}"; do
  started=$(date +%s)
  "step_$s"
  echo "step $s: exit $? in $(( $(date +%s) - started )) s" | tee -a "$OUT/steps.txt"
done
