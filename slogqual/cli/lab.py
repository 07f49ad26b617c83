"""`slogqual lab`: a throwaway QEMU guest with real OpenZFS and emulated device classes."""

from __future__ import annotations

import argparse
import json
import os
import sys

from slogqual.errors import SlogqualError, UsageError
from slogqual import limits
from slogqual.cli.options import count, guard_output_dir, in_range, named
from slogqual.powercut import MAX_CYCLES

DEFAULT_CHECK_DEVICES = ["hdd", "hdd", "nvme"]


def zfs_option(sp) -> None:
    from slogqual.lab.image import LINKS  # the OpenZFS series the lab builds

    sp.add_argument("--zfs", choices=tuple(LINKS), default="", metavar="|".join(LINKS),
                    help="the lab built with this OpenZFS (module and its own userland; default $SLOGQUAL_LAB_ZFS, "
                         "else 2.3; build 2.4 with SLOGQUAL_LAB_ZFS=2.4 contrib/lab/build.sh)")


def select_zfs(args) -> None:
    """--zfs is $SLOGQUAL_LAB_ZFS spelled as an option: every lab image this command loads (the guests of a
    powercut run too) is that version's."""
    from slogqual.lab.image import ZFS_ENV

    if getattr(args, "zfs", ""):
        os.environ[ZFS_ENV] = args.zfs


def register(subparsers) -> None:
    p = subparsers.add_parser("lab", help="boot a QEMU guest with real OpenZFS and emulated devices",
                              description="A throwaway QEMU (TCG) guest running the host's userland over 9p "
                                          "with a real OpenZFS module; build it with contrib/lab/build.sh.")
    sub = p.add_subparsers(dest="lab_command", metavar="LAB_COMMAND")

    def common(sp):
        sp.add_argument("--device", "-d", action="append", default=[], metavar="CLASS[@PATH][:RATE]",
                        help="an emulated device of this class (repeat; see `slogqual lab classes`); @PATH puts it "
                             "behind a shared path of --path, :RATE gives it a cap of its own (a slower slot)")
        sp.add_argument("--path", action="append", default=[], metavar="NAME=RATE",
                        help="a shared path with a ceiling in bytes/s that every device behind it shares (a QEMU "
                             "throttle group; SAS devices behind it get their own HBA), e.g. hba0=40m")
        sp.add_argument("--devices-file", action="append", default=[], metavar="TOML",
                        help="extra device classes (same format as scenarios/lab-devices.toml)")
        sp.add_argument("--memory", type=in_range(limits.MEMORY_MB), default=1024, metavar="MiB", help="guest memory (default 1024)")
        sp.add_argument("--cpus", type=in_range(limits.CPUS), default=1, help="guest vCPUs (default 1)")
        sp.add_argument("--cache", default="", help="lab cache directory (default $SLOGQUAL_LAB_CACHE or "
                                                    "/var/cache/slogqual/lab)")
        zfs_option(sp)

    r = sub.add_parser("run", help="run COMMAND in a guest, copy $SLOGQUAL_LAB_OUT back",
                       description="Boot a guest with the devices named, run COMMAND in it (cwd and "
                                   "$SLOGQUAL_LAB_OUT are the results directory; $SLOGQUAL_LAB_DEVICES lists the "
                                   "devices' guest paths in --device order, $SLOGQUAL_LAB_DEVICES_JSON describes "
                                   "them), copy the results to --output and exit with COMMAND's status.")
    common(r)
    r.add_argument("--output", "-o", type=named("a directory"), default="lab-out", metavar="DIR", help="where the results go (default ./lab-out)")
    r.add_argument("--timeout", type=in_range(limits.TIMEOUT_S), default=3600, metavar="S",
                   help="give up after S seconds (default 3600), keeping what the guest's tasks were blocked on "
                        "(OUTPUT/lab-hang.txt)")
    r.add_argument("--quiet", "-q", action="store_true", help="do not copy the guest console to stdout")
    r.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("shell", help="an interactive shell in a guest ('exit' powers it off)")
    common(s)
    s.set_defaults(func=cmd_shell)

    c = sub.add_parser("check", help="self-test: boot, zfs, mirror+log pool, sync fio, ZIL kstats, destroy",
                       description="Boot a guest with two hdd and one nvme (or --device x3), create a mirror "
                                   "pool, add the log, run a short sync=always fio on a zvol, check that the ZIL "
                                   "kstats show log writes to the SLOG, destroy the pool and power off. Prints "
                                   "the timings; exits 0 only if every step held.")
    common(c)
    c.add_argument("--output", "-o", type=named("a directory"), default=None, metavar="DIR", help="keep check.json, raw outputs, console here")
    c.add_argument("--timeout", type=in_range(limits.TIMEOUT_S), default=600, metavar="S")
    c.add_argument("--verbose", "-v", action="store_true", help="copy the guest console to stdout")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.set_defaults(func=cmd_check)

    ls = sub.add_parser("classes", help="list the emulated device classes")
    ls.add_argument("--devices-file", action="append", default=[], metavar="TOML")
    ls.set_defaults(func=cmd_classes)

    pc = sub.add_parser("powercut", help="power-cut test of emulated devices (lying-ssd, consumer-ssd, plp-ssd)",
                        description="Boot a guest per cycle with one device of each CLASS (a class with a power to "
                                    "cut: a cache key), write numbered flushed records to each, cut the power "
                                    "(SIGKILL of each device's nbdkit, then of QEMU) after --cut-after acknowledged "
                                    "records on every device, and verify every acknowledged record on the devices' "
                                    "media. One slogqual.powercut/1 result per device in --output.")
    pc.add_argument("classes", nargs="+", metavar="CLASS")
    pc.add_argument("--devices-file", action="append", default=[], metavar="TOML")
    pc.add_argument("--cycles", type=count(1, MAX_CYCLES), default=2, help=f"power cuts (default 2, at most {MAX_CYCLES})")
    pc.add_argument("--cut-after", type=in_range(limits.CUT_AFTER), default=32, metavar="N",
                    help="acknowledged records on every device before the cut (default 32)")
    pc.add_argument("--sizes", default="4k,8k,16k,32k,64k,128k", help="record sizes, in turn (default: 4k … 128k)")
    pc.add_argument("--output", "-o", type=named("a directory"), default="lab-powercut", metavar="DIR", help="results (default ./lab-powercut)")
    pc.add_argument("--timeout", type=in_range(limits.TIMEOUT_S), default=900, metavar="S", help="per guest (default 900)")
    pc.add_argument("--cache", default="", help="lab cache directory")
    zfs_option(pc)
    pc.add_argument("--verbose", "-v", action="store_true", help="copy the guest console to stdout")
    pc.add_argument("--json", action="store_true", help="print the result documents (a JSON list)")
    pc.add_argument("--quiet", action="store_true", help="no progress on stderr")
    pc.set_defaults(func=cmd_powercut)

    i = sub.add_parser("info", help="show the built lab image")
    i.add_argument("--cache", default="")
    zfs_option(i)
    i.set_defaults(func=cmd_info)

    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def _lab(args, devices, command=(), mode="run", output=None, echo=None, timeout=3600.0):
    from slogqual import lab
    from slogqual.lab.devices import parse_paths
    select_zfs(args)
    return lab.prepare(devices, command, mode=mode, output=output, echo=echo, timeout=timeout,
                       devices_files=args.devices_file, memory_mb=args.memory, cpus=args.cpus, cache=args.cache,
                       paths=parse_paths(getattr(args, "path", []) or []))


def cmd_run(args) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("lab run needs a COMMAND after --")
    lab = _lab(args, args.device, command, output=guard_output_dir(args.output, "--output"), echo=None if args.quiet else sys.stdout,
               timeout=args.timeout)
    res = lab.run()
    if res.status is None:
        raise SlogqualError("the lab guest powered off without the job's exit status (see the console log in "
                            f"{res.output_dir})")
    print(f"slogqual lab: job exited {res.status}; results in {res.output_dir} "
          f"(host wall {res.wall_s:.1f} s)", file=sys.stderr)
    return res.status


def cmd_shell(args) -> int:
    if not sys.stdin.isatty():
        raise UsageError("lab shell needs a terminal (use `lab run` for scripts)")
    lab = _lab(args, args.device, mode="shell")
    res = lab.run()
    return res.status if res.status is not None else 0


def timings(marks, wall_s):
    """The figures `lab check` prints, from the guest's uptime marks (seconds since kernel start)."""
    t = {"root_ready_s": marks.get("stage2"), "boot_s": marks.get("udev")}
    if "zfs" in marks and "udev" in marks:
        t["module_load_s"] = round(marks["zfs"] - marks["udev"], 2)
    t["pool_ready_s"] = marks.get("pool_ready")
    t["total_s"] = round(wall_s, 2)
    return t


def cmd_check(args) -> int:
    from slogqual.lab.selftest import __name__ as selftest_module

    devices = args.device or DEFAULT_CHECK_DEVICES
    if len(devices) != 3:
        raise UsageError("lab check needs exactly three devices: two for the mirror, one for the log")
    import tempfile
    keep = args.output and guard_output_dir(args.output, "--output")
    out = keep or tempfile.mkdtemp(prefix="slogqual-labcheck-")
    try:
        lab = _lab(args, devices, [sys.executable, "-m", selftest_module], output=out,
                   echo=sys.stdout if args.verbose else None, timeout=args.timeout)
        res = lab.run()
        check = {}
        try:
            with open(os.path.join(out, "check.json")) as fh:
                check = json.load(fh)
        except (OSError, ValueError, RecursionError):
            pass
    finally:
        if not keep:
            import shutil
            shutil.rmtree(out, ignore_errors=True)
    t = timings(res.marks, res.wall_s)
    ok = res.status == 0 and bool(check.get("ok"))
    if args.json:
        print(json.dumps({"ok": ok, "status": res.status, "timings": t, "check": check, "devices": res.devices},
                         indent=2))
    else:
        for s in check.get("steps", []):
            print(f"  {s['step']:<20} {'ok' if s['ok'] else 'FAILED':<7} {s['seconds']:6.2f} s"
                  + ("" if s["ok"] else f"  {s.get('detail', '')}"))
        ev = check.get("evidence", {})
        if "zil_objset_delta" in ev:
            d = ev["zil_objset_delta"]
            print(f"  ZIL (zvol objset): {d['commit_count']} commits, {d['slog_count']} log records / "
                  f"{d['slog_bytes']} bytes to the SLOG, {d['normal_count']} / {d['normal_bytes']} to the pool")
        if "fio" in ev:
            f = ev["fio"]
            print(f"  fio 4 KiB QD1 sync=always: {f['ios']} writes, {f['iops']} IOPS, mean {f['clat_mean_us']} us")

        def fmt(v):
            return "n/a" if v is None else f"{v:.1f} s"
        print(f"timings: boot {fmt(t['boot_s'])} (root {fmt(t['root_ready_s'])}), module load "
              f"{fmt(t.get('module_load_s'))}, pool ready {fmt(t['pool_ready_s'])}, total {fmt(t['total_s'])}")
        print("lab check: " + ("PASS" if ok else f"FAIL (job status {res.status})"))
        if not ok and not check:
            print(res.console[-2000:], file=sys.stderr)
    return 0 if ok else 1


def cmd_powercut(args) -> int:
    from slogqual.cli.powercut import _print, _sizes
    from slogqual.lab import powercut as lab_powercut
    from slogqual.results.powercut import PowercutResult

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"lab powercut: {line}", file=sys.stderr, flush=True)

    select_zfs(args)
    req = lab_powercut.LabPowercutRequest(classes=args.classes, output_dir=args.output, cycles=args.cycles,
                                          cut_after=args.cut_after, sizes=_sizes(args.sizes),
                                          devices_files=args.devices_file, timeout=args.timeout,
                                          echo=sys.stdout if args.verbose else None, lab_cache=args.cache,
                                          progress=progress)
    paths = lab_powercut.run(req)
    results = [PowercutResult.load(p) for p in paths]
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        for path, r in zip(paths, results):
            print(f"{r.target_path} ({r.lab_class}, {r.emulation}): {path}")
            _print(r, False)
    return 0 if all(r.verdict != "incomplete" for r in results) else 1


def cmd_classes(args) -> int:
    from slogqual.lab import devices as _devices

    for name, c in sorted(_devices.load(args.devices_file).items()):
        print(f"{name:<13} {c.transport:<5} {c.description}")
    return 0


def cmd_info(args) -> int:
    from slogqual.lab.image import LabImage

    select_zfs(args)
    img = LabImage.load(args.cache)
    print(f"lab image {img.root}\n  kernel {img.kernel_release}\n  OpenZFS module {img.zfs_module_version}\n"
          f"  OpenZFS userland {img.zfs_userland_version}, {img.userland_source}\n  built {img.built}")
    return 0
