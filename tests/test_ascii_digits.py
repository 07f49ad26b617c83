"""A program's figures are ASCII digits: int() also reads '١٢٣' (Arabic-Indic digits), '1_000', ' 12\\n'
and '+12', and a regex's \\d matches any Unicode digit, so a garbled capture could pass as a figure (a
different one, for '1_' + digits). Each parser is given a real capture (tests/fixtures, sources in their
README/SOURCES files) with one figure rewritten: it parses the capture and refuses the rewrite, or reads
that figure as unknown; never as a number."""

import pytest

from conftest import read_fixture
from slogqual.errors import SlogqualError
from slogqual.tools import iscsiadm, kstat, zfs, zpool
from slogqual.tools import spawn as run
from slogqual.tools.freebsd import ctld, gpart, swapctl

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def tool(program, parser):
    return lambda text: run.parse_text(program, [program], text, parser)


# (capture, the figure as the capture has it, how it is read from the parse)
CASES = {
    "zpool iostat -vp": ("zpool/iostat-vp-mirror-log.txt", "2390972",
                         lambda t: tool("zpool", zpool.parse_iostat_v)(t)[0].write_bytes),
    "zpool list -Hp": ("zpool/list-Hp.txt", "13680640", lambda t: tool("zpool", zpool.parse_list)(t)[0].alloc),
    "zfs get objsetid": ("zfs/get-Hp-zvol.txt", "83", lambda t: tool("zfs", zfs.parse_objsetid)(t)),
    "swapctl -l": ("freebsd/swapctl-l-ada0s1b.txt", "5242880", lambda t: tool("swapctl", swapctl.parse)(t)[0].blocks),
    "gpart show -p": ("freebsd/gpart-show-p-vps-da0.txt", "41940952",
                      lambda t: tool("gpart", gpart.parse)(t)[0].partitions[-1].size),
    "iscsiadm -m session -P 3": ("iscsiadm/session-P3-rhce-1-lun.txt", "1",
                                 lambda t: tool("iscsiadm", iscsiadm.parse_sessions)(t)[0].sid),
    "iscsictl -L -v": ("freebsd/iscsictl-Lv-oracle-uefi-boot.txt", "1", lambda t: tool("iscsictl", ctld.parse_list)(t)[0].session_id),
}
# where the figure stands in the capture (the first occurrence of this text is rewritten)
CONTEXT = {"zfs get objsetid": "objsetid\t{}", "iscsiadm -m session -P 3": "SID: {}",
           "iscsictl -L -v": "Session ID:               {}"}


def rewritten(name, figure):
    path, real, _ = CASES[name]
    text = read_fixture(*path.split("/"))
    where = CONTEXT.get(name, "{}")
    assert where.format(real) in text, (name, real)
    return text.replace(where.format(real), where.format(figure), 1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_figure_in_other_digits_is_not_read_as_a_number(name):
    path, real, read = CASES[name]
    assert read(rewritten(name, real)) == int(real)  # the real capture
    for figure in (real.translate(ARABIC_INDIC), "1_" + real, "+" + real):
        try:
            got = read(rewritten(name, figure))
        except SlogqualError:
            continue  # refused: the program's output is unreadable
        pytest.fail(f"{name}: {figure!r} read as {got!r}")


def test_a_kstat_row_in_other_digits_is_unknown():
    """kstat rows that are not numbers stay text (dataset_name); a figure written otherwise is such a
    row, and the ZIL counters read it as unknown rather than as another number."""
    text = read_fixture("kstat", "objset-after.txt")
    assert kstat.ZilStats.from_kstat(kstat.parse_kstat(text)).slog_bytes == 6681352
    for figure in ("6681352".translate(ARABIC_INDIC), "1_6681352"):
        rows = kstat.parse_kstat(text.replace("6681352", figure, 1))
        assert rows["zil_itx_metaslab_slog_bytes"] == figure
        assert kstat.ZilStats.from_kstat(rows).slog_bytes is None
    assert kstat.parse_kstat(text.replace(" 4    1496", " 4    -1496", 1))["zil_commit_count"] == -1496  # signed rows


def test_whole_reads_ascii_digits_only():
    assert run.whole("0") == 0 and run.whole("18446744073709551615") == 2 ** 64 - 1
    assert run.whole("-12", signed=True) == -12
    for text in ("", "-12", "+12", " 12", "12\n", "1_000", "١٢٣", "²", "0x10", "1.0", "1e3"):
        with pytest.raises(ValueError):
            run.whole(text)
    with pytest.raises(ValueError):
        run.whole("--1", signed=True)


def test_a_version_in_other_digits_is_no_version():
    assert run.parse_version("zfs-2.3.2-1", r"^zfs-(\d+)\.(\d+)(?:\.(\d+))?") == (2, 3, 2)
    assert run.parse_version("zfs-٢.3.2-1", r"^zfs-(\d+)\.(\d+)(?:\.(\d+))?") is None
