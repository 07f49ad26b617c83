"""One module per external program; each is the only door to its program.

Every module builds argv lists (never shell strings), runs them through
:mod:`slogqual.tools.spawn`, and parses the output into typed dataclasses.
"""
