#!/usr/bin/env python3
"""Measures the built page (dist/) in headless Chromium through chromedriver's WebDriver HTTP API.

Reports navigation -> first drawn roofline (window.__roofline_first_draw_ms) and input -> repaint for the
batch slider on Llama-3.1-70B on B200, once per precision config, with four pins and the Advisor tab open (the advisor
re-ranks every config on each move). Usage: python3 web/perf/measure.py [dist-dir]
"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webdriver import page

DIST = sys.argv[1] if len(sys.argv) > 1 else "dist"

with page(DIST) as p:
    first = []
    for _ in range(5):
        p.goto("/")
        for _ in range(100):
            v = p.run("return window.__roofline_first_draw_ms ?? null;")
            if v is not None:
                break
            time.sleep(0.05)
        first.append(v)
        p.run("localStorage.clear();")
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
