"""A pool scenario in the lab guest, as a library call.

The guest runs ``slogqual scenario run`` on its emulated devices (named ``lab:N``, see
pool.door.lab_device_paths) and writes its result into the lab's results directory; this module
boots it (lab.run), brings the result and the log candidates' sweeps next to the requested output,
points the result at the host copies of those sweeps and records the result in the host's store
(the guest's store is gone with the guest).

Everything the guest would refuse is refused here first, in one line, before a guest boots: the
scenario (a shipped name or the user's file, with the load's shape given on the command line over
it), the log count its configurations need, the data layout. A user's file goes to the guest as its
text, which the guest's job writes into its results directory (``INNER_SCENARIO``) and runs: the
guest sees the host's files read-only, but not those under /tmp, /var/tmp and /run, which it covers
with its own. The guest's progress lines (the step, i/N, an ETA) come over its console and are
relayed as they arrive (``ProgressRelay``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, TextIO

from slogqual import limits
from slogqual.errors import SlogqualError, UsageError
from slogqual.pool.door import ScenarioOutcome, check_result_path
from slogqual.results import write_json_atomic
from slogqual.results.scenario import ScenarioResult

DEFAULT_DATA = ["hdd", "hdd"]
DEFAULT_LOG = ["sata-ssd", "nvdimm"]
INNER_RESULT = "result.json"
INNER_SCENARIO = "scenario.toml"  # the user's file, as the guest's job wrote it in its results directory
# the guest's job: write its first argument to the file its second names, then run the rest
_WRITE_THEN_RUN = 'printf "%s" "$1" > "$2" && shift 2 && exec "$@"'


@dataclass
class LabScenarioRequest:
    scenario: str  # a shipped name (the guest loads it) or a TOML file (the guest gets its text)
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
    layout: str = "stripe"  # the data vdevs' layout (pool.builder.LAYOUTS)
    #: the load's shape over the scenario's (pool.scenario.OVERRIDES: bs, threads, luns, runtime, ramp)
    overrides: Dict[str, Any] = field(default_factory=dict)
    #: where the guest's progress lines go as they come (None: nowhere); ``quiet`` also silences them
    progress: Optional[TextIO] = None


def _option(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def guest_command(req: LabScenarioRequest, scenario_text: Optional[str] = None) -> List[str]:
    """The guest job's command line. ``scenario_text``: the user's scenario file, which the job writes
    to ``INNER_SCENARIO`` in its results directory (its working directory) and runs; without it
    ``req.scenario`` is a shipped scenario's name."""
    inner = ["slogqual", "scenario", "run", INNER_SCENARIO if scenario_text is not None else req.scenario,
             "--destroy-data", "-o", INNER_RESULT, "--layout", req.layout,
             "--data", *[f"lab:{i}" for i in range(len(req.data))]]
    if req.logs:
        inner += ["--log", *[f"lab:{len(req.data) + i}" for i in range(len(req.logs))]]
    if req.quick:
        inner.append("--quick")
    for key, value in req.overrides.items():
        if value is not None:
            inner += [f"--{key}", _option(value)]
    if req.quiet:
        inner.append("--quiet")
    if req.measure_log_sweeps:
        inner.append("--sweep-logs")
    if scenario_text is None:
        return inner
    return ["sh", "-c", _WRITE_THEN_RUN, "sh", scenario_text, INNER_SCENARIO, *inner]


GUEST_SAYS = ("slogqual: ", "slogqual-lab: ")  # the guest's slogqual (progress, errors) and its stage2
GUEST_RESULT = "result: "  # the guest's own line naming its result file: a path in the guest (the host names its copy)


def guest_line(line: str) -> Optional[str]:
    """What a console line of the guest says for the user (its slogqual's progress or error, stage2's
    complaint), without its prefix and the serial line's carriage return; None for the rest (the kernel,
    fio, the result table, the guest's path of its result)."""
    line = line.rstrip("\r\n").lstrip("\r")
    for prefix in GUEST_SAYS:
        if line.startswith(prefix):
            said = line[len(prefix):].strip()
            return None if not said or said.startswith(GUEST_RESULT) else said
    return None


class ProgressRelay:
    """A file-like ``echo`` for lab.run: takes the guest's console as it comes and writes each of its
    whole lines that ``guest_line`` keeps to ``stream`` as ``slogqual: lab guest: ...``; the whole console
    also to ``tee`` when given."""

    def __init__(self, stream: Optional[TextIO], tee: Optional[TextIO] = None):
        self.stream, self.tee = stream, tee
        self._partial = ""
        self.said: List[str] = []  # every line relayed (or, without a stream, that would have been)

    def write(self, text: str) -> int:
        if self.tee is not None:
            self.tee.write(text)
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            said = guest_line(line)
            if said is None:
                continue
            self.said.append(said)
            if self.stream is not None:
                self.stream.write(f"slogqual: lab guest: {said}\n")
        return len(text)

    def flush(self) -> None:
        for s in (self.stream, self.tee):
            if s is not None:
                s.flush()


def _scenario_text(req: LabScenarioRequest) -> Optional[str]:
    """The user's scenario file checked as the guest will run it (with the overrides; against the lab
    devices named), and its text; None for a shipped scenario, which the guest loads by its name."""
    from slogqual.pool.builder import data_vdevs
    from slogqual.lab.image import selected_series
    from slogqual.pool.scenario import check_special_version, is_shipped, read_scenario, with_overrides
    from slogqual.pool.variants import check_log_count

    scenario, text = read_scenario(req.scenario)  # a bad name or file is refused here, before a guest boots
    if req.quick:
        scenario = scenario.quick()
    scenario = with_overrides(scenario, req.overrides)
    check_log_count(scenario, len(req.logs))  # so is a run whose every SLOG needs a pair of logs
    # and the ZIL on the special vdev in a lab of OpenZFS 2.3 (--zfs, $SLOGQUAL_LAB_ZFS)
    check_special_version(scenario, {"module": selected_series()}, where="the lab's")
    data_vdevs(req.layout, [f"lab:{i}" for i in range(len(req.data))])  # and a layout the data cannot make
    if is_shipped(req.scenario):
        return None
    size = len(text.encode("utf-8"))
    if not limits.LAB_SCENARIO_FILE.contains(size):
        raise UsageError(f"{req.scenario}: {size} bytes; a scenario file for the lab guest goes as a command "
                         f"argument ({limits.LAB_SCENARIO_FILE.allowed()})")
    return text


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
    text = _scenario_text(req)
    out = check_result_path(req.output, [], req.force)
    outdir = out + ".lab"
    relay = ProgressRelay(None if req.quiet else req.progress, req.echo)
    if relay.stream is not None:
        relay.stream.write(f"slogqual: booting the lab guest (data: {' '.join(req.data)}; "
                           f"log: {' '.join(req.logs) or 'none'}); its progress follows\n")
        relay.flush()
    res = lab.run(req.data + req.logs, guest_command(req, text), outdir, echo=relay, timeout=req.timeout)
    produced = os.path.join(outdir, INNER_RESULT)
    if not os.path.exists(produced):
        said = f"; the guest said: {relay.said[-1]}" if relay.said else ""
        raise SlogqualError(f"the lab guest wrote no scenario result (job status {res.status}{said}; console log "
                            f"and the job's output in {outdir})")
    stem = out[:-5] if out.endswith(".json") else out
    for i in range(len(req.logs)):  # the log candidates' sweeps (--sweep-logs) go beside the result
        sweep = os.path.join(outdir, f"result.log{i}.sweep.json")
        if os.path.exists(sweep):
            os.replace(sweep, f"{stem}.log{i}.sweep.json")
    os.replace(produced, out)
    result = ScenarioResult.load(out)  # validated: a bad key is named
    changed = _relocate_sweeps(result, stem) | _record_calibration(result, res.calibration)
    if text is not None:  # the guest ran its copy of the user's file (kept in OUTPUT.lab/): name the user's
        result.scenario["source"] = os.path.abspath(req.scenario)
        changed = True
    if changed:
        write_json_atomic(out, result.to_dict())
    outcome = ScenarioOutcome(result, out, job_status=res.status)
    if req.record_in_store and result.complete:
        from slogqual import store
        outcome.store_error = store.record_or_warn(result, out)
    return outcome
