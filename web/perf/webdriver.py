"""A minimal WebDriver client for scripts that drive the built page (dist/) in headless Chromium:
web/perf/measure.py and tests/gpu/export_roofline.py. Serves DIST with Python's http.server, starts
chromedriver, opens one session, and always closes the browser, the driver and the server on exit.
"""
import contextlib, json, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def call(base, method, path, body=None):
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    try:
        return json.load(urllib.request.urlopen(req, timeout=300))["value"]
    except urllib.error.HTTPError as e:
        raise SystemExit(f"WebDriver {method} {path}: {e.read().decode()[:800]}")


class Page:
    """One browser session on the served page."""

    def __init__(self, base, session, http_port):
        self.base, self.session, self.http_port = base, session, http_port

    def goto(self, path_and_query="/"):
        call(self.base, "POST", self.session + "/url", {"url": f"http://127.0.0.1:{self.http_port}{path_and_query}"})

    def run(self, script, args=[]):
        return call(self.base, "POST", self.session + "/execute/sync", {"script": script, "args": args})

    def run_async(self, script, args=[]):
        return call(self.base, "POST", self.session + "/execute/async", {"script": script, "args": args})


@contextlib.contextmanager
def page(dist, window="1400,900"):
    http_port, wd_port = free_port(), free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(http_port), "--bind", "127.0.0.1", "--directory", dist],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    driver = subprocess.Popen(["/usr/bin/chromedriver", f"--port={wd_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base, session = f"http://127.0.0.1:{wd_port}", None
    try:
        time.sleep(1.0)
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            f"--window-size={window}", f"--user-data-dir={tempfile.mkdtemp()}"]}}}}
        session = "/session/" + call(base, "POST", "/session", caps)["sessionId"]
        call(base, "POST", session + "/timeouts", {"script": 120000})
        yield Page(base, session, http_port)
    finally:
        # Close the browser even when a step failed, so no headless Chromium outlives the script.
        if session:
            try:
                call(base, "DELETE", session)
            except SystemExit:
                pass
        driver.terminate(); server.terminate()
