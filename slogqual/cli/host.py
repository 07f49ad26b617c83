"""slogqual host-probe: this host's ZFS with a perfect log, at the workload's shape (docs/advisor.md).

Arguments and printing only: the probe is slogqual/host/door.py, the figures slogqual/analysis/host.py,
the words slogqual/report/host.py.
"""

from __future__ import annotations

import json
import sys

from slogqual import limits
from slogqual.cli.options import in_range, in_range_list
from slogqual.host.door import PROTOCOLS, HostProbeRequest, run_probe
from slogqual.progress import Progress
from slogqual.report import host as host_words


def register(sub) -> None:
    p = sub.add_parser("host-probe", help="measure this host's own ceiling for sync writes (a pool in RAM)",
                       description="Run the workload's shape on a throwaway pool whose vdevs are files in RAM "
                                   "(sync=always, a RAM log), measure what the RAM copies cost alone, and write the "
                                   "host's ceiling per thread count with the copies taken out: what no log device "
                                   "can take this host past. `slogqual advise --host` uses it. Needs ZFS.")
    p.add_argument("--protocol", choices=PROTOCOLS, default="iscsi", help="iscsi (zvols) or nfs (a dataset)")
    p.add_argument("--bs", type=in_range(limits.SCENARIO_BS), default=4096, help="IO size, e.g. 4k or 64k")
    p.add_argument("--block-size", type=in_range(limits.ZFS_BLOCK),
                   help="volblocksize (iscsi, default 16k) or recordsize (nfs, default 128k)")
    p.add_argument("--threads", type=in_range_list(limits.WRITERS), default=[1, 4, 16],
                   help="all writers at each step (default 1,4,16)")
    p.add_argument("--zils", type=in_range(limits.ZILS), default=1, help="zvols or datasets the writers spread over")
    p.add_argument("--runtime", type=in_range(limits.SCENARIO_RUNTIME_S), default=3.0, help="seconds per step")
    p.add_argument("--ramp", type=in_range(limits.RAMP_S), default=1.0, help="seconds before each step counts")
    p.add_argument("--repeats", type=in_range(limits.PROBE_REPEATS), default=3,
                   help="passes over the thread counts, each its own pool; each count keeps its best pass (default 3: "
                        "a first pass in a fresh host ran low)")
    p.add_argument("--data", nargs="+", default=[], metavar="DEVICE",
                   help="the pool's own data disks (written destructively: --destroy-data; else files in RAM)")
    p.add_argument("--layout", choices=("stripe", "mirror", "raidz1", "raidz2"), default="stripe",
                   help="with --data: their layout")
    p.add_argument("--log", metavar="DEVICE",
                   help="the candidate log: after the RAM log's passes, the same passes with it as the log and RAM "
                        "data files — the host's ceiling with this log, its driver's CPU at the pool's concurrency "
                        "counted (written destructively: --destroy-data)")
    p.add_argument("--destroy-data", action="store_true",
                   help="confirm that the --data and --log devices may be overwritten")
    p.add_argument("--ram-dir", default="/dev/shm", help="a RAM file system (tmpfs) for the vdevs (default /dev/shm)")
    p.add_argument("-o", "--output", required=True, help="the host document to write (slogqual.host/1)")
    p.add_argument("--json", action="store_true", help="print the document, not the table")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=_run)


def _run(args) -> int:
    req = HostProbeRequest(protocol=args.protocol, bs=args.bs, block_size=args.block_size, threads=list(args.threads),
                           zils=args.zils, runtime_s=args.runtime, ramp_s=args.ramp, repeats=args.repeats,
                           ram_dir=args.ram_dir,
                           output=args.output, argv=["slogqual", *sys.argv[1:]], data=list(args.data),
                           layout=args.layout, destroy_data=args.destroy_data, log=args.log)
    doc = run_probe(req, Progress(quiet=args.quiet))
    if args.json:
        print(json.dumps(doc.to_dict(), indent=2))
    else:
        print("\n".join(host_words.table(doc)))
    return 0
