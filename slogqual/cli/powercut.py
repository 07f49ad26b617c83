"""slogqual powercut: does an acknowledged sync write survive a power cut? run | record | verify | write."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from slogqual import limits
from slogqual.cli.history import STORE_HELP
from slogqual.cli.options import STORE, count, guard_output, in_range, named, seconds, size_range
from slogqual.errors import UsageError
from slogqual.powercut import writer
from slogqual.powercut import MAX_CYCLES, MAX_EMULATED_SIZE, MIN_EMULATED_SIZE
from slogqual.process import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from slogqual.results.powercut import PowercutResult


def _sizes(text: str):
    from slogqual.powercut import records as R

    return R.parse_sizes(text)


def register(sub) -> None:
    p = sub.add_parser("powercut", help="power-cut test: do acknowledged sync writes survive? (run, record, verify)",
                       description="A diskchecker-style power-loss test (docs/powercut.md): numbered, checksummed "
                                   "records written and flushed one by one, every acknowledged one told to a "
                                   "recorder that survives the cut; after the cut, verify counts what was lost.")
    sp = p.add_subparsers(dest="powercut_command", metavar="SUBCOMMAND", parser_class=type(p))
    _register_run(sp)
    _register_record(sp)
    _register_verify(sp)
    w = sp.add_parser("write", help="(the writer process powercut run starts)",
                      description="Write records to TARGET, each flushed, each acknowledged one sent to the "
                                  "recorder and printed as 'ack N', until the area is full or IO fails "
                                  "(the same program as python -m slogqual.powercut.writer).")
    writer.add_arguments(w)
    w.set_defaults(func=cmd_write)
    p.set_defaults(func=lambda args: _help(p))


def _register_run(sp) -> None:
    r = sp.add_parser("run", help="write, cut the power, verify; --cycles times",
                      description="Write records to TARGET, cut its power after --cut-after acknowledged records "
                                  "(--cut-cmd, or --emulate: TARGET is then a backing file served by nbdkit and "
                                  "the cut is nbdkit's SIGKILL), verify, repeat. Exit 0 pass, 1 lost records or "
                                  f"a failed run, 2 bad input, 3 refused, {EXIT_INTERRUPTED} interrupted.")
    r.add_argument("target", metavar="TARGET", help="block device or regular file (with --emulate: the backing file)")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--cut-cmd", metavar="CMD",
                     help="the command that cuts the device's power (IPMI, PDU), split like a shell would but "
                          "never run through one")
    how.add_argument("--emulate", choices=("unsafe", "writeback", "none"),
                     help="emulate the device with nbdkit on TARGET: cache=unsafe (ignores flushes), "
                          "cache=writeback (volatile cache, honours flushes), none (no volatile cache)")
    r.add_argument("--restore-cmd", metavar="CMD", help="the command that gives the power back (with --cut-cmd)")
    r.add_argument("--cmd-timeout", type=seconds, default=60.0, metavar="SECONDS",
                   help="for --cut-cmd and --restore-cmd (default 60)")
    r.add_argument("--return-timeout", type=seconds, default=300.0, metavar="SECONDS",
                   help="wait this long for the device to come back after the cut (default 300)")
    r.add_argument("--cycles", type=count(1, MAX_CYCLES), default=1,
                   help=f"power cuts (default 1, at most {MAX_CYCLES})")
    r.add_argument("--cut-after", type=in_range(limits.CUT_AFTER), default=64, metavar="N",
                   help="acknowledged records before each cut (default 64); the writer keeps writing into it")
    r.add_argument("--sizes", default="4k,8k,16k,32k,64k,128k",
                   help="record sizes used in turn, multiples of 4 KiB (default: the ZIL's 4k,8k,16k,32k,64k,128k)")
    r.add_argument("--recorder", metavar="HOST:PORT",
                   help="a `slogqual powercut record` on another machine (default: one in this process, "
                        "on 127.0.0.1, which survives only a cut of the device alone)")
    r.add_argument("--size", type=size_range(MIN_EMULATED_SIZE, MAX_EMULATED_SIZE), default="64m",
                   help="size of a backing file --emulate creates (default 64m; 1m to 1024g)")
    r.add_argument("--destroy-data", action="store_true", help="confirm that a block device may be overwritten")
    r.add_argument("-o", "--output", type=named("a result file"), metavar="FILE",
                   help="result file (slogqual.powercut/1); default slogqual-powercut-NAME-TIME.json here")
    r.add_argument("--force", action="store_true", help="let -o replace a file that is not a powercut result")
    r.add_argument("--json", action="store_true", help="print the result document")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    r.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    r.set_defaults(func=cmd_run)


def _register_record(sp) -> None:
    rec = sp.add_parser("record", help="the recorder: a TCP server that keeps every acknowledged record",
                        description="Listen for powercut writers and keep what they acknowledged (in memory and, "
                                    "with --journal, in a file), answer verify's queries. Runs until Ctrl-C.")
    rec.add_argument("--listen", default="127.0.0.1:7207", metavar="HOST:PORT",
                     help="address to listen on (default 127.0.0.1:7207, loopback only; 0.0.0.0:PORT for all)")
    rec.add_argument("--journal", metavar="FILE", help="append every message to FILE (verify --journal reads it)")
    rec.add_argument("--ready-file", metavar="FILE", help=argparse_suppress())
    rec.set_defaults(func=cmd_record)


def _register_verify(sp) -> None:
    v = sp.add_parser("verify", help="check a device against what the recorder holds",
                      description="Read every record the recorder holds for RUN-ID from TARGET and count intact, "
                                  "torn, stale and missing ones. Exit 0 none lost, 1 some lost.")
    v.add_argument("target", metavar="TARGET", help="the block device or file written (a backing file for --emulate)")
    v.add_argument("--run-id", required=True, help="the run's id (powercut run prints it)")
    src = v.add_mutually_exclusive_group(required=True)
    src.add_argument("--recorder", metavar="HOST:PORT", help="ask this recorder")
    src.add_argument("--journal", metavar="FILE", help="read a recorder's journal file")
    v.add_argument("--cycle", type=count(1, MAX_CYCLES), action="append", help="only this cycle (repeatable; default all)")
    v.add_argument("-o", "--output", type=named("a result file"), metavar="FILE", help="result file (slogqual.powercut/1)")
    v.add_argument("--force", action="store_true", help="let -o replace a file that is not a powercut result")
    v.add_argument("--json", action="store_true", help="print the result document")
    v.add_argument("--store", type=STORE, metavar="PATH|URL", help=STORE_HELP)
    v.set_defaults(func=cmd_verify)


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def _help(p) -> int:
    p.print_help(sys.stderr)
    return 2


def _print(result: PowercutResult, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
        return
    t = result.totals
    print(f"powercut {result.run_id}: {result.verdict.upper()} — {len(result.cycles)} of {result.expected_cycles} "
          f"cycle(s); {t['acknowledged']} acknowledged records, {t['intact']} intact, {t['lost']} lost "
          f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']})")
    for cy in result.cycles:
        print(f"  cycle {cy.cycle}: {cy.acknowledged:5d} acknowledged  {cy.intact:5d} intact  "
              f"{cy.lost:5d} lost (torn {cy.torn}, stale {cy.stale}, missing {cy.missing})")
    if result.error:
        print(f"  error: {result.error}")


def _exit(result: PowercutResult) -> int:
    return 0 if result.verdict == "pass" else 1


def cmd_run(args) -> int:
    from slogqual.powercut.door import PowercutRequest, plan_run, run_powercut
    from slogqual.powercut.recorder import parse_address
    from slogqual.tools import cutcmd

    req = PowercutRequest(target=args.target, cycles=args.cycles, sizes=_sizes(args.sizes), cut_after=args.cut_after,
                          emulate=args.emulate,
                          cut_cmd=cutcmd.parse(args.cut_cmd, "--cut-cmd") if args.cut_cmd is not None else None,
                          restore_cmd=cutcmd.parse(args.restore_cmd, "--restore-cmd")
                          if args.restore_cmd is not None else None,
                          cmd_timeout=args.cmd_timeout, return_timeout=args.return_timeout,
                          recorder=parse_address(args.recorder) if args.recorder is not None else None,
                          destroy_data=args.destroy_data, size=args.size, output=args.output or "",
                          force=args.force, store=args.store)
    opts = plan_run(req)  # bad input: one line, before anything is created or written

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"powercut: {line}", file=sys.stderr, flush=True)

    try:
        outcome = run_powercut(req, progress, opts)
    except KeyboardInterrupt:
        print(f"slogqual: interrupted; the cycles verified so far are in {opts.output} (not recorded in the "
              f"result store: slogqual import json {opts.output})", file=sys.stderr)
        return EXIT_INTERRUPTED
    _print(outcome.result, args.json)
    return _exit(outcome.result)


def cmd_record(args) -> int:
    from slogqual.powercut.recorder import RecorderServer, parse_address
    from slogqual.results import write_text_atomic

    host, port = parse_address(args.listen, listen=True)
    for option, path in (("--journal", args.journal), ("--ready-file", args.ready_file)):
        if path == "":  # refused, not dropped: the recorder would run without what was asked for
            raise UsageError(f"{option} is empty: name a file")
    if args.journal is not None:
        _guard_journal(args, args.journal)
    if args.ready_file is not None:  # before the recorder listens or its journal is made
        args.ready_file = guard_output(args, args.ready_file, "recorder's ready file", _is_ready_file,
                                       [args.journal])
    server = RecorderServer(host, port, journal=args.journal)
    h, p = server.address
    print(f"powercut recorder listening on {h}:{p}" + (f", journal {args.journal}" if args.journal else ""),
          file=sys.stderr, flush=True)
    if args.ready_file:
        write_text_atomic(args.ready_file, f"{h}:{p}\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        server.stop()
    return 0


def _is_ready_file(path: str) -> bool:
    """A file `powercut record --ready-file` wrote (one line, HOST:PORT), which a new recorder may replace."""
    from slogqual.powercut.recorder import parse_address

    try:
        with open(path, "rb") as fh:
            text = fh.read(300)
        parse_address(text.decode("ascii"))
    except (OSError, UnicodeDecodeError, UsageError):
        return False
    return text.endswith(b"\n") and text.count(b"\n") == 1


def cmd_verify(args) -> int:
    from slogqual.powercut.door import VerifyRequest, verify_powercut
    from slogqual.powercut.recorder import parse_address

    outcome = verify_powercut(VerifyRequest(
        target=args.target, run_id=args.run_id,
        recorder=parse_address(args.recorder) if args.recorder is not None else None,
        journal=args.journal, cycles=args.cycle, output=args.output, force=args.force, store=args.store))
    _print(outcome.result, args.json)
    return _exit(outcome.result)


def _guard_journal(args, path: str, inputs=()) -> str:
    """A journal is appended to: never the result store, a device, a FIFO or a file that is not a journal."""
    from slogqual.powercut.recorder import is_journal

    return guard_output(args, path, "powercut journal", is_journal, inputs)


def cmd_write(args) -> int:
    return writer.run_words(args, sys.stdout, sys.stderr)  # the door and its output protocol
