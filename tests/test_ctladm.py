"""ctladm devlist -v (FreeBSD CTL LUNs) on REAL captures (tests/fixtures/freebsd/SOURCES.md); the
garbage inputs are CONSTRUCTED."""

import os

import pytest

from conftest import FIXTURES
from slogqual.tools.freebsd import ctladm


def fixture(name):
    with open(os.path.join(FIXTURES, "freebsd", name), encoding="utf-8") as fh:
        return fh.read()


def test_readme_ctl_devlist_v_values():
    luns = ctladm.parse_devlist(fixture("ctladm-devlist-v-readme-ctl.txt"))
    assert [lun.lun for lun in luns] == list(range(12))
    first = luns[0]
    assert (first.backend, first.size_blocks, first.blocksize) == ("block", 2147483648, 512)
    assert (first.serial, first.device_id) == ("MYSERIAL   0", "MYDEVID   0")
    assert first.options == {"lun_type": "0", "num_threads": "14", "file": "testdisk0"}
    assert first.file == "testdisk0" and first.size_bytes == 2147483648 * 512
    assert (luns[10].backend, luns[10].size_blocks, luns[10].blocksize, luns[10].file) == ("ramdisk", 0, 0, None)
    assert luns[11].size_blocks == 204800000000000 and luns[11].options == {"lun_type": "0"}


def test_playkey_excerpt_without_header():
    (lun,) = ctladm.parse_devlist(fixture("ctladm-devlist-v-playkey-excerpt.txt"))
    assert (lun.lun, lun.backend, lun.size_blocks, lun.blocksize) == (40, "block", 104857600, 512)
    assert (lun.serial, lun.device_id) == ("MYSERIAL  16", "test-ver0x")
    assert lun.file == "/dev/zvol/dataflash/kvm/test-ver02" and lun.options["vendor"] == "FREE_TT"
    assert lun.options["ctld_name"] == "iqn.2016-04.net.playkey.iscsi:test-ver02,lun,0"


def test_devlist_argv_and_garbage():
    assert ctladm.devlist_argv() == ["ctladm", "devlist", "-v"]
    header = "LUN Backend       Size (Blocks)   BS Serial Number    Device ID       \n"
    assert ctladm.parse_devlist(header) == []
    for bad in ("", "garbage", header + "      file=x\n", header + "  0 block  x 512 S D\n"):
        with pytest.raises(ValueError):
            ctladm.parse_devlist(bad)
