import pytest

from slogqual.errors import UsageError
from slogqual.pool.builder import POOL_PREFIX, ThrowawayPool, ashift_for, data_vdevs, log_vdevs, safe_name


def test_data_layouts():
    assert data_vdevs("stripe", ["a", "b"]) == ["a", "b"]
    assert data_vdevs("mirror", ["a", "b", "c", "d"]) == ["mirror", "a", "b", "mirror", "c", "d"]
    assert data_vdevs("raidz1", ["a", "b", "c"]) == ["raidz1", "a", "b", "c"]
    assert data_vdevs("raidz2", ["a", "b", "c", "d"]) == ["raidz2", "a", "b", "c", "d"]


@pytest.mark.parametrize("layout,devs", [("mirror", ["a"]), ("mirror", ["a", "b", "c"]), ("raidz1", ["a", "b"]),
                                         ("raidz2", ["a", "b", "c"]), ("stripe", []), ("raid5", ["a"])])
def test_bad_layouts(layout, devs):
    with pytest.raises(UsageError):
        data_vdevs(layout, devs)


def test_log_layouts():
    assert log_vdevs("none", ["x"]) == []
    assert log_vdevs("single", ["x", "y"]) == ["x"]
    assert log_vdevs("mirror", ["x", "y"]) == ["mirror", "x", "y"]
    assert log_vdevs("stripe", ["x", "y"]) == ["x", "y"]
    with pytest.raises(UsageError):
        log_vdevs("mirror", ["x"])
    with pytest.raises(UsageError):
        log_vdevs("single", [])


def test_pools_must_carry_the_prefix():
    with pytest.raises(UsageError):
        ThrowawayPool(name="tank", vdevs=["a"])
    assert ThrowawayPool(name=POOL_PREFIX + "x", vdevs=["a"]).created is False
    assert safe_name("my scenario/1.toml") == "my_scenario_1.toml"  # paths.safe_name: one sanitiser


def test_ashift_defaults_to_4k_for_unknown_devices():
    assert ashift_for(["/nonexistent/a"]) == 12
    # from the identity records (FreeBSD has no sysfs): the largest physical sector wins
    ids = {"/dev/ada0": {"physical_sector": 4096}, "/dev/nda0": {"physical_sector": 8192}, "/dev/x": {}}
    assert ashift_for(["/dev/ada0", "/dev/nda0", "/dev/x"], ids) == 13
    assert ashift_for(["/dev/ada0"], {"/dev/ada0": {"physical_sector": 512}}) == 12


def test_vdev_summary_on_lab_recorded_iostat():
    from conftest import read_fixture
    from slogqual.pool.evidence import vdev_summary
    from slogqual.tools.zpool import parse_iostat_v
    s = vdev_summary(parse_iostat_v(read_fixture("zpool", "iostat-vpy-interval-pmem-log.txt")))
    assert s["log_write_bytes_s"] == 5678882  # pmem0, the one log vdev
    names = {v["name"]: v for v in s["vdevs"]}
    assert names["pmem0"]["section"] == "logs" and names["sda"]["section"] == "data"
    # a mirror row sums its legs; legs are not double counted in the log total
    mirror_rows = parse_iostat_v(read_fixture("zpool", "iostat-vp-mirror-log.txt"))
    assert vdev_summary(mirror_rows)["log_write_bytes_s"] == 1785082


def test_iostat_stream_recorded_in_the_lab_is_averaged_over_the_measured_window():
    from conftest import read_fixture
    from slogqual.pool.evidence import average_window, vdev_summary
    from slogqual.tools.zpool import iostat_stream_argv, parse_iostat_stream
    reports = parse_iostat_stream(read_fixture("zpool", "iostat-Tu-vpy-1s-stream-pmem-log.txt"))
    assert [r.time for r in reports] == [1795333935, 1795333936, 1795333937, 1795333938, 1795333939,
                                         1795333941, 1795333942]
    assert all([v.name for v in r.rows] == ["slogqual-rec", "mirror-0", "sda", "sdb", "pmem0"] for r in reports)
    # fio ended at 1795333941 after 5 s: the reports surely inside are those printed at 937..939
    avg = average_window(reports, 1795333941 - 5, 1795333941)
    assert (avg.reports, avg.inside, avg.span) == (3, True, [1795333936, 1795333939])
    s = vdev_summary(avg.rows)
    assert s["log_write_ops_s"] == round((494 + 1086 + 974) / 3)
    assert s["log_write_bytes_s"] > 10 * max(v["write_bytes_s"] for v in s["vdevs"] if v["name"] == "sda")
    # a two-second window holds no whole report: the overlapping ones are used, and flagged
    short = average_window(reports, 1795333938.2, 1795333939.9)
    assert short.reports >= 1 and short.inside is False
    # a window before the load has no report at all: nothing is averaged rather than something wrong
    assert average_window(reports, 1795333900, 1795333910).reports == 0
    assert iostat_stream_argv("p") == ["zpool", "iostat", "-T", "u", "-vpy", "p", "1"]


class _Stream:
    """A stopped `zpool iostat` stream: what it wrote, its exit status, its last complaint."""

    def __init__(self, text, rc, stderr=""):
        self.text, self.rc, self.stderr = text, rc, stderr

    def stop(self):
        return self.rc

    def stdout_text(self):
        return self.text

    def stderr_tail(self):
        return self.stderr


def _window(stream):
    from slogqual.pool.evidence import IostatWindow
    w = IostatWindow.__new__(IostatWindow)
    w.stream = stream
    return w


def test_iostat_window_of_unreadable_stream_is_an_error_not_no_evidence():
    # parse_iostat_stream returned [] on text it could not read: the step recorded no iostat evidence
    from slogqual.errors import MeasurementError, ToolOutputError
    with pytest.raises(ToolOutputError):
        _window(_Stream("Segmentation fault in the iostat formatter\n", -15)).collect(0, 10)
    # a failing zpool: its own complaint, not the text it left
    with pytest.raises(MeasurementError, match="zpool iostat failed: cannot open 'tank'"):
        _window(_Stream("garbage\n", 1, "cannot open 'tank': no such pool")).collect(0, 10)
    # stopped before its first report: no evidence, no error
    avg = _window(_Stream("1795333934\n", -15)).collect(0, 10)
    assert avg.reports == 0 and avg.rows == []


def test_only_zpools_labelling_race_with_udev_is_tried_again():
    """The words a lab guest's `zpool create` ended with on a CPU-slowed host (the scenario document's error,
    2026-11-26: udev had not made the new partition's node within zpool's wait) are the one failure create
    tries once more after `udevadm settle`; any other failure is final at once."""
    from slogqual.pool.builder import label_race

    assert label_race("zpool create -f… failed: Error preparing/labeling disk.")
    assert not label_race("cannot create 'slogqual-x': pool already exists")
    assert not label_race("/dev/sdb is in use and contains a unknown filesystem.")
