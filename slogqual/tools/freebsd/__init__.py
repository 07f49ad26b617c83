"""FreeBSD tools: one module per program (geom, diskinfo, camcontrol, nvmecontrol, sysctl, gpart, glabel,
mount, swapctl, pciconf, devinfo), and host.py: where their programs run (live, or recorded outputs in tests).

They cannot run on the Linux host slogqual is developed on; each module builds
the argv for FreeBSD, and its parser is tested against real outputs recorded
from public sources (tests/fixtures/freebsd/, each file citing its source).
Parsers accept whitespace collapsed by web pages where the format allows it.
"""
