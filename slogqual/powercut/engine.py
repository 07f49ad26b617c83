"""``slogqual powercut run``: write, cut the power, verify — N cycles.

Per cycle:

1. power: with ``emulate`` an nbdkit export of the backing file (file plugin; ``--filter=cache
   cache=unsafe|writeback``, or no filter) mounted as a regular file by nbdfuse; else the device as it is;
2. the writer (its own process, ``python -m slogqual.powercut.writer``) writes numbered, checksummed
   records, each followed by a flush, and reports every acknowledged one to the recorder (in this process on
   127.0.0.1, or ``--recorder HOST:PORT``);
3. after ``cut_after`` acknowledged records, while the writer keeps writing: the cut — SIGKILL of the
   device's nbdkit (emulation), or the user's ``--cut-cmd``;
4. the writer's IO fails and it ends; the emulation's mount is taken away; with ``--restore-cmd`` the
   power is given back and the device waited for;
5. verify reads the media (the backing file; the device) for every record the recorder holds.

Everything this run starts or mounts is ended by its PID or unmounted on the way out, also on error,
Ctrl-C and SIGTERM (context managers), and the result is saved after every cycle. What SIGKILL leaves (the
emulation's mount and socket directories, named with the run's pid) the next run ends as it starts.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import stat
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from slogqual import __version__, paths
from slogqual.errors import MeasurementError, RefusedError, UsageError
from slogqual.powercut import MAX_CYCLES, MAX_EMULATED_SIZE, MIN_EMULATED_SIZE
from slogqual.powercut import records as R
from slogqual.powercut import verify as V
from slogqual.powercut.recorder import RecorderClient, RecorderServer, cycles_of
from slogqual.results import write_json_atomic
from slogqual.results.powercut import CycleResult, PowercutResult
from slogqual.powercut import writer as W
from slogqual.powercut.writer import check_target
from slogqual.tools import cutcmd, nbdfuse, nbdkit, pymodule

EMULATIONS = ("unsafe", "writeback", "none")
EMULATION_WORDS = {
    "unsafe": "nbdkit cache filter, cache=unsafe: a volatile cache that ignores flushes (a lying device)",
    "writeback": "nbdkit cache filter, cache=writeback: a volatile cache that honours flushes",
    "none": "no cache filter: no volatile cache (every write goes to the backing file)",
}
DEFAULT_EMULATED_SIZE = 64 * 1024 * 1024


@dataclass
class PowercutOptions:
    target: str
    cycles: int = 1
    sizes: Sequence[int] = R.DEFAULT_SIZES
    cut_after: int = 64  # acknowledged records before the cut
    emulate: Optional[str] = None  # unsafe | writeback | none
    cut_cmd: Optional[List[str]] = None
    restore_cmd: Optional[List[str]] = None
    cmd_timeout: float = 60.0
    return_timeout: float = 300.0
    write_timeout: float = 120.0
    recorder: Optional[Tuple[str, int]] = None
    destroy_data: bool = False
    size: int = DEFAULT_EMULATED_SIZE  # a backing file the emulation creates
    output: Optional[str] = None
    notes: List[str] = field(default_factory=list)


def check_options(o: PowercutOptions) -> None:
    """Bad input, one line (UsageError, exit 2), before anything is created or written."""
    why = R.check_sizes(o.sizes)
    if why:
        raise UsageError(f"--sizes: {why}")
    if not 1 <= o.cycles <= MAX_CYCLES:
        raise UsageError(f"--cycles {o.cycles}: from 1 to {MAX_CYCLES}")
    if o.cut_after < 1:
        raise UsageError("--cut-after must be at least 1")
    if (o.emulate is None) == (o.cut_cmd is None):
        raise UsageError("a power cut needs exactly one of --cut-cmd (the command that cuts the device's power) "
                         "or --emulate unsafe|writeback|none (an nbdkit export of a backing file, killed)")
    if o.emulate is not None and o.emulate not in EMULATIONS:
        raise UsageError(f"--emulate must be one of {', '.join(EMULATIONS)}, not {o.emulate!r}")
    if o.restore_cmd is not None and o.cut_cmd is None:
        raise UsageError("--restore-cmd goes with --cut-cmd")
    for argv, opt in ((o.cut_cmd, "--cut-cmd"), (o.restore_cmd, "--restore-cmd")):
        if argv is not None:
            cutcmd.check(argv, opt)
    if o.emulate is not None:
        if "://" in o.target:
            raise UsageError(f"{o.target}: --emulate writes a backing file (a path), not a URI")
        try:
            st = os.stat(o.target)
        except FileNotFoundError:
            st = None
            if not os.path.isdir(os.path.dirname(os.path.abspath(o.target))):
                raise UsageError(f"{o.target}: directory {os.path.dirname(os.path.abspath(o.target))} does not exist") \
                    from None
        except OSError as exc:
            raise UsageError(f"{o.target}: {exc.strerror or exc}") from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{o.target}: --emulate needs a regular file to back the emulated device "
                             "(its power is nbdkit's; a block device has its own: use --cut-cmd)")
        if st is None and not MIN_EMULATED_SIZE <= o.size <= MAX_EMULATED_SIZE:
            raise UsageError(f"--size {o.size}: a backing file is from {MIN_EMULATED_SIZE} to {MAX_EMULATED_SIZE} "
                             "bytes")
        if not os.path.exists("/dev/fuse"):
            raise UsageError("--emulate needs /dev/fuse (nbdfuse mounts the emulated device as a file)")
        nbdkit.check_version()
        nbdfuse.check_version()
        area = st.st_size if st is not None and st.st_size else o.size
    else:
        area = check_target(o.target)
    if R.capacity(area, o.sizes) <= o.cut_after:
        raise UsageError(f"{o.target}: {area} bytes hold {R.capacity(area, o.sizes)} records of these sizes; "
                         f"--cut-after {o.cut_after} needs more (the writer must still be writing at the cut)")



def describe(path: str) -> Optional[Dict[str, Any]]:
    from slogqual import device

    try:
        return device.identify(path).to_dict()
    except Exception as exc:  # identification must not cost the measurement; say why it is missing
        return {"path": path, "error": f"identification failed: {exc}", "warnings": []}


def end_dead_runs() -> List[str]:
    """What powercut runs killed by SIGKILL left in the temporary directory, ended: their FUSE mounts
    unmounted, their mount and nbd socket directories removed; the directories returned. Only those
    whose owner (the pid in the name and in owner.pid, slogqual.owned) is gone; nothing else."""
    return nbdfuse.remove_stale_mounts() + nbdkit.remove_stale_sockets()


class _AckReader:
    """Counts the writer's ``ack N`` lines as they come (a pipe read with select, so a writer that hangs
    costs a timeout, not the run)."""

    def __init__(self, proc):
        self.proc = proc
        self.count = 0
        self.lines: List[str] = []
        self._buf = b""
        self.eof = False

    def pump(self, timeout: float) -> None:
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            self.eof = True
            return
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        for ln in lines:
            text = ln.decode(errors="replace")
            if text.startswith("ack "):
                self.count += 1
            elif text:
                self.lines.append(text)

    def until(self, n: int, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while self.count < n and not self.eof:
            if time.monotonic() > deadline:
                raise MeasurementError(f"the writer acknowledged {self.count} records in {timeout:g} s, fewer than "
                                       f"the {n} wanted before the cut")
            self.pump(0.2)
        return self.count

    def drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            self.pump(0.2)


# options whose next word is a secret in the cut/restore commands people use (ipmitool -P, snmpset -A/-X,
# curl -u user:pass, sshpass -p) and option=value forms of the same: stored and reported as ***
_SECRET_OPTIONS = {"-P", "-p", "-A", "-X", "-u", "--password", "--passwd", "--pass", "--user", "--secret", "--token"}
_SECRET_PREFIXES = ("--password=", "--passwd=", "--pass=", "--user=", "--secret=", "--token=", "password=",
                    "passwd=", "pass=", "token=")


def redact_secrets(argv: Sequence[str]) -> List[str]:
    """argv as the result records it: values of password-like options replaced by ``***`` (a result travels
    into stores, reports and bug trackers; the command itself runs unchanged)."""
    out: List[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            out.append("***")
            hide_next = False
        elif word in _SECRET_OPTIONS:
            out.append(word)
            hide_next = True
        elif word.lower().startswith(_SECRET_PREFIXES):
            out.append(word.split("=", 1)[0] + "=***")
        elif len(word) > 2 and word[:2] in ("-P", "-p") and not word.startswith("--"):
            out.append(word[:2] + "***")  # ipmitool -Psecret
        else:
            out.append(word)
    return out


class PowercutRun:
    def __init__(self, opts: PowercutOptions, progress: Callable[[str], None] = lambda line: None):
        self.o = opts
        self.progress = progress
        self.run_id = uuid.uuid4().bytes
        self.result = PowercutResult(
            run_id=self.run_id.hex(),
            target={"path": os.path.abspath(opts.target) if "://" not in opts.target else opts.target,
                    "kind": "emulated" if opts.emulate else "device"},
            method={"cut": ("SIGKILL of the emulated device's nbdkit" if opts.emulate
                            else "--cut-cmd " + " ".join(redact_secrets(opts.cut_cmd or []))),
                    "restore": " ".join(redact_secrets(opts.restore_cmd)) if opts.restore_cmd else None,
                    "emulation": opts.emulate, "emulation_means": EMULATION_WORDS.get(opts.emulate or ""),
                    "recorder": None, "sizes": list(opts.sizes), "cut_after": opts.cut_after,
                    "flush": "fdatasync after every record (write + flush, the sweep's pair)", "direct": None},
            expected_cycles=opts.cycles, notes=list(opts.notes),
            extra={"slogqual": __version__, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "finished": None,
                   "host": socket.gethostname()})

    # --- the parts ---------------------------------------------------------------------------------

    def save(self) -> None:
        if self.o.output:
            write_json_atomic(self.o.output, self.result.to_dict())

    def _writer(self, path: str, cycle: int, address: Tuple[str, int], under_claim: bool):
        host, port = address
        args = [path, "--run-id", self.run_id.hex(), "--cycle", str(cycle),
                "--sizes", ",".join(str(s) for s in self.o.sizes), "--recorder", f"{host}:{port}"]
        if under_claim:
            args.append("--under-claim")
        return pymodule.background(W.MODULE, args, stdout=pymodule.PIPE, grace_s=5.0, new_session=True)

    def _write_and_cut(self, path: str, cycle: int, address, under_claim: bool, cut: Callable[[], None]) -> Dict:
        """Start the writer, wait for cut_after acknowledged records, cut, wait for the writer to end."""
        writer = self._writer(path, cycle, address, under_claim)
        writer.start()
        try:
            reader = _AckReader(writer.proc)
            reader.until(self.o.cut_after, self.o.write_timeout)
            if reader.eof and reader.count < self.o.cut_after:
                raise MeasurementError(f"the writer ended after {reader.count} records, before the cut: "
                                       + (writer.stderr_tail().splitlines() or ["no word from it"])[-1])
            seen = reader.count
            t_cut = time.time()
            cut()
            self.progress(f"cycle {cycle}: power cut after {seen} acknowledged records")
            reader.drain(min(self.o.cmd_timeout, 30.0))
            if writer.running():
                writer.kill()
            end = {"acknowledged_before_cut": seen, "writer_acknowledged": reader.count,
                   "cut_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t_cut))}
        finally:
            writer.stop()
        last = [ln for ln in (writer.stderr_tail() or "").splitlines() if ln.strip()]
        end["writer_end"] = last[-1] if last else f"exit status {writer.returncode}"
        if end["writer_end"].endswith("area full"):
            self.result.notes.append(f"cycle {cycle}: the writer filled its area after the cut instead of failing: "
                                     "did the power really go? (records written after the cut are checked too)")
        for ln in reader.lines:
            if ln.startswith("direct "):
                self.result.method["direct"] = ln.split()[1] == "yes"
        return end

    def _emulated_cycle(self, cycle: int, address) -> Dict:
        mode = self.o.emulate
        server = nbdkit.NbdServer("file", [os.path.abspath(self.o.target)],
                                  filters=["cache"] if mode != "none" else [],
                                  filter_args={"cache": mode} if mode != "none" else {})
        with contextlib.ExitStack() as stack:
            server.start()
            stack.callback(server.stop)
            mount = nbdfuse.FuseMount(server.socket)
            mount.start()
            stack.callback(mount.stop)
            return self._write_and_cut(mount.path, cycle, address, under_claim=False, cut=server.power_cut)

    def _device_cycle(self, cycle: int, address) -> Dict:
        end = self._write_and_cut(self.o.target, cycle, address, under_claim=True,
                                  cut=lambda: cutcmd.execute(self.o.cut_cmd, self.o.cmd_timeout))
        if self.o.restore_cmd:
            cutcmd.execute(self.o.restore_cmd, self.o.cmd_timeout)
        self._wait_for_return()
        return end

    def _wait_for_return(self) -> None:
        deadline = time.monotonic() + self.o.return_timeout
        while True:
            try:
                fd = os.open(self.o.target, os.O_RDONLY)
                try:
                    os.pread(fd, 4096, 0)
                    return
                finally:
                    os.close(fd)
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise MeasurementError(f"{self.o.target} did not come back within {self.o.return_timeout:g} s "
                                           f"after the cut: {exc.strerror or exc}") from None
            time.sleep(1.0)

    def _verify(self, cycle: int, client: RecorderClient, end: Dict) -> CycleResult:
        entry = cycles_of(client.query(self.run_id.hex())).get(cycle)
        if entry is None:
            raise MeasurementError(f"the recorder at {client.where} holds nothing of cycle {cycle}")
        tally = V.verify_cycle(os.path.abspath(self.o.target), self.run_id, cycle, entry["sizes"], entry["acked"])
        extra = dict(end)
        extra["recorder_acknowledged"] = len(entry["acked"])
        return tally.cycle_result(cycle, extra)

    # --- the run -----------------------------------------------------------------------------------

    def run(self) -> PowercutResult:
        o = self.o
        from slogqual import device

        # first, before this run can be killed too: what a killed run left (its emulation's mount and socket
        # directories) is ended by the next run, whichever way that one cuts the power (a mount is logged)
        end_dead_runs()
        with contextlib.ExitStack() as stack:
            created = False
            if o.emulate and not os.path.exists(o.target):
                try:
                    with open(o.target, "wb") as fh:
                        created = True
                        fh.truncate(o.size)
                except (OSError, OverflowError) as exc:  # EFBIG on a filesystem with small files, ENOSPC
                    if created:
                        os.unlink(o.target)  # leave nothing behind
                    raise UsageError(f"{o.target}: cannot make a backing file of {o.size} bytes: "
                                     f"{getattr(exc, 'strerror', None) or exc}") from None
                self.result.notes.append(f"backing file {o.target} created ({o.size} bytes)")
            try:
                claim = stack.enter_context(device.claim_for_writing(o.target, o.destroy_data))
            except BaseException:
                if created:
                    os.unlink(o.target)  # refused: leave nothing behind
                raise
            if claim.kind == "block" and not o.destroy_data:
                raise RefusedError(f"refusing to write {o.target}: the powercut test destroys the data on a block "
                                   "device; name it with --destroy-data to confirm")
            self.result.notes.extend(claim.notes)
            if not o.emulate:
                self.result.device = describe(o.target)
            if o.recorder is None:
                server = stack.enter_context(RecorderServer("127.0.0.1", 0))
                address = server.address
                self.result.method["recorder"] = f"in-process on {address[0]}:{address[1]}"
                if o.cut_cmd:
                    self.result.notes.append("the recorder runs in this process: a cut that takes this host down "
                                             "takes the record of acknowledged writes with it (use --recorder)")
            else:
                address = o.recorder
                self.result.method["recorder"] = f"{address[0]}:{address[1]}"
            client = stack.enter_context(RecorderClient(*address))
            self.save()
            try:
                for cycle in range(1, o.cycles + 1):
                    self.progress(f"cycle {cycle}/{o.cycles}: writing (run {self.run_id.hex()})")
                    end = self._emulated_cycle(cycle, address) if o.emulate else self._device_cycle(cycle, address)
                    cy = self._verify(cycle, client, end)
                    self.result.cycles.append(cy)
                    self.progress(f"cycle {cycle}: {cy.acknowledged} acknowledged, {cy.intact} intact, "
                                  f"{cy.lost} lost (torn {cy.torn}, stale {cy.stale}, missing {cy.missing})")
                    self.save()
                self.result.status = "complete"
            except KeyboardInterrupt:
                self.result.status = "interrupted"
                raise
            except Exception as exc:
                self.result.status = "failed"
                self.result.error = str(exc)
                raise
            finally:
                self.result.extra["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
                self.result.judge()
                self.save()
        return self.result


def parse_run_id(run_id: str) -> bytes:
    """A run's id as the records carry it (16 bytes); UsageError, one line, for anything but 32 hex digits
    (an empty one too: the recorder holds no run without an id)."""
    try:
        rid = bytes.fromhex(run_id)
    except ValueError:
        rid = b""
    if len(rid) != 16:
        raise UsageError(f"--run-id {run_id!r}: a run id is 32 hex digits (powercut run prints it)")
    return rid


def verify_run(target: str, run_id: str, reply: Dict[str, Any], source: str,
               cycles: Optional[List[int]] = None) -> PowercutResult:
    """``slogqual powercut verify``: the record of a run (a recorder's query reply) checked against the
    device now."""
    rid = parse_run_id(run_id)
    known = cycles_of(reply)
    if not known:
        raise UsageError(f"{source} holds no records of run {run_id}")
    wanted = cycles or sorted(known)
    missing = [c for c in wanted if c not in known]
    if missing:
        raise UsageError(f"{source} holds no records of cycle {missing[0]} of run {run_id} "
                         f"(it has {', '.join(map(str, sorted(known)))})")
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    kind = paths.kind_of(target).kind  # what verify reads: a disk, or a regular file (an image, a backing file)
    res = PowercutResult(run_id=run_id,
                         target={"path": os.path.abspath(target), "kind": "file" if kind == paths.KIND_FILE else "device"},
                         method={"cut": "external (verified afterwards)", "recorder": source,
                                 "sizes": list(known[wanted[0]]["sizes"]), "emulation": None},
                         expected_cycles=len(wanted),
                         extra={"slogqual": __version__, "started": now, "finished": now,
                                "host": socket.gethostname()})
    for c in wanted:
        entry = known[c]
        if not entry["sizes"]:
            raise UsageError(f"{source}: cycle {c} of run {run_id} has no record sizes (its begin was not heard)")
        tally = V.verify_cycle(target, rid, c, entry["sizes"], entry["acked"])
        res.cycles.append(tally.cycle_result(c, {"recorder_acknowledged": len(entry["acked"]),
                                                 "writer_end": entry.get("ended")}))
    res.status = "complete"
    res.judge()
    return res
