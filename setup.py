"""Build hook: the repository keeps slogqual's data in its top-level scenarios/ (scenarios, qualification
profiles, the lab's device classes); a wheel carries a copy inside the package as slogqual/scenarios/,
where slogqual.data looks first. Everything else is declared in setup.cfg.

It also compiles the pair engine, slogqual/native/pairbench.c, into the build as
slogqual/native/pairbench, with the first of:
- $CC, when set (the builder's choice);
- on Linux, zig's C compiler from PyPI's ``ziglang`` package, where it is importable here (``pip install
  ziglang``; the test extra has it), for ARCH-linux-musl, linked static: the wheel's engine then runs on
  any Linux of its architecture (the platform tag ``linux_ARCH`` promises no more), whatever its glibc
  and whether or not it has a C compiler (TrueNAS SCALE and most appliances have none);
- the system ``cc`` (Debian: gcc libc6-dev; FreeBSD: base), linked against this host's libc.
No download here. Without a compiler the build goes on with a warning and slogqual builds the engine
on first use (slogqual.tools.pairbench), as it does for an editable install, which compiles nothing
here; where it cannot, the sweep measures with fio and says so.
"""

import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_SRC = os.path.join(HERE, "scenarios")
DATA_DEST = ("slogqual", "scenarios")  # inside the built package
ENGINE_SRC = os.path.join(HERE, "slogqual", "native", "pairbench.c")
ENGINE_DEST = ("slogqual", "native", "pairbench")
CFLAGS = ["-O2", "-std=c99", "-Wall"]  # as slogqual.tools.pairbench.CFLAGS
# zig's name of the architecture in the wheel's platform tag (sysconfig.get_platform(): linux-x86_64, ...)
ZIG_ARCH = {"x86_64": "x86_64", "aarch64": "aarch64", "ppc64le": "powerpc64le", "s390x": "s390x",
            "riscv64": "riscv64"}


def engine_compilers():
    """(name, argv prefix) of the compilers to try for the pair engine, best first (the module's
    docstring says why). zig's target is the architecture of the platform tag the wheel gets, not
    the machine's (a 32-bit Python on a 64-bit kernel)."""
    if os.environ.get("CC"):
        return [(os.environ["CC"], shlex.split(os.environ["CC"]))]
    out = []
    system, _, arch = sysconfig.get_platform().partition("-")
    if system == "linux" and arch in ZIG_ARCH and importlib.util.find_spec("ziglang") is not None:
        target = f"{ZIG_ARCH[arch]}-linux-musl"
        out.append((f"zig cc -target {target} (static)",
                    [sys.executable, "-m", "ziglang", "cc", "-target", target, "-static"]))
    return out + [("cc", ["cc"])]


class build_py_with_data(build_py):
    """build_py, then the top-level scenarios/ tree copied into the build as slogqual/scenarios/."""

    def _data_files(self):
        """(target in the build, source) for every file of scenarios/, dot files left out."""
        out = []
        for dirpath, dirnames, filenames in os.walk(DATA_SRC):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            rel = os.path.relpath(dirpath, DATA_SRC)
            for name in sorted(filenames):
                if not name.startswith("."):
                    out.append((os.path.normpath(os.path.join(self.build_lib, *DATA_DEST, rel, name)),
                                os.path.join(dirpath, name)))
        return out

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not os.path.isdir(DATA_SRC):
            raise SystemExit(f"setup.py: {DATA_SRC} is missing (an sdist without it was built without MANIFEST.in)")
        for target, source in self._data_files():
            self.mkpath(os.path.dirname(target))
            self.copy_file(source, target)
        self._build_engine()

    def _engine_path(self):
        return os.path.join(self.build_lib, *ENGINE_DEST)

    def _build_engine(self):
        """COMPILER -O2 -o build/.../slogqual/native/pairbench pairbench.c with the first compiler of
        engine_compilers() that works; none working is a warning (the engine is then built on first use)."""
        output = self._engine_path()
        self.mkpath(os.path.dirname(output))
        if os.path.exists(output):  # an earlier build's, perhaps of another pairbench.c: never shipped by this one
            os.unlink(output)
        for name, compiler in engine_compilers():
            argv = compiler + CFLAGS + ["-o", output, ENGINE_SRC]
            print(f"setup.py: building the pair engine with {name}")
            try:
                proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            except OSError as exc:
                print(f"setup.py: warning: cannot run {argv[0]} ({exc})")
                continue
            if proc.returncode == 0:
                return
            print(f"setup.py: warning: {name} failed:\n{proc.stdout}")
            if os.path.exists(output):
                os.unlink(output)
        print("setup.py: warning: the pair engine is not built; slogqual builds it on first use where cc is there, "
              "and measures with fio where it is not")

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        built = [self._engine_path()] if os.path.exists(self._engine_path()) else []
        return outputs + [target for target, _ in self._data_files()] + built


class BinaryDistribution(Distribution):
    """The wheel holds a compiled program (the pair engine): tag it for this platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": build_py_with_data}, distclass=BinaryDistribution)
