"""slogqual advise at the edge (issue #40): every number it takes has its range in slogqual/limits.py, and
what breaks one is refused in one line, exit 2, before anything is written — the -o destination, the
result store and every other file of the working directory stay as they were. The cases are a tester's
216 hostile inputs that broke (tracebacks, nonsense accepted), and the other numeric options beside them.
The inputs are the advisor's recorded sweeps and the lab's recorded zpool iostat stream
(tests/fixtures/advisor/README.md, tests/fixtures/zpool/README.md); the files changed from them here say so."""

import io
import json
import math
import os
from contextlib import redirect_stdout

import pytest

from conftest import fixture_path
from slogqual import cli, limits
from slogqual.importers import iostat_history
from test_cli_edges import refused

SATA = fixture_path("advisor", "iscsi-4k-lab.log0-sata-ssd.sweep.json")
ISCSI_4K = fixture_path("advisor", "iscsi-4k-lab-sata-ssd-nvdimm.json")
IOSTAT = fixture_path("zpool", "iostat-Tu-vpy-1s-stream-pmem-log.txt")
PMEM_LINE = 44  # the pmem0 row of the report at 1795333939: write bandwidth 8898187, the recording's peak but one
ARABIC = "".join(chr(0x0660 + int(d)) for d in "8898187")  # the same figure in Arabic-Indic digits


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A working directory of its own, the result store named there (not made), the output beside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLOGQUAL_STORE", str(tmp_path / "store.sqlite"))
    return tmp_path


def advise_argv(place, *options):
    return ["advise", "--log", SATA, "--protocol", "iscsi", "--bs", "4k", "--threads", "1,2", "--tunables",
            "defaults", "-o", str(place / "advice.json"), *options]


def iostat_with(place, name, line_no, old, new):
    """The lab's recording with line ``line_no`` changed (``old`` → ``new``): DERIVED from the real capture."""
    lines = open(IOSTAT).read().splitlines(keepends=True)
    assert old in lines[line_no - 1], (line_no, lines[line_no - 1])
    lines[line_no - 1] = lines[line_no - 1].replace(old, new)
    path = place / name
    path.write_text("".join(lines))
    return str(path)


def zero_mean_sweep(place, sizes=None):
    """The SATA sweep with the mean latency of its points (``sizes``: of these only) set to 0: CONSTRUCTED."""
    doc = json.load(open(SATA))
    for p in doc["points"]:
        if sizes is None or p["size"] in sizes:
            p["lat_us"]["mean"] = 0
    path = place / "zero-mean.json"
    path.write_text(json.dumps(doc))
    return str(path)


NUMBERS = [
    # the tracebacks (OverflowError / ValueError in the sizing and life arithmetic, MemoryError)
    (["--rate", "1e308"], "--rate"),
    (["--zfs-txg-timeout", "inf"], "--zfs-txg-timeout"),
    (["--zfs-txg-timeout", "nan"], "--zfs-txg-timeout"),
    (["--zfs-txg-timeout", "1e308"], "--zfs-txg-timeout"),
    (["--tbw", "inf"], "--tbw"),
    (["--tbw", "1e308"], "--tbw"),
    (["--dwpd", "inf"], "--dwpd"),
    (["--dwpd", "1e308"], "--dwpd"),
    (["--threads", "999999999999"], "--threads"),
    (["--bs", "99999999999g"], "--bs"),
    (["--bs", "9" * 400], "--bs"),
    # nonsense that was accepted
    (["--tbw", "100", "--warranty-years", "inf"], "--warranty-years"),  # JSON Infinity in the result
    (["--tbw", "100", "--hours-per-day", "1e-320"], "--hours-per-day"),
    (["--volblocksize", "9" * 400], "--volblocksize"),
    (["--zil-maxblocksize", "9" * 400], "--zil-maxblocksize"),
    (["--zfs-dirty-data-max", "1"], "--zfs-dirty-data-max"),  # "needs 3 bytes"
    (["--logbias", ""], "--logbias"),  # taken as latency, recorded as given
    (["--rate", "١٢٣"], "--rate"),  # float() reads Arabic-Indic digits
    # the rest of advise's numbers, each past an end of its range
    (["--rate", "0"], "--rate"), (["--rate", "-5"], "--rate"), (["--rate", "2e6"], "--rate"),
    (["--rate", "1_000"], "--rate"), (["--rate", "nan"], "--rate"),
    (["--threads", "0"], "--threads"), (["--threads", "4097"], "--threads"), (["--threads", "1,x"], "--threads"),
    (["--threads", ","], "--threads"), (["--threads", "١,2"], "--threads"), (["--threads", "9" * 5000], "--threads"),
    (["--bs", "256"], "--bs"), (["--bs", "1000"], "--bs"), (["--bs", "32m"], "--bs"), (["--bs", "٤k"], "--bs"),
    (["--volblocksize", "0"], "--volblocksize"), (["--volblocksize", "24k"], "--volblocksize"),
    (["--protocol", "nfs", "--recordsize", "3k"], "--recordsize"),
    (["--protocol", "nfs", "--recordsize", "32m"], "--recordsize"),
    (["--zils", "0"], "--zils"), (["--zils", "4097"], "--zils"), (["--zils", "1e3"], "--zils"),
    (["--data", SATA, "--layout", "stripe", "--disks", "0"], "--disks"),
    (["--data", SATA, "--layout", "stripe", "--disks", str(10 ** 30)], "--disks"),
    (["--zfs-txg-timeout", "0"], "--zfs-txg-timeout"), (["--zfs-txg-timeout", "3601"], "--zfs-txg-timeout"),
    (["--zfs-txg-timeout", "2.5"], "--zfs-txg-timeout"),
    (["--zfs-immediate-write-sz", "32m"], "--zfs-immediate-write-sz"),
    (["--zfs-immediate-write-sz", "-1"], "--zfs-immediate-write-sz"),
    (["--zil-slog-bulk", "2048g"], "--zil-slog-bulk"),
    (["--zil-maxblocksize", "2048"], "--zil-maxblocksize"), (["--zil-maxblocksize", "6000"], "--zil-maxblocksize"),
    (["--zil-maxblocksize", "32m"], "--zil-maxblocksize"),
    (["--zil-maxcopied", "17m"], "--zil-maxcopied"),
    (["--zfs-commit-timeout-pct", "1001"], "--zfs-commit-timeout-pct"),
    (["--zfs-commit-timeout-pct", "-1"], "--zfs-commit-timeout-pct"),
    (["--zfs-commit-timeout-pct", "2.5"], "--zfs-commit-timeout-pct"),
    (["--zfs-dirty-data-max", "15m"], "--zfs-dirty-data-max"),
    (["--zfs-dirty-data-max", "2048g"], "--zfs-dirty-data-max"),
    (["--logbias", "Latency"], "--logbias"),
    (["--tbw", "0"], "--tbw"), (["--tbw", "0.5"], "--tbw"), (["--tbw", "2e6"], "--tbw"),
    (["--dwpd", "0"], "--dwpd"), (["--dwpd", "0.001"], "--dwpd"), (["--dwpd", "1001"], "--dwpd"),
    (["--tbw", "100", "--warranty-years", "0"], "--warranty-years"),
    (["--tbw", "100", "--warranty-years", "51"], "--warranty-years"),
    (["--tbw", "100", "--hours-per-day", "0"], "--hours-per-day"),
    (["--tbw", "100", "--hours-per-day", "24.5"], "--hours-per-day"),
]


@pytest.mark.parametrize("options, option", NUMBERS)
def test_a_number_out_of_its_range_is_one_line_exit_2_and_nothing_written(place, options, option):
    text = refused(advise_argv(place, *options), [str(place)])
    assert f"argument {option}: " in text, text


def test_a_commit_of_more_log_blocks_than_the_model_lists_is_refused(place):
    """4096 writers of 16 MiB on one ZIL: 2048 writes a commit, 262,000 lwbs of 128 KiB: each a figure of the
    document (a MemoryError once, with more threads)."""
    text = refused(advise_argv(place, "--threads", "4096", "--bs", "16m"), [str(place)])
    assert "log blocks" in text and "--threads" in text, text


@pytest.mark.parametrize("case", ["arabic-digits", "400-digit-bandwidth", "time-back", "list-as-log",
                                  "list-as-scenario", "zero-means", "one-zero-mean"])
def test_an_input_file_that_breaks_a_rule_is_one_line_exit_2_and_nothing_written(place, case):
    if case == "arabic-digits":
        path = iostat_with(place, "arabic.txt", PMEM_LINE, "8898187", ARABIC)
        argv, words = advise_argv(place, "--rate-history", path), [f"line {PMEM_LINE}", "ASCII digits"]
    elif case == "400-digit-bandwidth":
        path = iostat_with(place, "long.txt", PMEM_LINE, "8898187", "9" * 400)
        argv, words = advise_argv(place, "--rate-history", path), [f"line {PMEM_LINE}", "64-bit"]
    elif case == "time-back":  # the report at 1795333941 stamped before the one at 1795333939 (line 46)
        path = iostat_with(place, "back.txt", 57, "1795333941", "1795333930")
        argv, words = advise_argv(place, "--rate-history", path), ["line 57", "line 46", "back in time"]
    elif case.startswith("list-as"):
        path = place / "list.json"
        path.write_text(json.dumps([json.load(open(SATA))]))  # a sweep inside a JSON list: CONSTRUCTED
        argv = (advise_argv(place)[:1] + ["--log", str(path)] + advise_argv(place)[3:] if case == "list-as-log"
                else advise_argv(place, "--scenario", str(path)))
        words = [str(path), "not a slogqual document", "list"]
    else:  # a sweep whose means are 0: every figure is divided by them (a ZeroDivisionError once)
        path = zero_mean_sweep(place, None if case == "zero-means" else {16384})
        argv = advise_argv(place)[:1] + ["--log", path] + advise_argv(place)[3:]
        words = [path, "16K" if case == "one-zero-mean" else "4K", "mean latency of 0"]
    text = refused(argv, [str(place)])
    assert all(w in text for w in words), text


def test_a_run_from_a_store_that_does_not_exist_is_refused_without_making_the_store(place, monkeypatch):
    missing = place / "missing.sqlite"
    text = refused(advise_argv(place)[:1] + ["--log", "store:1", "--store", str(missing)] + advise_argv(place)[3:],
                   [str(place)])
    assert "does not exist" in text and not missing.exists(), text
    # the store slogqual resolves ($SLOGQUAL_STORE here) likewise: never made by reading from it
    text = refused(advise_argv(place, "--scenario", "store:7"), [str(place)])
    assert "does not exist" in text and not (place / "store.sqlite").exists(), text


def test_a_recording_larger_than_advise_reads_is_refused_with_the_limit_and_one_within_it_is_read_whole(
        place, monkeypatch):
    size = os.path.getsize(IOSTAT)
    monkeypatch.setattr(iostat_history, "MAX_BYTES", size - 1)
    text = refused(advise_argv(place, "--rate-history", IOSTAT), [str(place)])
    assert f"{size:,} bytes, more than the {size - 1:,}" in text, text
    monkeypatch.setattr(iostat_history, "MAX_BYTES", size)
    whole = iostat_history.read(IOSTAT)
    # read in pieces of a few lines (each cut where a report's table ends) it is the same recording, with or
    # without its time lines (those taken out: DERIVED)
    untimed = place / "untimed.txt"
    untimed.write_text("".join(ln for ln in open(IOSTAT) if not ln.strip().isdigit()))
    from slogqual.tools import zpool

    parse, calls = zpool.parse_iostat_stream, []
    monkeypatch.setattr(zpool, "parse_iostat_stream", lambda text: calls.append(text) or parse(text))
    for path, interval in ((IOSTAT, 1.0), (str(untimed), None)):
        whole, calls[:] = iostat_history.read(path), []
        monkeypatch.setattr(iostat_history, "PIECE_LINES", 5)
        pieces = iostat_history.read(path)
        monkeypatch.setattr(iostat_history, "PIECE_LINES", 50_000)
        assert len(calls) == 7  # a piece for every report
        assert pieces.rates == whole.rates == [0.0, 0.0, 4044357.0, 8898187.0, 7980818.0, 9023657.0, 934394.0]
        assert pieces.interval_s == whole.interval_s == interval


def test_the_ends_of_every_range_give_a_document_of_finite_numbers(place):
    """What the ranges let through at their ends is read right: exit 0, a document JSON can hold (no NaN or
    Infinity: the writer would refuse it), a life in years that is a number."""
    ends = [
        ["--rate", "1000000", "--zfs-txg-timeout", "3600", "--tbw", "1", "--warranty-years", "50",
         "--hours-per-day", "24", "--zil-slog-bulk", "1024g", "--zfs-dirty-data-max", "1024g"],
        ["--rate", "0.000001", "--zfs-txg-timeout", "1", "--tbw", "1000000", "--warranty-years", "0.1",
         "--hours-per-day", "0.01", "--zfs-dirty-data-max", "16m", "--zil-maxblocksize", "4096"],
        ["--rate", "1000000", "--dwpd", "1000", "--threads", "4096", "--zils", "4096", "--bs", "16m",
         "--zil-maxblocksize", "16m", "--zfs-immediate-write-sz", "16m", "--zil-maxcopied", "16m"],
        ["--rate", "0.000001", "--dwpd", "0.01", "--hours-per-day", "0.01", "--bs", "512", "--volblocksize", "512",
         "--zfs-immediate-write-sz", "0", "--zil-maxcopied", "0", "--zil-slog-bulk", "0", "--logbias", "throughput"],
    ]
    for options in ends:
        out = io.StringIO()
        with redirect_stdout(out):
            code = cli.main(advise_argv(place, *options, "--json"))
        assert code == 0, options

        def finite_only(token):
            raise AssertionError(f"{token} in the document of {options}")
        doc = json.loads(out.getvalue(), parse_constant=finite_only)
        assert json.load(open(place / "advice.json"), parse_constant=finite_only) == doc
        life = doc["candidates"][0]["life"]
        assert life["years"] is None or math.isfinite(life["years"]), (options, life)
        assert doc["candidates"][0]["size"]["needed_bytes"] > 0


def test_a_document_holding_nan_or_an_infinity_is_not_written(tmp_path):
    from slogqual.results import NotFiniteError, write_json_atomic

    out = tmp_path / "advice.json"
    out.write_text("{}\n")
    for bad in (float("inf"), float("nan"), -float("inf")):
        with pytest.raises(NotFiniteError, match=r"candidates\[0\]\.life\.years is"):
            write_json_atomic(str(out), {"candidates": [{"life": {"years": bad}}]})
        assert sorted(os.listdir(tmp_path)) == ["advice.json"] and out.read_text() == "{}\n"


def test_a_whole_number_too_large_for_a_float_is_out_of_range_not_a_traceback(place, monkeypatch):
    """Range.contains compared math.isfinite(int) first, which overflows past 1e308 (powercut --cycles 9…9)."""
    huge = 10 ** 400
    assert not limits.THREADS.contains(huge) and not limits.LUN_SIZE.contains(-huge)
    assert "out of range" in limits.THREADS.why_not(huge) and "401 digits" in limits.THREADS.why_not(huge)
    import slogqual.powercut.engine as powercut_engine

    def too_late(*_a, **_k):
        raise AssertionError("the power-cut run started: --cycles was not refused at parse time")

    monkeypatch.setattr(powercut_engine.PowercutRun, "run", too_late)
    target = place / "target.img"
    target.write_bytes(b"\0" * 4096)
    text = refused(["powercut", "run", str(target), "--cut-cmd", "true", "--cut-after", "4", "--cycles", "9" * 400,
                    "-o", str(place / "out.json"), "--quiet"], [str(place), str(target)])
    assert "argument --cycles: " in text, text
