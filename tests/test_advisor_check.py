"""The advisor against lab configurations nobody fitted (issue #37), from recordings: contrib/advisor_check drew
them by seed (test draws 2026 and 3107: each log class x each load, a seeded layout; the fitting draw 1129 other
classes and writer counts, kept apart), each prediction written in the guest before its pool ran, then measured.
tests/fixtures/advisor/check/README.md says how they were made; docs/advisor.md has the tables."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "fixtures", "advisor", "check")
TEST_DRAW = os.path.join(CHECK, "test-2026")
# each test draw: the figures that held when its model predicted them, and the one-writer figures that did not
# (docs/advisor.md says which and why); no change of the model may hold fewer or lose another one-writer figure
HELD = {"test-2026": (14, {"nvdimm-iscsi-4k", "sas-ssd-nfs-64k"}),
        "test-3107": (17, {"nvme-iscsi-4k", "nvme-nfs-64k"}),
        # on the slowed host (a busy-looping process per core and the busy disk, as the lab tier's proof)
        "test-4111-slowed": (12, {"sas-ssd-nfs-64k", "sas-ssd-iscsi-4k", "nvme-iscsi-4k", "nvdimm-nfs-64k"}),
        # a short draw (run.py --first 2: the seeded order's first two configurations), the model unchanged
        "test-5203-first2": (3, set()),
        # another short draw (--first 3), the advisor model unchanged; run with the scenario analysis version 10
        "test-6917-first3": (5, set()),
        # a third short draw (--first 3), the model unchanged: two NVDIMM logs whose host ceiling the pool passed
        # by 3-15 % (a bound, not held), so both one-writer figures missed
        "test-8231-first3": (2, {"nvdimm-nfs-64k", "nvdimm-iscsi-4k"}),
        # a fourth short draw (--first 4), the model unchanged, the host probe's three passes (each writer count its
        # best): the two NVDIMM logs' one-writer bounds held; an HDD's and an NVDIMM's 16 and a SAS SSD's 4 too loose
        "test-9413-first4": (9, set()),
        # a fifth (--first 3) with 15-second steps for the pools and the probe (run.py --runtime 15): the NVDIMM's three
        # held with no dip; the SAS SSD's one-writer prediction 21 % above the pool (a txg's writes in every step)
        "test-7707-first3-15s": (6, {"sas-ssd-iscsi-4k"})}
DRAWS = [os.path.join(CHECK, name) for name in HELD]
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "contrib", "advisor_check"))

import table  # noqa: E402  contrib/advisor_check/table.py: the rule a figure is held to


def configs(draw):
    with open(os.path.join(draw, "plan.json")) as fh:
        return json.load(fh)["configs"]


@pytest.mark.parametrize("draw", DRAWS, ids=os.path.basename)
def test_the_test_draw_is_not_the_fitting_draw(draw):
    fit = {(c["name"], tuple(c["threads"])) for c in configs(os.path.join(CHECK, "fit-1129"))}
    test = {(c["name"], tuple(c["threads"])) for c in configs(draw)}
    assert not fit & test
    assert not {t for _, ts in fit for t in ts} & {t for _, ts in test for t in ts}  # not one writer count shared
    every = {f"{cls}-{p}" for cls in ("hdd", "sas-ssd", "nvme", "nvdimm") for p in ("iscsi-4k", "nfs-64k")}
    with open(os.path.join(draw, "plan.json")) as fh:
        first = json.load(fh).get("first")  # a short draw: the first configurations of the seeded order
    names = {c["name"] for c in configs(draw)}
    assert names == every if first is None else (names < every and len(names) == first)


@pytest.mark.parametrize("draw,name", [(d, c["name"]) for d in DRAWS for c in configs(d)],
                         ids=lambda x: os.path.basename(x) if os.sep in str(x) else x)
def test_each_prediction_was_written_before_its_pool_ran_and_is_what_this_model_says(tmp_path, draw, name):
    d = os.path.join(draw, "lab", name)
    written = open(os.path.join(d, "advice.txt")).readline().split()[1]
    with open(os.path.join(d, "run.json")) as fh:
        run = json.load(fh)
    assert written < min(s["started"] for s in run["steps"])[:19], (written, name)
    c = next(c for c in configs(draw) if c["name"] == name)
    out = tmp_path / "advice.json"
    p = subprocess.run([sys.executable, "-m", "slogqual", "advise", "--log", os.path.join(d, "log.sweep.json"),
                        "--data", *[os.path.join(d, "data.sweep.json")] * len(c["data"]), "--layout", c["layout"],
                        "--protocol", c["protocol"], "--bs", c["bs"], "--threads", ",".join(map(str, c["threads"])),
                        "--tunables", "defaults", "--host", os.path.join(d, "host.json"), "-o", str(out)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(d, "advice.json")) as fh:
        recorded = json.load(fh)
    now = json.loads(out.read_text())
    pick = [("threads", "iops", "binding", "upper_bound")]
    assert [[s.get(k) for k in pick[0]] for s in now["candidates"][0]["steps"]] == \
        [[s.get(k) for k in pick[0]] for s in recorded["candidates"][0]["steps"]]


@pytest.mark.parametrize("draw", DRAWS, ids=os.path.basename)
def test_what_the_test_draw_held_is_not_lost(draw):
    """The test draw's figures, each held to the rule (a prediction within ±20 %, or a bound not passed and no
    more than 1.5x), as many as held when its model predicted them (docs/advisor.md says which failed and why).
    A change of the model must hold at least as many on these recordings, and every one-writer figure but those
    that failed."""
    floor, missed = HELD[os.path.basename(draw)]
    rows = [(c["name"], r) for c, r, why in table.rows(draw) if r is not None]
    assert len(rows) == 3 * len(configs(draw))  # 1, 4 and 16 writers each
    held = [(n, r["threads"]) for n, r in rows if table.held(r)]
    assert len(held) >= floor, held
    one_writer = {n for n, r in rows if r["threads"] == 1 and not table.held(r)}
    assert one_writer <= missed, one_writer
