"""The powercut writer: numbered, checksummed records, each written and flushed, each acknowledged record
reported to the recorder at once.

The pair is the sweep's: a write (O_DIRECT where the target takes it) followed by ``fdatasync`` — a
device cache flush on a block device, an NBD flush through nbdfuse. A record counts as acknowledged only
once both returned; then, and only then, it is sent to the recorder and printed (``ack SEQ``) on stdout
for the process that will cut the power.

The writer runs in a process of its own, so that a cut that leaves its IO hanging costs nothing but it:
``python -m slogqual.powercut.writer TARGET --run-id … --cycle N --sizes … --recorder HOST:PORT|--journal
FILE [--destroy-data] [--under-claim]``, started by ``powercut run`` and by the lab guest's
``slogqual.lab.powercut_writers`` through slogqual.tools.pymodule (``slogqual powercut write`` is the same program for
users). Its door is ``write_records(WriteRequest) -> WriteOutcome``; its output protocol:

* stdout: ``ack SEQ`` per acknowledged record, as it happens, then ``direct yes|no``;
* stderr: ``powercut writer: N records acknowledged; WHY`` (WHY: ``area full`` or the first IO that failed),
  or one ``slogqual: …`` line for a refusal;
* exit status: 0 area full, 1 an IO failed (the cut), 2 bad input, 3 refused (safety interlocks, a claim
  the parent does not hold), 130 SIGTERM/SIGINT, 141 stdout closed.
"""

from __future__ import annotations

import argparse
import errno
import logging
import mmap
import os
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, TextIO, Tuple

from slogqual import paths, process
from slogqual.errors import MeasurementError, RefusedError, UsageError
from slogqual.powercut import records as R
from slogqual.powercut.recorder import JournalClient, RecorderClient, is_journal, parse_address


@dataclass
class WriteOutcome:
    acknowledged: int
    direct: bool
    why: str  # how it ended: "area full", or the error of the first write/flush that failed

    @property
    def filled(self) -> bool:
        """The area filled with no IO failing (no power cut came)."""
        return self.why == AREA_FULL


AREA_FULL = "area full"
MODULE = "slogqual.powercut.writer"  # what runs the writer process: python -m MODULE (tools/pymodule.py)


@dataclass
class WriteRequest:
    """What one writer process writes: ``cycle`` of run ``run_id`` (16 bytes) in records of ``sizes`` (in
    turn) to ``target``, every acknowledged record told to the recorder at ``recorder`` (host, port) or
    appended to the ``journal`` file (exactly one of the two). ``under_claim``: the parent process holds
    slogqual's claim of ``target`` (checked), else the writer claims it itself; ``destroy_data`` confirms
    a block device. ``on_ack(seq)`` hears every acknowledged record after the recorder did."""

    target: str
    run_id: bytes
    cycle: int
    sizes: Sequence[int]
    recorder: Optional[Tuple[str, int]] = None
    journal: Optional[str] = None
    destroy_data: bool = False
    under_claim: bool = False
    on_ack: Callable[[int], None] = lambda seq: None


def parse_run_id(text: str) -> bytes:
    """``--run-id``: 32 hex digits (UsageError otherwise)."""
    try:
        run_id = bytes.fromhex(text)
    except ValueError:
        run_id = b""
    if len(run_id) != 16:
        raise UsageError(f"--run-id {text!r}: 32 hex digits")
    return run_id


def request_from_words(target: str, run_id: str, cycle: int, sizes: str, recorder: Optional[str] = None,
                       journal: Optional[str] = None, destroy_data: bool = False, under_claim: bool = False,
                       on_ack: Callable[[int], None] = lambda seq: None) -> WriteRequest:
    """A WriteRequest from the writer's command-line words (sizes ``4k,8k``, run id in hex, recorder
    ``HOST:PORT``), each checked in one line (UsageError)."""
    sizes_ = R.parse_sizes(sizes)
    rid = parse_run_id(run_id)
    address = parse_address(recorder) if recorder else None
    return WriteRequest(target=target, run_id=rid, cycle=cycle, sizes=sizes_, recorder=address, journal=journal,
                        destroy_data=destroy_data, under_claim=under_claim, on_ack=on_ack)


def check_target(path: str) -> int:
    """The writer's target checked as sweep checks its own (target.check_writable: one line; exit 3 for
    a read-only device, 2 for one the OS will not open for writing), before anything is written; returns
    its size."""
    from slogqual.sweep.target import check_writable, device_size

    # a disk (a block device; on FreeBSD a character device) or a regular file, in paths' one vocabulary
    pk = paths.kind_of(path)
    if pk.kind == paths.KIND_NBD:
        raise UsageError(f"{path}: the powercut writer needs a device path, not a URI")
    check_writable(path, pk.kind, paths.is_freebsd())
    try:
        return device_size(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read its size ({exc.strerror or exc})") from None


def guard_journal(path: str, inputs: Sequence[str] = (), store_location: Optional[str] = None) -> str:
    """A journal is appended to: never the result store, an input, a device, a FIFO or a file that is not
    a journal (outputs.check_output; one line, exit 2). Returns the absolute path."""
    from slogqual import store
    from slogqual.outputs import check_output

    protect = [(p, "an input of this command") for p in inputs if p and p != "-"]
    protect += store.protected(store_location)
    return check_output(str(path), "powercut journal", is_journal, protect, force=False, forceable=False)


def write_records(req: WriteRequest) -> WriteOutcome:
    """The writer's door: check the request (UsageError, 2), the target (target.check_writable), and the
    claim — the parent's (``under_claim``: RefusedError, 3, unless slogqual's lock on the target is held by
    the parent process) or its own (device.claim_for_writing: the safety interlocks; a block device only
    with ``destroy_data``) — all before anything is written; then write records until the area is full
    or an IO fails (write_loop). Returns how it ended; the recorder or journal heard every record."""
    from slogqual import device, store
    from slogqual.device.interlock import lock_holder

    why = R.check_sizes(req.sizes)
    if why:
        raise UsageError(f"--sizes: {why}")
    if len(req.run_id) != 16:
        raise UsageError(f"--run-id {req.run_id.hex()!r}: 32 hex digits")
    if not 1 <= req.cycle <= R.MAX_CYCLE:
        raise UsageError(f"--cycle {req.cycle}: a cycle is a whole number from 1 to {R.MAX_CYCLE}")
    if (req.recorder is None) == (req.journal is None):
        raise UsageError("the writer tells exactly one recorder: --recorder HOST:PORT or --journal FILE")
    store.refuse_overwrite(req.target, "the powercut writer would overwrite it")
    if req.journal:
        guard_journal(req.journal, [req.target])
    limit = R.capacity(check_target(req.target), req.sizes)

    def go() -> WriteOutcome:
        with (RecorderClient(*req.recorder) if req.recorder else JournalClient(req.journal)) as client:
            return write_loop(req.target, req.run_id, req.cycle, req.sizes, limit, client, req.on_ack)

    if req.under_claim:
        holder = lock_holder(req.target)
        if holder is None or holder != os.getppid():
            raise RefusedError(f"refusing {req.target}: --under-claim, but its slogqual lock is "
                               + ("not held" if holder is None else f"held by pid {holder}, not by the parent")
                               + " (run it through `slogqual powercut run`)")
        return go()
    with device.claim_for_writing(req.target, req.destroy_data) as claim:
        if claim.kind == "block" and not req.destroy_data:
            raise RefusedError(f"refusing to write {req.target}: the powercut writer destroys the data on a block "
                               "device; name it with --destroy-data to confirm")
        return go()


def open_for_records(path: str) -> tuple:
    """(fd, direct): O_DIRECT when the target takes it (block devices, most filesystems), else buffered
    (FUSE, tmpfs) — each record is flushed either way."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            return os.open(path, flags | direct), True
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
    return os.open(path, flags), False



def write_loop(path: str, run_id: bytes, cycle: int, sizes: Sequence[int], limit: int,
               client: Optional[RecorderClient], on_ack: Callable[[int], None] = lambda seq: None) -> WriteOutcome:
    """Write records 0 … limit-1 of ``cycle`` until the area is full or a write or flush fails (the cut).
    ``client`` hears every acknowledged record first, then ``on_ack(seq)``."""
    run = run_id.hex()
    try:
        fd, direct = open_for_records(path)
    except OSError as exc:
        raise MeasurementError(f"{path}: cannot open for writing: {exc.strerror or exc}") from None
    buf = mmap.mmap(-1, max(sizes))  # page-aligned, as O_DIRECT wants
    view = memoryview(buf)
    acked, why = 0, AREA_FULL
    try:
        if client is not None:
            client.send({"op": "begin", "run": run, "cycle": cycle, "sizes": list(sizes), "target": path})
        for seq, offset, size in R.slots(limit, sizes):
            buf[:size] = R.encode(run_id, cycle, seq, size)
            stage = "write"
            try:
                done = os.pwrite(fd, view[:size], offset)
                if done != size:
                    raise OSError(errno.EIO, f"short write ({done} of {size} bytes)")
                stage = "flush"
                os.fdatasync(fd)
            except OSError as exc:
                why = f"the {stage} of record {seq} failed: {exc.strerror or exc}"
                break
            acked += 1
            if client is not None:
                client.send({"op": "ack", "run": run, "cycle": cycle, "seq": seq})
            on_ack(seq)
        if client is not None:
            try:
                client.send({"op": "end", "run": run, "cycle": cycle, "why": why})
            except MeasurementError:
                pass
    finally:
        view.release()
        buf.close()
        try:
            os.close(fd)
        except OSError:
            pass
    return WriteOutcome(acknowledged=acked, direct=direct, why=why)


def print_ack(out: Optional[TextIO] = None) -> Callable[[int], None]:
    out = out or sys.stdout

    def ack(seq: int) -> None:
        out.write(f"ack {seq}\n")
        out.flush()
    return ack


def report(outcome: WriteOutcome, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """The end of the output protocol (``direct yes|no`` on stdout, the summary on stderr); the exit
    status: 0 when the area filled, 1 when an IO failed."""
    out, err = out or sys.stdout, err or sys.stderr
    print(f"direct {'yes' if outcome.direct else 'no'}", file=out, flush=True)
    print(f"powercut writer: {outcome.acknowledged} records acknowledged; {outcome.why}", file=err)
    return 0 if outcome.filled else 1


# --- the program: python -m slogqual.powercut.writer -------------------------------------------------

PROG = "python -m slogqual.powercut.writer"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, as the CLI's
        self.exit(2, f"slogqual: error: {message}\n")


def _cycle(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= R.MAX_CYCLE:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {R.MAX_CYCLE}")
    return int(text)


def add_arguments(p: argparse.ArgumentParser, cycle_type: Callable[[str], int] = _cycle) -> None:
    """The writer's options (this program's and ``slogqual powercut write``'s)."""
    p.add_argument("target", metavar="TARGET")
    p.add_argument("--run-id", required=True)
    p.add_argument("--cycle", type=cycle_type, required=True)
    p.add_argument("--sizes", required=True)
    to = p.add_mutually_exclusive_group(required=True)
    to.add_argument("--recorder", metavar="HOST:PORT")
    to.add_argument("--journal", metavar="FILE",
                    help="append each message to FILE instead (a file on a machine the cut spares: the lab's share)")
    p.add_argument("--destroy-data", action="store_true")
    p.add_argument("--under-claim", action="store_true",
                   help="the parent process holds slogqual's claim on TARGET (checked)")


def run_words(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Parsed writer options in, the writer run, its exit status out (typed errors are the caller's)."""
    out, err = out or sys.stdout, err or sys.stderr
    req = request_from_words(args.target, args.run_id, args.cycle, args.sizes, args.recorder, args.journal,
                             args.destroy_data, args.under_claim, print_ack(out))
    return report(write_records(req), out, err)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m slogqual.powercut.writer ARGS``: the exit status (see the module's protocol)."""
    def body() -> int:
        p = _Parser(prog=PROG, description="Write powercut records to TARGET, each flushed, each acknowledged "
                                           "one sent to the recorder and printed as 'ack N', until the area is "
                                           "full or IO fails.")
        add_arguments(p)
        args = p.parse_args(argv)
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
        return process.one_line(lambda: run_words(args))

    return process.run_main(body)


if __name__ == "__main__":
    process.end(main)
