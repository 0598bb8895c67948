#!/usr/bin/env python3
"""Builds the tables of a docs/validation page from one GPU run's raw files.

    python3 tests/gpu/report.py docs/validation/data/h100-sxm [--bin target/release/gpu-endpoint]
        [--hardware KEY] [--calibration FILE] [--write PAGE] [--markers NAME]

Reads what the run folder holds, each section only when its files are there:
- the suite of tests/gpu/run.sh: ours.json / ours-fp32.json (gpu-endpoint bench), torch.json / torch-fp32.json
  (torch_bench.py), device.json, the calibration (calibration.json, or --calibration) and the memset-flush/ run;
- further pairs `<name>_ours.json` / `<name>_torch.json`: their own ours / PyTorch table;
- steps/: `gpu-endpoint bench-model --json` outputs, `torch_<model>_steps.json` (a PyTorch step script's output)
  and `*.csv` published decode-attention times (kernel, batch, kv_len, q_heads, kv_heads, head_dim, time_us,
  source).
The hardware key is --hardware, else device.json's `matched_key`. Prediction errors come from
`gpu-endpoint validate` and the reference ceilings from `gpu-endpoint hardware --json` (roofline-core), never from
this script. With --write, the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in PAGE is replaced
(NAME is --markers, `tables` by default); otherwise the tables are printed.

"Ours / PyTorch" is a throughput ratio: PyTorch's median time divided by ours (> 1: ours is faster).
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# The GEMV whose measured time, minus its bytes over the copy bandwidth, estimates the per-kernel overhead
# for the "calibrated + overhead" column of a calibration that did not measure it (before `calibrate` measured
# it on 1x2048x2048).
OVERHEAD_POINT = ("1x4096x4096", "FP16")
PRECISION_ORDER = ["FP32", "TF32", "FP16", "BF16", "FP8_E4M3", "INT8", "INT4", "all"]
REGIMES = ["GEMV", "GEMM", "memory-bound", "compute-bound", "all"]
# A PyTorch step script's operator names that differ from bench-model's rows.
TORCH_OP_ROWS = {"rmsnorm": "attn_norm", "lm_head": "logits"}
DETAIL_HEADER = ["shape", "precision", "ours µs", "PyTorch µs", "ours / PyTorch", "our kernel", "PyTorch"]
ATTENTION_SHAPE = re.compile(r"B(\d+)xH(\d+)/(\d+)xSq(\d+)xSkv(\d+)xd(\d+)")


def load(path):
    with open(path) as f:
        return json.load(f)


def points(data_dir, names):
    out = []
    for name in names:
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            out.extend(load(path)["points"])
    return out


def endpoint(binary, *args):
    return json.loads(subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout)


def validate(binary, hardware, data_dir, calibration_path):
    args = ["validate", "--hardware", hardware, "--json", "--calibration", calibration_path]
    for name in ("ours.json", "ours-fp32.json"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            args += ["--measured", path]
    return endpoint(binary, *args)


def quantile(values, q):
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def us(seconds):
    return f"{seconds * 1e6:.2f}"


def ms(seconds):
    return f"{seconds * 1e3:.2f}"


def compute_path(precision):
    """The catalog's compute-path name of a measured precision (`FP8_E4M3` runs on `fp8`)."""
    return {"FP8_E4M3": "fp8", "FP8_E5M2": "fp8"}.get(precision, precision.lower())


def copy_gb_s(calibration):
    """Copy bandwidth of a `calibrate --json` output in GB/s (older outputs carry `bandwidth_gb_s`)."""
    if "bandwidth_gb_s" in calibration:
        return calibration["bandwidth_gb_s"]
    return calibration["bandwidth_bytes_per_s"] / 1e9


def peak_tflops(peak):
    """Achieved TFLOP/s of one calibrated peak (older outputs carry `achieved_tflops`)."""
    return peak["achieved_tflops"] if "achieved_tflops" in peak else peak["achieved_flop_per_s"] / 1e12


def spread(summary):
    """`, N runs: spread X %` of a calibration's run summary ((max − min) / median), or nothing."""
    if not summary:
        return ""
    return f", {summary['runs']} runs: spread {(summary['max'] - summary['min']) / summary['median'] * 100:.1f} %"


def device_section(device, torch):
    versions = dict(device["versions"])
    return "### Device and versions\n\n" + table(
        ["GPU", "arch", "SMs", "max SM / memory clock", "driver", "CUDA (driver API)", "cuBLASLt", "NVRTC", "PyTorch"],
        [[
            device["name"],
            device["arch"],
            device["sm_count"],
            f"{device['sm_clock_max_mhz']:.0f} / {device['mem_clock_max_mhz']:.0f} MHz",
            versions.get("driver"),
            versions.get("cuda_driver_api"),
            versions.get("cublasLt"),
            versions.get("nvrtc"),
            f"{torch['versions']['torch']} (CUDA {torch['versions']['cuda_runtime']})",
        ]],
    )


def calibration_section(calibration, torch, plain, calibration_name):
    copy = copy_gb_s(calibration)
    torch_copy = torch["copy"]["gb_s"]
    runs = calibration["spec"].get("calibration") or {}
    run_peaks = dict(runs.get("peaks", []))
    ds_bw = plain["datasheet_spec"]["dram_bandwidth_bytes_per_s"] / 1e9
    datasheet = {p["path"]: p["dense_flop_per_s"] for p in plain["datasheet_spec"]["peaks"]}
    rows = [[
        "DRAM copy (1 GiB → 1 GiB, read + write bytes)",
        f"{copy:.0f} GB/s",
        f"{ds_bw:.0f} GB/s",
        f"{copy / ds_bw * 100:.1f} %",
        f"PyTorch `copy_`: {torch_copy:.0f} GB/s ({torch_copy / ds_bw * 100:.1f} %); ours / PyTorch "
        f"{copy / torch_copy:.3f}{spread(runs.get('bandwidth'))}",
    ]]
    for p in calibration["peaks"]:
        m = p["measurement"]
        path = compute_path(p["precision"])
        ds = datasheet.get(path)
        tflops = peak_tflops(p)
        rows.append([
            f"{p['precision']} GEMM {p['shape']}",
            f"{tflops:.1f} TFLOP/s",
            f"{ds / 1e12:.1f} TFLOP/s dense" if ds else "—",
            f"{tflops * 1e12 / ds * 100:.1f} %" if ds else "—",
            f"SM clock {m.get('sm_clock_mhz') or 0:.0f} MHz, mean {m.get('power_w') or 0:.0f} W over the samples, "
            f"throttle: {', '.join(m.get('throttle_reasons') or []) or 'none'}{spread(run_peaks.get(path))}",
        ])
    for key, what in (("kernel_overhead", "matrix"), ("vector_kernel_overhead", "vector")):
        o = calibration.get(key)
        if o:
            kernel = o["measurement"]["kernel"]
            ran = f"{o['precision']} GEMV {o['shape']}" if "precision" in o else kernel.rsplit("), ", 1)[-1]
            rows.append([
                f"{what}-kernel overhead ({ran}: time − bytes / copy bandwidth)",
                f"{us(o['kernel_overhead_s'])} µs", "—", "—", f"{kernel.split(' (')[0]}{spread(runs.get(key))}",
            ])
    out = [f"### Calibration (`gpu-endpoint calibrate`{calibration_name})\n", table(
        ["quantity", "measured", "datasheet", "of datasheet", "conditions"], rows)]
    if runs.get("warnings"):
        out.append("\nWarnings recorded in the calibration: " + "; ".join(runs["warnings"]) + ".")
    return "\n".join(out)


def by_shape(torch_points):
    return {(p["shape"], p["precision"]): p for p in torch_points}


def ratio_rows(ours, torch_points):
    """Per precision, the ours / PyTorch ratios, and the every-point detail rows."""
    ratios = {}
    detail = []
    for e in ours:
        p = e["point"]
        t = torch_points.get((p["shape"], p["precision"]))
        if not t:
            continue
        r = t["median_s"] / p["measurement"]["median_s"]
        ratios.setdefault(p["precision"], []).append(r)
        detail.append([
            p["shape"], p["precision"], us(p["measurement"]["median_s"]), us(t["median_s"]), f"{r:.3f}",
            p["measurement"]["kernel"].split(" (")[0], t["library"],
        ])
    return ratios, detail


def ratio_table(ratios, headline):
    rows = [[prec, len(rs), f"{statistics.median(rs):.3f}", f"{min(rs):.3f}", f"{max(rs):.3f}"]
            for prec, rs in ratios.items()]
    label, picked = headline
    rows.append([
        label, len(picked), f"**{statistics.median(picked):.3f}**", f"{min(picked):.3f}", f"{max(picked):.3f}",
    ])
    return table(["precision", "shapes", "median", "min", "max"], rows)


def ratio_section(d, ours, torch, torch_fp32):
    ratios, detail = ratio_rows(ours, by_shape(torch["points"] + torch_fp32["points"]))
    cublas = [r for prec, rs in ratios.items() if prec != "INT4" for r in rs]
    out = ["\n### Ours / PyTorch (throughput ratio, same shapes, same protocol)\n"]
    out.append(ratio_table(ratios, ("**all cuBLASLt**", cublas)))
    main, _ = ratio_rows(load(os.path.join(d, "ours.json"))["points"], by_shape(torch["points"]))
    main_all = [r for rs in main.values() for r in rs]
    out.append(
        f"\n`ours.json` against `torch.json` alone ({', '.join(main)}): median "
        f"{statistics.median(main_all):.3f} over {len(main_all)} points."
    )
    out.append(
        "\nINT4 is our NVRTC W4A16-dequant GEMV (FP16 activations) against PyTorch's tinygemm "
        "`_weight_int4pack_mm` (BF16 activations): a comparison, not the same kernel. PyTorch's `_int_mm` needs "
        "M > 16, so INT8 GEMVs have no PyTorch row."
    )
    for name in sorted(f[: -len("_ours.json")] for f in os.listdir(d) if f.endswith("_ours.json")):
        torch_path = os.path.join(d, f"{name}_torch.json")
        if not os.path.exists(torch_path):
            continue
        extra, extra_detail = ratio_rows(load(os.path.join(d, f"{name}_ours.json"))["points"],
                                         by_shape(load(torch_path)["points"]))
        shapes = sorted({row[0] for row in extra_detail}, key=lambda s: [int(v) for v in s.split("x")])
        out.append(f"\n### Ours / PyTorch on `{name}` ({', '.join(shapes)})\n")
        out.append(ratio_table(extra, ("**all**", [r for rs in extra.values() for r in rs])))
        out.append(f"\n<details><summary>Every point of `{name}`: ours and PyTorch</summary>\n")
        out.append(table(DETAIL_HEADER, extra_detail))
        out.append("\n</details>")
    return "\n".join(out), detail


def error_stats(columns, skip_key):
    stats = {}
    for name, result, skip, column in columns:
        for row in result["rows"]:
            if skip and (row["shape"], row["precision"]) == skip_key:
                continue
            pred = row[column]
            if pred is None or pred["error_pct"] is None:
                continue
            err = abs(pred["error_pct"])
            bound = row["calibrated"]["bound"] if row["calibrated"] and row["calibrated"]["bound"] else pred["bound"]
            for key in ((row["precision"], row["regime"]), ("all", f"{bound}-bound"), ("all", "all")):
                stats.setdefault(key, {}).setdefault(name, []).append(err)
            stats.setdefault((row["precision"], "every regime"), {}).setdefault(name, []).append(err)
    return stats


def reference_text(binary, hardware):
    spec = next(h for h in endpoint(binary, "hardware", "--json") if h["key"] == hardware)
    ref = spec["reference"]
    return (
        f"Reference: the default mode, the catalog's reference ceilings for `{hardware}` (GEMM fractions of the "
        f"dense peaks, {ref['dram_fraction']['value'] * 100:.1f} % of the datasheet bandwidth, "
        f"{ref['matrix_kernel_floor']['value'] * 1e6:g} µs per matrix kernel; each with its source in "
        f"`gpu-endpoint hardware --json`), fitted to none of these points."
    )


def error_section(args, d, calibration, calibration_path, plain):
    measured_overhead = calibration.get("kernel_overhead")
    columns = [("datasheet", plain, False, "datasheet"), ("reference", plain, False, "reference"),
               ("calibrated", plain, False, "calibrated")]
    bw = plain["datasheet_spec"]["dram_bandwidth_bytes_per_s"] / 1e12
    text = (f"Datasheet: the catalog's `{args.hardware}` ({bw:.2f} TB/s, dense peaks). "
            f"{reference_text(args.bin, args.hardware)} ")
    key = OVERHEAD_POINT
    if measured_overhead:
        vector = calibration.get("vector_kernel_overhead")
        text += (
            f"Calibrated: copy bandwidth, the peaks above and the measured per-kernel overheads (matrix "
            f"{us(measured_overhead['kernel_overhead_s'])} µs"
            + (f", vector {us(vector['kernel_overhead_s'])} µs" if vector else "") + ").\n"
        )
    else:
        # The overhead estimate is what the calibrated roofline leaves unexplained on one memory-bound GEMV:
        # measured − core's calibrated prediction (bytes / copy bandwidth), never below zero.
        row = next(r for r in plain["rows"] if (r["shape"], r["precision"]) == key)
        overhead_s = max(0.0, row["measured_s"] - row["calibrated"]["predicted_s"])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "calibration-overhead.json")
            with open(path, "w") as f:
                json.dump(dict(calibration, spec=dict(calibration["spec"], kernel_overhead_s=overhead_s)), f)
            extra = validate(args.bin, args.hardware, d, path)
        columns.append(("calibrated + overhead", extra, True, "calibrated"))
        text += (
            f"Calibrated: copy bandwidth and the peaks above. "
            f"Calibrated + overhead: also {overhead_s * 1e6:.2f} µs per kernel, estimated from the "
            f"{key[0]} {key[1]} GEMV (measured − bytes / copy bandwidth), which is left out of that column.\n"
        )
    stats = error_stats(columns, key)
    names = [c[0] for c in columns]

    def cells(cols, q90):
        v = [cols.get(n, []) for n in names]
        if q90:
            return [f"{quantile(x, 0.5):.1f} / {quantile(x, 0.9):.1f} %" if x else "—" for x in v]
        return [f"{quantile(x, 0.5):.1f} %" if x else "—" for x in v]

    out = ["\n### Prediction error (`gpu-endpoint validate`), median and p90 of |error| by precision and regime\n",
           text]
    rows = [[prec, regime, len(cols.get("datasheet", [])), *cells(cols, True)]
            for (prec, regime), cols in sorted(
                ((k, v) for k, v in stats.items() if k[1] != "every regime"),
                key=lambda kv: (PRECISION_ORDER.index(kv[0][0]), REGIMES.index(kv[0][1])))]
    out.append(table(["precision", "regime", "points", *[f"{n} (median / p90)" for n in names]], rows))
    out.append(
        "\nRegime: GEMV = M = 1, GEMM = M ≥ 16; the `all` rows split every point by the calibrated prediction's "
        "bound (memory- or compute-bound)."
    )
    out.append("\n### Prediction error by precision (median of |error| over every regime)\n")
    rows = [[prec, len(cols.get("datasheet", [])), *cells(cols, False)]
            for (prec, regime), cols in sorted(stats.items(), key=lambda kv: PRECISION_ORDER.index(kv[0][0]))
            if regime == "every regime"]
    out.append(table(["precision", "points", *names], rows))
    return "\n".join(out)


def expected_section(d, plain, by_key):
    """The original toolkit's expected-results table: the 1x4096x4096 GEMV of every precision the run tried."""
    failed = {e["failure"]["precision"]: e["failure"]["message"] for e in load(os.path.join(d, "ours.json"))["failed"]
              if e["shape"] == "1x4096x4096"}
    rows_by_key = {(r["shape"], r["precision"]): r for r in plain["rows"]}
    rows = []
    for prec in ["FP16", "BF16", "FP8_E4M3", "INT8", "INT4", "NVFP4"]:
        r = rows_by_key.get(("1x4096x4096", prec))
        if r is None:
            if prec in failed:
                rows.append([prec, "—", "—", f"unsupported: {failed[prec]}"])
            continue
        p = by_key[("1x4096x4096", prec)]
        rows.append([
            prec + (" (W4A16-dequant)" if prec == "INT4" else ""),
            us(r["datasheet"]["predicted_s"]) if r["datasheet"]["predicted_s"] else "—",
            us(r["calibrated"]["predicted_s"]),
            f"{us(r['measured_s'])} ({p['bandwidth_gb_s']:.0f} GB/s)",
        ])
    return "\n### The original toolkit's expected-results table, filled for this GPU (GEMV 1×4096×4096)\n\n" + table(
        ["precision", "predicted µs (datasheet)", "predicted µs (calibrated)", "measured µs"], rows)


def flush_section(d, by_key):
    before_dir = os.path.join(d, "memset-flush")
    if not os.path.isdir(before_dir):
        return None
    before = {(e["point"]["shape"], e["point"]["precision"]): e["point"]
              for e in points(before_dir, ["ours.json", "ours-fp32.json"])}
    rows = []
    for shape in ["1x4096x4096", "1x8192x8192", "128x14336x4096"]:
        for prec in ["FP16", "FP8_E4M3", "INT4"]:
            a, b = before.get((shape, prec)), by_key.get((shape, prec))
            if a and b:
                ta, tb = a["measurement"]["median_s"], b["measurement"]["median_s"]
                rows.append([shape, prec, us(ta), us(tb), f"{(ta - tb) * 1e6:.2f}"])
    return "\n".join([
        "\n### Memset flush (first run) vs read flush (this run), memory-bound shapes\n",
        table(["shape", "precision", "memset flush µs", "read flush µs", "difference µs"], rows),
        "\nINT4's difference also includes the W4A16 kernel's switch to 16-byte loads.",
    ])


def suite_sections(args, d):
    ours = points(d, ["ours.json", "ours-fp32.json"])
    torch = load(os.path.join(d, "torch.json"))
    torch_fp32 = load(os.path.join(d, "torch-fp32.json"))
    calibration_path = args.calibration or os.path.join(d, "calibration.json")
    calibration = load(calibration_path)
    by_key = {(e["point"]["shape"], e["point"]["precision"]): e["point"] for e in ours}
    plain = validate(args.bin, args.hardware, d, calibration_path)
    name = "" if args.calibration is None else f", `{os.path.basename(calibration_path)}`"
    out = [device_section(load(os.path.join(d, "device.json")), torch),
           "\n" + calibration_section(calibration, torch, plain, name)]
    ratio_text, detail = ratio_section(d, ours, torch, torch_fp32)
    out.append(ratio_text)
    out.append(error_section(args, d, calibration, calibration_path, plain))
    out.append(expected_section(d, plain, by_key))
    flush = flush_section(d, by_key)
    if flush:
        out.append(flush)
    out.append("\n<details><summary>Every measured point: ours and PyTorch</summary>\n")
    out.append(table(DETAIL_HEADER, detail))
    out.append("\n</details>")
    return out


def step_rows(step):
    """bench-model's measured rows by name, and its failed rows grouped by failure code."""
    measured = {o["name"]: o for o in step["operators"] if o.get("measured")}
    failed = {}
    for o in step["operators"]:
        if o.get("failure"):
            failed.setdefault(o["failure"]["code"], []).append(o["name"])
    return measured, failed


def step_summary(steps):
    rows, notes = [], []
    for name, step in steps:
        req, done = step["request"], step["done"]
        measured, failed = step_rows(step)
        gemm = [o["measured_over_predicted"] for o in measured.values() if o["kind"] in ("gemm", "gemv")]
        attention = [f"{o['name']} {o['measured']['time_us']:,.0f} / {o['predicted_time_s'] * 1e6:.1f} µs "
                     f"({o['measured_over_predicted']:.0f}×)" for o in measured.values() if o["kind"] == "attention"]
        e2e = done.get("end_to_end")
        rows.append([
            req["model"], req["config"], f"{req['phase']} b{req['batch']} ctx {req['context']}",
            f"{done['measured']} of {done['operators']}",
            ms(done["predicted_step_time_s"]), ms(done["predicted_measured_time_s"]), ms(done["measured_time_s"]),
            f"{done['measured_over_predicted']:.2f}",
            f"{ms(e2e['measured_time_s'])} ({e2e['kernels']} kernels)" if e2e
            else f"— ({done['end_to_end_failure']['code']})",
            f"{min(gemm):.2f}–{max(gemm):.2f}" if gemm else "—",
            "; ".join(attention) or "—",
        ])
        if failed or not e2e:
            why = [f"{code}: {', '.join(names)}" for code, names in failed.items()]
            if not e2e:
                why.append(f"end to end: {done['end_to_end_failure']['message']}")
            notes.append(f"- `{name}`: " + "; ".join(why))
    header = ["model", "config", "case", "rows measured", "predicted step ms", "predicted, measured rows ms",
              "measured rows (sum) ms", "measured ÷ predicted (rows)", "whole step, CUDA graph ms",
              "GEMMs measured ÷ predicted", "attention measured / predicted"]
    return table(header, rows), notes


def published_attention(steps_dir):
    out = []
    for f in sorted(os.listdir(steps_dir)):
        if f.endswith(".csv"):
            with open(os.path.join(steps_dir, f), newline="") as fh:
                out += list(csv.DictReader(fh))
    return out


def published_time(published, shape, kv_dtype):
    """The published decode-attention row of the same batch, KV length, heads, head size and KV format, if any."""
    m = ATTENTION_SHAPE.fullmatch(shape)
    if not m or m.group(4) != "1":
        return None
    b, h, kv, _, skv, dim = m.groups()
    key = (b, h, kv, skv, dim, kv_dtype)
    return next((p for p in published
                 if (p["batch"], p["q_heads"], p["kv_heads"], p["kv_len"], p["head_dim"], p["kv_dtype"]) == key), None)


def torch_case_table(case, ours, published):
    """One PyTorch step case beside bench-model's file of the same case."""
    measured = step_rows(ours)[0]
    predicted = {o["name"]: o for o in ours["operators"]}
    rows = []
    for op, t in case["ops"].items():
        row_name = TORCH_OP_ROWS.get(op, op)
        o, p = measured.get(row_name), predicted.get(row_name)
        fa = published_time(published, p["shape"], p["operands"]["weight"]) if p and row_name == "attention" else None
        rows.append([
            op if row_name == op else f"{op} (`{row_name}`)",
            f"{o['measured']['time_us']:,.2f}" if o else ("no measurement" if p else "no row"),
            f"{t * 1e6:,.2f}",
            f"{fa['time_us']} ({fa['kernel']})" if fa else "—",
            us(p["predicted_time_s"]) if p else "—",
        ])
    done = ours["done"]
    e2e = done.get("end_to_end")
    rows.append([
        "**whole step** (ms)",
        ms(e2e["measured_time_s"]) + " (CUDA graph)" if e2e else
        f"— ({done['end_to_end_failure']['code']}); rows sum {ms(done['measured_time_s'])}",
        ms(case["step_time_s"]) + " (CUDA graph)",
        "—",
        ms(done["predicted_step_time_s"]),
    ])
    return table(["operator (one layer)", "ours µs", "PyTorch µs", "published µs", "predicted µs"], rows)


def steps_sections(d):
    steps_dir = os.path.join(d, "steps")
    if not os.path.isdir(steps_dir):
        return []
    files = sorted(f for f in os.listdir(steps_dir) if f.endswith(".json"))
    steps = [(f, load(os.path.join(steps_dir, f))) for f in files if not f.startswith("torch_")]
    steps = [(f, s) for f, s in steps if isinstance(s, dict) and "request" in s]
    out = ["\n### Model steps (`gpu-endpoint bench-model`, reference-mode predictions)\n"]
    summary, notes = step_summary(steps)
    out.append(summary)
    out.append(
        "\nRows: operator rows of the step (each timed alone, times its count). Whole step: every kernel of the "
        "step captured in one CUDA graph and replayed, when every row has a measurement and the graph ran within "
        "the point's time cap. Attention: one layer's kernel, measured / predicted."
    )
    if notes:
        out.append("\nRows without a measurement, and why the whole step did not run:\n")
        out += notes
    published = published_attention(steps_dir)
    by_case = {(s["request"]["model"], s["request"]["phase"], s["request"]["config"], s["request"]["batch"],
                s["request"]["context"]): s for _, s in steps}
    for f in files:
        m = re.fullmatch(r"torch_(.+)_steps\.json", f)
        if not m:
            continue
        model = m.group(1)
        alone = []
        for case in load(os.path.join(steps_dir, f)):
            phase, config, batch, context = case["case"].split(":")
            title = f"{model} {config} {phase}, batch {batch}, context {context}"
            ours = by_case.get((model, phase, config, int(batch), int(context)))
            if ours is None:
                alone.append(
                    f"{title}: step {ms(case['step_time_s'])} ms, attention {us(case['ops']['attention'])} µs")
                continue
            out.append(f"\n#### {title}: ours, PyTorch ({case['torch']}), published, predicted\n")
            out.append(torch_case_table(case, ours, published))
        if alone:
            out.append("\nPyTorch only (no `bench-model` file of the case): " + "; ".join(alone) + ".")
    if published:
        sources = sorted({f"{p['kernel']}: {p['source']}" for p in published})
        out.append("\nPublished: " + "; ".join(sources) + ".")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir")
    ap.add_argument("--bin", default="target/release/gpu-endpoint")
    ap.add_argument("--hardware", help="catalog key (default: device.json's matched_key)")
    ap.add_argument("--calibration", help="`calibrate --json` output (default: DATA_DIR/calibration.json)")
    ap.add_argument("--write", help="page to update between the markers")
    ap.add_argument("--markers", default="tables", help="NAME of the <!-- NAME:begin/end --> markers")
    args = ap.parse_args()
    d = args.data_dir
    out = []
    if os.path.exists(os.path.join(d, "ours.json")):
        if args.hardware is None:
            args.hardware = load(os.path.join(d, "device.json"))["matched_key"]
        out = suite_sections(args, d)
    out += steps_sections(d)
    text = "\n".join(out).lstrip("\n") + "\n"
    if args.write:
        with open(args.write) as f:
            page = f.read()
        begin, end = f"<!-- {args.markers}:begin -->", f"<!-- {args.markers}:end -->"
        head, rest = page.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(args.write, "w") as f:
            f.write(f"{head}{begin}\n{text}{end}{tail}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
