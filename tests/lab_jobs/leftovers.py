"""What a slogqual run left behind in the lab guest, for the interrupt jobs beside this file."""

import subprocess


def slogqual_names(command: str):
    """Names in `zpool list` or `zfs list` that carry slogqual's prefix."""
    out = subprocess.run([command, "list", "-H", "-o", "name"], capture_output=True, text=True).stdout.split()
    return [n for n in out if n.startswith("slogqual-")]


def leftovers():
    return {"pools": slogqual_names("zpool"), "datasets": slogqual_names("zfs")}
