"""The lab self-test, run INSIDE the guest by ``slogqual lab check`` (``python -m slogqual.lab.selftest``).

Steps, each timed and checked: zfs loaded; ``zpool create`` a mirror of the first two lab devices;
``zpool add POOL log`` the third; a zvol with ``sync=always``; a short QD1 4 KiB random-write fio on
it; the ZIL kstats (global and the zvol's objset) must show log records written to the SLOG
(``zil_itx_metaslab_slog_count``/``_bytes`` grow) and ``zpool iostat -v`` writes on the log vdev;
``zfs destroy``, ``zpool destroy`` and the pool must be gone. Writes ``check.json`` (and the raw
command outputs under ``raw/``) to ``$SLOGQUAL_LAB_OUT``; exits 0 only if every step held.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Dict, List

from slogqual.tools import fio as fio_tool
from slogqual.tools import kstat, udevadm, zfs, zpool
from slogqual.tools import spawn as _run

POOL = "sqlabcheck"
VOL = f"{POOL}/vol"
FIO_RUNTIME_S = 3


def uptime() -> float:
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0])


def mark(name: str) -> None:
    path = os.environ.get("SLOGQUAL_LAB_MARKS")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{name} {uptime():.2f}\n")


class Check:
    def __init__(self, out: str):
        self.out = out
        self.raw = os.path.join(out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.steps: List[Dict] = []
        self.evidence: Dict = {}

    def save(self, name: str, text: str) -> None:
        with open(os.path.join(self.raw, name), "w") as fh:
            fh.write(text)

    def step(self, name: str, fn):
        t0 = time.monotonic()
        try:
            detail = fn()
            ok = True
        except Exception as exc:  # every failure is reported, not raised
            detail = f"{type(exc).__name__}: {exc}"
            ok = False
        rec = {"step": name, "ok": ok, "seconds": round(time.monotonic() - t0, 3), "uptime": round(uptime(), 2)}
        if detail is not None:
            rec["detail"] = detail
        self.steps.append(rec)
        mark(name)
        print(f"lab check: {name}: {'ok' if ok else 'FAILED'} ({rec['seconds']:.2f} s){'' if ok else ' - ' + str(detail)}",
              flush=True)
        return ok

    def write(self) -> bool:
        ok = bool(self.steps) and all(s["ok"] for s in self.steps)
        doc = {"schema": "slogqual.lab-check/1", "ok": ok, "pool": POOL, "steps": self.steps,
               "evidence": self.evidence}
        with open(os.path.join(self.out, "check.json"), "w") as fh:
            json.dump(doc, fh, indent=2)
        return ok


def fio_evidence(stdout: str, stderr: str, returncode: int, argv: List[str], where: str) -> Dict:
    """What check.json shows of the check job's fio run, read by fio's one parser (tools/fio.py):
    ToolFailedError when fio failed, ToolOutputError when its report cannot be read, MeasurementError
    when it completed no writes."""
    result = fio_tool.interpret(stdout, stderr, returncode, where, fio_tool.CHECK_JOB_BS, argv)
    if result.write_clat is None:
        raise _run.parse_failed(fio_tool.PROGRAM, argv, stdout, "no clat_ns section in the write job", stderr=stderr)
    return {"ios": result.ios, "iops": round(result.iops, 1), "clat_mean_us": round(result.write_clat.mean, 1),
            "runtime_s": FIO_RUNTIME_S}


class SelfCheck:
    """The steps on the lab devices (``data``: the mirror's two, ``log_dev``: the SLOG), each recorded
    in ``check`` by :meth:`Check.step`; what a step finds that a later one needs is kept here."""

    def __init__(self, check: Check, data: List[str], log_dev: str):
        self.c, self.data, self.log_dev = check, data, log_dev
        self.dev = ""  # the zvol's device node
        self.objsetid = 0
        self.zil_before = self.objset_before = None

    def run(self) -> bool:
        c = self.c
        ok = c.step("zfs_loaded", self.module)
        ok = ok and c.step("pool_created", self.create)
        ok = ok and c.step("log_added", self.add_log)
        if ok:
            mark("pool_ready")
        ok = ok and c.step("zvol_created", self.zvol)
        ok = ok and c.step("kstats_before", self.kstats_before)
        ok = ok and c.step("fio_sync_always", self.fio)
        ok = ok and c.step("zil_slog_evidence", self.kstats_after)
        # Always try to remove what was created.
        if os.path.isdir("/proc/spl/kstat/zfs") and POOL in _pools_quiet():
            c.step("pool_destroyed", self.destroy)
        return c.write()

    def module(self):
        if not os.path.isdir("/sys/module/zfs"):
            raise RuntimeError("the zfs module is not loaded")
        with open("/sys/module/zfs/version") as fh:
            self.c.evidence["zfs_module_version"] = fh.read().strip()
        return self.c.evidence["zfs_module_version"]

    def create(self):
        zpool.create(POOL, ["mirror", *self.data], force=True, fs_properties={"mountpoint": "none"})

    def add_log(self):
        zpool.add(POOL, [self.log_dev], log=True, force=True)
        status = zpool.zpool(zpool.status_argv(POOL))
        self.c.save("zpool-status.txt", status)
        if "logs" not in status:
            raise RuntimeError("zpool status shows no logs section")

    def zvol(self):
        zfs.create(VOL, volsize=256 << 20, properties={"volblocksize": "4096", "sync": "always", "compression": "off"})
        dev = f"/dev/zvol/{VOL}"
        udevadm.settle(30)
        deadline = time.monotonic() + 30
        while not os.path.exists(dev):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{dev} did not appear")
            time.sleep(0.1)
        self.dev = dev
        self.objsetid = zfs.objsetid(VOL)
        props = zfs.get(VOL, ["sync", "volblocksize", "logbias"])
        self.c.evidence["zvol"] = {"path": dev, "objsetid": self.objsetid, **props}
        if props.get("sync") != "always":
            raise RuntimeError(f"sync is {props.get('sync')}, not always")

    def kstats_before(self):
        self.c.save("zil-before.txt", open(kstat.ZIL_GLOBAL).read())
        self.c.save("objset-before.txt", open(kstat.objset_path(POOL, self.objsetid)).read())
        self.zil_before = kstat.zil_stats()
        self.objset_before = kstat.zil_stats(POOL, self.objsetid)

    def fio(self):
        proc = fio_tool.check_job(self.dev, FIO_RUNTIME_S)
        argv = proc.args
        self.c.save("fio.json", proc.stdout)
        self.c.evidence["fio"] = fio_evidence(proc.stdout, proc.stderr, proc.returncode, argv, self.dev)
        return self.c.evidence["fio"]

    def kstats_after(self):
        c = self.c
        c.save("zil-after.txt", open(kstat.ZIL_GLOBAL).read())
        c.save("objset-after.txt", open(kstat.objset_path(POOL, self.objsetid)).read())
        dg = kstat.zil_stats() - self.zil_before
        do = kstat.zil_stats(POOL, self.objsetid) - self.objset_before
        io_text = zpool.zpool(zpool.iostat_argv(POOL))
        c.save("zpool-iostat-vp.txt", io_text)
        log_rows = [r for r in zpool.parse_iostat_v(io_text) if r.section == "logs"]
        c.evidence["zil_global_delta"] = dg.as_dict()
        c.evidence["zil_objset_delta"] = do.as_dict()
        c.evidence["log_vdev_write_ops_per_s"] = sum(r.write_ops for r in log_rows)
        problems = slog_problems(do, log_rows)
        if problems:
            raise RuntimeError("; ".join(problems))
        return {"slog_bytes": do.slog_bytes, "slog_count": do.slog_count, "normal_bytes": do.normal_bytes,
                "commits": do.commit_count}

    def destroy(self):
        # udev's probes of the zvol can hold it open for a moment after fio: settle, retry.
        for attempt in range(20):
            udevadm.settle(10)
            try:
                zpool.destroy(POOL)
                break
            except Exception:
                if attempt == 19:
                    raise
                time.sleep(0.5)
        if POOL in zpool.pools():
            raise RuntimeError("the pool is still listed")


def slog_problems(do, log_rows) -> List[str]:
    """What the objset's ZIL delta ``do`` and the log vdev's ``zpool iostat -v`` rows lack for the
    evidence that sync writes went to the SLOG (none: they went there)."""
    problems = []
    if do.commit_count is None or do.slog_count is None or do.slog_bytes is None:
        problems.append("the objset kstat lacks zil_commit_count or zil_itx_metaslab_slog_count/bytes")
    elif do.commit_count <= 0:
        problems.append("zil_commit_count did not grow")
    if do.slog_count is not None and do.slog_bytes is not None and (do.slog_count <= 0 or do.slog_bytes <= 0):
        problems.append("zil_itx_metaslab_slog_count/bytes did not grow")
    if not log_rows or all(r.write_ops == 0 for r in log_rows):
        problems.append("zpool iostat -v shows no writes on the log vdev")
    return problems


def main() -> int:
    out = os.environ.get("SLOGQUAL_LAB_OUT", ".")
    devs = os.environ.get("SLOGQUAL_LAB_DEVICES", "").split()
    c = Check(out)
    if len(devs) < 3:
        print("lab check: needs three lab devices (two data, one log)", file=sys.stderr)
        c.step("devices", lambda: (_ for _ in ()).throw(RuntimeError(f"got {devs}")))
        c.write()
        return 1
    data, log_dev = devs[:2], devs[2]
    c.evidence["devices"] = {"data": data, "log": log_dev}
    return 0 if SelfCheck(c, data, log_dev).run() else 1


def _pools_quiet():
    try:
        return zpool.pools()
    except Exception:
        return {}


if __name__ == "__main__":
    sys.exit(main())
