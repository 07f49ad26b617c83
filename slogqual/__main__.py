from slogqual.cli import entry

entry()
