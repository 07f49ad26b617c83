"""slogqual.tools.fio_client: fio --server of our own on loopback, and fio --client runs merged.

Parser tests use real controller runs recorded by tests/fixtures/fio/record_clients.py (fio 3.33, two
and three servers on 127.0.0.1); the integration tests start real fio servers on 127.0.0.1.
"""

import copy
import json
import os
import signal
import tempfile
import time

import pytest

from conftest import need, read_fixture
from slogqual.errors import MeasurementError, ToolFailedError, ToolOutputError, UsageError
from slogqual.tools import fio
from slogqual.tools import fio_client as fc
from slogqual.tools import spawn as _run

RECORDED = ("2-fsync-4k", "3-ramp-4k", "1-fsync-4k")


def recorded(name):
    return (read_fixture("fio", f"clients-{name}.stdout"), read_fixture("fio", f"clients-{name}.stderr"),
            int(read_fixture("fio", f"clients-{name}.rc")), read_fixture("fio", f"clients-{name}.argv").split())


def endpoints_of(argv):
    """The endpoints a recorded controller argv connected to ('--client=ip:HOST,PORT')."""
    out = []
    for a in argv:
        if a.startswith("--client=ip:"):
            host, port = a[len("--client=ip:"):].split(",")
            out.append(fc.Endpoint(host, int(port)))
    return out


# --- endpoints ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,host,port", [
    ("10.0.0.5", "10.0.0.5", 8765), ("client1:9000", "client1", 9000), ("[fe80::1]:4444", "fe80::1", 4444),
    ("::1", "::1", 8765), ("[::1]", "::1", 8765)])
def test_endpoints_parse(spec, host, port):
    e = fc.parse_endpoint(spec)
    assert (e.host, e.port) == (host, port)
    assert e.connect_string == (f"ip6:{host},{port}" if ":" in host else f"ip:{host},{port}")


@pytest.mark.parametrize("spec", ["", "host:", "host:0", "host:65536", "host:x", "[::1", "[::1]x", "[nothost]:1",
                                  ":8765", "a b", "h/1"])
def test_bad_endpoints_are_one_line_usage_errors(spec):
    with pytest.raises(UsageError) as exc:
        fc.parse_endpoint(spec)
    assert "\n" not in str(exc.value)


def test_an_endpoint_named_twice_is_refused():
    assert [e.label for e in fc.parse_endpoints("a:1,b,[::1]:2")] == ["a:1", "b:8765", "[::1]:2"]
    with pytest.raises(UsageError, match="named twice"):
        fc.parse_endpoints("a:8765,a")


# --- job files ------------------------------------------------------------------------------------------

def _sample_loads():
    return [fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=4, runtime_s=5, ramp_s=1, write_sync="fsync",
                        devices=["/dev/sdb", "/dev/disk/by-path/ip-127.0.0.1:3260-iscsi-lun-0"], first_job=2),
            fio.FioLoad(rw="write", bs=65536, threads_per_lun=2, runtime_s=5, directory="/mnt/slogqual-nfs",
                        files=3, file_size=1 << 24, write_sync="dsync", direct=False)]


@pytest.mark.parametrize("load", _sample_loads(), ids=["devices", "directory"])
def test_the_job_file_says_what_the_command_line_says(load):
    # one description, two forms: every option of the argv (but the output format, a command-line
    # option) is a line of the job file, in the same order, under [global] or its job's section
    argv = fio.build_load_argv(load)[2:]
    text = fio.job_file(load)
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("[")]
    names = [ln[1:-1] for ln in text.splitlines() if ln.startswith("[")]
    assert names[0] == "global"
    assert [a[len("--name="):] for a in argv if a.startswith("--name=")] == names[1:]
    assert [a[2:] for a in argv if not a.startswith("--name=")] == lines


def test_job_names_start_at_first_job():
    assert [n for n, _ in fio.load_options(_sample_loads()[0])[1]] == ["lun2", "lun3"]


@pytest.mark.parametrize("path", ["/dev/$HOME", "/mnt/a\nfilename=/dev/sda"])
def test_a_path_a_job_file_cannot_hold_is_refused(path):
    with pytest.raises(UsageError) as exc:
        fio.job_file(fio.FioLoad(rw="write", bs=4096, threads_per_lun=1, runtime_s=1, devices=[path]))
    assert "job file" in str(exc.value)


def test_the_controller_argv_pairs_each_client_with_its_job_file():
    a, b = fc.Endpoint("127.0.0.1", 1), fc.Endpoint("::1", 2)
    assert fc.build_argv([(a, "/j/0.fio"), (b, "/j/1.fio")]) == [
        "fio", "--output-format=json", "--client=ip:127.0.0.1,1", "/j/0.fio", "--client=ip6:::1,2", "/j/1.fio"]


# --- the recorded reports -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", RECORDED)
def test_recorded_reports_give_each_client_and_the_merged_figures(name):
    out, err, rc, argv = recorded(name)
    eps = endpoints_of(argv)
    r = fc.interpret(out, err, rc, eps, 4096, argv)
    assert sorted(c.endpoint for c in r.clients) == sorted(e.label for e in eps)
    assert r.fio_version == "fio-3.33"
    assert r.merged.ios == sum(c.result.ios for c in r.clients)
    # fio's own arithmetic for "All clients": summed IOs over the longest runtime (whole ms), printed %f
    longest = max(c.result.runtime_ms for c in r.clients)
    assert r.merged.iops == pytest.approx(1000.0 * r.merged.ios / longest, abs=1e-6)
    assert r.merged.iops <= r.iops_sum() + 1e-6 * len(r.clients)
    assert r.iops_sum() - r.merged.iops <= r.iops_sum_bound() + 1e-6 * len(r.clients)
    # the merged latency distribution is over every client's IOs
    assert r.merged.write_lat.n == r.merged.ios
    assert min(c.result.write_lat.max for c in r.clients) <= r.merged.write_lat.max
    assert r.merged.write_lat.max == max(c.result.write_lat.max for c in r.clients)


def test_one_client_has_no_all_clients_entry_and_merged_is_its_own():
    out, err, rc, argv = recorded("1-fsync-4k")
    assert fc.ALL_CLIENTS not in out
    r = fc.parse_report(out)
    assert len(r.clients) == 1 and r.merged is r.clients[0].result


def _doc(name):
    out = recorded(name)[0]
    return out[:out.index("\n{") + 1], json.loads(out[out.index("\n{") + 1:])


def test_unequal_runtimes_keep_the_sum_within_fio_s_margin():
    # constructed from the real 2-client report (said so): one client's runtime cut to 800 ms and its
    # IOPS recomputed as fio does; the merged entry is over the longest runtime, so the sum exceeds it
    head, doc = _doc("2-fsync-4k")
    w = doc["client_stats"][0]["write"]
    w["runtime"] = 800
    w["iops"] = 1000.0 * w["total_ios"] / 800
    r = fc.parse_report(head + json.dumps(doc))
    assert r.iops_sum() > r.merged.iops
    assert r.iops_sum() - r.merged.iops == pytest.approx(r.iops_sum_bound(), abs=1e-5)


def test_a_merged_entry_that_does_not_add_up_is_refused():
    head, doc = _doc("2-fsync-4k")
    merged = next(e for e in doc["client_stats"] if e["jobname"] == fc.ALL_CLIENTS)
    merged["write"]["total_ios"] += 1
    with pytest.raises(ValueError, match="All clients"):
        fc.parse_report(head + json.dumps(doc))
    with pytest.raises(ToolOutputError):
        fc.interpret(head + json.dumps(doc), "", 0, [], 4096)


def test_two_clients_without_a_merged_entry_or_a_client_twice_are_refused():
    head, doc = _doc("2-fsync-4k")
    gone = copy.deepcopy(doc)
    gone["client_stats"] = [e for e in gone["client_stats"] if e["jobname"] != fc.ALL_CLIENTS]
    with pytest.raises(ValueError, match="no 'All clients'"):
        fc.parse_report(head + json.dumps(gone))
    twice = copy.deepcopy(doc)
    twice["client_stats"][1]["port"] = twice["client_stats"][0]["port"]
    with pytest.raises(ValueError, match="more than one job group"):
        fc.parse_report(head + json.dumps(twice))


def test_a_client_that_could_not_connect_fails_the_run_though_fio_exits_0():
    out, err, rc, argv = recorded("refused")
    eps = endpoints_of(argv)
    assert rc == 0  # fio's own verdict: the missing client is ours to notice
    with pytest.raises(ToolFailedError) as exc:
        fc.interpret(out, err, rc, eps, 4096, argv)
    assert eps[1].label in str(exc.value) and "Connection refused" in str(exc.value)


def test_a_client_s_own_error_is_named():
    out, err, rc, argv = recorded("enoent")
    with pytest.raises(ToolFailedError) as exc:
        fc.interpret(out, err, rc, endpoints_of(argv), 4096, argv)
    assert "err=22" in str(exc.value) and exc.value.returncode == 1


def test_a_client_with_no_writes_is_a_measurement_error():
    head, doc = _doc("2-fsync-4k")
    # constructed: the first client's write count zeroed (and the merged sum with it)
    first = doc["client_stats"][0]["write"]
    merged = next(e for e in doc["client_stats"] if e["jobname"] == fc.ALL_CLIENTS)["write"]
    merged["total_ios"] -= first["total_ios"]
    first["total_ios"] = 0
    with pytest.raises(MeasurementError, match="completed no writes"):
        fc.interpret(head + json.dumps(doc), "", 0, [], 4096)


# --- real servers on loopback ---------------------------------------------------------------------------

def test_a_server_beyond_loopback_is_refused_before_anything_runs(monkeypatch):
    monkeypatch.setattr(_run, "popen", lambda *a, **kw: pytest.fail("a server was started"))
    for host in ("0.0.0.0", "10.1.2.3", "client1"):
        with pytest.raises(UsageError, match="loopback"):
            fc.FioServer(host)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


@need("fio")
def test_two_servers_on_loopback_drive_one_step_and_are_gone_after(tmp_path, monkeypatch):
    # the job files' directory in a temporary directory of this test's own: another lane's runs use /tmp
    jobs_tmp = tmp_path / "tmp"
    jobs_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(jobs_tmp))
    targets = []
    for i in range(2):
        targets.append(str(tmp_path / f"lun{i}.img"))
        with open(targets[-1], "wb") as fh:
            fh.truncate(16 << 20)
    # this process's servers only (their marks carry our PID): another lane's are none of this test's
    ours = f"slogqual-fio-server-{os.getpid()}-"
    before = fc.running_servers(ours)
    with fc.FioServer() as a, fc.FioServer() as b:
        pids = [a.pid, b.pid]
        assert a.port != b.port and set(pids) <= set(fc.running_servers(ours))
        for s in (a, b):
            with open(f"/proc/{s.pid}/environ", "rb") as fh:
                assert f"{fc.SERVER_MARK_ENV}={s.mark}".encode() in fh.read().split(b"\0")
        parts = [(s.endpoint, fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=2, runtime_s=1, devices=[t],
                                          write_sync="fsync", direct=False, first_job=i))
                 for i, (s, t) in enumerate(((a, targets[0]), (b, targets[1])))]
        r = fc.run_clients(parts)
    assert sorted(c.endpoint for c in r.clients) == sorted([a.endpoint.label, b.endpoint.label])
    assert all(c.result.ios > 0 for c in r.clients)
    assert r.merged.ios == sum(c.result.ios for c in r.clients)
    assert abs(r.merged.iops - r.iops_sum()) <= r.iops_sum_bound() + 1e-6 * len(r.clients)
    assert not any(_alive(p) for p in pids) and fc.running_servers(ours) == before
    assert not [n for n in os.listdir(jobs_tmp) if n.startswith("slogqual-fio-jobs-")]


@need("fio")
def test_stopping_a_server_mid_job_ends_the_job_it_forked(tmp_path):
    # a fio server forks a handler per connection and the handler the job: ending the server's PID
    # alone leaves the job writing (seen by hand with fio 3.33), so the whole group must go
    target = tmp_path / "lun0.img"
    with open(target, "wb") as fh:
        fh.truncate(16 << 20)
    job = tmp_path / "long.fio"
    job.write_text(fio.job_file(fio.FioLoad(rw="randwrite", bs=4096, threads_per_lun=1, runtime_s=60,
                                            devices=[str(target)], direct=False)))
    server = fc.FioServer().start()
    controller, exited = None, []
    try:
        # A controller that gave up before the server forked (its own error, on stderr) is said and
        # started once more: this test is about ending the server, not about the controller's connect.
        # Never seen here; the CI run of stop 44 saw no fork in 20 s and kept no word of why.
        for _ in range(2):
            controller = _run.Background(fc.build_argv([(server.endpoint, str(job))]), capture_stdout=True).start()
            deadline = time.monotonic() + 60
            # by this server's own mark: another lane's fio servers (tests/lanes.py) are none of this test's
            while (len([p for p in fc.running_servers(server.mark) if p != server.pid]) < 1
                   and time.monotonic() < deadline and controller.running()):
                time.sleep(0.05)
            group = fc.running_servers(server.mark)
            if len(group) >= 2 or controller.running():
                break
            exited.append((controller.returncode(), controller.stdout_text()[-2000:], controller.stderr_tail()))
            controller.stop()
        assert len(group) >= 2, ("the server never forked its job", "server running:", server.process.running(),
                                 "controllers that exited (status, stdout, stderr):", exited)
    finally:
        t0 = time.monotonic()
        server.stop()
        if controller is not None:
            controller.stop()
    assert time.monotonic() - t0 < server.grace_s + fc.KILLED_GONE_S + 2  # its two bounded waits, and no more
    assert not any(_alive(p) for p in group) and fc.running_servers(server.mark) == []


@need("fio")
def test_an_interrupt_inside_the_servers_block_stops_them():
    with pytest.raises(KeyboardInterrupt):
        with fc.FioServer() as s:
            pid = s.pid
            raise KeyboardInterrupt
    assert not _alive(pid) and s.process.returncode == -signal.SIGTERM
