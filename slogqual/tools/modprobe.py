"""modprobe(8) (kmod): a kernel module loaded where the kernel will not load it by itself.

Only LIO's core (target_core_mod) needs it: its configfs tree (/sys/kernel/config/target) exists only once the
module is loaded, and nothing under configfs asks for it. What is loaded already is read from /sys/module first
(a module built into the kernel is there too), so a host that has it runs no program.
"""

from __future__ import annotations

import os
from typing import List

from slogqual.tools import spawn as _run

PROGRAM = "modprobe"
SYS_MODULE = "/sys/module"


def loaded(module: str, root: str = SYS_MODULE) -> bool:
    return os.path.isdir(os.path.join(root, module))


def load_argv(module: str) -> List[str]:
    return [PROGRAM, module]


def load(module: str, timeout: float = 60, root: str = SYS_MODULE) -> bool:
    """Load ``module`` unless it is there; True where this call loaded it. ToolFailedError with modprobe's
    complaint where it cannot (no such module, a kernel without module loading)."""
    if loaded(module, root):
        return False
    _run.run(load_argv(module), timeout=timeout, typed_timeout=True, check=True)
    return True
