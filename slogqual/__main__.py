"""``python -m slogqual``: the command line, as the console script ``slogqual`` runs it."""

from slogqual.cli import entry

entry()
