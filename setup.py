"""Build hook: the repository keeps slogqual's data in its top-level scenarios/ (scenarios, qualification
profiles, the lab's device classes); a wheel carries a copy inside the package as slogqual/scenarios/,
where slogqual.data looks first. Everything else is declared in setup.cfg.

It also compiles the pair engine, slogqual/native/pairbench.c, with the system C compiler (``cc``, or
$CC) into the build as slogqual/native/pairbench: no download, nothing but cc and libc headers (Debian:
gcc libc6-dev; FreeBSD: base). Without a compiler the build goes on with a warning and slogqual builds
the engine on first use (slogqual.tools.pairbench), as it does for an editable install, which compiles
nothing here.
"""

import os
import shlex
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_SRC = os.path.join(HERE, "scenarios")
DATA_DEST = ("slogqual", "scenarios")  # inside the built package
ENGINE_SRC = os.path.join(HERE, "slogqual", "native", "pairbench.c")
ENGINE_DEST = ("slogqual", "native", "pairbench")
CFLAGS = ["-O2", "-std=c99", "-Wall"]  # as slogqual.tools.pairbench.CFLAGS


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
        """cc -O2 -o build/.../slogqual/native/pairbench pairbench.c; a missing or failing compiler is a
        warning (the engine is then built on first use)."""
        output = self._engine_path()
        self.mkpath(os.path.dirname(output))
        argv = shlex.split(os.environ.get("CC") or "cc") + CFLAGS + ["-o", output, ENGINE_SRC]
        try:
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except OSError as exc:
            print(f"setup.py: warning: cannot run {argv[0]} ({exc}); the pair engine will be built on first use")
            return
        if proc.returncode != 0:
            print(f"setup.py: warning: building the pair engine failed; it will be built on first use:\n{proc.stdout}")
            if os.path.exists(output):
                os.unlink(output)

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
