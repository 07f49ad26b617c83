"""What the running kernel shows as files: sysfs (``/sys``, :mod:`slogqual.kernel.sysfs`) and procfs
(``/proc``, :mod:`slogqual.kernel.procfs`), read and parsed into typed facts.

Named for what is read, the kernel's own view of devices and processes: these are not external programs,
so they are no part of ``slogqual/tools/`` (one module per program, the only place a process starts).
Nothing here starts a process or imports ``slogqual.tools`` (tests/test_layering.py); tools modules stand
on it instead (``tools/findmnt.py`` unescapes mountinfo's paths with procfs's reader, FreeBSD's
``tools/freebsd/nfsstat.py`` answers in procfs's NfsMountStats). Every reader takes its root (``/sys``,
``/proc``) as a parameter, so the same code runs on trees recorded from real machines (tests/fixtures/).
"""
