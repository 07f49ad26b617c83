"""Boot a lab guest, run one job in it, bring its results and exit status back.

The host side of a run:

1. a private job directory (``$SLOGQUAL_LAB_TMP`` or the system temp dir) holding ``stage2.sh``,
   ``lab.env``, ``job.sh`` and ``out/``; it is the guest's writable 9p share ``/lab``;
2. one nbdkit per block disk (memory plugin behind the rate/delay filters of its class) on a Unix
   socket in the job directory; a backing file per NVDIMM on a RAM filesystem (``/dev/shm``, or
   ``$SLOGQUAL_LAB_MEM``), checked for room first: every emulated medium lives in memory, so no
   device's speed depends on the host's disk;
3. QEMU (TCG) with the host's root filesystem as the read-only root share, the console on a pipe
   copied to ``console.log`` (and to the terminal with ``echo``);
4. afterwards: ``/lab/status`` is the job's exit status, ``/lab/marks`` the guest's timing marks
   (seconds of guest uptime), ``out/`` is copied to the caller's output directory.

Whatever happens (error, Ctrl-C, SIGTERM), QEMU and every nbdkit are ended by their own PIDs and the
job directory is removed.
"""

from __future__ import annotations

import json
import logging
import os
import select
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, TextIO

from slogqual.errors import SlogqualError, UsageError
from slogqual.lab import calibrate as _calibrate
from slogqual.lab.devices import DeviceInstance
from slogqual.lab.image import LabImage
from slogqual.lab import tsc as _tsc
from slogqual import owned as _owned
from slogqual.tools import qemu as _qemu
from slogqual.tools import spawn

log = logging.getLogger("slogqual.lab")

STAGE2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stage2.sh")
# no_timer_check: the kernel's boot-time check that the IO-APIC timer ticks counts loop iterations, and a TCG
# vCPU descheduled on a loaded host fails it — "Kernel panic - not syncing: IO-APIC + timer doesn't work!",
# seen once in the slowed lab tier run in lanes (two guests, a hog per core). VMs' kernels are booted with it.
# nvme.io_queue_depth=16: at most 15 NVMe commands in flight, below the 16 requests QEMU's nbd client carries at once;
# with the driver's default (1,023) the emulated NVMe stopped answering under 16 ZFS writers in about half the advisor
# draws' NVMe configurations (commands timed out, the controller reset, disabled, removed); with it, none of ten
# (two reruns and draws 28045, 7470 and 3861; docs/lab.md, "The emulated NVMe's queue").
KERNEL_APPEND = ("console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init 8250.nr_uarts=1 mitigations=off tsc=reliable "
                 "no_timer_check nvme.io_queue_depth=16")


def kernel_append(tsc_khz: Optional[int]) -> str:
    """The guest kernel's command line: with the host's TSC rate where it was measured (slogqual.lab.tsc: the
    early calibration a starved host can spoil is skipped; the refinement against the HPET still checks it)."""
    return KERNEL_APPEND + (f" tsc_early_khz={tsc_khz}" if tsc_khz else "")


UDEV_MATCH = " ".join(f"--subsystem-match={s}" for s in ("pci", "virtio", "acpi", "nd", "scsi", "block", "nvme", "ata_port", "ata_device", "ata_link", "misc"))
SBIN = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class _Terminated(Exception):
    """SIGTERM during a run: handled like Ctrl-C."""


def guest_path() -> str:
    """PATH in the guest: this Python's bin directory first (slogqual's console script is there)."""
    parts = [os.path.dirname(sys.executable)]
    for p in (os.environ.get("PATH", "") + ":" + SBIN).split(":"):
        if p and p not in parts and "/shims" not in p:
            parts.append(p)
    return ":".join(parts)


# the guest's answer to a run that timed out (stage2.sh's hang_watch): the request, the report, the wait for it
HANG_REQUEST, HANG_REPORT, HANG_WAIT_S = "hang.request", "hang.txt", 30.0

RATE_BURST_S = "0.5"  # nbdkit rate filter burstiness (rate-seconds a device may burst after idling)

COVERED = ("/run", "/tmp", "/var/tmp")  # the guest mounts a fresh tmpfs on each (stage2.sh)


def keep_paths() -> List[str]:
    """Host directories the guest must still see under its tmpfs-covered /run, /tmp, /var/tmp: the
    tree slogqual runs from (an editable install in a CI clone under /tmp, say), whose tests and job
    scripts the guest also reads. Paths with ':' cannot be passed and are left out."""
    import slogqual
    src = os.path.dirname(os.path.dirname(os.path.abspath(slogqual.__file__)))
    out = []
    # the interpreter's prefix too: a venv under /tmp (a wheel installed for a test) holds bin/slogqual
    # and pyvenv.cfg outside the package's own directory
    for path in sorted({src, os.path.abspath(sys.prefix)}):
        if any(path == c or path.startswith(c + "/") for c in COVERED) and ":" not in path and \
                not any(path == k or path.startswith(k + "/") for k in out):  # inside one kept already
            out.append(path)
    return out


@dataclass
class RunResult:
    status: Optional[int]  # the job's exit status, None when the guest never wrote one
    marks: Dict[str, float]  # guest uptime (s) at stage2, udev, zfs, devices, job, end
    devices: List[dict]
    wall_s: float  # host wall time from QEMU start to QEMU exit
    console: str  # the whole serial console
    output_dir: Optional[str]
    #: the relative classes' calibration in this guest (slogqual.lab.calibrate.Calibration as dicts)
    calibration: List[dict] = field(default_factory=list)


QBOOT = "/usr/share/qemu/qboot.rom"

# The guest's uptime at its end can only pass the host's wall time of QEMU's life (start to exit) if the guest's
# clock ran fast: a slowed lab tier of 2026-11-30 saw a guest end at 3,780 s of uptime within at most 148 s of the
# host's (its kernel's TSC calibration at boot on a starved host; tsc=reliable keeps the watchdog from mending
# it), every time it measured 25x too long. Past this ratio (and a few seconds) the run's times are void.
GUEST_CLOCK_RATIO = 1.5
GUEST_CLOCK_SLACK_S = 5.0


def check_guest_clock(marks: Dict[str, float], wall_s: float, where: str = "") -> None:
    """SlogqualError where the guest's clock ran fast (GUEST_CLOCK_RATIO): its measurements are void."""
    end = marks.get("end")
    if end is None or end <= GUEST_CLOCK_RATIO * wall_s + GUEST_CLOCK_SLACK_S:
        return
    raise SlogqualError(f"the lab guest's clock ran {end / wall_s:.1f}x the host's ({end:.0f} s of uptime in "
                        f"{wall_s:.0f} s): every time it measured is void (its kernel's TSC calibration on a "
                        f"starved host); run it again" + (f" — its results are kept in {where}" if where else ""))


def _bios() -> Optional[str]:
    """qboot (faster than SeaBIOS at a direct kernel boot, and quiet) when installed;
    SLOGQUAL_LAB_BIOS=seabios keeps QEMU's default, SLOGQUAL_LAB_BIOS=FILE names another."""
    choice = os.environ.get("SLOGQUAL_LAB_BIOS", "")
    if choice == "seabios":
        return None
    if choice:
        return choice
    return QBOOT if os.path.exists(QBOOT) else None


def parse_marks(text: str) -> Dict[str, float]:
    marks: Dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                marks.setdefault(parts[0], float(parts[1]))
            except ValueError:
                continue
    return marks


@dataclass
class LabRun:
    image: LabImage
    devices: List[DeviceInstance]
    command: Sequence[str] = ()
    mode: str = "run"  # run | shell
    output_dir: Optional[str] = None
    echo: Optional[TextIO] = None  # copy the console here as it comes
    memory_mb: int = 1024
    cpus: int = 1
    timeout: float = 3600.0
    tmp_base: Optional[str] = None
    #: shared paths (QEMU throttle groups): name -> bytes/s that all devices behind it share
    paths: Dict[str, int] = field(default_factory=dict)
    job_dir: Optional[str] = field(default=None, init=False)
    sock_dir: Optional[str] = field(default=None, init=False)
    mem_dir: Optional[str] = field(default=None, init=False)  # NVDIMM backing files, on tmpfs
    #: the media of power-cut classes (device index -> a file the caller made and keeps: it must outlive
    #: the run, the cut and the job directory, since it is what is verified afterwards)
    backing: Dict[int, str] = field(default_factory=dict)
    #: called about five times a second while the guest runs (powercut: count acknowledged records, cut)
    watch: Optional[Callable[["LabRun"], None]] = None
    qemu: Optional[spawn.Background] = field(default=None, init=False)
    servers: list = field(default_factory=list, init=False)
    server_of: Dict[int, object] = field(default_factory=dict, init=False)  # device index -> its nbdkit
    cut_at: Optional[float] = field(default=None, init=False)  # monotonic time of power_cut()

    # -- set-up --------------------------------------------------------------------------------
    def _write(self, name: str, text: str, mode: int = 0o644) -> str:
        path = os.path.join(self.job_dir, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(path, mode)
        return path

    def _prepare(self) -> None:
        base = self.tmp_base or os.environ.get("SLOGQUAL_LAB_TMP") or None
        for where in {base or tempfile.gettempdir(), tempfile.gettempdir(), mem_base()}:
            remove_stale_job_dirs(where)
        self.job_dir = tempfile.mkdtemp(prefix="slogqual-lab-", dir=base)
        os.chmod(self.job_dir, 0o755)
        self._write("owner.pid", f"{os.getpid()}\n")
        # A Unix socket path holds at most 107 bytes: under a deep job directory the nbd sockets go
        # to a short directory of their own in the system temp dir (same owner.pid, same clean-up).
        if len(self.job_dir) <= 60:
            self.sock_dir = self.job_dir
        else:
            self.sock_dir = _owned.make_dir("slogqual-lab-sock-")
        pmem_bytes = sum(d.cls.size for d in self.devices if d.cls.transport == "pmem")
        if pmem_bytes:
            self.mem_dir = make_mem_dir(pmem_bytes)
        os.mkdir(os.path.join(self.job_dir, "out"))
        os.mkdir(os.path.join(self.job_dir, "rate"))  # calibrated classes' nbdkit rate files (lab.calibrate)
        shutil.copyfile(STAGE2, os.path.join(self.job_dir, "stage2.sh"))
        specs = " ".join(f"{d.index}:{d.cls.name}:{d.cls.transport}:{d.serial}" for d in self.devices)
        env = {
            "LAB_MODE": self.mode,
            "LAB_KREL": self.image.kernel_release,
            "LAB_MODULES": self.image.modules,
            "LAB_KEEP": ":".join(keep_paths()),
            "LAB_PATH": guest_path(),
            "LAB_DEVICES": specs,
            "LAB_UDEV_MATCH": os.environ.get("SLOGQUAL_LAB_UDEV_MATCH", UDEV_MATCH),
            "LAB_TERM": os.environ.get("TERM", "linux") if self.mode == "shell" else "dumb",
            "LAB_PYTHON": sys.executable,
            "LAB_CALIBRATE": _calibrate.spec([(d.index, d.node, d.cls.bandwidth_share)
                                              for d in self.devices if d.cls.calibrated]),
        }
        # what the host built: which device sits behind which shared path, with which caps (the guest cannot
        # see a throttle group; results that are about shared paths cite this)
        self._write("topology.json", json.dumps({"paths": [{"name": n, "ceiling_bytes_s": b} for n, b in self.paths.items()],
                                                 "devices": [d.to_dict() for d in self.devices]}, indent=1) + "\n")
        self._write("lab.env", "".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()))
        self._write("job.sh", "exec " + " ".join(shlex.quote(a) for a in self.command) + "\n" if self.command else "true\n")

    def _disks(self) -> List[_qemu.Disk]:
        from slogqual.tools.nbdkit import NbdServer

        disks = []
        for d in self.devices:
            c = d.cls
            disk = _qemu.Disk(node=d.node, transport=c.transport, serial=d.serial, model=c.model, vendor=c.vendor,
                              product=c.product, rotation_rate=c.rotation_rate, iops_limit=c.iops_limit,
                              logical_block_size=c.logical_block_size, physical_block_size=c.physical_block_size,
                              bps_limit=d.cap, shared_group=d.path or None)
            if c.transport == "pmem":
                disk.pmem_path = os.path.join(self.mem_dir, f"{d.node}.pmem")
                with open(disk.pmem_path, "wb") as fh:
                    fh.truncate(c.size)
                disk.size = c.size
            else:
                filters, fargs = [], {}
                if c.bandwidth or c.calibrated:
                    filters.append("rate")
                    if c.calibrated:
                        # no rate: uncapped until the guest has measured the device and written its cap
                        # here (lab.calibrate); nbdkit rereads the file while it runs
                        fargs["rate-file"] = _calibrate.rate_file(self.job_dir, d.node)
                    else:
                        fargs["rate"] = str(c.bandwidth * 8)  # the rate filter counts bits per second
                    # a device's bandwidth is sustained: nbdkit's default bucket (2 rate-seconds) let an idle
                    # capped log take 2 s of data at memory speed, so a 6 s lab step measured its log vdev
                    # 15 % over the cap (46.2 MiB/s for 40, measured); half a second bounds that at 8 %
                    fargs["burstiness"] = RATE_BURST_S
                if c.write_delay_ms or c.read_delay_ms:
                    filters.append("delay")
                    if c.write_delay_ms:
                        fargs["wdelay"] = f"{int(c.write_delay_ms)}ms"
                    if c.read_delay_ms:
                        fargs["rdelay"] = f"{int(c.read_delay_ms)}ms"
                if c.power_cut:
                    medium = self.backing.get(d.index)
                    if not medium or not os.path.isfile(medium):
                        raise UsageError(f"lab device {d.index} ({c.name}) has a power to cut: it needs a backing file")
                    if c.cache != "none":
                        filters.append("cache")  # last: nearest the medium, as a device's cache is
                        fargs["cache"] = c.cache
                    server = NbdServer(plugin="file", plugin_args=[medium], filters=filters, filter_args=fargs,
                                       socket_dir=self.sock_dir)
                else:
                    server = NbdServer(plugin="memory", plugin_args=[f"size={c.size}"], filters=filters,
                                       filter_args=fargs, socket_dir=self.sock_dir)
                self.servers.append(server)
                self.server_of[d.index] = server
                server.start()
                disk.nbd_socket = server.socket
            disks.append(disk)
        return disks

    def argv(self, disks: List[_qemu.Disk]) -> List[str]:
        """QEMU's command line; what it was, with the guest's kernel line and the TSC rate given, is kept beside
        the run's results (lab-machine.json: a guest's clock rests on that rate, slogqual.lab.tsc)."""
        tsc_khz = _tsc.host_tsc_khz()
        append = kernel_append(tsc_khz)
        m = _qemu.Machine(
            kernel=self.image.kernel, initrd=self.image.initrd, append=append,
            memory_mb=self.memory_mb, cpus=self.cpus,
            shares=[_qemu.Share9p("root", "/", readonly=True), _qemu.Share9p("lab", self.job_dir)],
            disks=disks, interactive=(self.mode == "shell"), bios=_bios(),
            cpu=os.environ.get("SLOGQUAL_LAB_CPU") or "max", throttle_groups=dict(self.paths),
        )
        argv = _qemu.machine_argv(m)
        if self.job_dir:
            self._write("machine.json", json.dumps({"tsc_early_khz": tsc_khz, "kernel_append": append, "qemu": argv},
                                                   indent=1) + "\n")
        return argv

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> RunResult:
        old_term = signal.getsignal(signal.SIGTERM)

        def on_term(signum, frame):
            raise _Terminated()

        in_main = threading.current_thread() is threading.main_thread()
        if in_main:
            signal.signal(signal.SIGTERM, on_term)
        try:
            return self._run()
        except _Terminated:
            raise KeyboardInterrupt from None
        finally:
            self.cleanup()
            if in_main:
                signal.signal(signal.SIGTERM, old_term)

    def _run(self) -> RunResult:
        self._prepare()
        disks = self._disks()
        argv = self.argv(disks)
        console_path = os.path.join(self.job_dir, "console.log")
        t0 = time.monotonic()
        if self.mode == "shell":
            # The terminal is the guest's console; QEMU gets its own session only when not interactive.
            self.qemu = _qemu.start(argv, interactive=True)
            self.qemu.wait()
            console = ""
        else:
            # the serial console and QEMU's own complaints on one pipe, read as they come
            self.qemu = _qemu.start(argv, interactive=False)
            console = self._pump(console_path, t0)
        wall = time.monotonic() - t0
        rc = self.qemu.returncode
        status = self._read_status()
        marks = parse_marks(self._read("marks"))
        devices = []
        try:
            devices = json.loads(self._read("devices.json") or "[]")
        except ValueError:
            pass
        calibration = _calibrate.load(os.path.join(self.job_dir, "calibration.json"))
        if self.cut_at is not None:  # the power was cut: QEMU died by SIGKILL, as it was meant to
            status = None
        elif "SLOGQUAL-LAB-INIT-FAILED" in console:
            raise SlogqualError("the lab guest's initramfs failed: " + _last_lines(console, "lab-init:"))
        if status is None and rc not in (0, None) and self.cut_at is None:
            raise SlogqualError(f"QEMU exited with status {rc}: {_tail(console)}")
        out = None
        if self.output_dir:
            out = self._collect(console)
        if self.cut_at is None:
            check_guest_clock(marks, wall, out or "")
        return RunResult(status=status, marks=marks, devices=devices, wall_s=wall, console=console, output_dir=out,
                         calibration=calibration)

    def _pump(self, console_path: str, t0: float) -> str:
        chunks: List[str] = []
        with open(console_path, "w", encoding="utf-8", errors="replace") as logf:
            assert self.qemu.stdout is not None
            fd = self.qemu.stdout.fileno()
            while True:
                if time.monotonic() - t0 > self.timeout:
                    self._hung(fd, chunks, logf)
                ready, _, _ = select.select([fd], [], [], 1.0 if self.watch is None else 0.2)
                if self.watch is not None and self.cut_at is None:
                    self.watch(self)
                if ready and not self._console(fd, chunks, logf):
                    break
        self.qemu.wait(timeout=60)  # its console closed: it is exiting
        return "".join(chunks)

    def _console(self, fd: int, chunks: List[str], logf: TextIO) -> bool:
        """Read what the console has (select said it is ready); False once it is closed."""
        data = os.read(fd, 65536)
        if not data:
            return False
        text = data.decode("utf-8", errors="replace")
        chunks.append(text)
        logf.write(text)
        if self.echo is not None:
            self.echo.write(text)
            self.echo.flush()
        return True

    def _hung(self, fd: int, chunks: List[str], logf: TextIO) -> None:
        """The guest ran past the timeout: ask it what its tasks are blocked on (stage2.sh's hang_watch answers
        through the job share within HANG_WAIT_S), keep that and the console among the results, and fail
        naming them — a guest that went idle for good (a cold CI run's 2.4 guest, 2026-11-29) then says where."""
        said = ""
        if self.mode == "run":
            self._write(HANG_REQUEST, f"{self.timeout:.0f}\n")
            report = os.path.join(self.job_dir, HANG_REPORT)
            deadline = time.monotonic() + HANG_WAIT_S
            while time.monotonic() < deadline and not os.path.exists(report):
                ready, _, _ = select.select([fd], [], [], 0.5)
                if ready and not self._console(fd, chunks, logf):
                    break
            if self.output_dir:
                dest = os.path.abspath(self.output_dir)
                os.makedirs(dest, exist_ok=True)
                self._lab_files(dest, "".join(chunks))
                if os.path.exists(report):
                    shutil.copyfile(report, os.path.join(dest, "lab-hang.txt"))
                    said = f"; what its tasks were blocked on: {os.path.join(dest, 'lab-hang.txt')}"
                else:
                    said = f"; it did not say what its tasks were blocked on within {HANG_WAIT_S:.0f} s"
        raise SlogqualError(f"the lab guest did not finish within {self.timeout:.0f} s{said}")

    def power_cut(self, indices: Sequence[int]) -> None:
        """The power cut: SIGKILL the nbdkit of each device named (its cache filter's blocks are gone, its
        backing file keeps what reached it), then SIGKILL QEMU, the machine the devices sit in, so that
        nothing the guest does after the cut counts. ``stop()``/``cleanup()`` still reap both."""
        for i in indices:
            server = self.server_of.get(i)
            if server is None:
                raise UsageError(f"lab device {i} has no nbdkit to cut the power of")
            server.power_cut()
        self.cut_at = time.monotonic()
        if self.qemu is not None:
            self.qemu.kill()

    def job_path(self, *parts: str) -> str:
        """A path in the running job's directory (the guest's /lab)."""
        if self.job_dir is None:
            raise SlogqualError("the lab run has no job directory (not started, or over)")
        return os.path.join(self.job_dir, *parts)

    def _read(self, name: str) -> str:
        try:
            with open(os.path.join(self.job_dir, name), encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def _read_status(self) -> Optional[int]:
        text = self._read("status").strip()
        return int(text) if text.lstrip("-").isdigit() else None

    def _collect(self, console: str) -> str:
        dest = os.path.abspath(self.output_dir)
        os.makedirs(dest, exist_ok=True)
        src = os.path.join(self.job_dir, "out")
        for name in os.listdir(src):
            s, d = os.path.join(src, name), os.path.join(dest, name)
            if os.path.isdir(s) and not os.path.islink(s):
                shutil.copytree(s, d, dirs_exist_ok=True)
            else:
                shutil.copy2(s, d)
        self._lab_files(dest, console)
        return dest

    def _lab_files(self, dest: str, console: str) -> None:
        """The run's own record beside the job's results: its marks, devices, calibration, topology, machine
        (QEMU's command line, the guest's kernel line and TSC rate), console."""
        for name in ("marks", "devices.json", "calibration.json", "topology.json", "machine.json"):
            if os.path.exists(os.path.join(self.job_dir, name)):
                shutil.copyfile(os.path.join(self.job_dir, name), os.path.join(dest, f"lab-{name}"))
        with open(os.path.join(dest, "lab-console.log"), "w", encoding="utf-8") as fh:
            fh.write(console)

    # -- clean-up ------------------------------------------------------------------------------
    def cleanup(self) -> None:
        if self.qemu is not None:
            self.qemu.stop()  # by its own PID: SIGTERM (QEMU exits on it), 10 s, then SIGKILL
        for server in self.servers:
            try:
                server.stop()
            except Exception as exc:  # keep cleaning up
                log.warning("stopping nbdkit: %s", exc)
        self.servers = []
        for d in (self.sock_dir, self.mem_dir, self.job_dir):
            if d and os.path.isdir(d):
                shutil.rmtree(d, ignore_errors=True)
        self.job_dir = self.sock_dir = self.mem_dir = None


#: Where NVDIMM backing files go: a RAM filesystem. On a disk-backed directory the guest's stores to
#: the shared mapping are written back to the host disk, and the "NVDIMM" measured 30 ms per 4 KiB
#: write+flush on a busy CI disk (slower than the 8 ms hdd class) against 76 us on /dev/shm.
MEM_DIR_DEFAULT = "/dev/shm"
TMPFS_MAGIC = 0x01021994
RAMFS_MAGIC = 0x858458F6


def mem_base() -> str:
    return os.environ.get("SLOGQUAL_LAB_MEM") or MEM_DIR_DEFAULT


def _fs_magic(path: str) -> Optional[int]:
    """The f_type of statfs(2) (os.statvfs does not carry it), None where it cannot be asked."""
    try:
        import ctypes

        buf = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on x86_64; f_type comes first
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.statfs(os.fsencode(path), buf) != 0:
            return None
        return int.from_bytes(buf.raw[:8], sys.byteorder) if sys.platform.startswith("linux") else None
    except (OSError, AttributeError):
        return None


def mem_available() -> Optional[int]:
    """MemAvailable of /proc/meminfo in bytes (None off Linux)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_mem_room(base: str, need: int) -> None:
    """Refuse, in one line, a memory directory that is not a RAM filesystem or lacks the room."""
    if not os.path.isdir(base):
        raise UsageError(f"the lab's NVDIMM backing goes to a RAM filesystem, and {base} is not a directory "
                         "(mount a tmpfs there, or name one with SLOGQUAL_LAB_MEM)")
    magic = _fs_magic(base)
    if magic is not None and magic not in (TMPFS_MAGIC, RAMFS_MAGIC):
        raise UsageError(f"{base} is not a RAM filesystem (tmpfs): an NVDIMM backed by a disk file is as slow as "
                         "that disk; name a tmpfs with SLOGQUAL_LAB_MEM")
    st = os.statvfs(base)
    free = st.f_bavail * st.f_frsize
    avail = mem_available()
    mib = 1 << 20
    if free < need:
        raise UsageError(f"the lab's NVDIMMs need {need // mib} MiB of memory on {base}, which has {free // mib} MiB free")
    if avail is not None and avail < need:
        raise UsageError(f"the lab's NVDIMMs need {need // mib} MiB of memory; the host has {avail // mib} MiB available")


def make_mem_dir(need: int) -> str:
    """A private directory on the RAM filesystem for ``need`` bytes of NVDIMM backing, owned like a
    job directory (owner.pid) so that a later run removes it when this one was killed."""
    base = mem_base()
    check_mem_room(base, need)
    remove_stale_job_dirs(base)
    return _owned.make_dir("slogqual-lab-mem-", base)


def remove_stale_job_dirs(base: str) -> List[str]:
    """Remove job directories left by a slogqual that was killed (SIGKILL leaves no chance to clean
    up): those whose owner.pid names no running process. Returns what was removed."""
    return _owned.remove_stale(base, "slogqual-lab-", lambda path: shutil.rmtree(path, ignore_errors=True))


def _tail(text: str, n: int = 3) -> str:
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:]) if lines else "(no console output)"


def _last_lines(text: str, prefix: str) -> str:
    lines = [l.strip() for l in text.splitlines() if prefix in l]
    return lines[-1] if lines else _tail(text)


def require_host() -> None:
    """The host programs a run needs, with install advice."""
    if os.geteuid() != 0:
        raise UsageError("the lab runs as root: QEMU shares the host's whole / (read-only) with the guest, "
                         "whose root user must read it")
    _qemu.check_version()  # present and new enough (tools/run.PROGRAMS), with install advice
    from slogqual.tools import nbdkit as _nbdkit
    _nbdkit.check_version()
    if not os.path.exists("/lib/systemd/systemd-udevd"):
        raise UsageError("/lib/systemd/systemd-udevd missing (Debian: apt-get install udev); contrib/lab/build.sh installs it")
    if not os.path.exists("/bin/busybox"):
        raise UsageError("/bin/busybox missing (Debian: apt-get install busybox-static)")
