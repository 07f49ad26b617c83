"""The ``slogqual.scenario/1`` document (docs/scenarios.md), typed.

The document keeps the measurements: the scenario's parameters, the pool, every step's fio figures
and ZIL/iostat evidence. Its ``analysis`` is what the run printed (with the analysis version that
produced it); readers recompute it with slogqual.analysis.scenario.current. ``ScenarioResult.load``
validates a file and names the first bad key; ``to_dict`` gives back the document, keys it does not
model included and in the order the file had them, so a round trip changes nothing (byte for byte,
written as results.write_json_atomic writes). The runner builds one (``ScenarioResult.new``), adds its
steps and saves it; every reader takes the object, never the dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from slogqual.results import (STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_RUNNING, DeviceIdentity,
                              ReadByKey, Table, load_json, ordered as _ordered, written as _written)
from slogqual.results import schema as S
from slogqual.results.device import check_topology
from slogqual.results.shelf import UnitPath

STATUSES = (STATUS_RUNNING, STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED)
SYNCS = ("standard", "always", "disabled")
LOGS = ("none", "single", "mirror", "stripe", "special")  # special: the candidate as the special vdev, no log


def log_ops(vdevs: Optional[List[Dict[str, Any]]]) -> Optional[float]:
    """Write ops/s of the log section's top-level vdevs, from a step's ``vdevs`` list."""
    if vdevs is None:
        return None
    return sum(float(v["write_ops_s"]) for v in vdevs if v.get("section") == "logs" and v.get("depth") == 1)


def _section_bytes(vdevs: Optional[List[Dict[str, Any]]], section: str) -> Optional[float]:
    """Write bytes/s of one section's top-level vdevs (depth 1), from a step's ``vdevs`` list."""
    if not vdevs:
        return None
    return sum(float(v["write_bytes_s"]) for v in vdevs if v.get("section") == section and v.get("depth") == 1)


@dataclass
class StepLatency(Table):
    """A step's ``lat_us``: fio's completion latency of the load's writes, in µs (pool.engine)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("mean", "p50", "p99", "p999", "max", "basis")

    mean: Optional[float] = None
    p50: Optional[float] = None
    p99: Optional[float] = None
    p999: Optional[float] = None
    max: Optional[float] = None
    basis: Optional[str] = None  # fsync-per-write loads: the mean is the write's and its flush's

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {k: check.number(d, k, where, required=False, minimum=0) for k in ("mean", "p50", "p99", "p999", "max")}


@dataclass
class ZilDelta(Table):
    """A step's ``zil``: the ZIL kstat's counters over the step (tools.kstat.ZilStats; None where the kstat
    lacked the row)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("commit_count", "commit_writer_count", "itx_count", "slog_count", "slog_bytes",
                                       "normal_count", "normal_bytes")

    commit_count: Optional[int] = None
    commit_writer_count: Optional[int] = None
    itx_count: Optional[int] = None
    slog_count: Optional[int] = None
    slog_bytes: Optional[int] = None  # to the log vdevs
    normal_count: Optional[int] = None
    normal_bytes: Optional[int] = None  # to the main pool

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {k: check.number(d, k, where, required=False, minimum=0) for k in ("slog_bytes", "normal_bytes")}


@dataclass
class WriteThrottle(Table):
    """A step's ``write_throttle``: the write throttle's counts over the step (tools.kstat.TxStats, the global
    dmu_tx kstat: every pool's transactions; ``source`` says so). None where the kstat lacked the row."""

    KEYS: ClassVar[Tuple[str, ...]] = ("assigned", "dirty_delay", "delay", "dirty_over_max", "wrlog_delay", "source")

    assigned: Optional[int] = None  # transactions assigned to a txg
    dirty_delay: Optional[int] = None  # sent to wait: the pool's dirty data past zfs_delay_min_dirty_percent
    delay: Optional[int] = None
    dirty_over_max: Optional[int] = None  # blocked until a txg synced: dirty data at zfs_dirty_data_max
    wrlog_delay: Optional[int] = None  # sent to wait: unsynced sync writes past zfs_wrlog_data_max
    source: Optional[str] = None  # "global": every pool's transactions count

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        out = {k: check.integer(d, k, where, required=False, minimum=0) for k in cls.KEYS[:-1]}
        out["source"] = check.text(d, "source", where, required=False)
        return out

    @property
    def waited(self) -> Optional[int]:
        """Transactions the throttle sent to wait, for dirty data or for unsynced sync writes."""
        if self.dirty_delay is None:
            return None
        return self.dirty_delay + (self.wrlog_delay or 0)

    @property
    def waited_share(self) -> Optional[float]:
        """Of the step's transactions, the share the throttle sent to wait; None where unknown or none ran."""
        if self.waited is None or not self.assigned:
            return None
        return self.waited / self.assigned


@dataclass
class SkippedConfig(Table):
    """One of ``skipped``: a pair configuration a run with fewer than two log candidates could not build
    (pool.variants.plan)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("config", "log", "reason")

    config: str = ""
    log: Optional[str] = None
    reason: Optional[str] = None


@dataclass
class LogSweep(ReadByKey, Table):
    """One of ``log_sweeps``: a log candidate's own QD1 sweep, summarised (pool.log_sweeps.summary), by device
    path. ``get``: analysis/scenario.py and analysis/pair_ceiling.py still read ``points`` by key."""

    KEYS: ClassVar[Tuple[str, ...]] = ("source", "target", "model", "status", "mode", "runtime_s", "points")

    source: Optional[str] = None  # the sweep document it came from
    target: Optional[str] = None
    model: Optional[str] = None
    status: Optional[str] = None
    mode: Optional[str] = None
    runtime_s: Optional[float] = None
    points: List[Dict[str, Any]] = field(default_factory=list)  # {size, mbps, lat_mean_us, ios}

    @property
    def complete(self) -> bool:
        return self.status == STATUS_COMPLETE


@dataclass
class TransportSettings(Table):
    """``transport.config``: the scenario's transport as the run used it (pool.transport.TransportConfig's
    dict: the NFS settings over NFS, the LIO write cache over iSCSI, just the kind locally)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("kind", "nfs_version", "nfs_threads", "nfs_mount_options", "iscsi_write_cache")

    kind: Optional[str] = None  # local, iscsi, nfs
    nfs_version: Optional[str] = None
    nfs_threads: Optional[int] = None  # None: the server's count as it was
    nfs_mount_options: Optional[List[str]] = None
    iscsi_write_cache: Optional[bool] = None  # None: what LIO made of the zvol

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {"kind": check.text(d, "kind", where, required=False)}


@dataclass
class Attachment(Table):
    """One of ``transport.attachments``, by configuration label: what the transport attached for it, as its
    module (pool/transport/) records it: over iSCSI the target, IQN, portal and each LUN's zvol and disk,
    over NFS the export and the mount's options, locally just the kind. The transport's own keys are kept
    as they came (``extra``)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("kind",)

    kind: Optional[str] = None

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {"kind": check.text(d, "kind", where, required=False)}


@dataclass
class TransportRecord(Table):
    """``transport``: the transport the run's load reached the pool by (``config``) and what it attached for
    each configuration (``attachments``); absent in documents from before transports existed."""

    KEYS: ClassVar[Tuple[str, ...]] = ("config", "attachments")

    config: Optional[TransportSettings] = None
    attachments: Dict[str, Attachment] = field(default_factory=dict)

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        attachments = check.obj(d, "attachments", where, required=False) or {}
        return {"config": TransportSettings.optional(d, "config", check, where),
                "attachments": {label: Attachment.from_dict(rec, check, f"{where}.attachments[{label}]")
                                for label, rec in attachments.items()}}

    @property
    def kind(self) -> Optional[str]:
        """The transport's kind as the run recorded it (None where its config says none)."""
        return self.config.kind if self.config is not None else None


@dataclass
class Drivers(Table):
    """``drivers``: the fio clients (HOST:PORT) and the number of fio servers on loopback the run's steps were
    driven by (pool.door); absent in documents from before it was recorded."""

    KEYS: ClassVar[Tuple[str, ...]] = ("clients", "fio_servers")

    clients: List[str] = field(default_factory=list)
    fio_servers: Optional[int] = None

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {"clients": check.texts(d, "clients", where),
                "fio_servers": check.integer(d, "fio_servers", where, required=False, minimum=0)}

    @classmethod
    def of(cls, clients: List[str], fio_servers: int) -> "Drivers":
        """The drivers of a run about to start."""
        return cls(clients=list(clients), fio_servers=fio_servers)


@dataclass
class ConfigRecord(Table):
    """One of ``scenario.configs``: a pool configuration the scenario measures (pool.scenario.PoolConfig)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("name", "sync", "log", "logbias", "zil_special_is_slog")

    name: Optional[str] = None
    sync: Optional[str] = None
    log: Optional[str] = None
    logbias: Optional[str] = None
    zil_special_is_slog: Optional[bool] = None  # log = "special" only (absent elsewhere)


@dataclass
class ScenarioParams(ReadByKey, Table):
    """``scenario``: the parameters the run measured with (pool.scenario.Scenario.to_dict: the load, its
    steps, the configurations, the transport, the command line's overrides). Values are kept as the file
    has them; ``from_dict`` checks the ones every reader relies on (``name``, ``bs``, ``configs``). Every reader
    takes its fields; item access is kept for one writer, lab/scenario.py, which sets ``source`` (and
    ``get`` for documents' own callers outside this package)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("name", "description", "kind", "luns", "lun_size", "volblocksize", "recordsize",
                                       "rw", "bs", "write_sync", "threads", "runtime_s", "ramp_s", "configs", "source",
                                       "transport", "overrides")

    name: str = ""
    description: Optional[str] = None
    kind: Optional[str] = None  # zvol (LUNs over iSCSI or local) or dataset (files)
    luns: Optional[int] = None
    lun_size: Optional[int] = None
    volblocksize: Optional[int] = None
    recordsize: Optional[int] = None
    rw: Optional[str] = None
    bs: int = 0
    write_sync: Optional[str] = None  # none, dsync, fsync (absent or null: none)
    threads: Optional[List[int]] = None  # per LUN, one step each
    runtime_s: Optional[float] = None
    ramp_s: Optional[float] = None
    configs: List[ConfigRecord] = field(default_factory=list)
    source: Optional[str] = None  # a shipped name or the TOML file (what --resume loads again)
    transport: Optional[TransportSettings] = None  # absent before transports existed: local
    overrides: Optional[Any] = None  # the load's shape given on the command line, by option (pool.door checks it)

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        check.text(d, "name", where)
        check.integer(d, "bs", where, minimum=1)
        check.items(d, "configs", where)
        configs = [ConfigRecord.from_dict(c, check, f"{where}.configs[{i}]") if isinstance(c, dict) else c
                   for i, c in enumerate(d["configs"])]
        transport = d.get("transport")
        return {"configs": configs,
                "transport": TransportSettings.from_dict(transport, check, f"{where}.transport")
                if isinstance(transport, dict) else transport}

    def __setitem__(self, key: str, value: Any) -> None:
        """A value set by key (lab/scenario.py sets ``source``): the field's, or one the file kept besides."""
        if key in self.KEYS:
            setattr(self, self._attr(key), value)
            self._absent = frozenset(getattr(self, "_absent", ())) - {key}
        else:
            if not hasattr(self, "_extra"):
                self._extra = {}
            self._extra[key] = value


@dataclass
class AnalysisRecord(Table):
    """The top-level figures of an ``analysis`` (stored by the run, or today's: report.scenario.current)."""

    KEYS: ClassVar[Tuple[str, ...]] = ("version", "metric", "verdict", "bottleneck", "slog_benefit_at_peak",
                                       "slog_of_standard_at_peak", "knees", "details", "problems", "candidates",
                                       "pairs", "slower_log", "findings")

    version: Optional[int] = None  # the analysis version (absent: 1, before it was recorded)
    metric: Optional[str] = None  # iops or mbps
    verdict: Optional[str] = None  # the sentence
    bottleneck: Optional[str] = None
    slog_benefit_at_peak: Optional[float] = None
    slog_of_standard_at_peak: Optional[float] = None
    knees: Optional[Any] = None
    details: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    candidates: Optional[List[Any]] = None
    pairs: Optional[List[Any]] = None
    slower_log: Optional[str] = None
    findings: Optional[List[Any]] = None

    @classmethod
    def of(cls, analysis: Optional[Dict[str, Any]]) -> Optional["AnalysisRecord"]:
        """The analysis as a document holds it (None where there is none)."""
        return cls.from_dict(analysis, S.Checker("<analysis>"), "analysis") if analysis is not None else None

    @classmethod
    def _typed(cls, d: Dict[str, Any], check: S.Checker, where: str) -> Dict[str, Any]:
        return {k: list(d.get(k) or []) for k in ("details", "problems")}

    def figure(self, name: str) -> Optional[float]:
        """A figure a criterion judges (qualify.profile.SCENARIO_METRICS): a field of this record."""
        return getattr(self, name) if name in self.KEYS else None


@dataclass
class ScenarioStep:
    """One thread step of one pool configuration: what fio measured and where the ZIL wrote."""

    config: str
    sync: str
    log: str
    threads_per_lun: int
    threads: int
    ios: int
    iops: float
    mbps: float
    lat_us: StepLatency
    zil: ZilDelta
    extra: Dict[str, Any] = field(default_factory=dict)  # evidence kept as measured (vdevs, iostat, ...)

    _MODELLED = ("config", "sync", "log", "threads_per_lun", "threads", "ios", "iops", "mbps", "lat_us", "zil")

    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    @property
    def candidate(self) -> Optional[str]:
        """The log device of a single-SLOG configuration with several candidates, a pair's devices with
        three or more (else None)."""
        return self.extra.get("candidate")

    @property
    def logbias(self) -> Optional[str]:
        return self.extra.get("logbias")

    @property
    def log_devices(self) -> List[str]:
        """The log vdevs as zpool was given them (``["mirror", a, b]``, ``[a, b]``, ``[a]``); [] unrecorded."""
        v = self.extra.get("log_devices")
        return list(v) if isinstance(v, list) else []

    @property
    def special_devices(self) -> List[str]:
        """A special-vdev configuration's special vdev (the candidate); [] for every other step."""
        v = self.extra.get("special_devices")
        return list(v) if isinstance(v, list) else []

    @property
    def zil_special_is_slog(self) -> Optional[int]:
        """The module parameter a special-vdev step ran with (1, 0); None for every other step."""
        v = self.extra.get("zil_special_is_slog")
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    @property
    def special_write_bytes_s(self) -> Optional[float]:
        """The special vdevs' writes over the window (zpool iostat's ``special`` section, top-level rows: every
        write, the ZIL's and the txg's); None where the step recorded no per-vdev rows."""
        return _section_bytes(self.extra.get("vdevs"), "special")

    @property
    def data_write_bytes_s(self) -> Optional[float]:
        """The data vdevs' writes over the window (the top-level rows outside every section)."""
        return _section_bytes(self.extra.get("vdevs"), "data")

    @property
    def transport(self) -> Optional[str]:
        return self.extra.get("transport")

    @property
    def p99_us(self) -> Optional[float]:
        return self.lat_us.p99

    @property
    def cpu_busy(self) -> Optional[float]:
        """The host's CPU busy share over the step (``/proc/stat``, pool.engine); None where unrecorded."""
        cpu = self.extra.get("cpu")
        return cpu.get("busy_share") if isinstance(cpu, dict) else None

    @property
    def write_throttle(self) -> Optional["WriteThrottle"]:
        """The write throttle's counts over the step (pool.evidence.ThrottleWitness); None where unrecorded."""
        return WriteThrottle.optional(self.extra, "write_throttle", S.Checker("<step>"), "step")

    @property
    def slog_bytes(self) -> Optional[int]:
        """ZIL bytes to the log vdevs over the step (kstat delta); None where the kstat lacked the row."""
        return self.zil.slog_bytes

    @property
    def normal_bytes(self) -> Optional[int]:
        """ZIL bytes to the main pool over the step."""
        return self.zil.normal_bytes

    @property
    def log_write_bytes_s(self) -> Optional[float]:
        return self.extra.get("log_write_bytes_s")

    @property
    def log_write_ops_s(self) -> Optional[float]:
        """The log vdevs' write ops/s over the window: as recorded, else summed from ``vdevs``."""
        if "log_write_ops_s" in self.extra:
            return self.extra["log_write_ops_s"]
        return log_ops(self.extra.get("vdevs"))

    @classmethod
    def measured(cls, d: Dict[str, Any]) -> "ScenarioStep":
        """A step the runner just measured, checked as a loaded one is."""
        return cls.from_dict(d, "step", S.Checker("<measured step>"))

    @classmethod
    def from_dict(cls, d: Any, where: str, check: S.Checker) -> "ScenarioStep":
        d = check.table(d, where)
        lat = StepLatency.from_dict(check.obj(d, "lat_us", where), check, f"{where}.lat_us")
        check.text(d, "candidate", where, required=False)
        zil = ZilDelta.from_dict(check.obj(d, "zil", where), check, f"{where}.zil")
        WriteThrottle.optional(d, "write_throttle", check, where)  # checked here; kept as the file has it
        return cls(config=check.text(d, "config", where), sync=check.text(d, "sync", where, choices=SYNCS),
                   log=check.text(d, "log", where, choices=LOGS),
                   threads_per_lun=check.integer(d, "threads_per_lun", where, minimum=1),
                   threads=check.integer(d, "threads", where, minimum=1),
                   ios=check.integer(d, "ios", where, minimum=0), iops=check.number(d, "iops", where, minimum=0),
                   mbps=check.number(d, "mbps", where, minimum=0), lat_us=lat, zil=zil,
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED}, _order=tuple(d))

    def to_dict(self) -> Dict[str, Any]:
        d = {"config": self.config, "sync": self.sync, "log": self.log, "threads_per_lun": self.threads_per_lun,
             "threads": self.threads, "ios": self.ios, "iops": self.iops, "mbps": self.mbps,
             "lat_us": self.lat_us.to_dict(), "zil": self.zil.to_dict()}
        d.update(self.extra)
        return _ordered(d, self._order)


def _check_topologies(check: S.Checker, devices: Dict[str, Any]) -> None:
    """Each recorded device path (``pool.devices[dev].topology``) is checked as a device record's path is
    (results.device.check_topology): what ``ScenarioResult.topology`` and the reports read."""
    for dev, rec in devices.items():
        if isinstance(rec, dict) and rec.get("topology") is not None:
            where = f"pool.devices[{dev}]"
            check_topology(check, check.obj(rec, "topology", where), f"{where}.topology")


@dataclass
class PoolRecord:
    """``pool``: the pool every configuration was built on (pool.engine.new_result writes it)."""

    layout: str  # the data vdevs' layout: stripe, mirror, raidz1, raidz2
    data: List[str]  # the data devices, as given
    log: List[str]  # the --log candidates, in the order given
    ashift: Optional[int] = None  # pool.builder.ashift_for: from the devices' physical sectors
    fs_properties: Dict[str, Any] = field(default_factory=dict)  # every zvol/dataset's; sync and logbias per config
    devices: Dict[str, DeviceIdentity] = field(default_factory=dict)  # path -> identity record, with its topology
    zfs_api: Optional[str] = None  # how the zvols/datasets were made (pool.builder), set when the first pool is
    extra: Dict[str, Any] = field(default_factory=dict)  # keys no version of the runner wrote, kept in order
    absent: frozenset = frozenset()  # optional keys the document did not have (kept absent by to_dict)

    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    _MODELLED = ("layout", "data", "log", "ashift", "fs_properties", "devices", "zfs_api")
    _OPTIONAL = ("ashift", "fs_properties", "devices", "zfs_api")  # zfs_api: absent before --zfs-api existed

    @classmethod
    def new(cls, layout: str, data: List[str], log: List[str], ashift: int, fs_properties: Dict[str, Any],
            devices: Dict[str, Dict[str, Any]]) -> "PoolRecord":
        """The pool of a run about to start: its ``zfs_api`` is written once the first pool says which."""
        return cls(layout=layout, data=data, log=log, ashift=ashift, fs_properties=fs_properties,
                   devices={path: DeviceIdentity.of(rec) for path, rec in devices.items()}, absent=frozenset({"zfs_api"}))

    @classmethod
    def from_dict(cls, d: Any, check: S.Checker, where: str = "pool") -> "PoolRecord":
        d = check.table(d, where)
        paths = {}
        for key in ("data", "log"):
            paths[key] = check.items(d, key, where)
            for i, dev in enumerate(paths[key]):
                if not isinstance(dev, str):
                    raise check.fail(f"{where}.{key}[{i}]", "must be a device path (a string)")
        devices = check.obj(d, "devices", where, required=False) or {}
        _check_topologies(check, devices)
        devices = {dev: DeviceIdentity.from_dict(rec, check, f"{where}.devices[{dev}]") for dev, rec in devices.items()}
        return cls(layout=check.text(d, "layout", where), data=list(paths["data"]), log=list(paths["log"]),
                   ashift=check.integer(d, "ashift", where, required=False, minimum=9),
                   fs_properties=check.obj(d, "fs_properties", where, required=False) or {}, devices=devices,
                   zfs_api=check.text(d, "zfs_api", where, required=False),
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED},
                   absent=frozenset(k for k in cls._OPTIONAL if k not in d), _order=tuple(d))

    def to_dict(self) -> Dict[str, Any]:
        d = {"layout": self.layout, "data": self.data, "log": self.log, "ashift": self.ashift,
             "fs_properties": self.fs_properties, "devices": {k: v.to_dict() for k, v in self.devices.items()},
             "zfs_api": self.zfs_api}
        return _written(d, self.absent, self.extra, self._order)


@dataclass
class ScenarioEnvironment:
    """``environment``: the host and the programs the run measured with (slogqual.environment.collect,
    and the OpenZFS versions pool.door adds). Every key optional: a key a document lacked stays absent."""

    host: Optional[str] = None
    os: Optional[str] = None
    system: Optional[str] = None  # platform.uname().system: Linux, FreeBSD
    kernel: Optional[str] = None  # release and version
    machine: Optional[str] = None
    cpu: Optional[str] = None  # the model, where the host says it
    cpus: Optional[int] = None
    fio_version: Optional[str] = None  # 'fio-3.33'
    slogqual_version: Optional[str] = None
    python: Optional[str] = None
    started: Optional[str] = None  # ISO 8601, UTC
    argv: Optional[List[str]] = None  # the process's own command line
    openzfs: Optional[Dict[str, Any]] = None  # {"userland", "module"[, "error"]}: tools.zfs.openzfs_versions
    extra: Dict[str, Any] = field(default_factory=dict)  # keys no version of the runner wrote, kept in order
    absent: frozenset = frozenset()  # keys the document did not have (kept absent by to_dict)

    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    _MODELLED = ("host", "os", "system", "kernel", "machine", "cpu", "cpus", "fio_version", "slogqual_version",
                 "python", "started", "argv", "openzfs")  # in the order collect() and pool.door write them
    _TEXT = tuple(k for k in _MODELLED if k not in ("cpus", "argv", "openzfs"))

    @classmethod
    def from_dict(cls, d: Any, check: S.Checker, where: str = "environment") -> "ScenarioEnvironment":
        d = check.table(d, where)
        text = {k: check.text(d, k, where, required=False) for k in cls._TEXT}
        argv = check.texts(d, "argv", where) if d.get("argv") is not None else None
        return cls(**text, cpus=check.integer(d, "cpus", where, required=False, minimum=1), argv=argv,
                   openzfs=check.obj(d, "openzfs", where, required=False),
                   extra={k: v for k, v in d.items() if k not in cls._MODELLED},
                   absent=frozenset(k for k in cls._MODELLED if k not in d), _order=tuple(d))

    @property
    def openzfs_module(self) -> Optional[str]:
        """The loaded OpenZFS module's version (None: unreadable, or recorded before versions were)."""
        return (self.openzfs or {}).get("module")

    @classmethod
    def collected(cls, d: Dict[str, Any]) -> "ScenarioEnvironment":
        """What slogqual.environment.collect gave, checked as a loaded one is."""
        return cls.from_dict(d, S.Checker("<collected environment>"))

    def to_dict(self) -> Dict[str, Any]:
        d = {k: getattr(self, k) for k in self._MODELLED}
        return _written(d, self.absent, self.extra, self._order)


@dataclass
class ScenarioResult:
    status: str
    scenario: ScenarioParams  # the parameters it ran with (pool.scenario.Scenario.to_dict)
    quick: bool
    pool: PoolRecord
    environment: ScenarioEnvironment
    steps: List[ScenarioStep]
    error: Optional[str] = None
    analysis: Optional[Dict[str, Any]] = None  # as stored by the run; see analysis.scenario.current
    warnings: List[str] = field(default_factory=list)
    log_sweeps: Dict[str, Any] = field(default_factory=dict)
    origin: Optional[str] = None  # which command asked for the run (None: before the field existed)
    drivers: Optional[Drivers] = None  # the fio clients and servers (None: before the field existed)
    transport: Optional[TransportRecord] = None  # None: a document from before transports existed
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = S.SCENARIO
    absent: frozenset = frozenset()  # optional keys the document did not have (kept absent by to_dict)

    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    _MODELLED = ("schema", "status", "scenario", "quick", "pool", "environment", "steps", "error", "analysis",
                 "warnings", "log_sweeps", "origin", "drivers", "transport")
    _OPTIONAL = ("error", "analysis", "warnings", "log_sweeps", "origin", "drivers", "transport")
    # the order a new document's keys are written in (the runner's, since the first version)
    _NEW_ORDER = ("schema", "status", "error", "scenario", "quick", "pool", "environment", "log_sweeps", "steps",
                  "skipped", "analysis", "warnings", "origin", "sweep_logs", "drivers", "transport")

    @classmethod
    def new(cls, scenario: Dict[str, Any], quick: bool, pool: PoolRecord,
            environment: ScenarioEnvironment) -> "ScenarioResult":
        """A result about to be measured: status running, no steps yet."""
        return cls(status=STATUS_RUNNING, scenario=ScenarioParams.made(scenario, "scenario"), quick=quick, pool=pool,
                   environment=environment, steps=[], extra={"skipped": []}, absent=frozenset({"drivers", "transport"}),
                   _order=cls._NEW_ORDER)

    # --- what readers ask of it ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def bs(self) -> int:
        """The load's IO size in bytes."""
        return int(self.scenario.bs)

    @property
    def source(self) -> str:
        """The scenario it ran: a shipped name or the TOML file (what --resume loads again)."""
        return self.scenario.source

    @property
    def luns(self) -> int:
        return int(self.scenario.luns)

    @property
    def write_sync(self) -> str:
        """How the load's own writes ask for stability: none, dsync or fsync."""
        return self.scenario.write_sync or "none"

    @property
    def complete(self) -> bool:
        return self.status == STATUS_COMPLETE

    @property
    def log_paths(self) -> List[str]:
        """The --log candidates, in the order given."""
        return list(self.pool.log)

    @property
    def layout(self) -> str:
        """The data vdevs' layout: stripe, mirror, raidz1, raidz2."""
        return self.pool.layout

    @property
    def data_paths(self) -> List[str]:
        return list(self.pool.data)

    @property
    def first_log(self) -> DeviceIdentity:
        """The identity record of the first --log candidate: the device a scenario run is filed under."""
        logs = self.log_paths
        return self.device(logs[0]) if logs else DeviceIdentity()

    def device(self, path: Optional[str]) -> DeviceIdentity:
        """The identity record of one of the run's devices (every field None where none was recorded)."""
        rec = self.pool.devices.get(path) if path else None
        return rec if rec is not None else DeviceIdentity()

    def topology(self, path: Optional[str]) -> Optional[UnitPath]:
        """The device's path from the host as the runner recorded it (device.topology; its ``error`` says
        why sysfs gave none); None for a result recorded before paths were kept."""
        rec = self.device(path).topology
        return UnitPath.from_dict(rec) if isinstance(rec, dict) else None

    def log_sweep(self, path: Optional[str]) -> Optional[LogSweep]:
        """A log candidate's own sweep, summarised (``log_sweeps[path]``); None where the run has none."""
        entry = self.log_sweeps.get(path) if path else None
        return LogSweep.from_dict(entry, S.Checker("<log sweep>"), f"log_sweeps[{path}]") if entry else None

    @property
    def stored_analysis(self) -> Optional[AnalysisRecord]:
        """The analysis the run stored (what it printed then); readers show today's (report.scenario.current)."""
        return AnalysisRecord.of(self.analysis)

    # keys the runner writes and few readers need: kept in ``extra`` (so an older document without them
    # round-trips unchanged), reached by name here
    @property
    def skipped(self) -> List[SkippedConfig]:
        """Pair configurations a run with fewer than two log candidates could not build."""
        check = S.Checker("<skipped>")
        return [SkippedConfig.from_dict(x, check, f"skipped[{i}]") for i, x in enumerate(self.extra.get("skipped") or [])]

    @skipped.setter
    def skipped(self, value: List[SkippedConfig]) -> None:
        self.extra["skipped"] = [x.to_dict() for x in value]

    @property
    def sweep_logs(self) -> bool:
        """--sweep-logs: the log candidates' own sweeps are measured before the first pool."""
        return bool(self.extra.get("sweep_logs"))

    @sweep_logs.setter
    def sweep_logs(self, value: bool) -> None:
        self.extra["sweep_logs"] = bool(value)

    def attach(self, label: str, config: Dict[str, Any], record: Dict[str, Any]) -> None:
        """What the transport attached for one configuration (``transport.attachments[label]``); the first
        attachment records the transport's ``config`` too. Both as the transport's modules made them, checked
        as a loaded document's are."""
        if self.transport is None:
            self.transport = TransportRecord(config=TransportSettings.made(config, "transport.config"))
        self.transport.attachments[label] = Attachment.made(record, f"transport.attachments[{label}]")

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "ScenarioResult":
        doc = S.upgrade(doc, S.SCENARIO, source)
        c = S.Checker(source)
        sc = ScenarioParams.from_dict(c.obj(doc, "scenario"), c, "scenario")
        pool = PoolRecord.from_dict(c.obj(doc, "pool"), c)
        environment = ScenarioEnvironment.from_dict(c.obj(doc, "environment"), c)
        steps = [ScenarioStep.from_dict(s, f"steps[{i}]", c) for i, s in enumerate(c.items(doc, "steps"))]
        analysis = c.obj(doc, "analysis", required=False)
        warnings = c.items(doc, "warnings", required=False)
        drivers = Drivers.optional(doc, "drivers", c)
        transport = TransportRecord.optional(doc, "transport", c)
        return cls(status=c.text(doc, "status", choices=STATUSES), scenario=sc, quick=c.get(doc, "quick", "", (bool,)),
                   pool=pool, environment=environment, steps=steps,
                   error=c.text(doc, "error", required=False), analysis=analysis, warnings=list(warnings),
                   log_sweeps=c.obj(doc, "log_sweeps", required=False) or {},
                   origin=c.text(doc, "origin", required=False), drivers=drivers, transport=transport,
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"],
                   absent=frozenset(k for k in cls._OPTIONAL if k not in doc), _order=tuple(doc))

    @classmethod
    def load(cls, path: str) -> "ScenarioResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"schema": self.schema, "status": self.status, "error": self.error,
                             "scenario": self.scenario.to_dict(), "quick": self.quick, "pool": self.pool.to_dict(),
                             "environment": self.environment.to_dict(), "log_sweeps": self.log_sweeps,
                             "steps": [s.to_dict() for s in self.steps], "analysis": self.analysis,
                             "warnings": self.warnings, "origin": self.origin,
                             "drivers": self.drivers.to_dict() if self.drivers is not None else None,
                             "transport": self.transport.to_dict() if self.transport is not None else None}
        return _written(d, self.absent, self.extra, self._order)
