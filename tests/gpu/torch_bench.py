#!/usr/bin/env python3
"""PyTorch side of the GPU validation (docs/validation/README.md).

Measures the same matmul shapes and precisions as `gpu-endpoint bench`, with the same protocol
(docs/research/benchmarking.md §2, gpu-endpoint/src/protocol.rs): seeded standard-normal inputs quantized to the
element format, weights W[N,K] row-major and activations X[M,K] (the `x @ W.t()` of nn.Linear, a TN GEMM),
an L2 flush by reading a max(2 x L2, 256 MB) buffer before every sample, CUDA events around the matmul
only, 3 warm-up runs, then samples until stdev/mean <= 1 % (at least 10, at most 1000, 10 s cap).

Precisions map to PyTorch as follows; anything else prints an `unsupported` or `unavailable` row:
  FP32      torch.matmul, float32, allow_tf32 = False
  TF32      torch.matmul, float32, allow_tf32 = True
  FP16/BF16 torch.matmul (FP32 accumulate, FP16/BF16 output)
  FP8_E4M3  torch._scaled_mm, E4M3 x E4M3, per-tensor scales of 1, FP16 output (as ours)
  INT8      torch._int_mm, INT8 x INT8 -> INT32 (PyTorch needs M > 16)
  INT4      torch._weight_int4pack_mm (tinygemm W4A16, BF16 activations, group 128), when this build has it
  NVFP4/MXFP4 unsupported below sm_100

Usage: torch_bench.py --shapes 1x4096x4096,2048x4096x4096 --precisions FP16,BF16 [--out torch.json]
Prints one JSON object: {"device", "versions", "points": [...], "failed": [...]}; times in seconds.
"""

import argparse
import json
import statistics
import sys
import time

import torch

WARMUP = 3
MIN_SAMPLES = 10
MAX_SAMPLES = 1000
TARGET_REL_NOISE = 0.01
TIME_CAP_S = 10.0


def parse_shape(text):
    m, n, k = (int(v) for v in text.lower().split("x"))
    return m, n, k


def quantile(sorted_values, q):
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Timer:
    """CUDA-event timing with an async L2 flush before every sample, as in the CUDA backend."""

    def __init__(self):
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 50 << 20)
        # Flush by reading a zeroed buffer (as the endpoint does): a memset would leave L2 full of dirty lines
        # whose write-back the timed kernel would pay.
        self.flush = torch.zeros(max(2 * l2, 256 << 20) // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.float32, device="cuda")

    def once(self, fn):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        torch.sum(self.flush, dim=0, out=self.sink)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3

    def protocol(self, fn):
        began = time.monotonic()
        for _ in range(WARMUP):
            self.once(fn)
        samples = []
        while len(samples) < MAX_SAMPLES:
            samples.append(self.once(fn))
            if time.monotonic() - began > TIME_CAP_S:
                break
            if len(samples) >= MIN_SAMPLES:
                mean = statistics.fmean(samples)
                if statistics.pstdev(samples) / mean <= TARGET_REL_NOISE:
                    break
        s = sorted(samples)
        return {
            "median_s": quantile(s, 0.5),
            "p10_s": quantile(s, 0.1),
            "p90_s": quantile(s, 0.9),
            "samples": len(s),
        }


def make_case(precision, m, n, k, gen):
    """Returns (callable, library description) or raises NotImplementedError with the reason."""
    w32 = torch.randn(n, k, generator=gen, device="cuda")
    x32 = torch.randn(m, k, generator=gen, device="cuda")
    cc = torch.cuda.get_device_capability(0)
    if precision in ("FP32", "TF32"):
        torch.backends.cuda.matmul.allow_tf32 = precision == "TF32"
        return (lambda: x32 @ w32.t()), f"torch.matmul float32 (allow_tf32={precision == 'TF32'})"
    if precision in ("FP16", "BF16"):
        dt = torch.float16 if precision == "FP16" else torch.bfloat16
        w, x = w32.to(dt), x32.to(dt)
        return (lambda: x @ w.t()), f"torch.matmul {dt}"
    if precision == "FP8_E4M3":
        if cc < (8, 9):
            raise NotImplementedError(f"unsupported: FP8 needs sm_89+, this GPU is sm_{cc[0]}{cc[1]}")
        w = w32.to(torch.float8_e4m3fn)
        x = x32.to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        # _scaled_mm needs the second operand column-major: W.t() of a row-major W is exactly that.
        return (
            lambda: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.float16)
        ), "torch._scaled_mm E4M3 x E4M3 -> FP16"
    if precision == "INT8":
        if m <= 16:
            raise NotImplementedError("unavailable: torch._int_mm needs M > 16")
        w = (w32 * 32).round().clamp(-128, 127).to(torch.int8)
        x = (x32 * 32).round().clamp(-128, 127).to(torch.int8)
        return (lambda: torch._int_mm(x, w.t())), "torch._int_mm INT8 -> INT32"
    if precision == "INT4":
        if not hasattr(torch, "_weight_int4pack_mm"):
            raise NotImplementedError("unavailable: this PyTorch has no _weight_int4pack_mm")
        group = 128
        q = (w32 * 3).round().clamp(-8, 7).to(torch.int32) + 8
        packed_u8 = (q[:, 1::2] << 4 | q[:, ::2]).to(torch.uint8)
        w_packed = torch._convert_weight_to_int4pack(packed_u8, 8)
        scales = (0.01 + w32[:, ::group].abs().t() * 0.01).to(torch.bfloat16)  # [K/group, N]
        zeros = torch.zeros_like(scales)
        scale_zeros = torch.stack([scales, zeros], dim=2).contiguous()
        x = x32.to(torch.bfloat16)
        return (
            lambda: torch._weight_int4pack_mm(x, w_packed, group, scale_zeros)
        ), "torch._weight_int4pack_mm (tinygemm W4A16, BF16 x, group 128)"
    if precision in ("NVFP4", "MXFP4"):
        raise NotImplementedError(
            f"unsupported: {precision} needs block-scaled FP4 tensor cores (sm_100+); this GPU is sm_{cc[0]}{cc[1]}"
        )
    raise NotImplementedError(f"unsupported: {precision} is not measured by this script")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--precisions", required=True)
    ap.add_argument("--out", default="-")
    ap.add_argument("--copy-mib", type=int, default=1024, help="size of the device-to-device copy (0: none)")
    args = ap.parse_args()
    shapes = [parse_shape(s) for s in args.shapes.split(",")]
    precisions = [p.strip().upper() for p in args.precisions.split(",")]

    props = torch.cuda.get_device_properties(0)
    versions = {
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cublas": str(torch._C._cuda_getCompiledVersion()) if hasattr(torch._C, "_cuda_getCompiledVersion") else None,
    }
    timer = Timer()
    points, failed = [], []
    gen = torch.Generator(device="cuda")
    for precision in precisions:
        for m, n, k in shapes:
            gen.manual_seed((m ^ (n << 20) ^ (k << 40)) & 0x7FFFFFFFFFFFFFFF)
            shape = f"{m}x{n}x{k}"
            try:
                fn, library = make_case(precision, m, n, k, gen)
                fn()
                torch.cuda.synchronize()
                stats = timer.protocol(fn)
            except NotImplementedError as e:
                failed.append({"shape": shape, "precision": precision, "reason": str(e)})
                continue
            except Exception as e:  # noqa: BLE001 - a failing PyTorch op is data, not a crash
                failed.append({"shape": shape, "precision": precision, "reason": f"error: {type(e).__name__}: {e}"})
                torch.cuda.synchronize()
                continue
            flop = 2.0 * m * n * k
            points.append(
                {
                    "shape": shape,
                    "precision": precision,
                    "library": library,
                    "tflops": flop / stats["median_s"] / 1e12,
                    **stats,
                }
            )
            print(f"{shape} {precision}: {stats['median_s'] * 1e6:.2f} us", file=sys.stderr)
            torch.cuda.empty_cache()
    copy = None
    if args.copy_mib > 0:
        # The bandwidth reference: tensor.copy_ of the same size as the endpoint's copy kernel; read + write bytes.
        src = torch.ones(args.copy_mib << 18, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        stats = timer.protocol(lambda: dst.copy_(src))
        copy = {"bytes": 2 * src.numel() * 4, "gb_s": 2 * src.numel() * 4 / stats["median_s"] / 1e9, **stats}
        del src, dst
    result = {
        "device": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "versions": versions,
        "points": points,
        "failed": failed,
        "copy": copy,
    }
    text = json.dumps(result, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
