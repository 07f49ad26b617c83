"""A pool scenario in the lab guest, as a library call.

The guest runs ``slogqual scenario run`` on its emulated devices (named ``lab:N``, see
pool.door.lab_device_paths) and writes its result into the lab's results directory; this module
boots it (lab.run), brings the result and the log candidates' sweeps next to the requested output,
points the result at the host copies of those sweeps and records the result in the host's store
(the guest's store is gone with the guest).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, TextIO

from slogqual.errors import SlogqualError, UsageError
from slogqual.pool.door import ScenarioOutcome, check_result_path
from slogqual.results import write_json_atomic
from slogqual.results.scenario import ScenarioResult

DEFAULT_DATA = ["hdd", "hdd"]
DEFAULT_LOG = ["sata-ssd", "nvdimm"]
INNER_RESULT = "result.json"


@dataclass
class LabScenarioRequest:
    scenario: str  # a shipped name or a TOML file on the host (the guest sees the host's files)
    output: str
    data: List[str] = field(default_factory=lambda: list(DEFAULT_DATA))  # lab device classes
    logs: List[str] = field(default_factory=lambda: list(DEFAULT_LOG))
    quick: bool = False
    measure_log_sweeps: bool = False  # --sweep-logs: sweep the log candidates in the guest first
    quiet: bool = False  # no progress from the guest's run
    echo: Optional[TextIO] = None  # copy the guest console here
    timeout: float = 3600.0
    record_in_store: bool = True
    force: bool = False  # the output may replace a file that is not an earlier scenario result


def guest_command(req: LabScenarioRequest) -> List[str]:
    scenario = os.path.abspath(req.scenario) if os.path.exists(req.scenario) else req.scenario
    inner = ["slogqual", "scenario", "run", scenario, "--destroy-data", "-o", INNER_RESULT,
             "--data", *[f"lab:{i}" for i in range(len(req.data))]]
    if req.logs:
        inner += ["--log", *[f"lab:{len(req.data) + i}" for i in range(len(req.logs))]]
    if req.quick:
        inner.append("--quick")
    if req.quiet:
        inner.append("--quiet")
    if req.measure_log_sweeps:
        inner.append("--sweep-logs")
    return inner


def _relocate_sweeps(result: ScenarioResult, stem: str) -> bool:
    """The result names each log sweep by its path in the guest: point it at the host copy. Whether
    anything changed."""
    changed = False
    for entry in result.log_sweeps.values():
        src = entry.get("source") or ""
        name = os.path.basename(src)
        if name.startswith("result.log") and name.endswith(".sweep.json"):
            entry["source"] = stem + name[len("result"):]
            changed = True
    return changed


def _record_calibration(result: ScenarioResult, calibration: List[dict]) -> bool:
    """A relative class's cap was set in the guest from what it measured there (lab.calibrate): the
    result says so (``lab.calibration``), so a reader sees the cap the steps ran against and where it came
    from. Whether anything changed."""
    if not calibration:
        return False
    result.extra.setdefault("lab", {})["calibration"] = calibration
    return True


def run_scenario(req: LabScenarioRequest) -> ScenarioOutcome:
    """Boot a guest with ``data + logs``, run the scenario there, return the host copy of the result.

    The guest's own exit status is kept in the outcome's document (``status``); a guest that wrote
    no result is a SlogqualError naming the results directory (console log there)."""
    from slogqual import lab

    if not req.scenario:
        raise UsageError("name a scenario")
    if not req.data:
        raise UsageError("name the lab classes of the data devices")
    from slogqual.pool.scenario import load_scenario
    from slogqual.pool.variants import check_log_count
    scenario = load_scenario(req.scenario)  # a bad name or file is refused here, before a guest boots
    check_log_count(scenario, len(req.logs))  # so is a run whose every SLOG needs a pair of logs
    out = check_result_path(req.output, [], req.force)
    outdir = out + ".lab"
    res = lab.run(req.data + req.logs, guest_command(req), outdir, echo=req.echo, timeout=req.timeout)
    produced = os.path.join(outdir, INNER_RESULT)
    if not os.path.exists(produced):
        raise SlogqualError(f"the lab guest wrote no scenario result (job status {res.status}; console log and "
                            f"the job's output in {outdir})")
    stem = out[:-5] if out.endswith(".json") else out
    for i in range(len(req.logs)):  # the log candidates' sweeps (--sweep-logs) go beside the result
        sweep = os.path.join(outdir, f"result.log{i}.sweep.json")
        if os.path.exists(sweep):
            os.replace(sweep, f"{stem}.log{i}.sweep.json")
    os.replace(produced, out)
    result = ScenarioResult.load(out)  # validated: a bad key is named
    if _relocate_sweeps(result, stem) | _record_calibration(result, res.calibration):
        write_json_atomic(out, result.to_dict())
    outcome = ScenarioOutcome(result, out, job_status=res.status)
    if req.record_in_store and result.complete:
        from slogqual import store
        outcome.store_error = store.record_or_warn(result, out)
    return outcome
