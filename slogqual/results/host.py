"""The host probe's document (``slogqual.host/1``, docs/advisor.md "The host's own ceiling"): what this
host's ZFS does with a perfect log — the workload's own shape on a throwaway pool whose every vdev is a file
in RAM — and what is left of it once the RAM devices' own copies are taken out.

A RAM device is no perfect log: its writes are CPU copies, the very CPU the ZIL needs, where a real
device's DMA costs the host nothing (issue #37: a tmpfs-file log ran the NFS-like 64 KiB load below an
emulated NVMe log). So the probe also measures the copy alone (``CopyCost``: CPU seconds per write and per
byte into the same RAM, fitted on two sizes) and every step carries both the measured figures and the
host's ceiling with the copies taken out (slogqual.analysis.host). Built by slogqual.host.door; read by
the advisor (``advise --host``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from slogqual.results import schema


@dataclass
class CopyCost:
    """CPU seconds one write into the probe's RAM costs: ``per_write_s + per_byte_s * bytes`` (fitted on two
    sizes, each a timed fio run on a file in the same RAM directory)."""

    per_write_s: float
    per_byte_s: float
    sizes: List[int]
    ios: List[int]  # fio's IOs at each size
    cpu_s: List[float]  # the CPU seconds each size's run used (/proc/stat)
    # a file vdev first copies the block out of its scattered buffer into a linear one (vdev_file.c:
    # abd_borrow_buf_copy) before writing it: a memcpy into memory that exists, per byte (a rewrite, measured)
    borrow_per_byte_s: float = 0.0

    def of(self, writes_s: float, bytes_s: float) -> float:
        """CPU seconds per second that ``writes_s`` file-vdev writes of ``bytes_s`` bytes a second into RAM cost."""
        return max(0.0, self.per_write_s * writes_s + (self.per_byte_s + self.borrow_per_byte_s) * bytes_s)

    def one(self, size: float) -> float:
        """CPU seconds one file-vdev write of ``size`` bytes costs."""
        return max(0.0, self.per_write_s + (self.per_byte_s + self.borrow_per_byte_s) * size)

    def to_dict(self) -> Dict[str, Any]:
        return {"per_write_s": self.per_write_s, "per_byte_s": self.per_byte_s,
                "borrow_per_byte_s": self.borrow_per_byte_s, "sizes": list(self.sizes),
                "ios": list(self.ios), "cpu_s": list(self.cpu_s)}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "CopyCost":
        return cls(per_write_s=float(d["per_write_s"]), per_byte_s=float(d["per_byte_s"]),
                   sizes=[int(x) for x in d["sizes"]], ios=[int(x) for x in d["ios"]],
                   cpu_s=[float(x) for x in d["cpu_s"]], borrow_per_byte_s=float(d.get("borrow_per_byte_s") or 0.0))


@dataclass
class HostStep:
    """One thread count: what the probe's pool measured, and the host's ceiling with the RAM copies out."""

    threads: int  # all writers
    ios: int
    iops: float
    lat_us: float  # mean per write (write + its commit)
    cpu_busy: Optional[float]  # share of all CPUs, /proc/stat over the step
    cpus: Optional[int]
    log_writes_s: Optional[float]  # the log vdev's writes a second (zpool iostat over the window)
    log_bytes_s: Optional[float]
    data_writes_s: Optional[float]  # the data vdevs' (txg sync), where they are RAM files (copies to take out)
    data_bytes_s: Optional[float]
    itx: Optional[int]  # ZIL kstats over the step: records, log blocks written to the log, commits
    lwbs: Optional[int]
    commits: Optional[int]
    commit_calls: Optional[int] = None  # zil_commit calls (one a sync write)
    log_basis: Optional[str] = None  # where log_writes_s came from: "iostat" (the window) or "zil-kstats" (the step)
    # the data vdevs' writes over the window whichever they are (the pool's own disks too): the txg syncs the
    # window held, evidence beside data_*_s, which are None on real disks (their DMA is no copy to take out)
    txg_writes_s: Optional[float] = None
    txg_bytes_s: Optional[float] = None
    longest_write_us: Optional[float] = None  # the step's slowest write (fio's completion latency, max)
    # derived (slogqual.analysis.host)
    stalled: Optional[bool] = None  # a write outlasted the kernel's I/O timeout: the device stalled (no ceiling)
    cpu_s_per_io: Optional[float] = None  # all the CPU the step used, per write
    copy_s_per_io: Optional[float] = None  # of which the RAM vdevs' copies
    zfs_cpu_s_per_io: Optional[float] = None  # the rest: ZFS, the load, the kernel — what a real log leaves
    lwb_bytes: Optional[float] = None  # mean log write
    records_per_lwb: Optional[float] = None  # writes per log write
    records_per_commit: Optional[float] = None  # batching, measured: zil_commit calls per commit writer
    path_us: Optional[float] = None  # the software path: a write's time less its lwb's copy into RAM
    cpu_ceiling_iops: Optional[float] = None  # cpus / zfs_cpu_s_per_io
    path_ceiling_iops: Optional[float] = None  # writers / path
    ceiling_iops: Optional[float] = None  # the least of the two: what no log can take this host past
    # where the probe ran its steps more than once (``--repeats``): the pass this step is from (1-based) and
    # every pass's ceiling at this thread count, in order — the step kept is the pass with the highest
    probe_pass: Optional[int] = None
    pass_ceilings_iops: Optional[List[Optional[float]]] = None

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "HostStep":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class HostWorkload:
    """The load's shape the probe ran: the advisor's Workload says the same things."""

    protocol: str  # iscsi (zvols) | nfs (a dataset)
    bs: int
    block_size: int  # volblocksize / recordsize
    write_sync: str  # none | dsync | fsync (fio's)
    zils: int  # zvols or datasets: independent intent logs
    threads: List[int]  # all writers at each step

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__, threads=list(self.threads))

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "HostWorkload":
        return cls(protocol=d["protocol"], bs=int(d["bs"]), block_size=int(d["block_size"]),
                   write_sync=d["write_sync"], zils=int(d["zils"]), threads=[int(t) for t in d["threads"]])


@dataclass
class LogPass:
    """The probe's passes with the candidate as the log and RAM files as the data (``host-probe --log``): the
    host's ceiling with this log, its driver's and interrupts' CPU at the pool's concurrency in ZFS's own
    (slogqual.analysis.host, "the log pass"). Steps as ``HostProbeResult.steps``: each count's best pass."""

    device: str  # the path the probe wrote
    identity: Dict[str, Any] = field(default_factory=dict)  # model, serial (slogqual.device): which log it was
    steps: List[HostStep] = field(default_factory=list)
    passes: List[List[HostStep]] = field(default_factory=list)  # [] in a one-pass probe
    pass_scenarios: List[str] = field(default_factory=list)  # each pass's scenario document
    # a pass that failed after others had run (the device gone under the load): {"pass": n, "error": the line}
    failed: Optional[Dict[str, Any]] = None

    def to_dict(self) -> Dict[str, Any]:
        return {"device": self.device, "identity": dict(self.identity), "steps": [s.to_dict() for s in self.steps],
                "passes": [[s.to_dict() for s in p] for p in self.passes],
                "pass_scenarios": list(self.pass_scenarios), "failed": dict(self.failed) if self.failed else None}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LogPass":
        return cls(device=str(d["device"]), identity=dict(d.get("identity") or {}),
                   steps=[HostStep.from_dict(s) for s in d.get("steps") or []],
                   passes=[[HostStep.from_dict(s) for s in p] for p in d.get("passes") or []],
                   pass_scenarios=[str(x) for x in d.get("pass_scenarios") or []],
                   failed=dict(d["failed"]) if d.get("failed") else None)


@dataclass
class HostProbeResult:
    workload: HostWorkload
    ram: Dict[str, Any]  # where the vdevs lived: directory, file system, data files, their size
    copy: Optional[CopyCost]
    steps: List[HostStep] = field(default_factory=list)
    environment: Dict[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    ramp_s: float = 0.0
    scenario: Optional[str] = None  # the probe's own scenario document (the raw steps), beside this one
    status: str = "complete"
    # every pass over the thread counts (``--repeats``, each its own pool), their steps derived as ``steps``;
    # ``steps`` keeps each thread count's best pass (slogqual.analysis.host.best_of); [] in a one-pass document
    passes: List[List[HostStep]] = field(default_factory=list)
    pass_scenarios: List[str] = field(default_factory=list)  # each pass's scenario document (the first: ``scenario``)
    log_pass: Optional[LogPass] = None  # ``--log``: the same load with the candidate as the log; None: not run
    schema: str = schema.HOST

    def to_dict(self) -> Dict[str, Any]:
        return {"schema": self.schema, "status": self.status, "workload": self.workload.to_dict(),
                "runtime_s": self.runtime_s, "ramp_s": self.ramp_s, "ram": dict(self.ram),
                "copy": self.copy.to_dict() if self.copy else None, "steps": [s.to_dict() for s in self.steps],
                "scenario": self.scenario, "environment": dict(self.environment),
                "passes": [[s.to_dict() for s in p] for p in self.passes], "pass_scenarios": list(self.pass_scenarios),
                "log_pass": self.log_pass.to_dict() if self.log_pass else None}

    @classmethod
    def from_dict(cls, d: Any, source: str = "<document>") -> "HostProbeResult":
        d = schema.upgrade(d, schema.HOST, source)
        try:
            return cls(workload=HostWorkload.from_dict(d["workload"]), ram=dict(d.get("ram") or {}),
                       copy=CopyCost.from_dict(d["copy"]) if d.get("copy") else None,
                       steps=[HostStep.from_dict(s) for s in d.get("steps") or []],
                       environment=dict(d.get("environment") or {}), runtime_s=float(d.get("runtime_s") or 0),
                       ramp_s=float(d.get("ramp_s") or 0), scenario=d.get("scenario"),
                       status=d.get("status", "complete"), schema=d["schema"],
                       passes=[[HostStep.from_dict(s) for s in p] for p in d.get("passes") or []],
                       pass_scenarios=[str(x) for x in d.get("pass_scenarios") or []],
                       log_pass=LogPass.from_dict(d["log_pass"]) if d.get("log_pass") else None)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise schema.DocumentError(f"{source}: not a host probe document ({type(exc).__name__}: {exc})") from None

    def at(self, threads: int) -> Optional[HostStep]:
        return next((s for s in self.steps if s.threads == threads), None)
