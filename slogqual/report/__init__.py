"""Presentation of results: text tables, diskinfo-style lines, plots, HTML."""
