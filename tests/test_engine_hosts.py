"""The pair engine on hosts this machine is not: FreeBSD 14 (x86_64 and aarch64), cross-built here with zig's
C compiler (PyPI's ziglang, the test extra) as strictly as the warnings allow, and each binary shown to be a
FreeBSD program that carries the FreeBSD branches of pairbench.c: the flush of a disk by ioctl(DIOCGFLUSH)
and the death signal by procctl(PROC_PDEATHSIG_CTL). Nothing here runs on FreeBSD: what is checked is what
the compiler made of the source. (A host without a C compiler, and a wheel's engine there:
tests/test_wheel.py.)"""

import importlib.util
import os
import subprocess
import sys

import pytest

import elf
from conftest import ROOT

SOURCE = os.path.join(ROOT, "slogqual", "native", "pairbench.c")
# FreeBSD 14.0's ABI, named rather than left to zig's default (which moves with zig's releases)
FREEBSD_14 = {"x86_64": ("x86_64-freebsd.14.0-none", elf.EM_X86_64),
              "aarch64": ("aarch64-freebsd.14.0-none", elf.EM_AARCH64)}
STRICT = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None,
                                reason="needs ziglang (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def zig(tmp_path_factory):
    """``zig cc`` with its caches in one temporary directory for the module (the first build of a target's
    libc stubs takes seconds; the others reuse it), never the user's."""
    cache = tmp_path_factory.mktemp("zig-cache")
    env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=str(cache), ZIG_LOCAL_CACHE_DIR=str(cache))

    def cc(*argv):
        proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", *map(str, argv)], capture_output=True,
                              text=True, env=env, timeout=600)
        assert proc.returncode == 0, f"zig cc {' '.join(map(str, argv))}: exit {proc.returncode}\n{proc.stderr}"
        return proc

    return cc


def diocgflush(zig, target, tmp_path):
    """DIOCGFLUSH as FreeBSD's own sys/disk.h defines it for this target (_IO('d', 135)), read back from an
    object file compiled here rather than written down."""
    probe = tmp_path / "diocgflush.c"
    probe.write_text("#include <sys/types.h>\n#include <sys/disk.h>\n"
                     "const unsigned long slogqual_diocgflush = DIOCGFLUSH;\n")
    obj = tmp_path / f"diocgflush-{target}.o"
    zig("-target", target, "-c", "-o", obj, probe)
    return elf.Elf(str(obj)).value_of("slogqual_diocgflush")


@pytest.mark.parametrize("arch", sorted(FREEBSD_14))
def test_pairbench_builds_for_freebsd_14_with_its_flush_and_death_signal(arch, zig, tmp_path):
    target, machine = FREEBSD_14[arch]
    binary = tmp_path / f"pairbench-{target}"
    zig("-target", target, *STRICT, "-o", binary, SOURCE)  # any warning fails the build
    b = elf.Elf(str(binary))
    assert b.machine == machine
    # a FreeBSD program: the ABI note FreeBSD's kernel brands it by (imgact_elf looks at the note before
    # EI_OSABI, which zig leaves at 0 where the base system's clang writes 9), and FreeBSD's run-time linker
    assert b.osabi in (0, elf.ELFOSABI_FREEBSD), b.osabi
    tags = [desc for owner, kind, desc in b.notes(".note.tag") if owner == "FreeBSD" and kind == elf.NT_FREEBSD_ABI_TAG]
    assert len(tags) == 1 and 1400000 <= int.from_bytes(tags[0], "little") < 1500000, tags
    interp = b.section(".interp").rstrip(b"\0")
    assert interp == b"/libexec/ld-elf.so.1", interp
    # the FreeBSD branches, compiled in: procctl(2) for the death signal, ioctl(2) with DIOCGFLUSH for a
    # disk's flush (both called only there), and not Linux's prctl
    imports = set(b.imports())
    assert {"procctl", "ioctl", "fsync"} <= imports, sorted(imports)
    assert "prctl" not in imports and "fdatasync" not in imports, sorted(imports)
    number = diocgflush(zig, target, tmp_path)
    assert number >> 8 & 0xFF == ord("d") and number & 0xFF == 135, hex(number)
    assert b.loads_constant(number), f"no load of DIOCGFLUSH ({number:#x}) in the code"
    assert b"DIOCGFLUSH\0" in b.section(".rodata")  # the flush it names in its summary line
