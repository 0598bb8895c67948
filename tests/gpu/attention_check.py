#!/usr/bin/env python3
"""The step's attention and quantization kernels (gpu-endpoint/src/backend/cuda/attention.cu, quantize.cu)
driven from Python on a GPU: each shape checked against a float64 PyTorch reference on the stored inputs and
timed beside PyTorch SDPA (both as CUDA-graph replays of 20 launches, no L2 flush), to tune and check the
kernels without a Rust build. The configuration mirrors attention.rs `plan` (the product's choice); --sweep
also times the alternatives for the prefill shape. Needs PyTorch and CuPy.

Usage: python3 tests/gpu/attention_check.py [--out FILE] [--sweep]   (from the repository root)
"""
import argparse, math, sys, json, time
import torch, cupy as cp, numpy as np
torch.manual_seed(0)
dev = torch.device('cuda')
SMS = torch.cuda.get_device_properties(0).multi_processor_count
ASRC = open('gpu-endpoint/src/backend/cuda/attention.cu').read()
QSRC = open('gpu-endpoint/src/backend/cuda/quantize.cu').read()
FMT = {'bf16': 0, 'f16': 1, 'e4m3': 2}
TDT = {'bf16': torch.bfloat16, 'f16': torch.float16, 'e4m3': torch.float8_e4m3fn}
mods = {}
results = []
TORCH = {}

def cfg_for(B, H, KVH, Sq, Skv, D, shared, window, over=None):
    G = H // KVH; rows = G * Sq
    WR = min(4, max(1, -(-rows // 16))); WK = {1: 4, 2: 2}.get(WR, 1); MT = 1
    BN = 64 if (D <= 128 or (WK > 1 and D <= 256)) else 32
    c = dict(WR=WR, WK=WK, MT=MT, BN=BN)
    c.update(over or {})
    WR, WK, MT, BN = c['WR'], c['WK'], c['MT'], c['BN']
    DV = D if D <= 256 else next(dv for dv in (192, 128, 96, 64, 32, 16) if D % dv == 0)
    slices = D // DV
    row_tiles = -(-rows // (16 * MT * WR))
    base = row_tiles * slices * B * KVH
    span = min(window, Skv) if (window and Sq == 1) else Skv
    splits = c.get("splits") or (1 if base >= 3 * SMS else max(1, min(-(-3 * SMS // base), span // (4 * BN))))
    return WR, WK, MT, BN, DV, slices, row_tiles, splits

def smem(D, DV, BN, WR, WK, MT, kvf, shared, splits):
    st = kvf == 'e4m3'; tiles = 1 if st else 2; rows = 16 * MT * WR
    vt = 0 if shared else BN * (DV + 8)
    b = 2 * (rows * (D + 8) + tiles * (BN * (D + 8) + vt))
    if st: b += 2 * (BN * D + (0 if shared else BN * DV))
    epi = 4 * (WK * rows * DV + WK * rows * 2)
    comb = 4 * splits * rows
    return max(b, epi, comb)

def kernel(D, DV, BN, WR, WK, MT, qf, kvf, of, shared, sm):
    key = (D, DV, BN, WR, WK, MT, qf, kvf, of, shared, sm)
    if key not in mods:
        opts = ('-std=c++14', '--gpu-architecture=compute_90', f'-DHEAD_DIM={D}', f'-DDV_SLICE={DV}', f'-DBLOCK_N={BN}',
                f'-DWR={WR}', f'-DWK={WK}', f'-DMT={MT}', f'-DQ_FMT={FMT[qf]}', f'-DKV_FMT={FMT[kvf]}', f'-DO_FMT={FMT[of]}', f'-DSHARED_KV={int(shared)}')
        f = cp.RawModule(code=ASRC, options=opts, backend='nvrtc').get_function('attention_mma')
        f.max_dynamic_shared_size_bytes = sm
        mods[key] = f
    return mods[key]

def reference(q, k, v, Sq, Skv, causal, window):
    G = q.shape[1] // k.shape[1]
    kk = k.double().repeat_interleave(G, 1); vv = v.double().repeat_interleave(G, 1)
    s = q.double() @ kk.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        pos = torch.arange(Sq, device=dev)[:, None] + Skv - Sq; key = torch.arange(Skv, device=dev)[None, :]
        ok = key <= pos
        if window: ok &= key > pos - window
        s = s.masked_fill(~ok, float('-inf'))
    return torch.softmax(s, -1) @ vv

def case(name, B, H, KVH, Sq, Skv, D, causal=True, window=0, shared=False, qf='bf16', kvf=None, of=None, reps=50, torch_time=True, over=None):
    kvf = kvf or qf; of = of or ('f16' if qf == 'e4m3' else qf)
    WR, WK, MT, BN, DV, slices, row_tiles, splits = cfg_for(B, H, KVH, Sq, Skv, D, shared, window, over)
    sm = smem(D, DV, BN, WR, WK, MT, kvf, shared, splits)
    q = torch.randn(B, H, Sq, D, device=dev).to(TDT[qf]); k = torch.randn(B, KVH, Skv, D, device=dev).to(TDT[kvf])
    v = k if shared else torch.randn(B, KVH, Skv, D, device=dev).to(TDT[kvf])
    out = torch.full((B, H, Sq, D), float('nan'), device=dev, dtype=TDT[of])
    rows_total = B * H * Sq
    ws_o = torch.zeros(max(1, splits * rows_total * D if splits > 1 else 1), device=dev)
    ws_ml = torch.zeros(max(1, splits * slices * rows_total * 2 if splits > 1 else 1), device=dev)
    cnt = torch.zeros(B * KVH * row_tiles * slices, device=dev, dtype=torch.int32)
    f = kernel(D, DV, BN, WR, WK, MT, qf, kvf, of, shared, sm)
    grid = (row_tiles * slices * splits, B * KVH); block = (32 * WR * WK,)
    args = tuple(cp.asarray(t) if t is not None else None for t in (q.view(torch.uint8) if qf=='e4m3' else q, k.view(torch.uint8) if kvf=='e4m3' else k, v.view(torch.uint8) if kvf=='e4m3' else v, ws_o, ws_ml, cnt, out)) + (
        np.int32(H), np.int32(KVH), np.int32(Sq), np.int32(Skv), np.int32(causal), np.int32(window),
        np.float32(1.0 / math.sqrt(D) * math.log2(math.e)), np.float32(1.0), np.int32(splits), np.int32(row_tiles))
    launch = lambda: f(grid, block, args, shared_mem=sm)
    launch(); torch.cuda.synchronize()
    # reference on a subset of sequences for memory
    bs = min(B, 2)
    ref = reference(q[:bs].float(), k[:bs].float(), v[:bs].float(), Sq, Skv, causal, window)
    got = out[:bs].double()
    rel = ((got - ref).norm() / ref.norm()).item()
    nan = torch.isnan(out).any().item()
    # second launch (counters reset) must match
    out2 = out.clone(); launch(); torch.cuda.synchronize(); stable = torch.equal(out2, out)
    N = 20
    def time_cupy(fn):
        st = cp.cuda.Stream(non_blocking=True)
        with st:
            for _ in range(3): fn()
            st.synchronize()
            st.begin_capture()
            for _ in range(N): fn()
            graph = st.end_capture()
            graph.launch(); st.synchronize()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event(); ts = []
            for _ in range(7):
                e0.record(st); graph.launch(st); e1.record(st); e1.synchronize()
                ts.append(cp.cuda.get_elapsed_time(e0, e1) / N * 1e3)
        return sorted(ts)[3]
    def time_torch(fn):
        s_ = torch.cuda.Stream()
        with torch.cuda.stream(s_):
            for _ in range(3): fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(N): fn()
        g.replay(); torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True); ts = []
        for _ in range(7):
            e0.record(); g.replay(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) / N * 1e3)
        return sorted(ts)[3]
    def loop_time(fn):
        for _ in range(3): fn()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(); e0.record()
        for _ in range(N): fn()
        e1.record(); torch.cuda.synchronize(); return e0.elapsed_time(e1) / N * 1e3
    def safe(tf):
        def run(fn):
            try: return tf(fn)
            except Exception as e:
                print('graph timing failed, loop timing:', repr(e)[:200], flush=True); return loop_time(fn)
        return run
    timeit = safe(time_torch)
    time_cupy = safe(time_cupy)
    ours = time_cupy(launch)
    tt = TORCH.get(name)
    if torch_time and tt is None:
        qt, kt, vt = q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16)
        if qf == 'f16': qt, kt, vt = q, k, v
        ic = causal and Sq > 1
        if window:
            pos = torch.arange(Sq, device=dev)[:, None] + Skv - Sq; key = torch.arange(Skv, device=dev)[None, :]
            mask = (key <= pos) & (key > pos - window)
            tt = timeit(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, enable_gqa=True))
        else:
            tt = timeit(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=ic, enable_gqa=True))
    TORCH[name] = tt
    r = dict(name=name + (str(over) if over else ''), cfg=dict(WR=WR, WK=WK, MT=MT, BN=BN, DV=DV, splits=splits, row_tiles=row_tiles, smem=sm), rel_err=rel, nan=nan, stable=stable, ours_us=ours, torch_us=tt,
             ratio=(ours / tt if tt else None))
    print(json.dumps(r), flush=True); results.append(r)

def qcheck():
    mod = cp.RawModule(code=QSRC, options=('-std=c++14', '--gpu-architecture=compute_90'), backend='nvrtc')
    for src in ('bf16', 'f16'):
        x = (torch.randn(4096 * 32, device=dev) * 3).to(TDT[src])
        scale = torch.zeros(1, device=dev); y = torch.zeros(x.numel(), dtype=torch.uint8, device=dev)
        mod.get_function(f'abs_max_{src}_e4m3')((64,), (256,), (cp.asarray(x), cp.asarray(scale), np.uint64(x.numel())))
        mod.get_function(f'quantize_tensor_{src}_e4m3')((64,), (256,), (cp.asarray(x), cp.asarray(scale), cp.asarray(y), np.uint64(x.numel())))
        torch.cuda.synchronize()
        s_ref = (x.float().abs().max() / 448).item()
        yd = y.view(torch.float8_e4m3fn).float(); yr = (x.float() / scale).to(torch.float8_e4m3fn).float()
        print(json.dumps(dict(name=f'quant_tensor_{src}', scale=scale.item(), scale_ref=s_ref, mismatches=int((yd != yr).sum().item()))), flush=True)
        groups = x.numel() // 128; ys = torch.zeros(groups, device=dev); y.zero_()
        mod.get_function(f'quantize_rows_{src}_e4m3')((64,), (256,), (cp.asarray(x), cp.asarray(y), cp.asarray(ys), np.uint64(groups), np.int32(128)))
        torch.cuda.synchronize()
        xg = x.float().view(groups, 128); sr = xg.abs().amax(1) / 448
        yr = (xg / sr[:, None]).to(torch.float8_e4m3fn).float(); yd = y.view(torch.float8_e4m3fn).float().view(groups, 128)
        print(json.dumps(dict(name=f'quant_rows_{src}', scale_err=(ys - sr).abs().max().item(), mismatches=int((yd != yr).sum().item()))), flush=True)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='attention.json')
    ap.add_argument('--sweep', action='store_true')
    a = ap.parse_args()
    try: qcheck()
    except Exception as e: print('qcheck failed', repr(e), flush=True)
    def run(name, B, H, KVH, Sq, Skv, D, **kw):
        try: case(name, B, H, KVH, Sq, Skv, D, **kw)
        except Exception as e: print(name, kw.get('over'), 'failed', repr(e), flush=True)
    run('llama_decode_b1_4k', 1, 32, 8, 1, 4096, 128)
    run('llama_decode_b32_4k', 32, 32, 8, 1, 4096, 128)
    run('llama_prefill_2048', 1, 32, 8, 2048, 2048, 128)
    if a.sweep:
        for sp in (1, 2, 4, 8):
            run('llama_decode_b32_4k', 32, 32, 8, 1, 4096, 128, over=dict(splits=sp))
        for ov in (dict(WR=8), dict(WR=4, MT=2, BN=32), dict(WR=4, MT=2, BN=64), dict(WR=8, BN=32), dict(WR=2, WK=1)):
            run('llama_prefill_2048', 1, 32, 8, 2048, 2048, 128, over=ov)
    run('llama_decode_b64_8k', 64, 32, 8, 1, 8192, 128)
    run('llama_decode_b1_32k', 1, 32, 8, 1, 32768, 128)
    run('llama_decode_b16_1k', 16, 32, 8, 1, 1024, 128)
    run('tinyllama_decode_f16', 1, 32, 4, 1, 256, 64, qf='f16')
    run('gemma3_swa_decode_b4_8k', 4, 16, 8, 1, 8192, 256, window=1024)
    run('gemma3_swa_prefill_4k', 1, 16, 8, 4096, 4096, 256, window=1024)
    run('mla_decode_b8_1k', 8, 128, 1, 1, 1024, 576, shared=True, torch_time=False)
    run('fp8kv_bf16q_decode_b32', 32, 32, 8, 1, 4096, 128, kvf='e4m3', torch_time=False)
    run('fp8_all_decode_b32', 32, 32, 8, 1, 4096, 128, qf='e4m3', kvf='e4m3', of='f16', torch_time=False)
    run('fp8_all_prefill_2048', 1, 32, 8, 2048, 2048, 128, qf='e4m3', kvf='e4m3', of='f16', torch_time=False)
    run('chunked_prefill_512_of_4k', 2, 32, 8, 512, 4096, 128, torch_time=False)
    run('noncausal_odd', 3, 12, 3, 37, 301, 96, causal=False)
    json.dump(results, open(a.out, 'w'), indent=1)
    for r in results:
        print(f"{r['name'][:52]:52s} err {r['rel_err']:.1e} ours {r['ours_us']:8.1f} µs  torch {r['torch_us'] or 0:8.1f} µs  {r['cfg']}")


if __name__ == '__main__':
    main()
