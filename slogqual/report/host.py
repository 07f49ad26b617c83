"""Words for the host document (slogqual.host/1): the table `slogqual host-probe` prints."""

from __future__ import annotations

from typing import List, Sequence

from slogqual.analysis import host as host_analysis
from slogqual.results.host import HostProbeResult, HostStep
from slogqual.units import size_label


def _f(x, fmt="{:.0f}", none="-"):
    return none if x is None else fmt.format(x)


def _stalls(passes: Sequence[Sequence[HostStep]], what: str) -> List[str]:
    """One line for each step in which a write outlasted the kernel's I/O timeout (slogqual.analysis.host)."""
    return [f"stalled: {what}, pass {n} of {len(passes)}, {s.threads} writers: its longest write took "
            f"{s.longest_write_us / 1e6:,.1f} s, past the kernel's {host_analysis.STALLED_WRITE_S:.0f}-s I/O timeout "
            f"(the device's error handling, not the host's pace): no ceiling from it"
            for n, p in enumerate(passes, 1) for s in p if s.stalled]


def table(doc: HostProbeResult) -> List[str]:
    w = doc.workload
    c = doc.copy
    fs = doc.ram.get("filesystem") or "file system unknown"
    data = doc.ram.get("data_devices") or []
    vdevs = (f"the data disks {' '.join(data)} ({doc.ram.get('layout')}) and a log file in RAM ({fs})" if data
             else f"every vdev a file in RAM ({fs})")
    out = [f"host probe: {w.protocol} {size_label(w.bs)} writes, block {size_label(w.block_size)}, "
           f"{w.zils} intent log(s); {vdevs}"]
    if c is not None:
        out.append(f"copy into RAM alone: {c.per_write_s * 1e6:.1f} us a write + {c.per_byte_s * 1e9:.2f} ns a byte "
                   f"(fio at {', '.join(size_label(s) for s in c.sizes)}: {', '.join(map(str, c.ios))} IOs)")
    if doc.passes:
        out.append(f"{len(doc.passes)} passes over the writer counts, each its own pool; each count shows its best "
                   "pass (the ceilings of all passes at the right)")
    out.append(f"{'writers':>7} {'IOPS':>7} {'IOs':>6} {'lat us':>7} {'CPU':>5} {'us/IO':>6} {'copy':>6} "
               f"{'ZFS':>6} {'txg MB/s':>8} {'rec/commit':>10} {'path us':>7} {'ceiling':>8}" + ("  pass  all passes" if doc.passes else ""))
    for s in doc.steps:
        out.append(f"{s.threads:>7} {s.iops:>7.0f} {s.ios:>6} {s.lat_us:>7.0f} {_f(s.cpu_busy, '{:.0%}'):>5} "
                   f"{_f(s.cpu_s_per_io and s.cpu_s_per_io * 1e6):>6} {_f(s.copy_s_per_io and s.copy_s_per_io * 1e6):>6} "
                   f"{_f(s.zfs_cpu_s_per_io and s.zfs_cpu_s_per_io * 1e6):>6} "
                   f"{_f(None if s.txg_bytes_s is None else s.txg_bytes_s / 1e6, '{:.1f}'):>8} "
                   f"{_f(s.records_per_commit, '{:.2f}'):>10} "
                   f"{_f(s.path_us):>7} {_f(s.ceiling_iops, '<= {:.0f}'):>8}"
                   + (f"  {_f(s.probe_pass):>4}  {' / '.join(_f(c) for c in s.pass_ceilings_iops or [])}"
                      if doc.passes else ""))
    out.append("ceiling: the least of the CPUs over ZFS's own CPU per write and the writers over the software "
               "path, the RAM copies taken out — an upper bound for any log on this host at this load; txg MB/s: "
               "the data vdevs' writes in the window (its txg syncs, their CPU in ZFS's)")
    out += _stalls(doc.passes or [doc.steps], "the probe")
    lp = doc.log_pass
    if lp is not None:
        who = ", ".join(f"{k} {v}" for k, v in lp.identity.items())
        out.append(f"log pass: the same load with {lp.device}{f' ({who})' if who else ''} as the log and data files "
                   "in RAM" + (f", {len(lp.passes)} passes, each count its best" if lp.passes else ""))
        out.append(f"{'writers':>7} {'IOPS':>7} {'IOs':>6} {'lat us':>7} {'CPU':>5} {'us/IO':>6} {'copy':>6} "
                   f"{'ZFS+log':>7} {'log w/IO':>8} {'ceiling':>8}")
        for s in lp.steps:
            per = None if not s.records_per_lwb else 1.0 / s.records_per_lwb
            out.append(f"{s.threads:>7} {s.iops:>7.0f} {s.ios:>6} {s.lat_us:>7.0f} {_f(s.cpu_busy, '{:.0%}'):>5} "
                       f"{_f(s.cpu_s_per_io and s.cpu_s_per_io * 1e6):>6} "
                       f"{_f(s.copy_s_per_io and s.copy_s_per_io * 1e6):>6} "
                       f"{_f(s.zfs_cpu_s_per_io and s.zfs_cpu_s_per_io * 1e6):>7} {_f(per, '{:.2f}'):>8} "
                       f"{_f(s.cpu_ceiling_iops, '<= {:.0f}'):>8}")
        out.append("log pass ceiling: the CPUs over ZFS's and this log's CPU per write (the data files' copies "
                   "taken out) — this host's ceiling with this log; `advise --host` takes the lower of the two")
        out += _stalls(lp.passes or [lp.steps], f"the log pass with {lp.device}")
    return out
