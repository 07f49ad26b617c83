"""A scenario run as a library call: ``run_scenario(request)`` -> ``ScenarioOutcome``.

Everything a pool scenario run does between "these are the devices" and "here is the result
document" lives here, below the CLI: the bad-input checks (before anything is written), the safety
interlocks on every device, identification, the document, the pool name, the per-step save and
resume (``pool.engine``), the log candidates' sweeps and the result store. ``slogqual scenario run``
and ``slogqual qualify`` both call it; neither builds an argument list for the other.

Errors are the project's typed errors (slogqual.errors). An interrupt (Ctrl-C, SIGTERM turned into
KeyboardInterrupt by the caller) propagates after the document was saved as ``interrupted``; a
measurement failure propagates after it was saved as ``failed``. Either way ``request.output``
holds every finished step and ``run_scenario(dataclasses.replace(request, resume=True))`` continues.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from slogqual.analysis import path_ceiling
from slogqual.errors import SlogqualError, ToolError, UsageError
from slogqual.outputs import check_output, json_document
from slogqual.pool import log_sweeps, variants
from slogqual.pool.builder import LAYOUTS, POOL_PREFIX, ZFS_APIS, data_vdevs, safe_name
from slogqual.pool.engine import SCENARIO_SCHEMA, PoolScenarioRun, check_loads, new_result
from slogqual.pool.scenario import Scenario, check_special_version, load_scenario, with_overrides
from slogqual.progress import Progress
from slogqual.results.scenario import Drivers, ScenarioResult
from slogqual.results.shelf import UnitPath
from slogqual.kernel import sysfs
from slogqual.tools import fio, fio_client
from slogqual.tools import zfs as _zfs

# Inside the lab guest, 'lab:N' names the N-th emulated device; the guest's job sets this variable.
LAB_DEVICE_ENV = "SLOGQUAL_LAB_DEVICES"
SCENARIO_SCHEMA_PREFIX = SCENARIO_SCHEMA.rsplit("/", 1)[0] + "/"  # any version: what a new result may replace


@dataclass
class ScenarioRequest:
    """What to run. ``scenario`` is a shipped name or a TOML file (ignored when resuming: the
    interrupted document names its own). ``origin`` says which command asked for the run; it is
    recorded in the document beside the process's own argv."""

    scenario: str = ""
    data: List[str] = field(default_factory=list)
    logs: List[str] = field(default_factory=list)
    output: str = ""
    layout: str = "stripe"
    quick: bool = False
    zfs_api: str = "auto"
    log_sweep_files: List[str] = field(default_factory=list)  # earlier `slogqual sweep` results of the logs
    measure_log_sweeps: bool = False  # --sweep-logs: measure the log candidates' own sweeps first (log_sweeps)
    destroy_data: bool = False
    resume: bool = False  # output is an unfinished result: measure the steps it lacks
    force: bool = False  # the output may replace a file that is not an earlier scenario result
    origin: str = "slogqual scenario run"
    argv: Optional[List[str]] = None  # the command line of the process, for the document's environment
    record_in_store: bool = True
    clients: List[str] = field(default_factory=list)  # fio --server endpoints 'HOST[:PORT]' that drive each step
    fio_servers: int = 0  # start this many fio servers on 127.0.0.1 for the run and drive each step with them
    path_ceilings: List[str] = field(default_factory=list)  # --path-ceiling ELEMENT=RATE (analysis.path_ceiling)
    #: the load's shape over the scenario file's (and --quick's): keys of pool.scenario.OVERRIDES (bs, threads,
    #: luns, runtime, ramp); the result records them among the scenario's parameters
    overrides: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ScenarioOutcome:
    document: ScenarioResult
    path: str
    already_complete: bool = False  # a resume of a complete result: nothing was measured
    store_error: Optional[str] = None  # the result store refused the record (the result file stands)
    job_status: Optional[int] = None  # a run in the lab guest: the guest job's exit status

    @property
    def status(self) -> str:
        return self.document.status


def lab_device_paths(specs: List[str]) -> List[str]:
    """'lab:N' -> the N-th device path the lab guest lists in $SLOGQUAL_LAB_DEVICES; others unchanged."""
    env = os.environ.get(LAB_DEVICE_ENV, "").split()
    out = []
    for spec in specs:
        if spec.startswith("lab:"):
            try:
                i = int(spec[4:])
            except ValueError:
                raise UsageError(f"{spec}: 'lab:' takes a device number") from None
            if not 0 <= i < len(env):
                raise UsageError(f"{spec}: the lab guest has {len(env)} device(s)")
            out.append(env[i])
        else:
            out.append(spec)
    return out


@dataclass
class _Plan:
    scenario: Scenario
    data: List[str]
    logs: List[str]
    document: Optional[ScenarioResult]  # the resumed result; None for a new run
    clients: List[str] = field(default_factory=list)  # what drives each step: fio server endpoints ...
    fio_servers: int = 0  # ... and fio servers of our own on loopback
    paths: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # device -> its recorded path (a new run)
    identities: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # device -> its record (a new run)


def _plan(req: ScenarioRequest) -> _Plan:
    plan = _plan_devices(req)
    check_loads(plan.scenario)  # a dataset load that would run O_DIRECT (around the ZIL): refused now
    if any(c.uses_special for c in plan.scenario.configs):  # the ZIL on the special vdev: OpenZFS 2.4 on
        check_special_version(plan.scenario, _openzfs())
    plan.clients, plan.fio_servers = _drivers(req, plan.document)
    drivers = len(plan.clients) + plan.fio_servers
    if drivers > plan.scenario.luns:
        raise UsageError(f"{drivers} fio clients for {plan.scenario.luns} LUN(s): at most one client per LUN")
    return plan


def _drivers(req: ScenarioRequest, resumed: Optional[ScenarioResult]) -> Tuple[List[str], int]:
    """A resumed run is driven as it began (its document's ``drivers``): the remaining steps then compare
    with the finished ones. Naming other clients on --resume is refused, naming none takes the recorded."""
    if resumed is None:
        return list(req.clients), req.fio_servers
    stored = resumed.drivers  # None: a run from before drivers were recorded (checked when it was loaded)
    recorded = (list(stored.clients), stored.fio_servers or 0) if stored is not None else ([], 0)
    given = (list(req.clients), req.fio_servers)
    if given != ([], 0) and given != recorded:
        began = ", ".join(recorded[0] + ([f"{recorded[1]} fio server(s) on loopback"] if recorded[1] else []))
        raise UsageError(f"--resume: this run began driven by {began or 'no fio clients'}; resume it the same way "
                         f"(or name no --clients/--fio-servers)")
    return recorded


def _plan_devices(req: ScenarioRequest) -> _Plan:
    """Every check that needs no device access, in the order a user would fix them."""
    if not req.output:
        raise UsageError("a scenario run needs a result file")
    if req.layout not in LAYOUTS:
        raise UsageError(f"layout {req.layout!r}: one of {', '.join(LAYOUTS)}")
    if req.zfs_api not in ZFS_APIS:
        raise UsageError(f"ZFS API {req.zfs_api!r}: one of {', '.join(ZFS_APIS)}")
    if req.fio_servers < 0 or req.fio_servers > 16:
        raise UsageError(f"--fio-servers {req.fio_servers}: 0 to 16")
    labels = [fio_client.parse_endpoint(c).label for c in req.clients]  # a bad endpoint: one line, now
    if len(set(labels)) != len(labels):
        raise UsageError("--clients names a fio server twice")
    ceilings = path_ceiling.parse_all(req.path_ceilings, _unit_device)
    given = {k: v for k, v in req.overrides.items() if v is not None}
    if req.resume:
        if ceilings:
            raise UsageError(f"--resume keeps the paths the run recorded: no {path_ceiling.OPTION}")
        if given:
            raise UsageError(f"--resume runs the load the result recorded: no --{', --'.join(given)}")
        resumed = ScenarioResult.load(req.output)  # validated: a bad key is named
        scenario = load_scenario(resumed.source)
        if resumed.quick:
            scenario = scenario.quick()
        recorded = resumed.scenario.overrides or {}
        if not isinstance(recorded, dict):
            raise UsageError(f"--resume: {req.output}: key 'scenario.overrides' must be a table of options")
        scenario = with_overrides(scenario, recorded)  # the command line's load, as the run began
        return _Plan(scenario, resumed.data_paths, resumed.log_paths, resumed)
    if not req.scenario:
        raise UsageError("name a scenario (slogqual scenario list) or a TOML file")
    scenario = load_scenario(req.scenario)
    if req.quick:
        scenario = scenario.quick()
    scenario = with_overrides(scenario, given)
    data, logs = lab_device_paths(req.data), lab_device_paths(req.logs)
    if not data:
        raise UsageError("name the data devices with --data (or use --lab)")
    data_vdevs(req.layout, data)  # a layout the data devices cannot make: refused before anything is written
    if any(c.needs_candidate for c in scenario.configs) and not logs:
        raise UsageError("this scenario has SLOG (or special-vdev) configurations: name the candidate(s) with --log")
    variants.check_log_count(scenario, len(logs))
    if len(set(data + logs)) != len(data + logs):
        raise UsageError("a device is named twice")
    check_result_path(req.output, data + logs, req.force)
    identities = _identities(data + logs)
    return _Plan(scenario, data, logs, None, paths=_paths(data + logs, ceilings, identities), identities=identities)


def _unit_device(unit: str) -> str:
    """A --path-ceiling's DEVICE as the recorded path names it: lab:N mapped, a by-id link followed."""
    (dev,) = lab_device_paths([unit])
    return os.path.realpath(dev) if os.sep in dev else dev


def _identities(devices: List[str]) -> Dict[str, Dict[str, Any]]:
    """Each device's identity record (read only: taken while planning, as a lone qualification reads it
    before its claim), or the reason it has none."""
    from slogqual import device as _device

    identities: Dict[str, Dict[str, Any]] = {}
    for dev in devices:
        try:
            identities[dev] = _device.identify(dev).to_dict()
        except SlogqualError as exc:
            identities[dev] = {"path": dev, "error": str(exc)}
    return identities


def _paths(devices: List[str], ceilings: List[path_ceiling.Declaration],
           identities: Dict[str, Dict[str, Any]], root: str = sysfs.SYS) -> Dict[str, Dict[str, Any]]:
    """Each device's path from the host as the result records it (which elements a pair of logs shares:
    analysis.pair_ceiling), with the declared ceilings set; one that names no element is bad input, now.
    The path is the one the device's record carries (read once, by identify), read here only for a record
    without one; named from this host's lspci as topology.recorded names a path it reads."""
    from slogqual.device import topology

    carried = {d: identities[d].get("topology") for d in devices}
    paths = [UnitPath.from_dict(carried[d] if carried[d] else topology.recorded(d, root)) for d in devices]
    topology.named_here([p for d, p in zip(devices, paths) if carried[d]], root)
    path_ceiling.apply(paths, ceilings)
    return {d: p.to_dict() for d, p in zip(devices, paths)}


def check_result_path(output: str, devices: List[str], force: bool = False) -> str:
    """The result may replace an earlier scenario result, never one of the devices, the result store
    or (without ``force``) anything else."""
    from slogqual import store
    protect = [(d, "a device of this run") for d in devices]
    protect.append((store.default_path(), "the result store"))
    return check_output(output, "scenario result", json_document(SCENARIO_SCHEMA_PREFIX), protect, force=force)


def _openzfs() -> Dict[str, Any]:
    try:
        return _zfs.openzfs_versions()
    except ToolError as exc:  # no zfs command: the run stops at the first pool, saying why
        return {"userland": None, "module": None, "error": str(exc)}


def pool_name_for(scenario: Scenario) -> str:
    # no '.' in a pool name: FreeBSD's kstat sysctl nodes are dot-separated (tools/kstat.objset_oid)
    return f"{POOL_PREFIX}{safe_name(scenario.name).replace('.', '-')}-{os.getpid()}"


def run_scenario(req: ScenarioRequest, progress: Optional[Progress] = None) -> ScenarioOutcome:
    """Run (or resume) one pool scenario on real devices and return its result document. What describes
    the whole machine is read once for the run (device.one_reading)."""
    from slogqual import device

    with device.one_reading():
        return _run_scenario(req, progress)


def _run_scenario(req: ScenarioRequest, progress: Optional[Progress]) -> ScenarioOutcome:
    progress = progress or Progress(quiet=True)
    output = os.path.abspath(req.output)
    plan = _plan(req)
    if plan.document is not None and plan.document.complete:
        return ScenarioOutcome(plan.document, output, already_complete=True)
    fio_version = fio.check_version().text  # 'fio-3.33', as every document records it
    from slogqual import device as _device

    result = plan.document
    with contextlib.ExitStack() as stack:
        for dev in plan.data + plan.logs:  # the interlocks, for every device, before anything is written
            stack.enter_context(_device.claim_for_writing(dev, req.destroy_data, exclusive=False))
        if result is None:
            identities = plan.identities
            for dev in plan.data + plan.logs:
                identities[dev]["topology"] = plan.paths[dev]  # with any declared ceiling
            result = new_result(plan.scenario, req.quick, req.layout, plan.data, plan.logs, fio_version,
                                req.argv, identities)
            result.origin = req.origin
            result.environment.openzfs = _openzfs()
            result.log_sweeps = log_sweeps.from_files(req.log_sweep_files, plan.logs)
            result.sweep_logs = req.measure_log_sweeps
            result.drivers = Drivers.of(plan.clients, plan.fio_servers)
        else:
            result.log_sweeps.update(log_sweeps.from_files(req.log_sweep_files, plan.logs))
            result.sweep_logs = result.sweep_logs or req.measure_log_sweeps
        endpoints = [fio_client.parse_endpoint(c) for c in plan.clients]
        for _ in range(plan.fio_servers):  # the lab's clients: fio servers of our own on loopback
            endpoints.append(stack.enter_context(fio_client.FioServer("127.0.0.1")).endpoint)
        run = PoolScenarioRun(plan.scenario, result, output, progress, pool_name_for(plan.scenario),
                              zfs_api=req.zfs_api, clients=endpoints)
        run.run()
    outcome = ScenarioOutcome(result, output)
    if req.record_in_store:
        from slogqual import store
        outcome.store_error = store.record_or_warn(result, output)  # history / compare --baseline
    return outcome
