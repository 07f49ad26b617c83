"""The host's TSC rate, which a lab guest's TSC runs at: under TCG an x86 guest's RDTSC is the host's own counter
(QEMU's ``cpu_get_host_ticks``), so the guest needs no calibration of it — and its own can fail.

Why: on a starved host (the slowed lab tier: a busy loop per core) the guest kernel's early TSC calibration
against the PIT came out ~22-25x low in two guests of two slowed runs (their clocks ran that much fast from boot:
stage2 at 112 s of uptime where it is 2.4 s, an hdd write+flush of 8 ms measured as 869 ms). Linux keeps that early
figure where its later refinement against the HPET differs by more than 1 % (``tsc_refine_calibration_work``), and
``tsc=reliable`` turns off the watchdog that would have noticed. ``tsc_early_khz=`` (Linux 5.8+) skips the early
calibration for a given figure, which the refinement then checks and trims.

The figure is measured here, not read: /proc/cpuinfo's "cpu MHz" is the CPU's current clock where a frequency driver
runs. RDTSC is called through ten bytes of x86-64 machine code in an executable page (ctypes has no intrinsic), timed
against CLOCK_MONOTONIC over short windows; the median of five, and nothing where they disagree, the machine is not
x86-64 or the page cannot be made (the guest then calibrates as before, and the runner's clock check stays the
backstop)."""

from __future__ import annotations

import ctypes
import mmap
import platform
import statistics
import time
from typing import Callable, Optional

# rdtsc; shl rdx, 32; or rax, rdx; ret — the 64-bit counter in rax, the System V return register
_RDTSC = bytes((0x0F, 0x31, 0x48, 0xC1, 0xE2, 0x20, 0x48, 0x09, 0xD0, 0xC3))
WINDOW_S = 0.02
WINDOWS = 5
AGREE = 0.005  # a window this near the median agrees with it; a figure needs three that do (a preempted read is
#               an outlier, and the refinement in the guest trims what is left within its 1 %)


def _rdtsc() -> Optional[Callable[[], int]]:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError):  # a kernel or policy that refuses writable executable pages
        return None
    page.write(_RDTSC)
    fn = ctypes.CFUNCTYPE(ctypes.c_uint64)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    fn.page = page  # the page lives as long as the function
    return fn


def rate_khz(windows, agree: float = AGREE) -> Optional[int]:
    """The TSC's kHz from (ticks, nanoseconds) windows: their median, or None unless three lie within ``agree``
    of it."""
    rates = [ticks * 1e6 / ns for ticks, ns in windows if ns > 0 and ticks > 0]
    if len(rates) < 3:
        return None
    mid = statistics.median(rates)
    if sum(1 for r in rates if abs(r - mid) <= agree * mid) < 3:
        return None
    return int(round(mid))


def host_tsc_khz() -> Optional[int]:
    """This host's TSC rate in kHz, measured (module doc), or None."""
    read = _rdtsc()
    if read is None:
        return None
    windows = []
    for _ in range(WINDOWS):
        t0, c0 = time.monotonic_ns(), read()
        time.sleep(WINDOW_S)
        c1, t1 = read(), time.monotonic_ns()
        windows.append((c1 - c0, t1 - t0))
    return rate_khz(windows)
