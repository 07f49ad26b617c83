"""The ``slogqual.advice/1`` document (docs/advisor.md), typed.

What ``slogqual advise`` predicts for each log candidate (slogqual.analysis.advisor, worded by
slogqual.report.advice.document): the workload and OpenZFS tunables it assumed, the data side, per thread
count the three limits, the binding one and the figure with its spread, the findings, the log space, the
mirror call and the life. ``AdviceResult.load`` validates a file and names the first bad key; ``to_dict``
gives back the document, keys it does not model included and in the order the file had them, a key the
file lacked still absent, so a round trip changes nothing (byte for byte, as results.write_json_atomic
writes it).

A candidate and its steps are typed records (``CandidateAdvice``, ``StepPrediction`` and the parts they
hold); each declares its keys in the order the advisor writes them, with the check a loaded value passes.
The findings stay as the document has them (a kind, its thread counts and figures): report/advice words
them by kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

from slogqual.results import load_json
from slogqual.results import schema as S
from slogqual.results.scenario import _ordered, _written

PROTOCOLS = ("iscsi", "nfs")
BINDINGS = ("log-latency-bound", "log-bandwidth-bound", "pool-bound", "indirect-bypass", "host-bound",
            "log-pass-bound", "probe-pool-bound")
KINDS = BINDINGS + ("no-benefit", "log-too-small", "short-life", "extrapolated", "power-loss-unsafe",
                    "unmirrored-exposure", "no-power-loss-evidence", "host-cpu-saturated",
                    "log-stalled")
UPPER_BOUNDS = ("host-cpu", "log-only", "data-sweeps", "host-ceiling", "log-concurrency")


def key(name: str, check: Any, required: bool = False) -> Any:
    """A document key of a record: its name in the document, the check its value passes when present
    ("number", "integer", "text", "flag", "object", "list", a record class or [a record class]), and
    whether it must be there."""
    return field(default=None, metadata={"key": name, "check": check, "required": required})


@dataclass
class Part:
    """A typed part of the document. Its keys (``key`` fields) in the advisor's order; what the file had
    that no key models (``extra``), the optional keys it lacked (``absent``) and its order (``_order``) are
    kept for ``to_dict``."""

    extra: Dict[str, Any] = field(default_factory=dict)
    absent: frozenset = frozenset()
    _order: tuple = ()

    @classmethod
    def keys(cls) -> List[Any]:
        return [f for f in fields(cls) if "key" in f.metadata]

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "Part":
        d = c.table(d, where)
        values = {f.name: _read(c, d, f.metadata, where) for f in cls.keys()}
        names = {f.metadata["key"] for f in cls.keys()}
        return cls(**values, extra={k: v for k, v in d.items() if k not in names},
                   absent=frozenset(f.metadata["key"] for f in cls.keys() if f.metadata["key"] not in d),
                   _order=tuple(d))

    def to_dict(self) -> Dict[str, Any]:
        d = {f.metadata["key"]: _written_value(getattr(self, f.name)) for f in self.keys()}
        return _written(d, self.absent, self.extra, self._order)


def _read(c: S.Checker, d: Dict[str, Any], meta: Dict[str, Any], where: str) -> Any:
    name, check, required = meta["key"], meta["check"], meta["required"]
    if isinstance(check, list):  # a list of records
        return [check[0].from_dict(x, f"{where}.{name}[{i}]", c) for i, x in enumerate(c.items(d, name, where, required))]
    if isinstance(check, type):
        v = c.obj(d, name, where, required)
        return None if v is None else check.from_dict(v, f"{where}.{name}", c)
    if check == "number":
        return c.number(d, name, where, required)
    if check == "integer":
        return c.integer(d, name, where, required)
    if check == "text":
        return c.text(d, name, where, required)
    if check == "flag":
        return c.get(d, name, where, (bool,), required)
    if check == "object":
        return c.obj(d, name, where, required)
    if check == "list":
        return c.get(d, name, where, (list,), required)
    return d.get(name)


def _written_value(v: Any) -> Any:
    if isinstance(v, Part):
        return v.to_dict()
    if isinstance(v, list):
        return [x.to_dict() if isinstance(x, Part) else x for x in v]
    return v


# --- a step: one thread count's prediction ---------------------------------------------------------------

@dataclass
class StepLimits(Part):
    """The limits a step's figure is the least of, IOPS each, and where the data side's comes from."""

    log_latency_iops: Optional[float] = key("log_latency_iops", "number")
    log_bandwidth_iops: Optional[float] = key("log_bandwidth_iops", "number")
    pool_iops: Optional[float] = key("pool_iops", "number")
    pool_basis: Optional[str] = key("pool_basis", "text")
    pool_ios: Optional[int] = key("pool_ios", "integer")
    host_iops: Optional[float] = key("host_iops", "number")  # the host probe's ceiling (advise --host)
    # the probe's log pass's ceiling with this log (host-probe --log), where it ran with it: in host_iops already
    host_log_pass_iops: Optional[float] = key("host_log_pass_iops", "number")
    # what that pass measured with this log at these writers (model 5): the median of its passes' IOPS, each pass's,
    # their IOs and the CPU's median busy share; a figure where the CPU had room (the log set its pace)
    log_pass_measured_iops: Optional[float] = key("log_pass_measured_iops", "number")
    log_pass_each_iops: Optional[List[float]] = key("log_pass_each_iops", "list")
    log_pass_ios: Optional[int] = key("log_pass_ios", "integer")
    log_pass_busy: Optional[float] = key("log_pass_busy", "number")
    # one writer alone (model 7): the measured rate is a figure whatever the CPU (its own path set its pace)
    log_pass_alone: Optional[bool] = key("log_pass_alone", "flag")
    # what the probe's own pool measured at these writers where it is this pool (model 6: a pmem log, the probe on
    # these data disks in this layout): the median of its passes' IOPS, each pass's, their IOs, the CPU's busy share
    probe_pool_measured_iops: Optional[float] = key("probe_pool_measured_iops", "number")
    probe_pool_each_iops: Optional[List[float]] = key("probe_pool_each_iops", "list")
    probe_pool_ios: Optional[int] = key("probe_pool_ios", "integer")
    probe_pool_busy: Optional[float] = key("probe_pool_busy", "number")


@dataclass
class HostCpu(Part):
    """The host's CPU at sync=standard where it saturated: the busy share, µs of CPU per IO."""

    busy: Optional[float] = key("busy", "number")
    us_per_io: Optional[float] = key("us_per_io", "number")


@dataclass
class StepPrediction(Part):
    """One thread count: the commit the model prices, the limits, the figure and what binds it."""

    threads: int = key("threads", "integer", required=True)
    batch: Optional[float] = key("batch", "number")
    # host-probe (measured) | assumed | one-writer | parallel | all-the-writers | commit-timeout[-full] (model 2)
    batch_basis: Optional[str] = key("batch_basis", "text")
    path_us: Optional[float] = key("path_us", "number")  # the software path the host probe measured
    lwb_writes: Optional[List[int]] = key("lwb_writes", "list")
    log_bytes_per_io: Optional[float] = key("log_bytes_per_io", "number")
    commit_lat_us: float = key("commit_lat_us", "number", required=True)
    commit_lat_ci95_us: Optional[List[float]] = key("commit_lat_ci95_us", "list")
    sweep_ios: Optional[int] = key("sweep_ios", "integer")
    limits: StepLimits = key("limits", StepLimits, required=True)
    iops: float = key("iops", "number", required=True)
    iops_range: Optional[List[float]] = key("iops_range", "list")
    iops_if_p99_bound: Optional[float] = key("iops_if_p99_bound", "number")
    mbps: float = key("mbps", "number", required=True)
    binding: str = key("binding", "text", required=True)
    without_slog_iops: Optional[float] = key("without_slog_iops", "number")
    without_slog_basis: Optional[str] = key("without_slog_basis", "text")
    benefit: Optional[float] = key("benefit", "number")
    host_cpu: Optional[HostCpu] = key("host_cpu", HostCpu)
    upper_bound: Optional[str] = key("upper_bound", "text")
    extrapolated: Optional[List[int]] = key("extrapolated", "list")  # lwb sizes outside the sweep: no bound

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "StepPrediction":
        d = c.table(d, where)
        c.integer(d, "threads", where, minimum=1)
        c.number(d, "iops", where, minimum=0)
        c.number(d, "mbps", where, minimum=0)
        c.number(d, "commit_lat_us", where, minimum=0)
        c.text(d, "binding", where, choices=BINDINGS)
        c.text(d, "upper_bound", where, required=False, choices=UPPER_BOUNDS)
        return super().from_dict(d, where, c)


# --- a candidate ---------------------------------------------------------------------------------------------

@dataclass
class Bandwidth(Part):
    """The log device's best MiB/s at 128 KiB and up, the size and the IOs behind it."""

    mbps: Optional[float] = key("mbps", "number")
    size: Optional[int] = key("size", "integer")
    ios: Optional[int] = key("ios", "integer")


@dataclass
class HostLogPass(Part):
    """The host probe's log pass (host-probe --log): the device it ran with, and whether this candidate's
    figures took its ceiling (not where it ran with another device: ``other_device``, how they differ)."""

    device: Optional[str] = key("device", "text")
    identity: Optional[Dict[str, Any]] = key("identity", "object")
    used: Optional[bool] = key("used", "flag")
    # {"by": "serial" | "path", "pass": the pass's, "sweep": the sweep's} where they differ
    other_device: Optional[Dict[str, Any]] = key("other_device", "object")


@dataclass
class Knee(Part):
    threads: Optional[int] = key("threads", "integer")
    iops: Optional[float] = key("iops", "number")
    saturated: Optional[bool] = key("saturated", "flag")


@dataclass
class Peak(Part):
    threads: Optional[int] = key("threads", "integer")
    iops: Optional[float] = key("iops", "number")
    mbps: Optional[float] = key("mbps", "number")


@dataclass
class LogSize(Part):
    """The log space the load needs by the txg arithmetic, and the rate it rests on."""

    rate_basis: Optional[str] = key("rate_basis", "text")
    data_rate_bytes_s: Optional[float] = key("data_rate_bytes_s", "number")
    log_bytes_per_data_byte: Optional[float] = key("log_bytes_per_data_byte", "number")
    log_rate_bytes_s: Optional[float] = key("log_rate_bytes_s", "number")
    txg_seconds: Optional[float] = key("txg_seconds", "number")
    per_txg_bytes: Optional[int] = key("per_txg_bytes", "integer")
    per_txg_capped_by_dirty_data_max: Optional[bool] = key("per_txg_capped_by_dirty_data_max", "flag")
    txgs_held: Optional[int] = key("txgs_held", "integer")
    txgs_with_margin: Optional[int] = key("txgs_with_margin", "integer")
    needed_bytes: Optional[int] = key("needed_bytes", "integer")
    recommended_bytes: Optional[int] = key("recommended_bytes", "integer")
    capacity: Optional[int] = key("capacity", "integer")
    life_rate_bytes_s: Optional[float] = key("life_rate_bytes_s", "number")  # a rate history's mean
    life_rate_basis: Optional[str] = key("life_rate_basis", "text")


@dataclass
class Life(Part):
    """Years until the endurance is written at the log's rate, and what that rests on."""

    rated_bytes: Optional[int] = key("rated_bytes", "integer")
    endurance_basis: Optional[str] = key("endurance_basis", "text")
    bytes_per_day: Optional[int] = key("bytes_per_day", "integer")
    rate_basis: Optional[str] = key("rate_basis", "text")
    hours_per_day: Optional[float] = key("hours_per_day", "number")
    years: Optional[float] = key("years", "number")
    warranty_years: Optional[float] = key("warranty_years", "number")
    assumption: Optional[str] = key("assumption", "text")
    wear: Optional[Dict[str, Any]] = key("wear", "object")  # analysis.wear.evidence of its sweep
    measured_years: Optional[Dict[str, Any]] = key("measured_years", "object")  # analysis.wear.measured_life


@dataclass
class MirrorAdvice(Part):
    """Mirror the log or not: the power-loss evidence it rests on and an unmirrored log's exposure."""

    power_loss: Optional[Dict[str, Any]] = key("power_loss", "object")
    window_s: Optional[float] = key("window_s", "number")
    exposure_bytes: Optional[int] = key("exposure_bytes", "integer")
    rate_basis: Optional[str] = key("rate_basis", "text")
    mirror: Optional[str] = key("mirror", "text")


@dataclass
class CandidateAdvice(Part):
    """One log candidate: its device, what reaches its log, a step per thread count, the findings, the log
    space, the life and the mirror call."""

    path: Optional[str] = key("path", "text")
    sweep: Optional[str] = key("sweep", "text")
    model: Optional[str] = key("model", "text")
    device_class: Optional[str] = key("class", "text")
    capacity: Optional[int] = key("capacity", "integer")
    sweep_sizes: Optional[List[int]] = key("sweep_sizes", "list")
    bandwidth: Optional[Bandwidth] = key("bandwidth", Bandwidth)
    host_log_pass: Optional[HostLogPass] = key("host_log_pass", HostLogPass)
    log_write_state: Optional[str] = key("log_write_state", "text")
    log_record_bytes_per_io: Optional[int] = key("log_record_bytes_per_io", "integer")
    steps: List[StepPrediction] = key("steps", [StepPrediction], required=True)
    knee: Optional[Knee] = key("knee", Knee)
    peak: Optional[Peak] = key("peak", Peak)
    findings: List[Dict[str, Any]] = key("findings", "list", required=True)
    size: LogSize = key("size", LogSize, required=True)
    life: Optional[Life] = key("life", Life)
    mirror: Optional[MirrorAdvice] = key("mirror", MirrorAdvice)

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "CandidateAdvice":
        d = c.table(d, where)
        for i, f in enumerate(c.items(d, "findings", where)):
            at = f"{where}.findings[{i}]"
            c.table(f, at)
            c.text(f, "kind", at, choices=KINDS)
            c.items(f, "figures", at)
        return super().from_dict(d, where, c)


@dataclass
class SpecialSetting(Part):
    """One thread count's figure for the ZIL on a special vdev under one OpenZFS setting (analysis.advisor_special)."""

    threads: int = key("threads", "integer", required=True)
    iops: Optional[float] = key("iops", "number")
    binding: Optional[str] = key("binding", "text")
    upper_bound: Optional[str] = key("upper_bound", "text")
    extrapolated: Optional[List[int]] = key("extrapolated", "list")  # lwb sizes the sweep never wrote


@dataclass
class SpecialAdvice(Part):
    """Special vdev or SLOG? The special device, its figures under each OpenZFS setting, each log candidate beside."""

    sweep: Optional[str] = key("sweep", "text", required=True)
    path: Optional[str] = key("path", "text")
    model: Optional[str] = key("model", "text")
    device_class: Optional[str] = key("class", "text")
    indirect_without_slog: Optional[bool] = key("indirect_without_slog", "flag")
    settings: Dict[str, Any] = key("settings", "object", required=True)
    versus: List[Dict[str, Any]] = key("versus", "list", required=True)
    lab_ratio: Optional[List[float]] = key("lab_ratio", "list")
    applies: Optional[str] = key("applies", "text")  # the setting the pool's OpenZFS runs; None: version unknown

    @classmethod
    def from_dict(cls, d: Any, where: str, c: S.Checker) -> "SpecialAdvice":
        out = super().from_dict(d, where, c)
        settings = {}
        for name in out.settings:
            if name not in SPECIAL_SETTINGS:
                raise c.fail(f"{where}.settings", f"unknown setting {name!r}; known: {', '.join(SPECIAL_SETTINGS)}")
            settings[name] = [SpecialSetting.from_dict(x, f"{where}.settings.{name}[{i}]", c)
                              for i, x in enumerate(c.items(out.settings, name, f"{where}.settings"))]
        out.settings = settings  # typed; the document's own dict is left as it was read
        return out

    def to_dict(self) -> Dict[str, Any]:
        d = super().to_dict()
        d["settings"] = {k: [x.to_dict() for x in v] for k, v in self.settings.items()}
        return d


SPECIAL_SETTINGS = ("2.4-special-is-slog", "2.4-special-not-slog", "before-2.4")


@dataclass
class AdviceResult:
    workload: Dict[str, Any]
    tunables: Dict[str, Any]
    data: Dict[str, Any]
    candidates: List[CandidateAdvice]
    assumptions: List[str]
    warnings: List[str]
    origin: Optional[str] = None
    special: Optional[SpecialAdvice] = None  # advise --special: the ZIL on the pool's special vdev
    extra: Dict[str, Any] = field(default_factory=dict)
    schema: str = S.ADVICE
    _order: tuple = ()  # the keys in the order the document had them (to_dict keeps it)

    _MODELLED = ("schema", "workload", "tunables", "data", "candidates", "assumptions", "warnings", "origin",
                 "special")

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<document>") -> "AdviceResult":
        doc = S.upgrade(doc, S.ADVICE, source)
        c = S.Checker(source)
        w = c.obj(doc, "workload")
        c.text(w, "protocol", "workload", choices=PROTOCOLS)
        c.integer(w, "io_size", "workload", minimum=1)
        c.integer(w, "block_size", "workload", minimum=1)
        c.number(w, "rate_mbps", "workload", required=False, minimum=0)
        t = c.obj(doc, "tunables")
        for k in ("zfs_immediate_write_sz", "zil_slog_bulk", "zil_maxblocksize", "zil_maxcopied"):
            c.integer(t, k, "tunables", minimum=0)
        c.number(t, "zfs_txg_timeout", "tunables", minimum=0)
        c.integer(t, "zfs_commit_timeout_pct", "tunables", required=False, minimum=0)  # model 2's; older lack it
        c.text(t, "logbias", "tunables", choices=("latency", "throughput"))
        cands = [CandidateAdvice.from_dict(x, f"candidates[{i}]", c) for i, x in enumerate(c.items(doc, "candidates"))]
        return cls(workload=w, tunables=t, data=c.obj(doc, "data"), candidates=cands,
                   assumptions=c.texts(doc, "assumptions", required=True), warnings=c.texts(doc, "warnings"),
                   origin=c.text(doc, "origin", required=False),
                   special=SpecialAdvice.from_dict(doc["special"], "special", c) if doc.get("special") is not None
                   else None,
                   extra={k: v for k, v in doc.items() if k not in cls._MODELLED}, schema=doc["schema"],
                   _order=tuple(doc))

    @classmethod
    def load(cls, path: str) -> "AdviceResult":
        return cls.from_dict(load_json(path), path)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"schema": self.schema}
        if "model_version" in self.extra:
            out["model_version"] = self.extra["model_version"]
        out.update({"workload": self.workload, "tunables": self.tunables})
        if "endurance" in self.extra:
            out["endurance"] = self.extra["endurance"]
        out.update({"data": self.data, "assumptions": self.assumptions,
                    "candidates": [x.to_dict() for x in self.candidates], "warnings": self.warnings,
                    "origin": self.origin})
        if self.special is not None:
            out["special"] = self.special.to_dict()
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return _ordered(out, self._order)
