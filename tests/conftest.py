import json
import os
import time
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# pg_server / pg_url: a real PostgreSQL for the store tests (tests/pgserver.py)
pytest_plugins = ["pgserver", "lanes"]

# Commands that record into the result store (sweep, scenario, import, qualify) must not write the
# user's real store from tests: every test run gets its own, unless a test names another.
import tempfile as _tempfile  # noqa: E402

os.environ["SLOGQUAL_STORE"] = os.path.join(_tempfile.mkdtemp(prefix="slogqual-test-store-"), "results.sqlite")

# The interrupt tests send SIGINT to the slogqual processes they start. A test runner started in the
# background by a non-interactive shell (`cmd &`, nohup, some CI launchers) inherits SIGINT *ignored*,
# every child inherits that across exec, and Python then installs no KeyboardInterrupt handler: the
# signal is swallowed and the tests fail (seen on a cold run here: 3 failures, all of this kind).
# A handler that is a Python function is reset to the default on exec, so children start normal.
import signal as _signal  # noqa: E402

if _signal.getsignal(_signal.SIGINT) is _signal.SIG_IGN:
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")


def fixture_path(*parts):
    return os.path.join(FIXTURES, *parts)


def read_fixture(*parts):
    with open(fixture_path(*parts)) as fh:
        return fh.read()


def slogqual(*args, env=None, cwd=None, timeout=600):
    """Run the real CLI (python -m slogqual) and capture its output."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "slogqual", *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


def load(path):
    with open(path) as fh:
        return json.load(fh)


def need(*programs):
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (contrib/install-deps.sh)")


def samples_file(path, start, write, flush):
    """Write a pair engine samples file (SQPAIR2: per IO, start, write and flush ns as little-endian
    uint64) of the given samples; return its path as a string."""
    from array import array

    from slogqual.tools import pairbench

    values = array("Q", bytes(24 * len(write)))
    for i, column in enumerate((start, write, flush)):
        values[i::3] = column if isinstance(column, array) else array("Q", column)
    if sys.byteorder != "little":
        values.byteswap()
    with open(path, "wb") as fh:
        fh.write(pairbench.MAGIC)
        values.tofile(fh)
    return str(path)


@pytest.fixture(scope="session")
def pair_engine():
    """The pair engine binary (built with cc on first use), or the test is skipped."""
    from slogqual.errors import ToolMissingError
    from slogqual.tools import pairbench

    try:
        return pairbench.locate()
    except ToolMissingError as exc:
        pytest.skip(f"the pair engine cannot be built here: {exc}")


def engine_summary(engine, tmp_path, start, write, flush, elapsed_ns=None, interval_ms=100.0):
    """The engine's summaries (pairbench --summarize) of these samples."""
    from slogqual.tools import pairbench

    path = samples_file(tmp_path / "samples", start, write, flush)
    return pairbench.summarize_file(path, interval_ms, elapsed_ns, binary=engine)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices)")


def need_lab(zfs=None) -> None:
    """Skip unless a lab guest can boot here: root (QEMU's 9p share of / and nbdkit sockets) and the
    built lab image (contrib/lab/build.sh; ``zfs="2.4"``: the one built for that OpenZFS)."""
    if os.geteuid() != 0:
        pytest.skip("the lab needs root (QEMU's 9p share of / and nbdkit sockets)")
    from slogqual.lab.image import background_build, missing_reason
    if zfs:  # build.sh's default builds 2.4 in the background after 2.3: its tests run last and wait for it
        waited, deadline = 0.0, time.monotonic() + float(os.environ.get("SLOGQUAL_TEST_LAB_BUILD_WAIT", "2700"))
        while background_build(zfs)["pid"] is not None and time.monotonic() < deadline:
            time.sleep(5)
            waited += 5
        if waited:
            print(f"waited {waited:.0f} s for the background build of the OpenZFS {zfs} lab")
    reason = missing_reason(zfs=zfs) if zfs else missing_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def lab_ready():
    need_lab()


@pytest.fixture
def loop_device(tmp_path):
    """A fresh 64 MiB loop device over a file, detached afterwards whatever happens."""
    img = tmp_path / "loop.img"
    with open(img, "wb") as fh:
        fh.truncate(64 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True)
    if dev.returncode != 0:
        pytest.skip(f"no loop device: {dev.stderr.strip()}")
    path = dev.stdout.strip()
    try:
        yield path
    finally:
        subprocess.run(["losetup", "-d", path], capture_output=True)



class BusyHostDisk:
    """fio keeping the host's disk busy with QD1 sync writes (4 KiB random writes, each followed by an
    fsync, buffered, on a file in a test's temporary directory), the way a shared CI machine's
    neighbours do. ``stop()`` ends it and returns fio's own count of what it wrote, so a test can show
    the disk really was busy while it measured."""

    def __init__(self, directory):
        self.report = os.path.join(str(directory), "busy-host-disk.json")
        self.proc = subprocess.Popen(
            ["fio", "--name=busy-host-disk", f"--filename={os.path.join(str(directory), 'busy-host-disk.img')}",
             "--size=64M", "--rw=randwrite", "--bs=4k", "--ioengine=psync", "--fsync=1", "--time_based",
             # the job a thread of fio's own process: /proc/PID/io then counts its writes (peek())
             "--thread",
             "--runtime=3600", "--output-format=json", f"--output={self.report}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.stats = None

    def peek(self) -> dict:
        """While it runs (a session-wide slowed host): fio reports only when it ends, so the evidence is
        that it still runs; the session's closing line carries its counts."""
        if self.stats is not None:
            return self.stats
        writes = None
        try:  # the kernel's count of fio's write syscalls so far (fio fsyncs after each: --fsync=1)
            with open(f"/proc/{self.proc.pid}/io") as fh:
                writes = int(next(l for l in fh if l.startswith("syscw:")).split()[1])
        except (OSError, StopIteration, ValueError, IndexError):
            pass
        return {"running": self.proc.poll() is None, "write_syscalls": writes}

    def stop(self) -> dict:
        if self.stats is not None:
            return self.stats
        self.proc.terminate()  # fio ends its job and writes its report on SIGTERM
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        try:
            with open(self.report) as fh:
                text = fh.read()
            # fio puts "fio: terminating on signal 15" in the report ahead of the JSON
            job = json.JSONDecoder().raw_decode(text[text.index("{"):])[0]["jobs"][0]
            self.stats = {"write_ios": job["write"]["total_ios"], "fsyncs": job["sync"]["total_ios"],
                          "runtime_s": job["write"]["runtime"] / 1000}
        except (OSError, ValueError, KeyError, IndexError):
            self.stats = {"write_ios": 0, "fsyncs": 0, "error": (err or "")[-500:]}
        return self.stats


@pytest.fixture
def busy_host_disk(tmp_path):
    """A BusyHostDisk for the length of the test (stopped at the end if the test did not stop it)."""
    if shutil.which("fio") is None:
        pytest.skip("needs fio (contrib/install-deps.sh)")
    busy = BusyHostDisk(tmp_path)
    try:
        yield busy
    finally:
        busy.stop()


# ---- a slowed host: CPU hogs on every core and a busy disk (issue #26) ---------------------------------
# The lab's guest runs under TCG on the host's CPU: a shape tuned where the guest was fast failed where it
# was slow. SLOGQUAL_TEST_SLOW_HOST=1 runs the whole session on a host slowed this way (the lab tier's proof,
# docs/testing.md); the wide-pool lab test always runs so (tests/test_scenario_lab.py).
# Each hog dies with the test run, even when that is SIGKILLed (PR_SET_PDEATHSIG = 1).
_HOG = ("import ctypes, signal, sys\nctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\nwhile True:\n    pass\n")


class SlowHost:
    """One busy-looping process per host core (nice 0, as a neighbour's job would be) and a BusyHostDisk.
    ``stop()`` returns the evidence that the host really was slowed: the CPU seconds the hogs got, the wall
    seconds they ran, and the disk's fio counts."""

    def __init__(self, directory, hogs=None):
        import time
        self.t0 = time.monotonic()
        self.cpu0 = self._host_cpu()
        self.hogs = [subprocess.Popen([sys.executable, "-c", _HOG], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL) for _ in range(hogs or os.cpu_count() or 1)]
        self.disk = BusyHostDisk(directory)
        self.stats = None

    @staticmethod
    def _cpu_s(pid) -> float:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        except (OSError, ValueError, IndexError):
            return 0.0

    @staticmethod
    def _host_cpu():
        """(busy, total) jiffies of all CPUs from /proc/stat's first line (idle and iowait are not busy)."""
        try:
            with open("/proc/stat") as fh:
                values = [int(v) for v in fh.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values) - idle, sum(values)

    def _busy_share(self):
        now = self._host_cpu()
        if now is None or self.cpu0 is None or now[1] == self.cpu0[1]:
            return None
        return round((now[0] - self.cpu0[0]) / (now[1] - self.cpu0[1]), 3)

    def peek(self) -> dict:
        """The evidence so far, the hogs left running (a test inside a session-wide slowed host)."""
        import time
        return {"hogs": len(self.hogs), "hog_cpu_s": round(sum(self._cpu_s(h.pid) for h in self.hogs), 1),
                "wall_s": round(time.monotonic() - self.t0, 1), "host_busy_share": self._busy_share(),
                "disk": self.disk.peek()}

    def stop(self) -> dict:
        import time
        if self.stats is not None:
            return self.stats
        cpu = sum(self._cpu_s(h.pid) for h in self.hogs)
        wall = time.monotonic() - self.t0
        busy = self._busy_share()
        for h in self.hogs:
            h.terminate()
        for h in self.hogs:
            try:
                h.wait(timeout=10)
            except subprocess.TimeoutExpired:
                h.kill()
                h.wait()
        self.stats = {"hogs": len(self.hogs), "hog_cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                      "host_busy_share": busy, "disk": self.disk.stop()}
        return self.stats


def host_was_slowed(stats: dict) -> bool:
    """A SlowHost's CPU evidence: its hogs got a third of their cores' worth, or (beside heavier work than the
    hogs', which then get less) the host's CPUs were at least 90 % busy over the same time (/proc/stat)."""
    return stats["hog_cpu_s"] > stats["wall_s"] * stats["hogs"] / 3 or (stats.get("host_busy_share") or 0) >= 0.9


def disk_was_busy(stats: dict) -> bool:
    """A BusyHostDisk's evidence: more than 100 fsyncs by fio's report, or (still running, in a session-wide
    slowed host) more than 100 write syscalls by the kernel's count, each followed by an fsync."""
    return (stats.get("fsyncs") or 0) > 100 or (stats.get("write_syscalls") or 0) > 100


_SESSION_SLOW_HOST = None


class _SessionSlowHost:
    """What a test gets when the whole session runs slowed: ``stop()`` reports, the hogs run on."""

    def __init__(self, slow: SlowHost):
        self.slow = slow

    def stop(self) -> dict:
        return self.slow.peek()


def slow_host_requested() -> bool:
    return os.environ.get("SLOGQUAL_TEST_SLOW_HOST", "") not in ("", "0")


# ---- the full tier (docs/testing.md, "Tiers"): lab tests README's command skips to stay within its 25 minutes ----
FULL_TIER_ENV = "SLOGQUAL_TEST_FULL"


def full_tier_requested() -> bool:
    """The full tier runs where it is asked for, and always in the slowed tier (run at every stop)."""
    return os.environ.get(FULL_TIER_ENV, "") not in ("", "0") or slow_host_requested()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if full_tier_requested():
        return
    skip = pytest.mark.skip(reason=f"the full tier's ({FULL_TIER_ENV}=1, or SLOGQUAL_TEST_SLOW_HOST=1; docs/testing.md): "
                                   "kept out of README's command, which must end within 25 minutes on a fresh machine")
    for item in items:
        if item.get_closest_marker("full"):
            item.add_marker(skip)


@pytest.fixture
def slow_host(tmp_path):
    """The host slowed for this test (or the session's SlowHost when SLOGQUAL_TEST_SLOW_HOST is set)."""
    if shutil.which("fio") is None:
        pytest.skip("needs fio (contrib/install-deps.sh)")
    if _SESSION_SLOW_HOST is not None:
        yield _SessionSlowHost(_SESSION_SLOW_HOST)
        return
    slow = SlowHost(tmp_path)
    try:
        yield slow
    finally:
        slow.stop()


def pytest_sessionstart(session):
    global _SESSION_SLOW_HOST
    if not slow_host_requested() or shutil.which("fio") is None:
        return
    from lanes import distributed  # (the plugin above, imported by then)

    if distributed(session.config) and not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # xdist's controller: each lane (worker) slows the host for its share of the cores
    lanes_n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    hogs = max(1, -(-(os.cpu_count() or 1) // lanes_n))  # together: at least one hog per core
    _SESSION_SLOW_HOST = SlowHost(_tempfile.mkdtemp(prefix="slogqual-slow-host-"), hogs=hogs)
    _SESSION_SLOW_HOST.directory = _SESSION_SLOW_HOST.disk.report and os.path.dirname(_SESSION_SLOW_HOST.disk.report)


# each lane's evidence of the slowed host, added up by whoever prints the summary (the controller with xdist)
if slow_host_requested() and "SLOGQUAL_TEST_SLOW_EVIDENCE" not in os.environ:  # (xdist's workers inherit it)
    os.environ["SLOGQUAL_TEST_SLOW_EVIDENCE"] = _tempfile.mkdtemp(prefix="slogqual-slow-evidence-")


def pytest_sessionfinish(session):
    if _SESSION_SLOW_HOST is None:
        return
    st = _SESSION_SLOW_HOST.stop()
    shutil.rmtree(getattr(_SESSION_SLOW_HOST, "directory", None) or "/nonexistent", ignore_errors=True)
    name = os.environ.get("PYTEST_XDIST_WORKER") or "main"
    with open(os.path.join(os.environ["SLOGQUAL_TEST_SLOW_EVIDENCE"], name + ".json"), "w") as fh:
        json.dump(st, fh)


def _slow_host_evidence():
    """Every lane's SlowHost evidence added up (None when the session was not slowed)."""
    directory = os.environ.get("SLOGQUAL_TEST_SLOW_EVIDENCE")
    if not directory or not os.path.isdir(directory):
        return None
    parts = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name)) as fh:
            parts.append(json.load(fh))
    shutil.rmtree(directory, ignore_errors=True)
    if not parts:
        return None
    return {"lanes": len(parts), "hogs": sum(p["hogs"] for p in parts),
            "hog_cpu_s": round(sum(p["hog_cpu_s"] for p in parts), 1), "wall_s": max(p["wall_s"] for p in parts),
            "fsyncs": sum(p["disk"].get("fsyncs") or 0 for p in parts)}


# ---- wall time by kind of test, printed at the end of every run (docs/testing.md keeps the record) ----
_SECONDS_BY_TEST = []  # (seconds, node id)
_SECONDS_BY_KIND = {}


def _kind(keywords) -> str:
    if "lab" in keywords:
        return "lab"
    if "integration" in keywords:
        return "integration"
    return "unit"


def pytest_runtest_logreport(report):
    # set-up, call and tear-down, so a shared guest booted by a module fixture counts where it is paid;
    # from the reports, so that with xdist's lanes (tests/lanes.py) the controller adds up every worker's
    seconds = _SECONDS_BY_NODE.setdefault(report.nodeid, [0.0, _kind(report.keywords)])
    seconds[0] += report.duration
    if report.when == "teardown":
        spent, kind = _SECONDS_BY_NODE.pop(report.nodeid)
        n, s = _SECONDS_BY_KIND.get(kind, (0, 0.0))
        _SECONDS_BY_KIND[kind] = (n + 1, s + spent)
        _SECONDS_BY_TEST.append((spent, report.nodeid.split("@")[0]))


_SECONDS_BY_NODE = {}  # node id -> [seconds so far, kind]


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    st = _slow_host_evidence()
    if st is not None:
        terminalreporter.write_line(
            f"slogqual tests, slowed host (SLOGQUAL_TEST_SLOW_HOST): {st['hogs']} CPU hogs in {st['lanes']} lane(s) "
            f"got {st['hog_cpu_s']} CPU s in {st['wall_s']} s; the busy disk(s): {st['fsyncs']} fsyncs")
    if _SECONDS_BY_KIND:
        parts = [f"{kind} {n} tests {s:.0f} s" for kind, (n, s) in sorted(_SECONDS_BY_KIND.items())]
        # with lanes (tests/lanes.py) these are test seconds, summed over the lanes that ran at once
        terminalreporter.write_line("slogqual tests, wall time by kind: " + ", ".join(parts))
        # where CI's time budget goes (a shared guest's boot and jobs count in its first test)
        for spent, nodeid in sorted(_SECONDS_BY_TEST, reverse=True)[:10]:
            terminalreporter.write_line(f"  {spent:7.1f} s  {nodeid}")


@pytest.fixture
def dev(tmp_path):
    """A /dev of the test's own (the FreeBSD tests' recorded hosts): disk nodes are symlinks to the real
    /dev/zero; ``dev("ada0")`` makes one and gives its path, ``dev.dir`` is the directory."""
    d = tmp_path / "dev"
    d.mkdir()

    def node(name):
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink("/dev/zero", p)
        return str(p)

    node.dir = str(d)
    return node
