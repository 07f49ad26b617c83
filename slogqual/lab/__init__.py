"""The slogqual lab: a QEMU guest with real OpenZFS and emulated device classes (docs/lab.md).

Two doors, both library calls (the CLI parses and prints around them):

- ``lab.run(devices, command, ...)`` boots a guest with the named device classes, runs one job
  in it and returns its ``RunResult`` (exit status, timing marks, the results directory);
- ``lab.scenario.run_scenario(...)`` runs a pool scenario in a guest and returns the host copy of
  its result document.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, TextIO

MIN_MEMORY_MB = 256
MAX_CPUS = 8


def prepare(devices: Sequence[str], command: Sequence[str] = (), *, mode: str = "run",
            output: Optional[str] = None, echo: Optional[TextIO] = None, timeout: float = 3600.0,
            devices_files: Optional[List[str]] = None, memory_mb: int = 1024, cpus: int = 1, cache: str = "",
            paths: Optional[Dict[str, int]] = None):
    """A ready-to-run ``LabRun``: inputs checked, classes resolved, image and host checked; nothing
    started yet."""
    from slogqual.errors import UsageError
    from slogqual.lab import devices as _devices
    from slogqual.lab.image import LabImage
    from slogqual.lab.runner import LabRun, require_host

    if memory_mb < MIN_MEMORY_MB:
        raise UsageError(f"guest memory must be at least {MIN_MEMORY_MB} MiB")
    if not 1 <= cpus <= MAX_CPUS:
        raise UsageError(f"guest vCPUs must be 1..{MAX_CPUS}")
    classes = _devices.load(list(devices_files or []))
    inst = _devices.instances(list(devices), classes, paths)
    unused = sorted(set(paths or {}) - {d.path for d in inst})
    if unused:
        raise UsageError(f"--path {unused[0]}: no --device sits behind it (CLASS@{unused[0]})")
    image = LabImage.load(cache)
    require_host()
    return LabRun(image=image, devices=inst, command=list(command), mode=mode, output_dir=output, echo=echo,
                  memory_mb=memory_mb, cpus=cpus, timeout=timeout, paths=dict(paths or {}))


def run(devices: Sequence[str], command: Sequence[str], output: str, **kwargs):
    """Boot a guest with these device classes, run ``command`` in it (cwd and $SLOGQUAL_LAB_OUT are
    its results directory), copy the results to ``output`` and return the ``RunResult``."""
    return prepare(devices, command, output=output, **kwargs).run()
