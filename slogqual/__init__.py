"""slogqual: qualify block devices as ZFS separate intent log (SLOG) devices."""

__version__ = "0.1.0"
