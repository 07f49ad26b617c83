"""The one contract for external programs (slogqual.tools.spawn): missing, too old, timed out, failed
and unparseable each raise their typed error, carrying program, argv and the stderr tail, whichever
tool module is asked.

No broken binaries on PATH: a program is "replaced" by patching what its module calls
(``_run.run``, ``shutil.which``, a module's argv builder or version function) so that a tiny real
program (sh, sleep, false, printf) runs in its place, as OCRmyPDF's tests patch an ``_exec`` module.
"""

import os
import signal
import time

import pytest

from slogqual.errors import (MeasurementError, MissingDependencyError, ToolError, ToolFailedError, ToolMissingError,
                             ToolOutputError, ToolTimeoutError, ToolTooOldError, UsageError)
from slogqual.tools import findmnt, fio, gnuplot, lsblk, lspci, nbdkit, nvme, qemu, smartctl, wipefs, zfs, zpool
from slogqual.tools import spawn as _run
from slogqual.tools.freebsd import sysctl

REAL_RUN = _run.run


@pytest.fixture(autouse=True)
def fresh_versions():
    """Versions are cached per installed binary: each test reads them anew."""
    _run.clear_version_cache()
    yield
    _run.clear_version_cache()


def answer(monkeypatch, stdout="", stderr="", rc=0):
    """Every program the modules run is replaced by sh printing stdout/stderr and exiting rc (the
    module's own run options, timeout and typed_timeout included, still apply)."""
    script = 'printf "%s" "$1"; printf "%s" "$2" >&2; exit "$3"'

    def fake(argv, **kw):
        return REAL_RUN(["sh", "-c", script, "sh", stdout, stderr, str(rc)], **kw)

    monkeypatch.setattr(_run, "run", fake)


def hang(monkeypatch, timeout=0.2):
    """Every program the modules run is replaced by sleep, given `timeout` seconds instead of its own."""
    def fake(argv, **kw):
        return REAL_RUN(["sleep", "5"], **{**kw, "timeout": timeout})

    monkeypatch.setattr(_run, "run", fake)


def absent(monkeypatch, *programs):
    real = _run.shutil.which
    monkeypatch.setattr(_run.shutil, "which", lambda p, *a, **kw: None if os.path.basename(p) in programs
                        else real(p, *a, **kw))


def installed(monkeypatch):
    """get_version finds every program (its run() is patched to answer for it)."""
    monkeypatch.setattr(_run, "require", lambda program: f"/usr/bin/{program}")


# --- missing ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,program", [
    (lambda: fio.version(), "fio"),
    (lambda: fio.run_job(fio.FioJob(bs=4096, runtime_s=1, filename="/nonexistent")), "fio"),
    (lambda: zpool.pools(), "zpool"),
    (lambda: smartctl.query("/dev/sdz"), "smartctl"),
    (lambda: nbdkit.NbdServer("memory", ["size=1M"]).start(), "nbdkit"),
], ids=["fio-version", "fio-job", "zpool", "smartctl", "nbdkit"])
def test_a_missing_program_is_tool_missing_error(monkeypatch, call, program):
    absent(monkeypatch, program)
    with pytest.raises(ToolMissingError) as exc:
        call()
    assert exc.value.program == program and exc.value.exit_code == 2
    assert isinstance(exc.value, MissingDependencyError)
    assert "not found on PATH" in str(exc.value) and "apt-get install" in str(exc.value)


def test_missing_advice_follows_the_platform(monkeypatch):
    absent(monkeypatch, "fio", "smartctl")
    monkeypatch.setattr(_run.sys, "platform", "freebsd14")
    with pytest.raises(ToolMissingError, match=r"FreeBSD: pkg install fio\)"):
        fio.version()
    with pytest.raises(ToolMissingError, match=r"FreeBSD: pkg install smartmontools"):
        smartctl.query("/dev/ada0")


# --- too old ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module,program,old", [
    (fio, "fio", (3, 16)),
    (gnuplot, "gnuplot", (4, 6, 2)),
    (nbdkit, "nbdkit", (1, 10, 2)),
    (qemu, "qemu-system-x86_64", (4, 1, 0)),
    (zpool, "zpool", (2, 1, 5)),
    (zfs, "zfs", (2, 1, 5)),
    (smartctl, "smartctl", (6, 6)),
], ids=["fio", "gnuplot", "nbdkit", "qemu", "zpool", "zfs", "smartctl"])
def test_a_program_older_than_the_table_is_tool_too_old_error(monkeypatch, module, program, old):
    monkeypatch.setattr(module, "version", lambda: _run.ToolVersion(program, old, f"{program} {old}"))
    with pytest.raises(ToolTooOldError) as exc:
        module.check_version()
    need = _run.PROGRAMS[program].minimum
    assert exc.value.found == old and exc.value.needed == need and exc.value.exit_code == 2
    assert "too old" in str(exc.value) and ".".join(map(str, need)) in str(exc.value)
    assert "\n" not in str(exc.value)


def test_the_versions_here_pass(monkeypatch):
    installed(monkeypatch)
    for module, text in ((fio, "fio-3.33\n"), (zpool, "zfs-2.3.2-2~bpo12+2\nzfs-kmod-2.3.2-2~bpo12+2\n"),
                         (nbdkit, "nbdkit 1.32.5\n"), (gnuplot, "gnuplot 5.4 patchlevel 4\n")):
        answer(monkeypatch, text)
        _run.clear_version_cache()
        assert module.check_version().version >= _run.PROGRAMS[module.PROGRAM].minimum


def test_a_too_old_nbdkit_is_refused_before_it_is_started(monkeypatch):
    monkeypatch.setattr(nbdkit, "version", lambda: _run.ToolVersion("nbdkit", (1, 8, 0), "nbdkit 1.8.0"))
    monkeypatch.setattr(_run, "popen", lambda *a, **kw: pytest.fail("nbdkit was started"))
    with pytest.raises(ToolTooOldError, match="rate filter"):
        nbdkit.NbdServer("memory", ["size=1M"]).start()


def test_an_unreadable_version_is_a_dependency_error(monkeypatch):
    installed(monkeypatch)
    answer(monkeypatch, "this is not fio\n")
    with pytest.raises(ToolOutputError) as exc:
        fio.version()
    assert exc.value.program == "fio" and exc.value.exit_code == 1
    with pytest.raises(ToolTooOldError) as exc:
        fio.check_version()
    assert exc.value.found is None and exc.value.exit_code == 2 and "cannot tell which version" in str(exc.value)


# --- timed out -------------------------------------------------------------------------------------------

def test_run_raises_tool_timeout_error_when_asked():
    with pytest.raises(_run.TimeoutExpired):
        REAL_RUN(["sleep", "5"], timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(ToolTimeoutError) as exc:
        REAL_RUN(["sh", "-c", "echo still working >&2; exec sleep 5"], timeout=1, typed_timeout=True)
    assert time.monotonic() - t0 < 4
    e = exc.value
    assert e.program == "sh" and e.argv[0] == "sh" and e.timeout == 1 and e.exit_code == 1
    assert "did not finish within 1 s" in str(e) and e.stderr_tail == "still working"


def test_fio_that_hangs_is_tool_timeout_error(monkeypatch):
    monkeypatch.setattr(fio, "build_argv", lambda job: ["sleep", "5"])
    with pytest.raises(ToolTimeoutError) as exc:
        fio.run_job(fio.FioJob(bs=4096, runtime_s=1, filename="/x"), timeout=0.2)
    assert isinstance(exc.value, MeasurementError)
    assert exc.value.argv == ["sleep", "5"] and "at bs=4096" in str(exc.value)


@pytest.mark.parametrize("call", [
    lambda: zpool.pools(),
    lambda: zfs.objsetid("tank/vol"),
    lambda: lsblk.query("/dev/sda"),
    lambda: nvme.id_ctrl("/dev/nvme0"),
    lambda: nvme.get_vwc_enabled("/dev/nvme0"),
    lambda: lspci.link("0000:01:00.0"),
    lambda: nbdkit.export_size("nbd+unix:///?socket=/x"),
    lambda: sysctl.get("kern.disks"),
], ids=["zpool", "zfs", "lsblk", "nvme-id-ctrl", "nvme-get-feature", "lspci", "nbdinfo", "sysctl"])
def test_a_hang_is_tool_timeout_error_in_every_module(monkeypatch, call):
    monkeypatch.setattr(_run, "which", lambda p: f"/usr/bin/{p}")  # nbdinfo counts as installed
    hang(monkeypatch)
    with pytest.raises(ToolTimeoutError):
        call()


def test_smartctl_that_hangs_is_tool_timeout_error(monkeypatch):
    monkeypatch.setattr(smartctl, "check_version", lambda: None)
    hang(monkeypatch)
    with pytest.raises(ToolTimeoutError) as exc:
        smartctl.query("/dev/sda")
    assert exc.value.argv[0] == "sleep" and exc.value.timeout == 0.2


def test_nbdkit_without_a_socket_in_time_is_tool_timeout_error(monkeypatch, tmp_path):
    monkeypatch.setattr(nbdkit, "check_version", lambda: None)
    monkeypatch.setattr(nbdkit.NbdServer, "argv", lambda self: ["sleep", "30"])
    server = nbdkit.NbdServer("memory", ["size=1M"], socket_dir=str(tmp_path))
    with pytest.raises(ToolTimeoutError, match="did not create its socket within 0.3 s"):
        server.start(timeout=0.3)
    assert server.process.returncode == -signal.SIGTERM  # ended by its PID, not left behind
    assert os.listdir(tmp_path) == []


# --- failed ----------------------------------------------------------------------------------------------

def test_run_check_raises_tool_failed_error():
    with pytest.raises(ToolFailedError) as exc:
        REAL_RUN(["sh", "-c", "echo first >&2; echo 'the real complaint' >&2; exit 3"], check=True)
    e = exc.value
    assert e.returncode == 3 and e.program == "sh" and e.exit_code == 1
    assert e.stderr_tail == "first\nthe real complaint" and "the real complaint" in str(e)


def test_zpool_failing_is_tool_failed_error_and_still_a_measurement_error():
    with pytest.raises(MeasurementError) as exc:  # what pool/ callers catch
        zpool.zpool(["false"])
    assert isinstance(exc.value, ToolFailedError) and exc.value.returncode == 1 and exc.value.argv == ["false"]


def test_fio_failing_is_tool_failed_error_with_its_io_error(monkeypatch):
    monkeypatch.setattr(fio, "build_argv", lambda job: [
        "sh", "-c", "echo 'fio: io_u error on file /x: Input/output error: write offset=0, buflen=4096' >&2; exit 1"])
    with pytest.raises(ToolFailedError) as exc:
        fio.run_job(fio.FioJob(bs=4096, runtime_s=1, filename="/x"))
    assert exc.value.returncode == 1 and "Input/output error" in str(exc.value) and "bs=4096" in str(exc.value)


def test_nbdkit_exiting_at_start_is_tool_failed_error(monkeypatch, tmp_path):
    monkeypatch.setattr(nbdkit, "check_version", lambda: None)
    monkeypatch.setattr(nbdkit.NbdServer, "argv", lambda self: [
        "sh", "-c", "echo 'nbdkit: error: cannot open plugin \"nosuch\"' >&2; exit 1"])
    server = nbdkit.NbdServer("nosuch", socket_dir=str(tmp_path))
    with pytest.raises(ToolFailedError) as exc:
        server.start()
    assert exc.value.returncode == 1 and 'cannot open plugin "nosuch"' in str(exc.value)
    assert "cannot open plugin" in exc.value.stderr_tail and os.listdir(tmp_path) == []


def test_nbdinfo_failing_is_tool_failed_error_that_names_the_uri(monkeypatch):
    monkeypatch.setattr(_run, "which", lambda p: f"/usr/bin/{p}")
    answer(monkeypatch, stderr="nbdinfo: nbd_connect_uri: connect: No such file or directory\n", rc=1)
    with pytest.raises(ToolFailedError, match=r"cannot reach nbd\+unix:///\?socket=/x: nbdinfo: nbd_connect_uri"):
        nbdkit.export_size("nbd+unix:///?socket=/x")


@pytest.mark.parametrize("call", [
    lambda: lsblk.query("/dev/nope"),
    lambda: nvme.id_ctrl("/dev/nvme9"),
    lambda: nvme.smart_log("/dev/nvme9"),
    lambda: lspci.link("0000:99:00.0"),
    lambda: sysctl.get("kern.nosuch"),
], ids=["lsblk", "nvme", "nvme-smart-log", "lspci", "sysctl"])
def test_a_failing_exit_is_tool_failed_error_in_every_module(monkeypatch, call):
    answer(monkeypatch, stderr="something went wrong\n", rc=32)
    with pytest.raises(ToolFailedError) as exc:
        call()
    assert exc.value.returncode == 32 and "something went wrong" in str(exc.value)


# --- garbage ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call,stdout", [
    (lambda: zpool.pools(), "tank\tnot-a-number\n"),
    (lambda: zpool.iostat("tank"), "no table here\n"),
    (lambda: zfs.objsetid("tank/vol"), "volsize\t1048576\n"),
    (lambda: lsblk.query("/dev/sda"), "<html>\n"),
    (lambda: nvme.id_ctrl("/dev/nvme0"), "{\"mn\": \n"),
    (lambda: nvme.smart_log("/dev/nvme0"), "{\"temperature\": \"hot\"}\n"),
    (lambda: nbdkit.export_size("nbd+unix:///?socket=/x"), "lots\n"),
], ids=["zpool-list", "zpool-iostat", "zfs-get", "lsblk", "nvme", "nvme-smart-log", "nbdinfo"])
def test_garbage_output_is_tool_output_error_in_every_module(monkeypatch, call, stdout):
    monkeypatch.setattr(_run, "which", lambda p: f"/usr/bin/{p}")
    answer(monkeypatch, stdout)
    with pytest.raises(ToolOutputError) as exc:
        call()
    # argv: what ran (sh here), or what the module asked for where it only sees stdout (zpool, zfs)
    assert exc.value.argv[0] in ("sh", "zpool", "zfs") and exc.value.excerpt == stdout and exc.value.why
    assert isinstance(exc.value, MeasurementError) and exc.value.exit_code == 1


def test_smartctl_garbage_is_tool_output_error(monkeypatch):
    monkeypatch.setattr(smartctl, "check_version", lambda: None)
    answer(monkeypatch, "=======> UNRECOGNIZED OPTION: json\n", rc=1)
    with pytest.raises(ToolOutputError, match="not JSON"):
        smartctl.query("/dev/sda")
    with pytest.raises(ToolOutputError, match="not JSON"):
        smartctl.health("/dev/sda")


def test_fio_garbage_after_a_clean_exit_is_tool_output_error(monkeypatch):
    monkeypatch.setattr(fio, "build_argv", lambda job: ["echo", "fio: this is no JSON report"])
    with pytest.raises(ToolOutputError) as exc:
        fio.run_job(fio.FioJob(bs=4096, runtime_s=1, filename="/x"))
    assert exc.value.argv[0] == "echo" and "bs=4096" in exc.value.why


# Synthetic (no program was seen printing it, and no capture of it exists): JSON nested deeper than
# Python's decoder follows, as a broken or hostile program could print it. json.loads raises
# RecursionError for it, which is no ValueError.
DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("program,parser,wrap", [
    ("lsblk", lsblk.parse, '{{"blockdevices": {}}}'),
    ("smartctl", smartctl.parse, '{{"json_format_version": {}}}'),
    ("nvme", nvme.parse_id_ctrl, '{{"mn": {}}}'),
    ("findmnt", findmnt.parse, "{}"),
    ("wipefs", wipefs.parse, '{{"signatures": {}}}'),
])
def test_json_nested_too_deeply_is_tool_output_error_not_recursion_error(program, parser, wrap):
    with pytest.raises(ToolOutputError) as exc:
        _run.parse_text(program, [program, "-J"], wrap.format(DEEP_JSON), parser)
    assert exc.value.program == program and exc.value.argv == [program, "-J"]
    assert "nested too deeply" in exc.value.why and "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="nested too deeply"):  # bare, as device code calls it
        parser(wrap.format(DEEP_JSON))


def test_fio_report_nested_too_deeply_is_tool_output_error():
    with pytest.raises(ToolOutputError) as exc:
        fio.interpret('{"jobs": ' + DEEP_JSON + "}", "", 0, "/dev/x", 4096)
    assert exc.value.program == "fio" and "\n" not in str(exc.value)


def test_a_parser_that_recurses_too_deeply_is_tool_output_error():
    def walk(depth=0):
        return walk(depth + 1)

    with pytest.raises(ToolOutputError, match="nested too deeply") as exc:
        _run.parse_text("lsblk", ["lsblk"], "{}", lambda text: walk())
    assert exc.value.program == "lsblk"


def test_zpool_parsers_called_on_text_raise_tool_output_error_too():
    # the iostat stream (pool/evidence.py) parses text it read itself: same error, no argv
    with pytest.raises(ToolOutputError) as exc:
        zpool.parse_iostat_v("----\ntank 1 2 3\n----\n")
    assert exc.value.argv == [] and exc.value.program == "zpool" and isinstance(exc.value, MeasurementError)


# --- versions: one shape ---------------------------------------------------------------------------------

@pytest.mark.parametrize("module,text,want", [
    (fio, "fio-3.33\n", (3, 33)),
    (gnuplot, "gnuplot 5.4 patchlevel 4\n", (5, 4, 4)),
    (nbdkit, "nbdkit 1.32.5\n", (1, 32, 5)),
    (qemu, "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright (c) 2003-2022\n", (7, 2, 22)),
    (zpool, "zfs-2.3.2-2~bpo12+2\nzfs-kmod-2.3.2-2~bpo12+2\n", (2, 3, 2)),
    (zfs, "zfs-2.1.9-FreeBSD_g92e0d9d18\nzfs-kmod-2.1.9-FreeBSD_g92e0d9d18\n", (2, 1, 9)),
    (smartctl, "smartctl 7.3 2022-02-28 r5338 [x86_64-linux-6.1.0] (local build)\n", (7, 3)),
    (nvme, "nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n", (2, 3)),
    (lsblk, "lsblk from util-linux 2.38.1\n", (2, 38)),
    (lspci, "lspci version 3.9.0\n", (3, 9)),
], ids=["fio", "gnuplot", "nbdkit", "qemu", "zpool", "zfs", "smartctl", "nvme", "lsblk", "lspci"])
def test_every_version_function_returns_a_tool_version(monkeypatch, module, text, want):
    installed(monkeypatch)
    answer(monkeypatch, text)
    v = module.version()
    assert isinstance(v, _run.ToolVersion) and v.version == want
    assert str(v) == ".".join(map(str, want)) and v.text == text.splitlines()[0]


def test_zfs_without_its_kernel_module_still_tells_its_version(monkeypatch):
    # zfs --version prints the userland line, then fails (status 1) when the module is not loaded
    installed(monkeypatch)
    answer(monkeypatch, "zfs-2.3.2-2~bpo12+2\n", "zfs_version_kernel() failed: No such file or directory\n", rc=1)
    assert zfs.version().version == (2, 3, 2)


def test_fio_check_version_text_is_what_documents_record(monkeypatch):
    installed(monkeypatch)
    answer(monkeypatch, "fio-3.33\n")
    v = fio.check_version()
    assert v.text == "fio-3.33" and str(v) == "3.33"
    from slogqual import environment
    assert environment.collect(v.text, [])["fio_version"] == "fio-3.33"


# --- the table -------------------------------------------------------------------------------------------

def test_every_program_in_the_table_has_debian_and_freebsd_advice():
    assert {"fio", "gnuplot", "nbdkit", "qemu-system-x86_64", "zpool", "zfs", "smartctl", "nvme"} <= set(_run.PROGRAMS)
    for name, req in _run.PROGRAMS.items():
        assert req.program == name
        assert req.debian.strip() and req.freebsd.strip(), name
        assert req.minimum is None or (isinstance(req.minimum, tuple) and all(isinstance(n, int) for n in req.minimum))
        assert req.minimum is None or req.needed_for, f"{name}: say what needs that version"
        assert _run.install_advice(name, "linux").startswith("Debian: ")
        assert _run.install_advice(name, "freebsd14").startswith("FreeBSD: ")
        assert "Debian: " in _run.install_advice(name, "darwin") and "FreeBSD: " in _run.install_advice(name, "darwin")


def test_every_tool_module_program_is_in_the_table():
    from slogqual.tools import blkid, findmnt, mount as mount_door, wipefs
    from slogqual.tools.freebsd import (camcontrol, devinfo, diskinfo, geom, glabel, gpart, mount, nvmecontrol, pciconf,
                                        swapctl)
    modules = (fio, gnuplot, nbdkit, zpool, zfs, smartctl, nvme, lsblk, lspci, blkid, findmnt, wipefs, mount_door,
               camcontrol, devinfo, diskinfo, geom, nvmecontrol, sysctl, gpart, glabel, mount, pciconf, swapctl)
    for m in modules:
        assert m.PROGRAM in _run.PROGRAMS, m.__name__
    assert qemu.QEMU in _run.PROGRAMS and mount_door.UMOUNT in _run.PROGRAMS


# --- background helpers ----------------------------------------------------------------------------------

def test_background_stops_by_pid_with_sigterm():
    with _run.Background(["sleep", "30"]) as bg:
        pid = bg.pid
        assert bg.running()
    assert bg.returncode == -signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_background_kills_a_helper_that_ignores_sigterm():
    bg = _run.Background(["sh", "-c", "trap '' TERM; echo ready >&2; exec sleep 30"], grace_s=0.3).start()
    bg.wait_until(lambda: "ready" in bg.stderr_tail(), 10, "start")
    assert bg.stop() == -signal.SIGKILL and bg.stderr_tail() == "ready"


def test_background_stream_to_a_file_never_blocks_and_keeps_every_line():
    # a zpool-iostat-like stream: far more than a pipe holds (64 KiB) is written while nobody reads;
    # with stdout on a pipe the writer would stall at the pipe's size and never reach 'done'
    script = "i=0; while [ $i -lt 4000 ]; do echo \"report $i $(printf '%080d' $i)\"; i=$((i+1)); done; " \
             "echo done >&2; exec sleep 60"
    bg = _run.Background(["sh", "-c", script], capture_stdout=True).start()
    try:
        bg.wait_until(lambda: "done" in bg.stderr_tail(), 60, "write its reports")
    finally:
        rc = bg.stop()
    lines = bg.stdout_text().splitlines()
    assert rc == -signal.SIGTERM and len(lines) == 4000 and lines[-1].startswith("report 3999 ")
    assert len(bg.stdout_text()) > 4 * 65536


def test_background_console_merges_stderr_into_the_pipe_read_live():
    # QEMU's case: the serial console and QEMU's own complaints on one pipe, read as they come
    bg = _run.Background(["sh", "-c", "echo console; echo complaint >&2; exit 3"], stdout=_run.PIPE,
                         stderr_to_stdout=True).start()
    out = bg.stdout.read().decode()
    assert bg.wait(timeout=30) == 3 and out.splitlines() == ["console", "complaint"]
    bg.stop()


def test_background_wait_past_its_timeout_is_a_typed_error_and_it_keeps_running():
    with _run.Background(["sleep", "30"]) as bg:
        with pytest.raises(ToolTimeoutError):
            bg.wait(timeout=0.2)
        assert bg.running()


def test_background_that_dies_is_tool_failed_error_with_its_last_words():
    bg = _run.Background(["sh", "-c", "echo one >&2; echo two >&2; exit 4"]).start()
    try:
        with pytest.raises(ToolFailedError) as exc:
            bg.wait_until(lambda: False, 10, "be ready")
    finally:
        bg.stop()
    e = exc.value
    assert e.returncode == 4 and e.stderr_tail == "one\ntwo" and str(e) == "sh exited before it could be ready: two"


def test_the_error_family_keeps_the_exit_codes():
    for cls, family, code in ((ToolMissingError, MissingDependencyError, 2), (ToolTooOldError, MissingDependencyError, 2),
                              (ToolTimeoutError, MeasurementError, 1), (ToolFailedError, MeasurementError, 1),
                              (ToolOutputError, MeasurementError, 1)):
        assert issubclass(cls, ToolError) and issubclass(cls, family) and cls.exit_code == code
    assert issubclass(MissingDependencyError, UsageError)


def test_zpool_iostat_stream_of_garbage_is_tool_output_error_not_empty():
    # it returned [] for text it could not read: an iostat witness that saw nothing, silently
    with pytest.raises(ToolOutputError) as exc:
        zpool.parse_iostat_stream("cannot open 'tank': no such pool\n")
    assert exc.value.program == "zpool" and "no zpool iostat report" in exc.value.why
    with pytest.raises(ToolOutputError):
        zpool.parse_iostat_stream("1795333934\n²\n")  # a digit that is not a number was a ValueError


@pytest.mark.parametrize("text", ["", "\n\n", "1795333934\n", "1795333934\n1795333935\n",
                                  "1795333934\n            capacity  operations  bandwidth\npool  alloc  free\n"
                                  "----  ----  ----\ntank 1 2 3 4 5 6\n"])
def test_zpool_iostat_stream_stopped_before_a_whole_report_is_empty(text):
    # nothing yet, only time lines, or the first report cut off by the stop: no reports, no error
    # (IostatWindow.collect records no iostat evidence then)
    assert zpool.parse_iostat_stream(text) == []


def _sleeps_of(parent):
    """PIDs of the `sleep` processes whose parent is ``parent`` (/proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(") ", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().split(b"\0")
        except OSError:
            continue
        if fields[1] == str(parent) and os.path.basename(cmd[0]) == b"sleep":
            found.append(int(pid))
    return found


def _gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(") ", 1)[1][0] == "Z"  # reaped by init soon: it runs no more
    except OSError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("door", ["run", "popen", "Background"])
def test_a_helper_dies_with_a_slogqual_killed_by_sigkill(door):
    """Whatever door started it, a helper gets its death signal when slogqual is SIGKILLed (it has no
    chance to end it): PR_SET_PDEATHSIG, asked for in the child before exec."""
    import subprocess
    import sys
    start = {"run": "_run.run(['sleep', '30'])", "popen": "_run.popen(['sleep', '30'])",
             "Background": "_run.Background(['sleep', '30']).start()"}[door]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parent = subprocess.Popen([sys.executable, "-c", f"import time\nfrom slogqual.tools import spawn as _run\n{start}\n"
                               "time.sleep(30)"], env=dict(os.environ, PYTHONPATH=root))
    try:
        deadline = time.monotonic() + 20
        while not _sleeps_of(parent.pid):
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        helper, = _sleeps_of(parent.pid)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while not _gone(helper) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(helper), f"sleep {helper} outlived its SIGKILLed parent"


def test_die_with_parent_kills_a_child_whose_parent_is_already_gone(monkeypatch):
    """The race: slogqual dies between fork and the request; the child sees a parent not its own."""
    killed, asked = [], []
    monkeypatch.setattr(_run, "_death_signal_setter", lambda: asked.append)  # not this test process's own
    monkeypatch.setattr(os, "getppid", lambda: 1)
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append((pid, sig)))
    ran = []
    _run.die_with_parent(signal.SIGKILL, then=lambda: ran.append(True))()
    assert asked == [signal.SIGKILL] and killed == [(os.getpid(), signal.SIGKILL)] and ran == [True]
