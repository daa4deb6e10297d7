"""cdp.py — drives a real headless Chromium over the DevTools protocol, Python stdlib only.

Chromium is started with --remote-debugging-pipe: it reads commands on fd 3 and writes answers
and events on fd 4, each a JSON message ended by a NUL byte, so no WebSocket client is needed.
Used by dashboard_browser.py (the dashboard's browser test) and bench/dashboard_render.sh.
"""
import base64
import json
import os
import select
import subprocess
import tempfile
import time


class CdpError(Exception):
    pass


class Browser:
    def __init__(self, chromium="/usr/bin/chromium", width=1400, height=1000):
        self.profile = tempfile.mkdtemp(prefix="t2exp-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds():  # in the child: its fd 3 reads our commands, its fd 4 writes to us
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--mute-audio",
                "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, pass_fds=(3, 4),  # close_fds runs after preexec_fn: keep 3 and 4
                                     stdout=subprocess.DEVNULL, stderr=None if os.environ.get("CDP_DEBUG") else subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events = []       # every event received, in order
        self.session = None
        self.width, self.height = width, height

    # ---- transport ----------------------------------------------------------------------

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("no answer from Chromium in time")
            r, _, _ = select.select([self._from_child], [], [], left)
            if not r:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CdpError("Chromium closed the pipe (exit %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, timeout=30):
        self._next_id += 1
        mid = self._next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == mid:
                if "error" in m:
                    raise CdpError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """Collects events for a while (e.g. console messages after a page settles)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except CdpError as e:
            if "in time" not in str(e):
                raise

    # ---- pages --------------------------------------------------------------------------

    def open_tab(self):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def navigate(self, url):
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expr, timeout=30):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True},
                      timeout=timeout)
        if "exceptionDetails" in r:
            raise CdpError("evaluating %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def wait_for(self, expr, timeout=20, what=None):
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:  # the page may still be loading: an exception counts as "not yet"
                v = self.evaluate(expr)
                if v:
                    return v
            except CdpError as e:
                last = e
            if time.monotonic() > deadline:
                raise CdpError("timed out waiting for %s%s" % (what or expr, " (last: %s)" % last if last else ""))
            self.pump(0.1)

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            m = self.send("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params, timeout=60)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def console_errors(self):
        """Console errors, uncaught exceptions and browser-logged errors (failed loads) so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text", ""), d.get("exception", {}).get("description", "")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text", ""), p["entry"].get("url", "")))
        return out

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        subprocess.run(["rm", "-rf", self.profile], check=False)
