"""The power-cut door below the CLI (issue #27): ``slogqual.powercut.door`` runs, verifies and records
in the store as a library call, and refuses bad input before anything is created or written."""

import os

import pytest

from conftest import need
from slogqual.errors import UsageError
from slogqual.powercut.door import PowercutRequest, VerifyRequest, plan_run, run_powercut, verify_powercut
from slogqual.results.powercut import PowercutResult
from slogqual.store import KIND_POWERCUT, Store


@pytest.mark.integration
@need("nbdkit", "nbdfuse", "umount")
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="needs /dev/fuse (nbdfuse)")
def test_a_run_as_a_library_call_writes_its_result_and_records_it_in_the_store(tmp_path):
    backing, out, store = tmp_path / "backing.img", tmp_path / "pc.json", tmp_path / "s.sqlite"
    lines = []
    outcome = run_powercut(PowercutRequest(target=str(backing), emulate="none", cut_after=8, size=4 << 20,
                                           output=str(out), store=str(store)), lines.append)
    assert outcome.passed and outcome.store_error is None and outcome.path == str(out)
    saved = PowercutResult.load(str(out))  # what was written is what the outcome holds
    assert saved.to_dict() == outcome.result.to_dict() and saved.cycles[0].acknowledged >= 8
    assert any(outcome.result.run_id in line for line in lines)  # the progress names the run
    with Store(str(store)) as st:
        runs = st.runs(kind=KIND_POWERCUT)
    assert len(runs) == 1  # the library recorded it; no CLI involved


@pytest.mark.integration
@need("nbdkit", "nbdfuse", "umount")
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="needs /dev/fuse (nbdfuse)")
def test_a_run_not_recorded_when_the_caller_says_so(tmp_path):
    store = tmp_path / "s.sqlite"
    outcome = run_powercut(PowercutRequest(target=str(tmp_path / "b.img"), emulate="none", cut_after=4,
                                           size=4 << 20, output=str(tmp_path / "pc.json"), store=str(store),
                                           record_in_store=False))
    assert outcome.passed and not store.exists()


@pytest.mark.parametrize("case", ["output is the target", "output is a device", "store is the target",
                                  "cycles out of range"])
def test_bad_input_is_refused_before_anything_is_created(tmp_path, case):
    backing = tmp_path / "backing.img"
    req = PowercutRequest(target=str(backing), emulate="none", output=str(tmp_path / "pc.json"),
                          store=str(tmp_path / "s.sqlite"))
    if case == "output is the target":
        backing.write_bytes(b"")
        req.output = str(backing)
    elif case == "output is a device":
        req.output = "/dev/null"
    elif case == "store is the target":
        req.store = str(backing)
    else:
        req.cycles = 0
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(UsageError):
        plan_run(req)
    assert sorted(os.listdir(tmp_path)) == before  # nothing created: no backing file, no result, no store


def test_verify_needs_exactly_one_record_source(tmp_path):
    for rec, journal in ((None, None), (("127.0.0.1", 7207), str(tmp_path / "j"))):
        with pytest.raises(UsageError, match="exactly one"):
            verify_powercut(VerifyRequest(target=str(tmp_path / "t"), run_id="0" * 32, recorder=rec, journal=journal))
