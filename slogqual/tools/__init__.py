"""One module per external program; each is the only door to its program.

Every module builds argv lists (never shell strings), runs them through
:mod:`slogqual.tools.spawn`, and parses the output into typed dataclasses.
Nothing outside this package starts a process (tests/test_layering.py): a caller
asks its program's module for a typed function. What the kernel shows as files
(sysfs, procfs) is read in :mod:`slogqual.kernel`; the directories a run owns
are :mod:`slogqual.owned`'s.
"""
