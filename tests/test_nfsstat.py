"""FreeBSD ``nfsstat -m`` on a REAL capture (tests/fixtures/freebsd/SOURCES.md); the NFSv3 and garbage
inputs are CONSTRUCTED (no real FreeBSD NFSv3 nfsstat -m capture was found), labelled where used."""

import os

import pytest

from conftest import FIXTURES
from slogqual.tools.freebsd import nfsstat


def test_real_nfsv42_mount_options():
    with open(os.path.join(FIXTURES, "freebsd", "nfsstat-m-nfsv4.2-nconnect16.txt"), encoding="utf-8") as fh:
        (m,) = nfsstat.parse(fh.read())
    assert (m.device, m.mountpoint, m.fstype, m.ops) == ("1.1.1.30:/nfs", "/tmp/nfs", "nfs", {})
    assert (m.opts["vers"], m.opts["proto"], m.opts["wsize"], m.opts["rsize"]) == ("4.2", "tcp", "1048576", "1048576")
    assert (m.opts["nconnect"], m.opts["wcommitsize"], m.opts["readahead"]) == ("16", "67108864", "8")
    assert "hard" in m.opts and "nocto" in m.opts and m.opts["retrans"] == "2147483647"


def test_constructed_nfsv3_and_two_mounts():
    """CONSTRUCTED in nfsstat.c's layout."""
    text = ("127.0.0.1:/tank/x on /tmp/slogqual-p-nfs-1/mnt\nnfsv3,tcp,resvport,hard,rsize=131072,wsize=131072\n"
            "h:/ on /mnt/b\nnfsv4,minorversion=1,tcp,soft,wsize=65536\n")
    a, b = nfsstat.parse(text)
    assert (a.opts["vers"], a.opts["wsize"]) == ("3", "131072") and b.opts["vers"] == "4.1"
    assert nfsstat.find(text, "/mnt/b") == b and nfsstat.find(text, "/nope") is None
    assert nfsstat.parse("") == [] and nfsstat.argv() == ["nfsstat", "-m"]


def test_garbage_is_refused():
    for bad in ("garbage here", "h:/ on /m\n", "nfsv3,tcp\n", "h:/ on /m\nnot options at all\n"):
        with pytest.raises(ValueError):
            nfsstat.parse(bad)
