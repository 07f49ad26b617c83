"""Where the data slogqual ships lives: the pool scenarios, the qualification profiles (profiles/) and
the lab's device classes (lab-devices.toml).

The repository keeps them in its top-level ``scenarios/``; a wheel carries a copy inside the package
as ``slogqual/scenarios/`` (setup.py's build_py puts it there). Looked for in that order: the copy
inside the installed package, then the source tree's ``scenarios/`` (an editable install, a clone run
in place). Nothing else in slogqual works out these paths.
"""

from __future__ import annotations

import os
from typing import Optional

from slogqual.errors import MissingDependencyError

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_SOURCE_TREE = os.path.dirname(_PACKAGE)

#: The copy inside the installed package (a wheel).
PACKAGE_DATA = os.path.join(_PACKAGE, "scenarios")
#: The repository's own directory (an editable install or a clone).
SOURCE_DATA = os.path.join(_SOURCE_TREE, "scenarios")


def _candidates():
    yield PACKAGE_DATA
    # Only a source tree (setup.cfg beside the package), not whatever "scenarios" is in site-packages.
    if os.path.isfile(os.path.join(_SOURCE_TREE, "setup.cfg")):
        yield SOURCE_DATA


def data_dir() -> Optional[str]:
    """The directory the shipped data is in, None when there is none."""
    return next((d for d in _candidates() if os.path.isdir(d)), None)


def data_path(*parts: str) -> str:
    """The path of shipped data: ``data_path("profiles")``, ``data_path("lab-devices.toml")``. Never
    raises (module constants are built from it at import): when there is no data, the path names where
    a wheel's copy would be, and :func:`require` turns it into one clear error where it is used."""
    return os.path.join(data_dir() or PACKAGE_DATA, *parts)


def require(path: str) -> str:
    """``path`` (from :func:`data_path`) when it exists; else a MissingDependencyError naming the
    places looked in: one line, exit 2."""
    if os.path.exists(path):
        return path
    looked = " or ".join(_candidates())
    raise MissingDependencyError(f"slogqual's shipped data is missing: no {path} (looked for scenarios/ in "
                                 f"{looked}); reinstall slogqual, or run it from a clone of its repository")
