"""The host probe: this host's ZFS with a perfect log (slogqual.host.door)."""
