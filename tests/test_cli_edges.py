"""Input at the edge (issue #28): numbers too small, too large or not finite, and paths that are not
files. Each is refused in one line, exit 2, no traceback, before anything is written: the -o
destination, the store and the target stay as they were. Nothing here measures or boots: the sweep's
claim of its target, the lab's guest and a scenario's claim of its devices are replaced by a failure, so a check that
comes too late fails the test instead of running."""

import hashlib
import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest

from conftest import need
from slogqual import cli

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def digest(path):
    if not os.path.exists(path):
        return None
    if os.path.isdir(path):
        return sorted(os.listdir(path))
    if not os.path.isfile(path):
        return "special"
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.fixture
def arena(tmp_path, monkeypatch):
    def too_late(*_a, **_k):
        raise AssertionError("the run reached the target: the input was not refused at parse time")

    import slogqual.cli.lab as lab_cli
    import slogqual.device as device

    monkeypatch.setattr(lab_cli, "_lab", too_late)  # never a guest booted here
    # a scenario's devices, and a sweep's targets (sweep.claim_target asks it for each); patched where it is
    # looked up at call time, so that no module keeps the failure after the test
    monkeypatch.setattr(device, "claim_for_writing", too_late)
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("SLOGQUAL_STORE", str(store))
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "target.img"
    target.write_bytes(os.urandom(1 << 20))
    return {"dir": tmp_path, "target": str(target), "out": str(tmp_path / "out.json"), "store": str(store)}


def refused(argv, watched):
    """Run argv in this process; assert one line, exit 2, no traceback and every watched path unchanged."""
    before = {p: digest(p) for p in watched}
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as exc:
                code = exc.code
    except Exception as exc:  # what would have been a traceback
        pytest.fail(f"traceback from {argv!r}: {type(exc).__name__}: {exc}")
    text = err.getvalue()
    assert code == 2, (code, text)
    assert text.startswith("slogqual: ") and len(text.strip().splitlines()) == 1, text
    assert {p: digest(p) for p in watched} == before
    return text


# --- numbers -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options, words", [
    (["--interval", "1e-7"], "--interval"),  # rounds to a 0 ns step: a division by zero after the run
    (["--interval", "0.000001"], "--interval"),  # a billion intervals a second: memory exhausted
    (["--interval", "0"], "--interval"),
    (["--interval", "nan"], "--interval"),
    (["--interval", "1e12"], "--interval"),
    (["--interval", "1", "--runtime", "2000"], "intervals"),  # two million intervals in one point
    (["--interval", "2", "--sustain", "24h"], "intervals"),
    (["--sustain", "9" * 30 + "T"], "--sustain"),  # overflowed int(float) before
    (["--sustain", "9" * 400 + "G"], "--sustain"),  # inf bytes
    (["--sustain", "2000T"], "1 PiB"),
    (["--sustain", "100000h"], "24h"),
    (["--runtime", "1e300"], "--runtime"),
    (["--settle", "1e300"], "--settle"),  # time.sleep overflowed, after the claim
    (["--precision", "2%", "--max-runtime", "1e300"], "--max-runtime"),
])
def test_sweep_numbers_out_of_range_are_refused_before_the_run(arena, options, words):
    text = refused(["sweep", arena["target"], "-o", arena["out"], "--quiet", *options],
                   [arena["target"], arena["out"], arena["store"]])
    assert words in text, text


@settings(max_examples=40, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(interval=st.one_of(st.floats(min_value=0, max_value=0.999), st.floats(min_value=3.6e6 + 1),
                          st.sampled_from([float("nan"), float("inf"), -1.0])))
def test_any_interval_outside_1ms_to_an_hour_is_refused(arena, interval):
    text = refused(["sweep", arena["target"], "-o", arena["out"], "--quiet", f"--interval={interval!r}"],
                   [arena["target"], arena["out"], arena["store"]])
    assert "--interval" in text


@pytest.mark.parametrize("argv", [
    ["qualify", "TARGET", "--runtime", "1e300", "--no-store"],
    ["qualify", "TARGET", "--settle", "1e300", "--no-store"],
    ["qualify", "TARGET", "--round-runtime", "inf", "--no-store"],
    ["qualify", "TARGET", "--max-rounds", str(10 ** 30), "--no-store"],
    ["scenario", "run", "nfs-sync", "--fio-servers", "100000"],
    ["scenario", "run", "nfs-sync", "--lab", "--lab-timeout", "0"],
    ["scenario", "run", "nfs-sync", "--lab-timeout", "60"],  # without --lab: nothing to bound
    ["qualify", "TARGET", "--scenario-runtime", "0", "--no-store"],
    ["qualify", "TARGET", "--scenario-ramp", "-1", "--no-store"],
    ["lab", "run", "--cpus", "0", "--", "true"],
    ["lab", "run", "--cpus", "100000", "--", "true"],
    ["lab", "run", "--memory", str(10 ** 12), "--", "true"],
    ["lab", "check", "--timeout", "1e300"],
])
def test_other_commands_bound_their_numbers(arena, argv):
    argv = [arena["target"] if a == "TARGET" else a for a in argv]
    text = refused(argv, [arena["target"], arena["store"]])
    named = [a for a in argv if a in ("--lab-timeout", "--scenario-runtime", "--scenario-ramp")]
    assert all(n in text for n in named), text  # refused for the option given, not for something else


# --- powercut (issue #28): a backing-file size that overflowed or left an empty file, cycles for ever ------

@pytest.fixture
def powercut_arena(arena, monkeypatch):
    """The arena, with the power-cut runs (here and in the lab) replaced by a failure: a number that is
    not refused at parse time fails the test instead of running."""
    import slogqual.lab.powercut as lab_powercut
    import slogqual.powercut.engine as powercut_run
    import slogqual.powercut.recorder as recorder

    def too_late(*_a, **_k):
        raise AssertionError("the power-cut run started: the input was not refused at parse time")

    monkeypatch.setattr(powercut_run.PowercutRun, "run", too_late)
    monkeypatch.setattr(lab_powercut, "run", too_late)
    monkeypatch.setattr(recorder, "RecorderServer", too_late)  # a recorder that listened would serve for ever
    return arena


@pytest.mark.parametrize("argv, words", [
    (["run", "TARGET", "--cut-cmd", "true", "--cut-after", "4", "--cycles", str(10 ** 30)], "--cycles"),
    (["run", "TARGET", "--cut-cmd", "true", "--cut-after", "4", "--cycles", "1001"], "--cycles"),
    (["run", "DIR/back.img", "--emulate", "none", "--size", "9" * 30 + "g"], "--size"),  # truncate overflowed
    (["run", "DIR/back.img", "--emulate", "none", "--size", "2048g"], "--size"),  # EFBIG, an empty file left
    (["run", "DIR/back.img", "--emulate", "none", "--size", "9" * 5000], "--size"),  # int() refused: a traceback
    (["run", "DIR/back.img", "--emulate", "none", "--size", "512k"], "--size"),
    (["write", "TARGET", "--run-id", "ab" * 16, "--cycle", str(2 ** 32), "--sizes", "4k",
      "--journal", "DIR/j.jsonl"], "--cycle"),  # the record header's cycle is 32 bits: a struct.error
])
def test_powercut_numbers_out_of_range_are_refused_before_anything_is_written(powercut_arena, argv, words):
    a = powercut_arena
    argv = [x.replace("TARGET", a["target"]).replace("DIR", str(a["dir"])) for x in argv]
    text = refused(["powercut", *argv, "-o", a["out"], "--quiet"] if argv[0] == "run" else ["powercut", *argv],
                   [a["target"], a["out"], a["store"], str(a["dir"])])
    assert words in text, text


def test_lab_powercut_cycles_are_bounded(powercut_arena):
    a = powercut_arena
    for cycles in (str(10 ** 30), "1001", "0"):
        text = refused(["lab", "powercut", "lying-ssd", "--cycles", cycles, "-o", str(a["dir"] / "lab"), "--quiet"],
                       [a["target"], a["store"], str(a["dir"])])
        assert "--cycles" in text, text


def test_the_powercut_ranges_let_their_edges_through(powercut_arena):
    """The ranges refuse only what is out of them: the edges reach the run (here: the planted failure)."""
    a = powercut_arena
    for argv in (["run", a["target"], "--cut-cmd", "true", "--cut-after", "4", "--cycles", "1000"],
                 ["run", str(a["dir"] / "back.img"), "--emulate", "none", "--size", "1m", "--cut-after", "4"],
                 ["run", str(a["dir"] / "back.img"), "--emulate", "none", "--size", "1024g"]):
        with pytest.raises(AssertionError, match="the power-cut run started"):
            with redirect_stderr(io.StringIO()):
                cli.main(["powercut", *argv, "-o", a["out"], "--quiet"])


@pytest.mark.parametrize("argv, words", [
    (["record", "--listen", "127.0.0.1:0", "--ready-file", "DIR/no-such-dir/ready"], "does not exist"),
    (["record", "--listen", "127.0.0.1:0", "--ready-file", "TARGET"], "not a slogqual recorder's ready file"),
    (["record", "--listen", "127.0.0.1:0", "--ready-file", ""], "--ready-file is empty"),
    (["record", "--listen", "127.0.0.1:0", "--journal", ""], "--journal is empty"),
    (["verify", "TARGET", "--run-id", "", "--journal", "DIR/j.jsonl"], "--run-id ''"),  # the recorder's ValueError
    (["verify", "TARGET", "--run-id", "ab" * 16, "--journal", ""], "--journal is empty"),  # a TypeError
    (["verify", "TARGET", "--run-id", "ab" * 16, "--recorder", ""], "bad address ''"),
    (["run", "TARGET", "--cut-cmd", "true", "--cut-after", "4", "--recorder", "", "-o", "OUT"], "bad address ''"),
])
def test_powercut_words_that_are_empty_or_lead_nowhere_are_refused(powercut_arena, argv, words):
    """The edges a tester found: a ready file in a missing directory (FileNotFoundError after the recorder
    listened), an empty run id (ValueError from the recorder), an empty --recorder or --journal taken as
    none given (a run with its own recorder, a TypeError)."""
    a = powercut_arena
    journal = a["dir"] / "j.jsonl"
    journal.write_bytes(b"")  # a journal that loads: the run id is what is wrong
    argv = [x.replace("TARGET", a["target"]).replace("DIR", str(a["dir"])).replace("OUT", a["out"]) for x in argv]
    text = refused(["powercut", *argv], [a["target"], a["out"], a["store"], str(journal), str(a["dir"])])
    assert words in text, text


def test_inspect_of_an_nbd_export_nobody_serves_is_refused(arena):
    """`inspect nbd+unix:///?socket=/missing.sock` printed a record of unknowns and exited 0."""
    plain = arena["dir"] / "plain"
    plain.write_bytes(b"x")
    for uri, words in ((f"nbd+unix:///?socket={arena['dir']}/missing.sock", "No such file or directory"),
                       ("nbd+unix:///", "names its socket"),
                       (f"nbd+unix:///?socket={plain}", "is not a socket")):
        text = refused(["inspect", uri, "--json"], [str(arena["dir"])])
        assert words in text and uri in text, text


@need("nbdkit", "nbdinfo")
def test_inspect_of_an_nbd_server_that_refuses_is_refused(arena):
    """A socket nobody listens on, and a live nbdkit that has no export of that name: one line, exit 2; the
    export it has is inspected as before."""
    import socket

    from slogqual.tools.nbdkit import NbdServer

    dead = str(arena["dir"] / "dead.sock")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(dead)  # bound, never listening: connect() is refused
        text = refused(["inspect", f"nbd+unix:///?socket={dead}"], [str(arena["dir"])])
    assert "Connection refused" in text, text
    with NbdServer("memory", ["size=1M"], filters=["exportname"],
                   filter_args={"exportname": "a", "exportname-strict": "true"}) as srv:
        text = refused(["inspect", f"nbd+unix:///b?socket={srv.socket}"], [str(arena["dir"])])
        assert "no export named 'b'" in text, text
        out = io.StringIO()
        with redirect_stdout(out):
            assert cli.main(["inspect", f"nbd+unix:///a?socket={srv.socket}", "--json"]) == 0
        assert json.loads(out.getvalue())["capacity"] == 1 << 20


# --- paths that are not files ------------------------------------------------------------------------------

@pytest.fixture
def odd(arena):
    d = arena["dir"] / "a-dir"
    d.mkdir()
    fifo = arena["dir"] / "a-fifo"
    os.mkfifo(fifo)
    return {"dir": str(d), "fifo": str(fifo), "zero": "/dev/zero"}


@pytest.mark.parametrize("kind", ["dir", "fifo", "zero"])
@pytest.mark.parametrize("argv", [
    ["scenario", "show", "FILE"],
    ["scenario", "run", "FILE", "-o", "OUT", "--quiet"],
    ["qualify", "TARGET", "--profile", "FILE", "--no-store", "--quiet"],
    ["lab", "classes", "--devices-file", "FILE"],
    ["import", "diskinfo", "FILE", "-o", "OUT"],
    ["report", "FILE", "-o", "OUT"],
    ["plot", "FILE", "-o", "OUT.png"],
])
def test_a_document_that_is_not_a_regular_file_is_refused_before_reading(arena, odd, kind, argv):
    argv = [{"FILE": odd[kind], "TARGET": arena["target"], "OUT": arena["out"],
             "OUT.png": arena["out"] + ".png"}.get(a, a) for a in argv]
    text = refused(argv, [arena["target"], arena["out"], arena["out"] + ".png", arena["store"], odd["dir"]])
    assert odd[kind] in text, text


def test_a_store_in_a_directory_that_does_not_exist_is_refused(arena):
    missing = arena["dir"] / "no-such-dir"
    for argv in (["history", "--store", missing / "s.sqlite"],
                 ["sweep", arena["target"], "-o", arena["out"], "--quiet", "--store", missing / "s.sqlite"],
                 ["store", "migrate", "--store", missing / "s.sqlite"]):
        text = refused(argv, [arena["target"], arena["out"], str(missing)])
        assert "does not exist" in text and not missing.exists(), text


def test_a_directory_as_the_store_is_refused(arena, odd):
    refused(["history", "--store", odd["dir"]], [arena["target"], odd["dir"]])


def test_the_default_store_is_still_made_where_it_is_missing(arena, monkeypatch):
    home = arena["dir"] / "xdg"
    monkeypatch.delenv("SLOGQUAL_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    code = cli.main(["history"])
    assert code == 0 and (home / "slogqual" / "results.sqlite").exists()


@pytest.mark.parametrize("argv", [["lab", "run", "-o", "FILE", "--", "true"],
                                  ["lab", "run", "-o", "FILE/sub", "--", "true"],
                                  ["lab", "check", "-o", "FILE"]])
def test_lab_output_that_is_a_file_is_refused_before_the_guest(arena, argv):
    argv = [a.replace("FILE", arena["target"]) for a in argv]
    text = refused(argv, [arena["target"], arena["store"]])
    assert "not a directory" in text


def test_every_command_word_is_registered_by_the_module_the_map_names():
    """slogqual.cli imports only the named command's module (a lab guest under TCG spent 9 s importing them
    all): the map must name every command the modules register, and each word's module must register it."""
    import argparse

    from slogqual import cli

    every = cli.build_parser(every=True)
    (sub,) = [a for a in every._actions if isinstance(a, argparse._SubParsersAction)]
    assert sorted(sub.choices) == sorted(cli.COMMANDS)
    for word, module in cli.COMMANDS.items():
        parser = cli.build_parser([word])
        (one,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        assert word in one.choices, (word, module)
    assert len(one.choices) <= 2  # one module's commands only ("devices" registers inspect too)


def test_a_command_line_imports_only_its_command_module():
    import subprocess
    import sys

    from conftest import ROOT

    code = ("import sys; from slogqual import cli; cli.build_parser(['--debug', 'export']); "
            "print(sorted(m for m in sys.modules if m.startswith('slogqual.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=ROOT)).stdout
    assert [m for m in eval(out) if m.split(".")[-1] in cli.COMMAND_MODULES] == ["slogqual.cli.export"]
    # a word slogqual does not know: every module, so that the error lists the choices
    out = subprocess.run([sys.executable, "-m", "slogqual", "sweeep"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2 and "invalid choice: 'sweeep'" in out.stderr and "advise" in out.stderr


# --- an empty name is not an option left out (#40) ----------------------------------------------------------

@pytest.mark.parametrize("argv, option", [
    (["powercut", "run", "TARGET", "--cut-cmd", "true", "--cut-after", "4", "-o", ""], "-o/--output"),
    (["powercut", "run", "TARGET", "--cut-cmd", "true", "--cut-after", "4", "--store", ""], "--store"),
    (["powercut", "verify", "TARGET", "--run-id", "ab" * 16, "--journal", "DIR/j.jsonl", "-o", ""], "-o/--output"),
    (["sweep", "TARGET", "-o", ""], "-o/--output"),
    (["sweep", "--resume", ""], "--resume"),  # a new sweep of a scratch file here
    (["sweep", "TARGET", "--store", " "], "--store"),
    *[(["qualify", "TARGET", "--profile", "homelab-1gbe", option, ""], option)
      for option in ("--out", "--junit", "--sizes", "--data", "--powercut", "--scenario-result", "--model",
                     "--serial", "--firmware", "--store")],
    (["qualify", "TARGET", "--profile", ""], "--profile"),
    (["qualify", "", "--profile", "homelab-1gbe"], "DEV"),
    *[(["history", option, ""], option) for option in ("--model", "--serial", "--firmware", "--store")],
    *[(["fleet", option, ""], option) for option in ("--html", "--model", "--store")],
    (["compare", "A.json", "--baseline", ""], "--baseline"),
    (["export", "R.json", "-o", ""], "-o/--output"),
    (["import", "diskinfo", "F.txt", "-o", ""], "-o/--output"),
    (["import", "diskinfo", "F.txt", "--name", ""], "--name"),
    (["import", "json", "R.json", "--store", ""], "--store"),
    (["plot", "R.json", "-o", ""], "-o/--output"),
    (["plot", "R.json", "-o", "DIR/p.png", "--script", ""], "--script"),
    (["report", "R.json", "-o", ""], "-o/--output"),
    (["store", "info", "--store", ""], "--store"),
    (["lab", "run", "-o", "", "--", "true"], "--output/-o"),  # the results in the current directory
    (["lab", "check", "-o", ""], "--output/-o"),  # nothing kept
    (["lab", "powercut", "lying-ssd", "-o", ""], "--output/-o"),
])
def test_an_empty_name_is_refused_not_taken_as_none_given(powercut_arena, argv, option):
    """-o "$OUT" with OUT unset: a default name, stdout, no report, every run or the default store were taken
    instead of what was asked for. Refused at parse time, naming the option."""
    a = powercut_arena
    (a["dir"] / "j.jsonl").write_bytes(b"")
    argv = [x.replace("TARGET", a["target"]).replace("DIR", str(a["dir"])) for x in argv]
    text = refused(argv, [a["target"], a["out"], a["store"], str(a["dir"])])
    assert f"argument {option}: " in text and "is empty: name " in text, text


@pytest.mark.parametrize("value", ["١٢٣", "1_000", "+ 5", "0", "-1", str(10 ** 30), "5.0"])
@pytest.mark.parametrize("argv, option", [
    (["history", "--show"], "--show"),
    (["lab", "powercut", "lying-ssd", "-o", "DIR/lab", "--cut-after"], "--cut-after"),
    (["powercut", "run", "TARGET", "--cut-cmd", "true", "--cut-after"], "--cut-after"),
    (["powercut", "verify", "TARGET", "--run-id", "ab" * 16, "--journal", "DIR/j.jsonl", "--cycle"], "--cycle"),
])
def test_whole_numbers_are_ascii_digits_in_their_range(powercut_arena, argv, option, value):
    """int() took Arabic-Indic digits and '1_000', and no range: a run id past SQLite's 64 bits, a cut after
    more records than any device acknowledges in the writer's timeout, a cycle the run never had."""
    a = powercut_arena
    (a["dir"] / "j.jsonl").write_bytes(b"")
    argv = [x.replace("TARGET", a["target"]).replace("DIR", str(a["dir"])) for x in argv]
    text = refused([*argv, value], [a["target"], a["out"], a["store"], str(a["dir"])])
    assert f"argument {option}: " in text and ("out of range (allowed: 1 to " in text or "not a whole number" in text), text


def test_the_cut_after_range_lets_its_edges_through(powercut_arena):
    """1 reaches the run (here: the planted failure); 10**9 passes the range and meets the target's capacity
    (1 MiB holds a few dozen records), which the range does not replace."""
    a = powercut_arena
    argv = ["powercut", "run", a["target"], "--cut-cmd", "true", "-o", a["out"], "--quiet", "--cut-after"]
    with pytest.raises(AssertionError, match="the power-cut run started"):
        with redirect_stderr(io.StringIO()):
            cli.main([*argv, "1"])
    text = refused([*argv, str(10 ** 9)], [a["target"], a["out"], a["store"], str(a["dir"])])
    assert "--cut-after 1000000000 needs more" in text, text
