"""Readers that turn other tools' output into slogqual result documents."""
