"""The HTML report in real headless Chromium: no console errors, charts in the DOM, a screenshot — of sweeps, and
of every document kind in one report.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on
fd 3, replies on fd 4, NUL-separated JSON), so no network port and no extra Python package.
The screenshot goes to artifacts/ (gitignored) for CI to keep. A control page with a deliberate
console error shows that the error detection itself works.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import time

import pytest

from conftest import ROOT, fixture_path, need, slogqual
from slogqual.tools import spawn as tools_run

pytestmark = [need("gnuplot"), pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="needs Debian's chromium for the browser check (contrib/install-deps.sh installs it)")]

FIXTURE = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")
ARTIFACTS = os.path.join(ROOT, "artifacts")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe"]


class Browser:
    """Just enough of the DevTools protocol: one page, events collected, commands awaited."""

    def __init__(self, profile_dir, timeout=60.0):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def fds():  # Chromium reads commands on fd 3 and writes replies on fd 4
            # Move both ends above 3 and 4 first: a pipe end may already be fd 3 or 4, and dup2 onto
            # itself would leave it close-on-exec.
            high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = tools_run.popen(["chromium", *FLAGS, f"--user-data-dir={profile_dir}", "about:blank"],
                                    preexec_fn=fds, close_fds=False, stdin=open(os.devnull),
                                    stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.timeout = timeout
        self._buf = b""
        self._id = 0
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method, params=None, session=True):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        while True:
            ev = self._read_message(deadline)
            self.events.append(ev)
            if ev.get("method") == method:
                return ev

    def open_page(self, width=1200, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def load(self, url):
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")
        self.send("Runtime.evaluate", {"expression": "1", "awaitPromise": True})  # drain pending events

    def evaluate(self, expression):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"]["value"]

    def console_errors(self):
        errors = []
        for ev in self.events:
            method, p = ev.get("method"), ev.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif method == "Runtime.exceptionThrown":
                errors.append("exception: " + p["exceptionDetails"].get("text", ""))
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append("log: " + p["entry"].get("text", ""))
        return errors

    def screenshot(self, path, width=1200):
        h = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": min(int(h), 12000), "deviceScaleFactor": 1, "mobile": False})
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=15)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


@pytest.fixture
def browser(tmp_path):
    b = Browser(str(tmp_path / "profile"))
    try:
        b.open_page()
        yield b
    finally:
        b.close()


CHART_STATS = """JSON.stringify(Array.from(document.querySelectorAll('svg.chart')).map(s => {
  const r = s.getBoundingClientRect();
  return {w: r.width, h: r.height, paths: s.querySelectorAll('path').length,
          texts: Array.from(s.querySelectorAll('text')).map(t => t.textContent)};
}))"""


def keep_screenshot(browser, name):
    """The page as a PNG 1200 pixels wide in artifacts/ (CI keeps it); its path."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, name)
    browser.screenshot(shot)
    with open(shot, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(head[16:20], "big") == 1200
    return shot


def test_report_renders_in_chromium_without_console_errors(browser, tmp_path):
    imp = slogqual("import", "diskinfo", FIXTURE, "-o", tmp_path / "di.json",
                   "--name", "Intel 710 Series (SATA)", "--name", "Samsung 950 PRO (NVMe)")
    assert imp.returncode == 0, imp.stderr
    report = tmp_path / "report.html"
    proc = slogqual("report", tmp_path / "di-1.json", tmp_path / "di-2.json", "-o", report)
    assert proc.returncode == 0, proc.stderr

    browser.load("file://" + str(report))
    assert browser.console_errors() == []
    charts = json.loads(browser.evaluate(CHART_STATS))
    assert len(charts) == 3
    for c in charts:
        assert c["w"] > 400 and c["h"] > 200  # laid out at a readable size, not collapsed
        assert c["paths"] > 20
        assert "Intel 710 Series (SATA)" in c["texts"] and "8M" in c["texts"]
    assert browser.evaluate("document.title").startswith("SLOG qualification")
    assert browser.evaluate("document.querySelectorAll('.verdict').length") == 6  # 2 devices x (cache, power loss, link)

    assert os.path.getsize(keep_screenshot(browser, "report-chromium.png")) > 50_000


SECTIONS = """JSON.stringify(Array.from(document.querySelectorAll(
  '#qualification, section.device, section.scenario, section.advice')).map(s => {
  const r = s.getBoundingClientRect();
  return {id: s.id, cls: s.className, w: r.width, h: r.height, tables: s.querySelectorAll('table').length,
          charts: s.querySelectorAll('svg.chart').length};
}))"""


def test_a_report_of_every_kind_renders_in_chromium_without_console_errors(browser, tmp_path):
    """A scenario result, an advice, a qualification and a sweep in one report: each part laid out, every chart
    drawn, no console error; the screenshot kept as artifacts/report-mixed-chromium.png."""
    from test_report_kinds import QUALIFICATION, SCENARIO, SWEEP, make_advice

    report = tmp_path / "mixed.html"
    proc = slogqual("report", SCENARIO, make_advice(tmp_path), QUALIFICATION, SWEEP, "-o", report)
    assert proc.returncode == 0, proc.stderr

    browser.load("file://" + str(report))
    assert browser.console_errors() == []
    sections = json.loads(browser.evaluate(SECTIONS))
    assert [s["cls"] or s["id"] for s in sections] == ["qualification", "device", "device", "scenario", "advice"]
    for s in sections:
        assert s["w"] > 600 and s["h"] > 200 and s["tables"] >= 2, s  # laid out, not collapsed or hidden
    assert [s["charts"] for s in sections if s["cls"] in ("scenario", "advice")] == [2, 1]
    assert browser.evaluate("document.documentElement.scrollWidth") <= 1200  # wide tables scroll in their place
    charts = json.loads(browser.evaluate(CHART_STATS))
    assert len(charts) == 4 + 2 + 1  # the sweeps' four, the scenario's IOPS and p99, the advice's prediction
    for c in charts:
        assert c["w"] > 400 and c["h"] > 200 and c["paths"] > 5
    scenario_texts = charts[4]["texts"]
    assert "sync=always + SLOG [/dev/sdc]" in scenario_texts and "sync=standard" in scenario_texts
    assert any(t.endswith("predicted") for t in charts[6]["texts"]) and any(t.endswith("measured") for t in charts[6]["texts"])
    # the qualification's verdict and its failed criterion, coloured as such
    assert browser.evaluate("document.querySelector('#qualification .qverdict.fail b').textContent") == "FAIL"
    assert browser.evaluate("document.querySelectorAll('#qualification td.fail').length") == 2  # summary + criterion
    assert browser.evaluate("getComputedStyle(document.querySelector('#qualification td.fail')).fontWeight") == "600"

    assert os.path.getsize(keep_screenshot(browser, "report-mixed-chromium.png")) > 50_000


def test_console_error_detection_works(browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><title>x</title><script>console.error('boom'); undefinedFunction();</script>")
    browser.load("file://" + str(page))
    errors = browser.console_errors()
    assert any("boom" in e for e in errors) and any("exception" in e for e in errors)
