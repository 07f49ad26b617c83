"""Build hook: the repository keeps slogqual's data in its top-level scenarios/ (scenarios, qualification
profiles, the lab's device classes); a wheel carries a copy inside the package as slogqual/scenarios/,
where slogqual.data looks first. Everything else is declared in setup.cfg.

An editable install copies nothing: slogqual.data finds the source tree's scenarios/ instead.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_SRC = os.path.join(HERE, "scenarios")
DATA_DEST = ("slogqual", "scenarios")  # inside the built package


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

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [target for target, _ in self._data_files()]


setup(cmdclass={"build_py": build_py_with_data})
