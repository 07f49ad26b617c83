"""Pure decisions over collected evidence: device class, link verdict, write-cache verdict.

No I/O here. Each function returns its answer together with the evidence (or
the reason it could not decide), so the record says *why*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from slogqual.device.record import (LINK_DEGRADED, LINK_NA, LINK_OK, LINK_UNKNOWN, WC_ENABLED, WC_NONE,
                                    WC_UNKNOWN, Link, WriteCache)

VIRTUAL_TRANSPORTS = {"loop": "a loop device over a file", "nbd": "a network block device",
                      "file": "a regular file", "virtio": "a paravirtual virtio-blk disk",
                      "ram": "a RAM disk", "md": "a software RAID device", "dm": "a device-mapper device"}

# Intel Optane (3D XPoint) NVMe part numbers: 900P/905P (SSDPE21D, SSDPED1D), P4800X (SSDPE21K,
# SSDPED1K), P4801X (SSDPEL1K, SSDPE21M), P5800X (SSDPF21Q), 800P (SSDPEK1W/1A), Optane Memory
# M10/M15 (MEMPEK1J/1W, MEMPEK1F).
OPTANE_RE = re.compile(r"optane|SSDPE21[DKM]|SSDPED1[DK]|SSDPEL1[CK]|SSDPF21Q|SSDPEK1[AW]|MEMPEK1[FJW]", re.I)

# Hybrid (SSHD) drives: Seagate desktop "DX" and FireCuda/laptop "LX" lines, the first laptop
# SSHDs (ST500LM000, ST1000LM014), and models that say so.
SSHD_RE = re.compile(r"\bSSHD\b|\bhybrid\b|^ST\d+[DL]X\d|^ST500LM000|^ST1000LM014", re.I)

# PCI vendors of emulated controllers: Red Hat/QEMU (NVMe 1b36:0010), virtio, VMware, VirtualBox.
EMULATOR_PCI_VENDORS = {"0x1b36": "QEMU", "0x1af4": "virtio", "0x15ad": "VMware", "0x80ee": "VirtualBox"}

EMULATED_RE = re.compile(r"\bQEMU\b|\bVBOX\b|VMware|Virtual disk|Msft Virtual|\bBHYVE\b|Xen ?Virtual", re.I)


def emulated_by(model: Optional[str], vendor: Optional[str]) -> Optional[str]:
    """The emulator's name when model/vendor say the disk is emulated by a hypervisor."""
    for text in (vendor, model):
        if text:
            m = EMULATED_RE.search(text)
            if m:
                return m.group(0)
    return None


def classify(transport: str, rotational: Optional[bool], rotation_rate: Optional[int],
             model: Optional[str], vendor: Optional[str] = None) -> Tuple[str, List[str]]:
    """(class, evidence). Class 'unknown' comes with the reason as its evidence."""
    ev: List[str] = []
    if transport in VIRTUAL_TRANSPORTS:
        return "virtual", [f"transport {transport}: {VIRTUAL_TRANSPORTS[transport]}"]
    if transport == "pmem":
        return "nvdimm", ["transport pmem: a persistent-memory (NVDIMM) namespace"]
    if transport == "nvme":
        ev.append("transport nvme")
        if model and OPTANE_RE.search(model):
            return "optane", ev + [f"model {model!r} is an Intel Optane (3D XPoint) part"]
        return "nvme", ev + ([f"model {model!r} is not an Optane part"] if model else ["model unknown"])
    spinning: Optional[bool] = None
    if rotation_rate is not None:
        spinning = rotation_rate > 1  # ATA/SCSI report 1 for "non-rotating" in the raw field
        ev.append(f"rotation rate {rotation_rate} rpm" if spinning else "rotation rate reported as solid state")
    elif rotational is not None:
        spinning = rotational
        ev.append(f"kernel rotational flag {int(rotational)}")
    if transport not in ("sata", "sas", "scsi", "usb"):
        return "unknown", [f"transport {transport!r} is not one slogqual classifies"] + ev
    ev.insert(0, f"transport {transport}")
    if spinning is None:
        return "unknown", ev + ["rotation unknown: cannot tell a disk from an SSD"]
    if spinning:
        if model and SSHD_RE.search(model):
            return "sshd", ev + [f"model {model!r} is a hybrid (SSHD) drive"]
        return "hdd", ev
    if transport == "sata":
        return "sata-ssd", ev
    if transport in ("sas", "scsi"):
        return "sas-ssd", ev
    return "unknown", ev + ["solid state behind a USB bridge: cannot tell SATA from NVMe"]


def parse_gts(text: Optional[str]) -> Optional[float]:
    """'8.0 GT/s PCIe' / '8GT/s' / '2.5 GT/s' -> GT/s; 'Unknown' -> None."""
    if not text:
        return None
    m = re.search(r"([0-9.]+)\s*GT/s", text)
    return float(m.group(1)) if m else None


def parse_gbps(text: Optional[str]) -> Optional[float]:
    """'6.0 Gb/s' / '6.0 Gbps' / '600.000MB/s' -> Gb/s (line rate; MB/s are payload with 8b/10b)."""
    if not text:
        return None
    m = re.search(r"([0-9.]+)\s*Gb(?:/s|ps)", text)
    if m:
        return float(m.group(1))
    m = re.search(r"([0-9.]+)\s*MB/s", text)
    if m:
        return float(m.group(1)) * 10 / 1000  # 8b/10b: 600 MB/s payload = 6 Gb/s line rate
    return None


def judge_link(link: Link) -> Link:
    """Fill link.verdict (and reason) from its current and max ends."""
    cur, mx = link.current, link.max
    if cur.rate is None and cur.width is None and mx.rate is None and mx.width is None:
        link.verdict = LINK_UNKNOWN
        link.reason = link.reason or "no link speed or width reported"
        return link
    slower = cur.rate is not None and mx.rate is not None and cur.rate < mx.rate - 1e-9
    narrower = cur.width is not None and mx.width is not None and cur.width < mx.width
    if slower or narrower:
        link.verdict = LINK_DEGRADED
        what = []
        if slower:
            what.append(f"speed {cur.rate:g} < {mx.rate:g}")
        if narrower:
            what.append(f"width x{cur.width} < x{mx.width}")
        link.reason = "; ".join(what)
    elif (cur.rate is None) != (mx.rate is None) or (cur.width is None) != (mx.width is None):
        link.verdict = LINK_UNKNOWN
        link.reason = "only one of current/maximum is reported"
    else:
        link.verdict = LINK_OK
        link.reason = "running at its maximum"
    return link


def no_link(reason: str) -> Link:
    return Link(verdict=LINK_NA, reason=reason)


@dataclass
class CacheSignal:
    """One observation about the write cache. volatile: True = a volatile cache is active."""

    source: str
    volatile: Optional[bool]
    text: str


def judge_write_cache(device_signals: List[CacheSignal], kernel: Optional[str], transport: str) -> WriteCache:
    """Verdict from what the device itself reports; the kernel's queue/write_cache is a fallback.

    kernel is Linux's queue/write_cache ('write back' means the kernel sends cache flushes;
    'write through' means it drops them as no-ops).
    """
    wc = WriteCache(kernel=kernel)
    for s in device_signals:
        wc.evidence.append(f"{s.source}: {s.text}")
    known = [s for s in device_signals if s.volatile is not None]
    kernel_flushes = None if kernel is None else kernel.strip().lower().startswith("write back")
    if kernel is not None:
        wc.evidence.append(f"kernel queue/write_cache: {kernel}" +
                           (" (flushes are sent to the device)" if kernel_flushes else " (flushes are dropped)"))
    if known:
        if any(s.volatile for s in known):
            wc.verdict = WC_ENABLED
            wc.reason = "the device reports an enabled volatile write cache"
            if kernel_flushes is False:
                wc.evidence.append("CONFLICT: the device has an enabled volatile write cache but the kernel treats "
                                   "it as write-through and drops flushes: acknowledged writes are not durable")
        else:
            wc.verdict = WC_NONE
            wc.reason = "the device reports no enabled volatile write cache (flushes are no-ops)"
        return wc
    if transport in ("loop", "file", "nbd"):
        wc.verdict = WC_UNKNOWN
        wc.reason = {"loop": "a loop device passes flushes to its backing file; the cache that matters is the "
                             "device under that file's filesystem",
                     "file": "a regular file: fsync reaches the device under the filesystem",
                     "nbd": "an NBD export: the server decides what a flush does"}[transport]
        return wc
    if kernel_flushes is None:
        wc.verdict = WC_UNKNOWN
        wc.reason = "no tool reported the cache state and the kernel's queue/write_cache is unavailable"
        return wc
    if kernel_flushes:
        wc.verdict = WC_ENABLED
        wc.reason = ("the kernel reports a volatile write cache (queue/write_cache = write back); "
                     "no device tool confirmed it")
    else:
        wc.verdict = WC_NONE
        wc.reason = "the kernel reports no volatile write cache (queue/write_cache = write through)"
    return wc
