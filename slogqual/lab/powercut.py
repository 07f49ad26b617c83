"""``slogqual lab powercut``: the power-cut test on emulated devices inside the lab guest.

Each named class must have a power to cut (a ``cache`` key, scenarios/lab-devices.toml: ``lying-ssd``,
``consumer-ssd``, ``plp-ssd``): its medium is a file on the host's RAM filesystem, served by nbdkit
(file plugin, behind the class's cache filter) to QEMU, which shows it to the guest as a SATA SSD
with its write cache on. Per cycle:

1. a guest boots with all the devices; ``python -m slogqual.lab.powercut_writers`` there identifies
   each (the guest's own device record) and starts one writer per device (``python -m slogqual.powercut.writer``:
   the host's interpreter and slogqual, the guest's root being the host's over 9p), which writes
   numbered, checksummed records, each flushed, and appends every acknowledged one to a journal on
   the job share (9p: the line is on the host before the writer writes the next record);
2. the host counts the journals' acknowledged records while the guest runs; once every device has
   ``cut_after`` of them, the cut: SIGKILL of every device's nbdkit (its cache filter's blocks are
   gone), then of QEMU (nothing the guest does after the cut counts);
3. power returns: the backing files are the media, read by ``powercut verify``'s code for every
   record the journals hold (intact, torn, stale, missing). The next cycle boots on the same files.

One ``slogqual.powercut/1`` result per device (``target.kind = "emulated"``: ``qualify --powercut``
never takes it for a real device), saved after every cycle. The backing files live in a private
directory on the RAM filesystem, removed at the end whatever happens; QEMU and nbdkit are ended by the
lab runner.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, TextIO

from slogqual import __version__
from slogqual.errors import MeasurementError, UsageError
from slogqual.powercut import MAX_CYCLES
from slogqual.powercut import records as R
from slogqual.powercut import verify as V
from slogqual.powercut.recorder import cycles_of, load_journal
from slogqual.results import write_json_atomic
from slogqual.results.powercut import CycleResult, PowercutResult

GUEST_OUT = "/lab/out"  # the job share's results directory, as the guest sees it
CUT_WORDS = "SIGKILL of the device's nbdkit, then of QEMU (the lab guest the device sits in)"
RECORDER_WORDS = ("journal on the lab's 9p share: each acknowledged record is on the host before the writer "
                  "goes on (host and guest share no network)")
EMULATION_WORDS = {
    "unsafe": "nbdkit cache filter, cache=unsafe, under QEMU: a volatile cache that ignores flushes (a lying device)",
    "writeback": "nbdkit cache filter, cache=writeback, under QEMU: a volatile cache that honours flushes",
    "none": "no cache filter: every acknowledged write is in the backing file (a power-loss-protected device)",
}


@dataclass
class LabPowercutRequest:
    classes: List[str]  # lab device classes with a power to cut, one device each
    output_dir: str  # one <index>-<class>.powercut.json per device, the guest's logs per cycle
    cycles: int = 2
    cut_after: int = 32  # acknowledged records of every device before the cut
    sizes: Sequence[int] = R.DEFAULT_SIZES
    write_timeout: float = 300.0  # for the guest to boot and acknowledge cut_after records on every device
    devices_files: List[str] = field(default_factory=list)
    lab_cache: str = ""  # the lab image's cache directory ("" = the default)
    echo: Optional[TextIO] = None
    timeout: float = 900.0  # one guest
    progress: Callable[[str], None] = lambda line: None


def journal_name(index: int) -> str:
    return f"journal-{index}.jsonl"


def result_name(index: int, cls: str) -> str:
    return f"{index}-{cls}.powercut.json"


def check_request(req: LabPowercutRequest):
    """Bad input in one line before a file is made or a guest boots; the resolved classes."""
    from slogqual.lab import devices as _devices

    if not req.classes:
        raise UsageError("name the lab classes to cut the power of (e.g. lying-ssd consumer-ssd plp-ssd)")
    why = R.check_sizes(req.sizes)
    if why:
        raise UsageError(f"--sizes: {why}")
    if not 1 <= req.cycles <= MAX_CYCLES or req.cut_after < 1:
        raise UsageError(f"--cycles must be from 1 to {MAX_CYCLES}, --cut-after at least 1")
    classes = _devices.load(list(req.devices_files))
    inst = _devices.instances(list(req.classes), classes)
    for d in inst:
        if not d.cls.power_cut:
            cutting = sorted(n for n, c in classes.items() if c.power_cut)
            raise UsageError(f"lab class {d.cls.name} has no power to cut (its medium is memory or a QEMU NVDIMM); "
                             f"classes with a cache key do: {', '.join(cutting) or 'none defined'}")
        if R.capacity(d.cls.size, req.sizes) <= req.cut_after:
            raise UsageError(f"lab class {d.cls.name}: {d.cls.size} bytes hold {R.capacity(d.cls.size, req.sizes)} "
                             f"records of these sizes; --cut-after {req.cut_after} needs more")
    if os.path.exists(req.output_dir) and not os.path.isdir(req.output_dir):
        raise UsageError(f"{req.output_dir}: not a directory")
    return inst


def _count_acks(path: str) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b'"op": "ack"')
    except FileNotFoundError:
        return 0


class _Cutter:
    """The lab run's watch: cut the power once every device's journal holds cut_after acknowledgements."""

    def __init__(self, indices: List[int], cut_after: int, deadline: float):
        self.indices, self.cut_after, self.deadline = indices, cut_after, deadline
        self.counts: Dict[int, int] = {}
        self.cut_wall: Optional[float] = None

    def __call__(self, lab) -> None:
        self.counts = {i: _count_acks(lab.job_path("out", journal_name(i))) for i in self.indices}
        if all(n >= self.cut_after for n in self.counts.values()):
            self.cut_wall = time.time()
            lab.power_cut(self.indices)
            return
        if time.monotonic() > self.deadline:
            raise MeasurementError("the lab's writers acknowledged " + ", ".join(
                f"{n} (device {i})" for i, n in sorted(self.counts.items())) +
                f" records in time, fewer than the {self.cut_after} wanted before the cut")


def writers_command(plan: Dict) -> List[str]:
    """What the guest's job runs: the guest's side as a library module in this interpreter (the guest's root is
    this host's), never the command line."""
    from slogqual.lab import powercut_writers
    from slogqual.tools import pymodule
    return pymodule.argv(powercut_writers.MODULE, ["--plan", json.dumps(plan, sort_keys=True)])


def _new_result(index: int, cls, req: LabPowercutRequest) -> PowercutResult:
    return PowercutResult(
        run_id=uuid.uuid4().hex,
        target={"path": f"lab:{index}", "kind": "emulated", "lab_class": cls.name,
                "lab_class_description": cls.description},
        method={"cut": CUT_WORDS, "restore": "the next cycle's guest boots on the same backing file",
                "emulation": cls.cache, "emulation_means": EMULATION_WORDS[cls.cache], "recorder": RECORDER_WORDS,
                "sizes": list(req.sizes), "cut_after": req.cut_after,
                "flush": "fdatasync after every record (write + flush, the sweep's pair), in the guest",
                "direct": None},
        expected_cycles=req.cycles,
        extra={"slogqual": __version__, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "finished": None,
               "host": socket.gethostname(), "lab": True})


def _verify(res: PowercutResult, cycle: int, journal: str, medium: str, before_cut: int, cut_wall) -> CycleResult:
    entry = cycles_of(load_journal(journal).handle({"op": "query", "run": res.run_id})).get(cycle) \
        if os.path.exists(journal) else None
    if entry is None or not entry["sizes"]:
        raise MeasurementError(f"the journal of {res.target['path']} ({res.target['lab_class']}) holds nothing of "
                               f"cycle {cycle}: its writer never began")
    tally = V.verify_cycle(medium, bytes.fromhex(res.run_id), cycle, entry["sizes"], entry["acked"])
    extra = {"acknowledged_before_cut": before_cut, "recorder_acknowledged": len(entry["acked"]),
             "writer_end": entry.get("ended") or "still writing when the power went",
             "cut_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(cut_wall))}
    return tally.cycle_result(cycle, extra)


def run(req: LabPowercutRequest) -> List[str]:
    """Run every cycle; the paths of the result files (one per device), each saved after every cycle."""
    from slogqual import lab
    from slogqual.lab.runner import make_mem_dir

    inst = check_request(req)
    os.makedirs(req.output_dir, exist_ok=True)
    results = {d.index: _new_result(d.index, d.cls, req) for d in inst}
    paths = {d.index: os.path.join(req.output_dir, result_name(d.index, d.cls.name)) for d in inst}

    def save() -> None:
        for i, res in results.items():
            write_json_atomic(paths[i], res.to_dict())

    mem = make_mem_dir(sum(d.cls.size for d in inst))
    try:
        media = {}
        for d in inst:
            media[d.index] = os.path.join(mem, f"slogqual-powercut-{d.index}.img")
            with open(media[d.index], "wb") as fh:
                fh.truncate(d.cls.size)
        save()
        for cycle in range(1, req.cycles + 1):
            req.progress(f"cycle {cycle}/{req.cycles}: booting the guest, writing to "
                         + ", ".join(f"lab:{d.index} ({d.cls.name})" for d in inst))
            plan = {"cycle": cycle, "sizes": list(req.sizes), "out": GUEST_OUT,
                    "devices": [{"index": d.index, "run_id": results[d.index].run_id, "journal": journal_name(d.index)}
                                for d in inst]}
            cycle_dir = os.path.join(req.output_dir, f"cycle-{cycle}")
            job = lab.prepare(list(req.classes), writers_command(plan), output=cycle_dir, echo=req.echo,
                              timeout=req.timeout, devices_files=list(req.devices_files), cache=req.lab_cache)
            job.backing = dict(media)
            cutter = _Cutter([d.index for d in inst], req.cut_after, time.monotonic() + req.write_timeout)
            job.watch = cutter
            outcome = job.run()
            if job.cut_at is None:
                raise MeasurementError(f"cycle {cycle}: the guest ended (job status {outcome.status}) before the cut; "
                                       f"its console and the writers' logs are in {cycle_dir}")
            req.progress(f"cycle {cycle}: power cut after " + ", ".join(
                f"{cutter.counts[d.index]} ({d.cls.name})" for d in inst) + " acknowledged records")
            for d in inst:
                res = results[d.index]
                cy = _verify(res, cycle, os.path.join(cycle_dir, journal_name(d.index)), media[d.index],
                             cutter.counts[d.index], cutter.cut_wall)
                res.cycles.append(cy)
                record = os.path.join(cycle_dir, f"device-{d.index}.json")
                if res.device is None and os.path.exists(record):
                    with open(record, encoding="utf-8") as fh:
                        res.device = json.load(fh)
                req.progress(f"cycle {cycle}: lab:{d.index} ({d.cls.name}): {cy.acknowledged} acknowledged, "
                             f"{cy.intact} intact, {cy.lost} lost (torn {cy.torn}, stale {cy.stale}, "
                             f"missing {cy.missing})")
            save()
        for res in results.values():
            res.status = "complete"
    except KeyboardInterrupt:
        for res in results.values():
            res.status = "interrupted"
        raise
    except Exception as exc:
        for res in results.values():
            res.status, res.error = "failed", str(exc)
        raise
    finally:
        for res in results.values():
            res.extra["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            res.judge()
        save()
        shutil.rmtree(mem, ignore_errors=True)
    return [paths[d.index] for d in inst]
