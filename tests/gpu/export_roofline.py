#!/usr/bin/env python3
"""Exports the app's roofline with the measured points of a validation run, as the page's "Export PNG" does
(`canvas.toDataURL`), for docs/validation/README.md.

    python3 tests/gpu/export_roofline.py docs/validation/data/h100-sxm docs/validation/h100-roofline.png [dist]

Loads the built page (dist/, `trunk build --release`) in headless Chromium, stores the run's measured points
and its calibrated spec in the page's localStorage (`roofline.state`, as an import would), opens the Kernel view
on h100_sxm with the calibrated roofs, and saves the canvas.
"""
import base64, json, os, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "web", "perf"))
from webdriver import page

data_dir, out = sys.argv[1], sys.argv[2]
dist = sys.argv[3] if len(sys.argv) > 3 else "dist"
points = []
for name in ("ours.json", "ours-fp32.json"):
    points += [e["point"] for e in json.load(open(os.path.join(data_dir, name)))["points"]]
calibrated = json.load(open(os.path.join(data_dir, "calibration.json")))["spec"]
scenario = "/?hw=h100_sxm&m=1&n=4096&k=4096&p=FP32,TF32,FP16,BF16,FP8_E4M3,INT8,INT4,NVFP4&mode=calibrated"

def drawn(p):
    for _ in range(200):
        if p.run("return window.__roofline_first_draw_ms ?? null;") is not None:
            return
        time.sleep(0.05)
    raise SystemExit("the roofline was never drawn")

with page(dist, window="1600,1000") as p:
    p.goto(scenario)
    drawn(p)
    p.run("""
      const [points, spec] = arguments;
      const state = JSON.parse(localStorage.getItem('roofline.state'));
      state.measured = points;
      state.custom_hardware = [spec];
      localStorage.setItem('roofline.state', JSON.stringify(state));""", [points, calibrated])
    p.goto(scenario)
    drawn(p)
    time.sleep(1.0)
    shown = p.run("return document.querySelector('[data-testid=measured-count]')?.textContent ?? null;")
    notice = p.run("return document.querySelector('[data-testid=storage-notice]')?.textContent ?? null;")
    url = p.run("return document.querySelector('[data-testid=roofline-canvas]').toDataURL('image/png');")
with open(out, "wb") as f:
    f.write(base64.b64decode(url.split(",", 1)[1]))
print(f"{out}: {len(points)} points stored, measured-count {shown!r}, storage notice {notice!r}")
