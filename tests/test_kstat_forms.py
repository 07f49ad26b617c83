"""ZIL kstats in both platform forms: Linux /proc files and FreeBSD sysctl nodes.

FreeBSD cannot run on this host, so no `sysctl kstat.zfs` output was recorded here and none with
ZIL counters was found published. What is checked instead:
- the real published sysctl lines we have (OpenZFS's own tests/zfs-tests/include/kstat.shlib quotes
  ``kstat.zfs.shed.dataset.objset-0x8087.dataset_name: shed/poudriere``) parse as a kstat;
- the real Linux recordings (tests/fixtures/kstat, OpenZFS 2.3 in the lab guest), written out the way
  FreeBSD's SPL names the same kstat (spl_kstat.c: ``kstat.<module>[.<pool>].<class>.<name>.<stat>``,
  printed by sysctl(8) as ``name: value``), give the very same ZIL counters as the Linux parser;
- the sysctl path end to end (argv, exit status, unknown-oid error) through a stand-in ``sysctl`` on
  PATH that prints those lines, because FreeBSD's sysctl(8) does not exist here.
"""

import os
import stat
import textwrap

import pytest

from conftest import read_fixture
from slogqual.errors import MeasurementError
from slogqual.tools import kstat


def as_sysctl(linux_kstat_text: str, oid: str) -> str:
    """A Linux kstat file's rows as FreeBSD's sysctl prints the same kstat: one ``OID.row: value``
    line per row (the header lines are Linux's procfs framing and have no sysctl counterpart)."""
    lines = linux_kstat_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["name", "type", "data"]) + 1
    out = []
    for line in lines[start:]:
        name, _type, data = line.split(None, 2)
        out.append(f"{oid}.{name}: {data.strip()}")
    return "\n".join(out) + "\n"


def parse_sysctl(text, oid):
    from slogqual.tools.freebsd import sysctl
    return kstat.from_sysctl(sysctl.parse(text), oid)


def test_published_freebsd_dataset_line_parses():
    # verbatim from openzfs/zfs tests/zfs-tests/include/kstat.shlib (_resolve_dsname_freebsd's comment)
    line = "kstat.zfs.shed.dataset.objset-0x8087.dataset_name: shed/poudriere\n"
    oid = kstat.objset_oid("shed", 0x8087)
    assert oid == "kstat.zfs.shed.dataset.objset-0x8087"
    assert parse_sysctl(line, oid) == {"dataset_name": "shed/poudriere"}


@pytest.mark.parametrize("name", ["objset-before.txt", "objset-after.txt"])
def test_objset_sysctl_form_gives_the_linux_counters(name):
    linux = read_fixture("kstat", name)
    oid = kstat.objset_oid("sqlabcheck", 0x36)
    bsd = parse_sysctl(as_sysctl(linux, oid), oid)
    assert bsd == kstat.parse_kstat(linux)
    assert bsd["dataset_name"] == "sqlabcheck/vol"
    assert kstat.ZilStats.from_kstat(bsd) == kstat.ZilStats.from_kstat(kstat.parse_kstat(linux))


def test_global_zil_sysctl_form_delta_shows_slog_growth():
    oid = kstat.SYSCTL_ZIL_GLOBAL
    before = parse_sysctl(as_sysctl(read_fixture("kstat", "zil-before.txt"), oid), oid)
    after = parse_sysctl(as_sysctl(read_fixture("kstat", "zil-after.txt"), oid), oid)
    d = kstat.ZilStats.from_kstat(after) - kstat.ZilStats.from_kstat(before)
    linux = (kstat.ZilStats.from_kstat(kstat.parse_kstat(read_fixture("kstat", "zil-after.txt")))
             - kstat.ZilStats.from_kstat(kstat.parse_kstat(read_fixture("kstat", "zil-before.txt"))))
    assert d == linux and d.slog_bytes > 0 and d.commit_count > 0


def test_pool_dump_picks_one_objset_only():
    # `sysctl kstat.zfs.POOL` lists every dataset of the pool and the pool's own kstats; only the
    # asked-for objset's direct leaves are its rows
    a = as_sysctl(read_fixture("kstat", "objset-after.txt"), "kstat.zfs.sqlabcheck.dataset.objset-0x36")
    b = as_sysctl(read_fixture("kstat", "objset-before.txt"), "kstat.zfs.sqlabcheck.dataset.objset-0x360")
    misc = "kstat.zfs.sqlabcheck.misc.state: ONLINE\nkstat.zfs.sqlabcheck.txgs.foo.bar: 1\n"
    got = parse_sysctl(b + misc + a, "kstat.zfs.sqlabcheck.dataset.objset-0x36")
    assert got == kstat.parse_kstat(read_fixture("kstat", "objset-after.txt"))


def test_sysctl_kstat_errors():
    with pytest.raises(MeasurementError, match="no kstat"):
        kstat.from_sysctl({}, kstat.SYSCTL_ZIL_GLOBAL)
    with pytest.raises(MeasurementError, match="'.'"):
        kstat.objset_oid("pool.with.dots", 0x36)


@pytest.fixture
def stand_in_sysctl(tmp_path, monkeypatch):
    """A ``sysctl`` on PATH answering like FreeBSD's for the recorded kstats, and with
    ``sysctl: unknown oid '...'`` / exit 1 for anything else."""
    (tmp_path / "zil.txt").write_text(as_sysctl(read_fixture("kstat", "zil-after.txt"), kstat.SYSCTL_ZIL_GLOBAL))
    (tmp_path / "objset.txt").write_text(
        as_sysctl(read_fixture("kstat", "objset-after.txt"), kstat.objset_oid("sqlabcheck", 0x36)))
    prog = tmp_path / "sysctl"
    prog.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" >> {tmp_path}/argv.log
        case "$1" in
          {kstat.SYSCTL_ZIL_GLOBAL}) cat {tmp_path}/zil.txt ;;
          {kstat.objset_oid("sqlabcheck", 0x36)}) cat {tmp_path}/objset.txt ;;
          *) echo "sysctl: unknown oid '$1'" >&2; exit 1 ;;
        esac
        """))
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_zil_stats_reads_sysctl_on_freebsd(stand_in_sysctl):
    z = kstat.zil_stats("sqlabcheck", 0x36, platform="freebsd14")
    assert z == kstat.ZilStats.from_kstat(kstat.parse_kstat(read_fixture("kstat", "objset-after.txt")))
    g = kstat.zil_stats(platform="freebsd14")
    assert g.commit_count > 0
    argv = (stand_in_sysctl / "argv.log").read_text().split("\n")
    assert argv[:2] == ["kstat.zfs.sqlabcheck.dataset.objset-0x36", "kstat.zfs.misc.zil"]
    with pytest.raises(MeasurementError, match="unknown oid"):
        kstat.zil_stats("sqlabcheck", 0x99, platform="freebsd14")


def _without(text: str, *rows: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.split()[:1] not in [[r] for r in rows]) + "\n"


def test_a_missing_zil_counter_is_unknown_not_zero():
    # An OpenZFS without the metaslab rows (or a renamed row): the counter is None, never 0, and every
    # figure made from it (the delta, the share, the document's dict) is unknown too.
    after = kstat.parse_kstat(_without(read_fixture("kstat", "objset-after.txt"), "zil_itx_metaslab_normal_bytes"))
    before = kstat.parse_kstat(read_fixture("kstat", "objset-before.txt"))
    z = kstat.ZilStats.from_kstat(after)
    assert z.normal_bytes is None and z.slog_bytes == 6681352
    assert z.slog_share is None
    d = z - kstat.ZilStats.from_kstat(before)
    assert d.normal_bytes is None and d.slog_bytes is not None and d.slog_bytes > 0
    assert d.as_dict()["normal_bytes"] is None and d.slog_share is None
    assert (kstat.ZilStats.from_kstat(before) - z).normal_bytes is None
    assert (z + z).normal_bytes is None and (z + z).slog_bytes == 2 * 6681352


def test_a_string_where_a_counter_should_be_is_unknown():
    z = kstat.ZilStats.from_kstat({"zil_commit_count": "n/a", "zil_itx_metaslab_slog_bytes": 7})
    assert z.commit_count is None and z.slog_bytes == 7 and z.normal_bytes is None
