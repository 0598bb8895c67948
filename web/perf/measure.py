#!/usr/bin/env python3
"""Measures the built page (dist/) in headless Chromium through chromedriver's WebDriver HTTP API.

Reports navigation -> first drawn roofline (window.__roofline_first_draw_ms) and input -> repaint for the
batch slider on Llama-3.1-70B on B200, once per precision config, with four pins and the Advisor tab open (the advisor
re-ranks every config on each move). Then the serving view (SERVING=0 skips it), for Llama-3.1-8B on an H100 SXM and
Llama-3.1-70B on a B200: navigation -> first Pareto chart drawn (window.__roofline_serving_first_draw_ms, the first
sweep included), an ISL not swept before (a new sweep) -> redraw, and input -> repaint after the first sweep for the
SLA limits (TPOT, tokens/s per user, TTFT) and ISLs swept before (cached sweeps).
Usage: python3 web/perf/measure.py [dist-dir]
"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webdriver import page

DIST = sys.argv[1] if len(sys.argv) > 1 else "dist"


def first_draw_ms(p, path, mark, polls):
    """Navigation -> first draw (ms) of 5 loads of `path`: window.<mark>, polled every 50 ms `polls` times
    (None where it never came); local storage is cleared after each load."""
    times = []
    for _ in range(5):
        p.goto(path)
        for _ in range(polls):
            v = p.run(f"return window.{mark} ?? null;")
            if v is not None:
                break
            time.sleep(0.05)
        times.append(v)
        p.run("localStorage.clear();")
    return times


with page(DIST) as p:
    first = first_draw_ms(p, "/", "__roofline_first_draw_ms", 100)
    print("navigation -> first roofline drawn (ms):", [round(x, 1) for x in first])
    configs = p.run_async("""
      const done = arguments[arguments.length - 1];
      const sel = document.querySelector('[data-testid=config-select]');
      done([...sel.options].map(o => o.value));""")
    p.goto("/?model=llama-3.1-70b&hw=b200")
    time.sleep(1.0)
    results = p.run_async("""
      const [configs, ADVISOR, PINS, done] = arguments;
      const frame = () => new Promise(r => requestAnimationFrame(() => r()));
      // A macrotask without setTimeout's clamping: every reactive effect (microtasks) has run before it.
      const settle = () => new Promise(r => { const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); });
      const q = s => document.querySelector(s);
      if (ADVISOR) [...document.querySelectorAll('[role=tab]')].find(b => b.textContent === 'Advisor').click();
      const out = [];
      (async () => {
        for (const [i, cfg] of configs.entries()) {
          const sel = q('[data-testid=config-select]');
          sel.value = cfg; sel.dispatchEvent(new Event('change', {bubbles: true}));
          await settle(); await frame();
          if (PINS && i < 4) { [...document.querySelectorAll('button')].find(b => b.textContent.startsWith('Pin current')).click(); await settle(); }
          const slider = q('[data-testid=batch-input-slider]');
          const draw = [], paint = [];
          for (let step = 0; step < 12; step++) {
            const before = window.__roofline_draw_count;
            const t0 = performance.now();
            slider.value = String(1 + step * 3);
            slider.dispatchEvent(new Event('input', {bubbles: true}));
            // A config the device cannot run has nothing that depends on the batch: no redraw is due.
            while (window.__roofline_draw_count === before && performance.now() - t0 < 300) await settle();
            if (window.__roofline_draw_count === before) continue;
            draw.push(window.__roofline_last_draw_ms - t0);
            await settle();
            paint.push(performance.now() - t0);
            await frame();
          }
          out.push({cfg, draw, paint, pins: document.querySelectorAll('table.pins tbody tr').length});
        }
        done(out);
      })();""", [configs, os.environ.get("ADVISOR", "1") == "1", os.environ.get("PINS", "1") == "1"])
    alld, allp = [], []
    for r in results:
        d, p = sorted(r["draw"]), sorted(r["paint"])
        if not d:
            print(f"{r['cfg']:>22}: unsupported on this device, nothing redrawn"); continue
        alld += r["draw"]; allp += r["paint"]
        print(f"{r['cfg']:>22}: input->draw median {d[len(d)//2]:.1f} max {d[-1]:.1f} ms; all effects done median {p[len(p)//2]:.1f} max {p[-1]:.1f} ms; pins {r['pins']}")
    alld.sort(); allp.sort()
    print(f"ALL configs ({len(alld)} moves): input->draw median {alld[len(alld)//2]:.1f} ms, p95 {alld[int(len(alld)*.95)]:.1f}, max {alld[-1]:.1f}; "
          f"input->all effects done median {allp[len(allp)//2]:.1f} ms, p95 {allp[int(len(allp)*.95)]:.1f}, max {allp[-1]:.1f}")


# The serving view: one input is typed into a field and committed with `change`, as the page's inputs take it.
SERVING_MOVES = """
  const [INPUTS, done] = arguments;
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const settle = () => new Promise(r => { const c = new MessageChannel(); c.port1.onmessage = () => r(); c.port2.postMessage(0); });
  (async () => {
    const out = [];
    for (const [testid, value] of INPUTS) {
      const e = document.querySelector(`[data-testid=${testid}]`);
      const before = window.__roofline_serving_draw_count;
      const t0 = performance.now();
      e.value = value; e.dispatchEvent(new Event('change', {bubbles: true}));
      while (window.__roofline_serving_draw_count === before && performance.now() - t0 < 300) await settle();
      // A limit every point already meets (or misses) changes nothing drawn: no redraw is due.
      if (window.__roofline_serving_draw_count === before) { out.push({testid, value, unchanged: true}); continue; }
      const draw = window.__roofline_serving_last_draw_ms - t0;
      await settle();
      out.push({testid, value, draw, paint: performance.now() - t0});
      await frame();
    }
    done(out);
  })();"""


def stats(rows, key):
    v = sorted(r[key] for r in rows if not r.get("unchanged"))
    return f"median {v[len(v)//2]:.1f} ms, p95 {v[min(len(v) - 1, int(len(v) * .95))]:.1f}, max {v[-1]:.1f} ({len(v)} inputs)"


if os.environ.get("SERVING", "1") == "1":
    with page(DIST) as p:
        for query in ["hw=h100_sxm&model=llama-3.1-8b", "hw=b200&model=llama-3.1-70b"]:
            first = first_draw_ms(p, f"/?{query}&view=serving", "__roofline_serving_first_draw_ms", 200)
            points = p.run("return document.querySelector('[data-testid=serving-canvas]').dataset.points;")
            print(f"serving {query} ({points} points): navigation -> first Pareto chart drawn (ms):", [round(x, 1) for x in first])
            # A new ISL sweeps; the SLA and ISLs swept before only redraw.
            new = p.run_async(SERVING_MOVES, [[["serving-isl", str(isl)] for isl in (1536, 2048, 3072, 4096)]])
            sla = [["sla-tpot", str(ms)] for ms in (10, 15, 20, 25, 30, 40, 50, 60)] + [["sla-tpu", str(u)] for u in (20, 30, 40, 50, 60, 80)] \
                + [["sla-ttft", str(ms)] for ms in (100, 200, 500, 1000, 2000, 5000)] \
                + [["serving-isl", str(isl)] for isl in (1024, 2048, 1536, 4096, 1024, 3072, 2048, 1024)]
            cached = p.run_async(SERVING_MOVES, [sla])
            sweeps = p.run("return document.querySelector('[data-testid=serving-view]').dataset.sweeps;")
            unchanged = [f"{r['testid']}={r['value']}" for r in cached if r.get("unchanged")]
            print(f"  new ISL (a new sweep) -> drawn: {stats(new, 'draw')}")
            print(f"  after the first sweep, SLA and swept ISLs -> drawn: {stats(cached, 'draw')}; "
                  f"-> all effects done: {stats(cached, 'paint')}; nothing to redraw: {unchanged}; sweeps run in the page: {sweeps}")
