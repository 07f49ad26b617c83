"""slogqual.tools.fio on recorded real fio 3.33 output (tests/fixtures/fio/record.py)."""

import pytest

from conftest import read_fixture
from slogqual.errors import MeasurementError, UsageError
from slogqual.results import LAT_BASIS_COMPLETION, LAT_BASIS_FLUSH_BOUND
from slogqual.sweep.engine import point_from_fio
from slogqual.tools import fio


def recorded(name):
    return (read_fixture("fio", f"{name}.stdout"), read_fixture("fio", f"{name}.stderr"),
            int(read_fixture("fio", f"{name}.rc")))


def interpret(name, bs=4096):
    out, err, rc = recorded(name)
    return fio.interpret(out, err, rc, "target", bs)


def test_argv_flush_is_qd1_random_write_with_fdatasync():
    argv = fio.build_argv(fio.FioJob(bs=4096, runtime_s=1.0, filename="/dev/sdx", region_bytes=1 << 30))
    assert argv[0] == "fio"
    for opt in ("--rw=randwrite", "--bs=4096", "--iodepth=1", "--numjobs=1", "--ioengine=psync",
                "--direct=1", "--fdatasync=1", "--runtime=1000ms", "--time_based", "--output-format=json",
                "--size=1073741824", "--allow_file_create=0", "--norandommap"):
        assert opt in argv
    assert not any(a.startswith("--sync=") for a in argv)


def test_argv_dsync_uses_o_dsync_not_fdatasync():
    argv = fio.build_argv(fio.FioJob(bs=512, runtime_s=0.25, mode="dsync", filename="/tmp/f"))
    assert "--sync=dsync" in argv and "--fdatasync=1" not in argv and "--runtime=250ms" in argv


def test_argv_nbd_flushes_with_fsync_and_rejects_dsync():
    uri = "nbd+unix:///?socket=/tmp/s.sock"
    argv = fio.build_argv(fio.FioJob(bs=4096, runtime_s=1, uri=uri))
    assert "--ioengine=nbd" in argv and f"--uri={uri}" in argv and "--fsync=1" in argv
    assert not any(a.startswith("--filename") for a in argv)
    with pytest.raises(UsageError):
        fio.build_argv(fio.FioJob(bs=4096, runtime_s=1, mode="dsync", uri=uri))


def test_argv_escapes_colons_in_filenames():
    argv = fio.build_argv(fio.FioJob(bs=4096, runtime_s=1, filename="/dev/disk/by-path/pci-0000:00:1f.2"))
    assert "--filename=/dev/disk/by-path/pci-0000\\:00\\:1f.2" in argv


def test_unknown_mode_is_usage_error():
    with pytest.raises(UsageError):
        fio.build_argv(fio.FioJob(bs=4096, runtime_s=1, mode="fua", filename="/tmp/f"))


def test_flush_mode_result_has_write_and_sync_sections():
    r = interpret("file-flush-4k")
    assert r.ios > 100 and r.error == 0 and r.fio_version == "fio-3.33"
    assert r.sync_lat is not None and r.sync_lat.n == r.ios  # one flush per write
    assert set(fio.PERCENTILES) <= set(r.write_lat.percentiles) and set(fio.PERCENTILES) <= set(r.sync_lat.percentiles)
    assert 0 < r.write_lat.min <= r.write_lat.mean <= r.write_lat.max


def test_dsync_mode_has_no_separate_flush():
    r = interpret("file-dsync-4k")
    assert r.sync_lat is None and r.ios > 0


def test_nbd_banner_before_json_is_skipped():
    out, _, _ = recorded("nbd-delay2ms-flush-4k")
    assert not out.startswith("{")  # fio printed text before the JSON object
    r = interpret("nbd-delay2ms-flush-4k")
    assert r.write_lat.mean > 2000  # the 2 ms wdelay shows in every write
    assert r.sync_lat is not None


def test_flush_point_mean_is_exact_sum_and_percentiles_are_union_bounds():
    r = interpret("file-flush-4k")
    p = point_from_fio(4096, r, "t")
    assert p.lat_basis == LAT_BASIS_FLUSH_BOUND
    assert p.lat_us.mean == pytest.approx(r.write_lat.mean + r.sync_lat.mean)
    top = r.write_lat.max + r.sync_lat.max
    assert p.lat_us.max == pytest.approx(top)
    assert p.lat_us.p99 == pytest.approx(min(top, r.write_lat.pct(99.5) + r.sync_lat.pct(99.5)))
    assert p.lat_us.p999 == pytest.approx(min(top, r.write_lat.pct(99.95) + r.sync_lat.pct(99.95)))
    assert p.lat_us.p50 == pytest.approx(r.write_lat.pct(75) + r.sync_lat.pct(75))
    assert p.lat_us.p50 <= p.lat_us.p99 <= p.lat_us.p999 <= p.lat_us.max
    # a bound on the pair is never below either measured part
    assert p.lat_us.p99 >= max(r.write_lat.pct(99), r.sync_lat.pct(99))
    assert p.write_lat_us.mean == pytest.approx(r.write_lat.mean)
    assert p.mbps == pytest.approx(r.bw_bytes / 2**20)


def test_dsync_point_is_measured_completion_latency():
    r = interpret("file-dsync-4k")
    p = point_from_fio(4096, r, "t")
    assert p.lat_basis == LAT_BASIS_COMPLETION and p.flush_lat_us is None
    assert p.lat_us.p99 == pytest.approx(r.write_lat.pct(99.0))


def test_large_size_bandwidth_consistent_with_iops():
    r = interpret("file-flush-1m", bs=1 << 20)
    assert r.bw_bytes == pytest.approx(r.iops * (1 << 20), rel=0.01)


@pytest.mark.parametrize("name,errtext", [("nbd-eio-4k", "Input/output error"), ("nbd-enospc-4k", "No space left on device")])
def test_io_errors_become_measurement_errors_with_the_cause(name, errtext):
    with pytest.raises(MeasurementError) as exc:
        interpret(name)
    msg = str(exc.value)
    assert errtext in msg and "bs=4096" in msg and "\n" not in msg


def test_garbage_output_is_a_measurement_error():
    with pytest.raises(MeasurementError, match="exit code 1"):
        fio.interpret("not json at all\n", "", 1, "t", 4096)


def test_few_ios_are_flagged():
    r = interpret("file-flush-1m", bs=1 << 20)
    r.ios = 3
    assert "only 3 IOs" in point_from_fio(1 << 20, r, "t").notes[0]


def test_percentiles_never_exceed_the_max():
    # fio's bucketed percentiles can exceed its exact max; every recorded fixture's points are capped
    for name, bs in (("file-flush-4k", 4096), ("file-flush-1m", 1 << 20), ("file-dsync-4k", 4096),
                     ("nbd-delay2ms-flush-4k", 4096)):
        p = point_from_fio(bs, interpret(name, bs), "t")
        for stats in (p.lat_us, p.write_lat_us, p.flush_lat_us):
            if stats is not None:
                assert max(stats.p50, stats.p99, stats.p999) <= stats.max


def test_load_argv_zvols_one_job_per_lun_with_threads():
    argv = fio.build_load_argv(fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=4, runtime_s=5, ramp_s=1,
                                           devices=["/dev/zvol/p/lun0", "/dev/zvol/p/lun1"]))
    assert "--group_reporting" in argv and "--direct=1" in argv and "--ramp_time=1000ms" in argv
    assert argv.count("--numjobs=4") == 2
    i = argv.index("--name=lun0")
    assert argv[i + 1] == "--filename=/dev/zvol/p/lun0"
    assert argv.index("--rw=randwrite") < i  # global options precede the first job
    assert not any(a.startswith("--sync") or a.startswith("--fsync") for a in argv)


def test_load_argv_dataset_files_per_thread_with_dsync():
    argv = fio.build_load_argv(fio.FioLoad(rw="write", bs=65536, threads_per_lun=2, runtime_s=5, directory="/mnt/x",
                                           files=3, file_size=1 << 24, write_sync="dsync", direct=False))
    assert "--sync=dsync" in argv and "--directory=/mnt/x" in argv and "--size=16777216" in argv
    assert [a for a in argv if a.startswith("--name=")] == ["--name=file0", "--name=file1", "--name=file2"]
    assert not any(a.startswith("--filename") for a in argv)  # each clone gets its own file


def test_load_runs_for_real_on_files(tmp_path):
    import shutil
    if not shutil.which("fio"):
        pytest.skip("needs fio")
    r = fio.run_load(fio.FioLoad(rw="write", bs=65536, threads_per_lun=2, runtime_s=0.3, directory=str(tmp_path),
                                 files=2, file_size=4 << 20, write_sync="dsync", direct=False))
    assert r.ios > 0 and r.write_lat.n == r.ios  # one aggregated group for 2 files x 2 threads
    assert len(list(tmp_path.iterdir())) == 4


@pytest.mark.parametrize("section", ["write", "sync", "lat_ns"])
def test_a_report_section_that_is_not_an_object_is_tool_output_error(section):
    # an AttributeError (None.get) escaped the tool contract: a traceback instead of ToolOutputError
    import json

    from slogqual.errors import ToolOutputError
    doc = json.loads(read_fixture("fio", "file-flush-4k.stdout"))
    job = doc["jobs"][0]
    if section == "lat_ns":
        job["write"]["lat_ns"] = None
    elif section == "sync":
        job["sync"] = ["not", "an", "object"]
    else:
        job["write"] = None
    with pytest.raises(ToolOutputError, match="unexpected fio JSON layout"):
        fio.interpret(json.dumps(doc), "", 0, "/dev/x", 4096)


@pytest.mark.parametrize("where,value", [("iops", "NaN"), ("bw_bytes", "Infinity"), ("mean", "1e999"),
                                         ("percentile", "NaN")])
def test_a_figure_that_is_not_finite_is_tool_output_error(where, value):
    # NaN went into the sweep point (and the document) as if fio had measured it
    import json

    from slogqual.errors import ToolOutputError
    doc = json.loads(read_fixture("fio", "file-flush-4k.stdout"))
    write = doc["jobs"][0]["write"]
    if where == "mean":
        write["lat_ns"]["mean"] = 1.0
    elif where == "percentile":
        write["lat_ns"]["percentile"]["99.000000"] = 1.0
    else:
        write[where] = 1.0
    marker = {"iops": '"iops": 1.0', "bw_bytes": '"bw_bytes": 1.0', "mean": '"mean": 1.0',
              "percentile": '"99.000000": 1.0'}[where]
    text = json.dumps(doc)
    assert text.count(marker) == 1
    with pytest.raises(ToolOutputError, match="unexpected fio JSON"):
        fio.interpret(text.replace(marker, marker[:-3] + value), "", 0, "/dev/x", 4096)


def test_a_zvol_open_failing_with_erestartsys_is_named():
    # recorded in a lab guest (tests/fixtures/fio/record_zvol_erestartsys.sh): the zvol's first open gave up
    # on the pool's namespace lock; fio exits 1, reports job error 512 and names the open on stderr
    with pytest.raises(MeasurementError) as exc:
        interpret("zvol-open-erestartsys-128k", bs=131072)
    msg = str(exc.value)
    assert "error=Unknown error 512" in msg and "func=open(/dev/zvol/slogqual-rec/lun0)" in msg and "\n" not in msg
    out, err, rc = recorded("zvol-open-erestartsys-128k")
    # the same report with nothing on stderr (a job's open failing mid-run, as in the lab's 32-thread step):
    # the job error itself is put in words
    with pytest.raises(MeasurementError) as exc:
        fio.interpret(out, "", rc, "/dev/zvol/p/lun0", 131072)
    assert "error 512 (ERESTARTSYS" in str(exc.value) and "zvol_open_timeout_ms" in str(exc.value)
    assert fio.job_error_text(5) == "error 5 (Input/output error)"
