"""The advisor against lab configurations nobody fitted (issue #37), from recordings: contrib/advisor_check drew
them by seed (test draws 2026 and 3107: each log class x each load, a seeded layout; the fitting draw 1129 other
classes and writer counts, kept apart), each prediction written in the guest before its pool ran, then measured.
tests/fixtures/advisor/check/README.md says how they were made; docs/advisor.md has the tables."""

import json
import os
import statistics
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "fixtures", "advisor", "check")
TEST_DRAW = os.path.join(CHECK, "test-2026")
# each test draw: (the figures that held when its model predicted them, those the current model holds on the same
# recordings, the one-writer figures the current model misses) — docs/advisor.md says which and why. No change of the
# model may hold fewer or miss another one-writer figure. Model 1 (1112f88) made every recorded advice; model 2 (an
# ATA log's records per commit from the commit timeout, issue #37) was made after looking at these draws' HDD steps.
# Model 3 (a figure the data disks' sweeps bind is their upper bound with a host probe too, as without one: the
# issue's rule that a figure resting on a bound is printed as one) holds 8 more of these figures and 3 fewer: draw
# 2026's nvdimm-nfs-64k, whose mirror's pools ran 3-17 % above the sweeps' figure — its floor the one lowered.
# Model 6 (a log the CPU writes: the probe's own pool on these data disks, its CPU saturated, is this pool) on these
# recordings: 186 figures held where model 5 held 183 — 42 of the 53 figures it changed (all NVDIMM logs') against
# 39; 9 figures newly held, 5 lost (3107's NVDIMM NFS one writer -22 %, the slowed 4111's NVDIMM iSCSI one writer
# +30 %, 58855's NVDIMM NFS 16 +21 %, 9413's NVDIMM NFS 1 and 16 -34 and -26 %). It was made after these recordings
# were seen (the fitting draw fit-1129-model4 held its two), so this is no evidence for it, only what it must keep.
HELD = {"test-2026": (14, 15, {"nvdimm-iscsi-4k", "sas-ssd-nfs-64k", "nvdimm-nfs-64k"}),
        "test-3107": (17, 19, {"nvme-iscsi-4k", "nvme-nfs-64k", "nvdimm-nfs-64k"}),
        # on the slowed host (a busy-looping process per core and the busy disk, as the lab tier's proof)
        "test-4111-slowed": (12, 14, {"sas-ssd-nfs-64k", "sas-ssd-iscsi-4k", "nvme-iscsi-4k", "nvdimm-nfs-64k",
                                       "nvdimm-iscsi-4k"}),
        # a short draw (run.py --first 2: the seeded order's first two configurations), the model unchanged
        "test-5203-first2": (3, 5, set()),
        # another short draw (--first 3), the advisor model unchanged; run with the scenario analysis version 10
        "test-6917-first3": (5, 8, set()),
        # a third short draw (--first 3), the model unchanged: two NVDIMM logs whose host ceiling the pool passed
        # by 3-15 % (a bound, not held), so both one-writer figures missed
        "test-8231-first3": (2, 5, {"nvdimm-nfs-64k", "nvdimm-iscsi-4k"}),
        # a fourth short draw (--first 4), the model unchanged, the host probe's three passes (each writer count its
        # best): the two NVDIMM logs' one-writer bounds held; an HDD's and an NVDIMM's 16 and a SAS SSD's 4 too loose
        "test-9413-first4": (9, 9, {"nvdimm-nfs-64k"}),
        # a fifth (--first 3) with 15-second steps for the pools and the probe (run.py --runtime 15): the NVDIMM's three
        # held with no dip; the SAS SSD's one-writer prediction 21 % above the pool (a txg's writes in every step)
        "test-7707-first3-15s": (6, 7, {"sas-ssd-iscsi-4k"}),
        # the first draw of model 2 (--first 4, seed chosen as the first whose first four held an HDD log), nobody
        # fitted it: the HDD's three held (+3, -7, -9 %); the NVMe's and SAS SSD's host bounds 1.5-1.9x the pools and
        # the SAS SSD's and the NVDIMM's one-writer figures missed, the guest 93-100 % busy far below the probe
        "test-28037-first4": (5, 7, {"sas-ssd-iscsi-4k", "nvdimm-nfs-64k"}),
        # the second draw of model 2 (--first 4, the first seed drawn; a new machine, its guest faster), nobody fitted
        # it: the HDD logs' six held (-1 .. +17 %, the NFS 64K's 4 and 16 as bounds); the NVMe's 16-writer host bound
        # 1.75x the pool and the NVDIMM's 16-writer pool-bound prediction +51 % missed; every one-writer figure held
        "test-14593-first4": (10, 10, set()),
        # the third draw of model 2 and its first slowed (--first 4 --slowed, the first seed drawn): the HDD's three held
        # (+1, -5, -6 %) and the NVMe's host bounds (1.05x, 1.13x); the NVMe's one writer +21 %, the NVDIMM NFS's -22 %
        # (its pool above the slowed probe's ceiling), and four data-side (pool-bound) predictions 21-74 % high missed
        "test-8882-first4-slowed": (6, 9, {"nvme-iscsi-4k", "nvdimm-nfs-64k"}),
        # the fourth draw of model 2 (--first 4, the first seed drawn; its steps carry the write throttle's counts): the
        # HDD NFS's three held, the SAS SSD's 1 and 4, the NVDIMM NFS's one writer; the NVMe's one writer +24 % at 94 %
        # guest CPU and its host bounds 1.50x and 1.60x, the SAS SSD's 16-writer host bound passed by 0.5 %, the NVDIMM
        # NFS's pool-bound 4 and 16 +22 and +34 % (their steps 12-13 % throttled) missed
        "test-58855-first4": (6, 7, {"nvme-iscsi-4k"}),
        # the first draw of model 3 (the whole draw, the first seed drawn), nobody fitted it: 19 of 24, seven of the
        # eight figures the data sweeps bound among them (model 2 would have printed them as predictions: 3 held); the
        # NVDIMM's and the NVMe's iSCSI host bounds at 16 (and the NVMe's at 4) 1.58-1.60x, the SAS SSD iSCSI's
        # 4-writer upper end 1.77x and its NFS's 16-writer data-sweeps bound 1.58x missed
        "test-55612": (19, 19, set()),
        # the first draw of model 4 (the whole draw, the first seed drawn; the host probe's log pass), nobody fitted
        # it: 16 of the 21 figures measured; the NVMe NFS's three never ran (its NVMe gone from the guest after the
        # probe: MISSING). The NVMe iSCSI's host bounds 1.28-1.31x and the NVDIMM iSCSI's 16 (1.05x) held on the log
        # pass; missed: the NVDIMM NFS's 1 and 4 (its pools 0.3-5 % past the data sweeps' bound), the SAS SSD iSCSI's
        # one writer (+23 %) and 4-writer host bound (1.60x), the HDD NFS's 4-writer upper end (1.74x)
        # model 5 on the same recordings: 18 (the SAS SSD iSCSI's 1 and 4 writers log-pass-bound, +13 and +6 %); the
        # rule was made after these figures were seen, so this is no evidence for it, only what it must keep
        "test-50152": (16, 18, {"sas-ssd-iscsi-4k", "nvdimm-nfs-64k"}),
        # the second draw of model 4 (the whole draw, the first seed drawn), nobody fitted it: 15 of 24; the host bounds
        # held in 3 of 7 (the NVMe iSCSI's 4 at 1.66x, the NVMe NFS's 4 at 1.50x, the SAS SSD iSCSI's 16 at 1.56x
        # missed; the NVDIMM iSCSI's 16 passed by 4 % on the log pass), the NVMe NFS's one writer +25 %
        # model 5 on them: 16 (the SAS SSD iSCSI's 4 writers log-pass-bound, +13 %), made after they were seen
        "test-58594": (15, 17, {"nvme-nfs-64k"}),
        # the first draw of model 5 (the whole draw, the first seed drawn), nobody fitted it: 16 of the 18 figures
        # measured; both NVMe configurations lost (MISSING). The SAS SSD iSCSI's 4 writers held log-pass-bound (+14 %),
        # the HDD iSCSI's three (-4, -3, -10 %); missed: the HDD NFS's 4 writers log-pass-bound (+22 %), the NVDIMM
        # NFS's 16-writer data-sweeps bound (1.60x)
        "test-47166": (16, 17, set()),
        # the first draw of model 6 (the whole draw, the first seed drawn), nobody fitted it: 13 of the 18 figures
        # measured; both NVMe configurations lost again (MISSING: their logs stalled at the log pass's 16 writers and
        # left the guest; the probe kept what it had measured and the advice says log-stalled). Model 6's own figures
        # held in 4 of 6: the NVDIMM NFS's three (-10, -1, +7 %) and the NVDIMM iSCSI's 16; its 1 and 4 writers missed
        # at -26 and -34 % (the draw's first configuration: its probe's passes spread 1,290-1,725 and 1,360-2,163).
        # The HDD iSCSI's three and the SAS SSD iSCSI's 1 and 4 held log-pass-bound (-4 .. +7 %), the SAS SSD NFS's
        # one writer too (-3 %); missed: the SAS SSD NFS's data-sweeps bounds on its stripe (1.56x, 1.78x) and the
        # HDD NFS's 4 writers (an upper end 1.86x)
        "test-63740": (13, 13, {"nvdimm-iscsi-4k"}),
        # the second draw of model 6 (the whole draw, the first seed drawn), nobody fitted it, every configuration ran
        # (the guest's NVMe queue held to 15: no stall in six log passes): 18 of 24, as written before it ran. Model
        # 6's own 5 of 6 (the NVDIMM NFS's 16 +21 %), the HDD and SAS SSD iSCSI's six (log-pass-bound -4 .. +14 % and a
        # host bound 1.18x); missed: both NVMe one-writer figures (log-latency-bound +38 and +28 %), the NVMe iSCSI's
        # 4-writer host bound (1.62x), the SAS SSD NFS's 16-writer data-sweeps bound on its stripe (1.62x), the HDD
        # NFS's 4 writers (log-pass-bound +41 %)
        "test-28045": (18, 18, {"nvme-iscsi-4k", "nvme-nfs-64k"}),
        # the first draw of model 7 (the whole draw, the first seed drawn), nobody fitted it, every configuration ran:
        # 19 of 24 (16 written before it ran, 13-19). Model 7's own 2 of 2 (the NVMe one writer log-pass-bound, -10 and
        # -0 %); all 10 predictions held; 9 of 14 bounds: missed the SAS SSD NFS's data-sweeps bounds on its stripe
        # (1.62x, 1.67x), the NVMe iSCSI's 16-writer host bound (1.58x), the HDD NFS's 4-writer upper end (1.70x) and
        # the NVDIMM NFS's one writer on a mirror, its pool 8 % past the data sweeps' bound
        "test-7470": (19, 19, {"nvdimm-nfs-64k"}),
        # the second draw of model 7 (the whole draw, the first seed drawn; seven of eight on a mirror), nobody fitted
        # it, every configuration ran: 19 of 24 (16 written before it ran, 13-19). 9 of 11 predictions held: missed
        # the NVDIMM iSCSI's one writer (model 6's probe-pool-bound, -24 %) and the HDD NFS's 4 writers (log-pass-bound
        # +20 %, as in every draw); 10 of 13 bounds: missed the NVMe NFS's one writer on a mirror, its pool 19 % past
        # the data sweeps' bound (as the NVDIMM NFS's on a mirror before), the SAS SSD NFS's 4-writer host bound on
        # its stripe (1.57x) and the SAS SSD iSCSI's 16-writer host bound (1.79x)
        "test-3861": (19, 19, {"nvme-nfs-64k", "nvdimm-iscsi-4k"})}
# configurations of a draw that the guest could not finish, and why (their advice stands, no pool to judge it by)
MISSING = {"test-50152": {"nvme-nfs-64k": "/dev/nvme1n1 gone from the guest after the host probe's log pass "
                                          "(`slogqual: /dev/nvme1n1: no such file or device`, its log.txt)"},
           "test-47166": {name: f"the emulated NVMe stopped answering at the log pass's 16 writers, the controller "
                                f"reset and disabled, the namespace removed (its dmesg.txt): no host document, so no "
                                f"advice ({name}/log.txt) and no pool" for name in ("nvme-iscsi-4k", "nvme-nfs-64k")}}
MISSING["test-63740"] = {name: f"the emulated NVMe stopped answering at the log pass's 16 writers (a write of 31-93 s), "
                               f"the controller reset, disabled and the namespace removed (its dmesg.txt): the probe kept "
                               f"what it had measured and the advice was written, the pool could not run ({name}/log.txt)"
                         for name in ("nvme-nfs-64k", "nvme-iscsi-4k")}
# of those, the ones whose advice could not be written either (no host document to advise with)
NO_ADVICE = {("test-47166", "nvme-iscsi-4k"), ("test-47166", "nvme-nfs-64k")}
DRAWS = [os.path.join(CHECK, name) for name in HELD]
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "contrib", "advisor_check"))

import readvise  # noqa: E402  contrib/advisor_check/readvise.py: the advise command line of a recorded configuration
import table  # noqa: E402  contrib/advisor_check/table.py: the rule a figure is held to
import check_toml  # noqa: E402  contrib/advisor_check/check_toml.py: the pool every configuration ran


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


def advise_now(draw, name, out):
    """The current model's advice from a configuration's recorded inputs (its sweeps and host probe), as the guest
    made it before the pool: the same command line, on this host."""
    d = os.path.join(draw, "lab", name)
    c = next(c for c in configs(draw) if c["name"] == name)
    p = subprocess.run(readvise.advise_argv(d, c, out), capture_output=True, text=True, cwd=os.path.dirname(str(out)))
    assert p.returncode == 0, p.stderr
    return json.loads(open(out).read())


def ran(draw):
    """The configurations of a draw whose pool ran (all but MISSING's)."""
    return [c for c in configs(draw) if c["name"] not in MISSING.get(os.path.basename(draw), {})]


@pytest.mark.parametrize("draw,name", [(d, c["name"]) for d in DRAWS for c in ran(d)],
                         ids=lambda x: os.path.basename(x) if os.sep in str(x) else x)
def test_each_prediction_was_written_before_its_pool_ran_and_a_later_model_is_said(tmp_path, draw, name):
    """The advice in a recording is the one the guest wrote before the pool ran; where the model that wrote it is
    the current one, it is what the current model says of the same inputs (nothing in the recording was made
    again), and where an older model wrote it, the document says which."""
    from slogqual.analysis.advisor import MODEL_VERSION
    d = os.path.join(draw, "lab", name)
    written = open(os.path.join(d, "advice.txt")).readline().split()[1]
    with open(os.path.join(d, "run.json")) as fh:
        run = json.load(fh)
    assert written < min(s["started"] for s in run["steps"])[:19], (written, name)
    with open(os.path.join(d, "advice.json")) as fh:
        recorded = json.load(fh)
    now = advise_now(draw, name, tmp_path / "advice.json")
    assert now["model_version"] == MODEL_VERSION
    pick = ("threads", "iops", "binding", "upper_bound")
    same = [[s.get(k) for k in pick] for s in now["candidates"][0]["steps"]] == \
        [[s.get(k) for k in pick] for s in recorded["candidates"][0]["steps"]]
    assert recorded["model_version"] <= MODEL_VERSION
    assert same or recorded["model_version"] < MODEL_VERSION, (recorded["model_version"], name)


@pytest.mark.parametrize("draw", DRAWS, ids=os.path.basename)
def test_what_the_test_draw_held_is_not_lost(tmp_path, draw):
    """The test draw's figures, each held to the rule (a prediction within ±20 %, or a bound not passed and no
    more than 1.5x), as its own model's advice (the recorded one) held them; the current model's advice on the
    same recordings at least as many, as many as when this model was made, and every one-writer figure but
    those that failed."""
    floor, now_floor, missed = HELD[os.path.basename(draw)]
    recorded = [(c["name"], r) for c, r, why in table.rows(draw) if r is not None]
    assert len(recorded) == 3 * len(ran(draw))  # 1, 4 and 16 writers each
    missing = {c["name"] for c, r, why in table.rows(draw) if r is None}
    assert missing == set(MISSING.get(os.path.basename(draw), {}))  # no other configuration lost
    for name in missing:  # its advice was written all the same, before a pool that never ran; or its probe failed
        advice = os.path.exists(os.path.join(draw, "lab", name, "advice.json"))
        assert advice != ((os.path.basename(draw), name) in NO_ADVICE)
        assert advice or "no such" in open(os.path.join(draw, "lab", name, "log.txt")).read()
    assert len([1 for n, r in recorded if table.held(r)]) == floor

    def current(c):
        out = tmp_path / f"{c['name']}.advice.json"
        if (os.path.basename(draw), c["name"]) not in NO_ADVICE:  # else no host document: nothing to advise with
            advise_now(draw, c["name"], out)
        return str(out)

    rows = [(c["name"], r) for c, r, why in table.rows(draw, advice_of=current) if r is not None]
    assert len(rows) == len(recorded)
    held = [(n, r["threads"]) for n, r in rows if table.held(r)]
    assert len(held) >= max(floor, now_floor), held
    one_writer = {n for n, r in rows if r["threads"] == 1 and not table.held(r)}
    assert one_writer <= missed, one_writer


def test_a_figure_the_data_sweeps_bind_is_their_bound_with_a_host_probe_too(tmp_path):
    """Model 3: the data disks' QD1 sweeps say nothing of the pool's writes at the txg's queue depth, and a host
    probe measures the host, not that; so where their figure binds, the advice prints and stores it as their upper
    bound with --host as without it (draw 47166's SAS SSD NFS: pool-bound at 425 at 4 and 16 writers, its pools
    383-391), while a figure the log binds stays a prediction (its one writer; draw 58855's NVMe's one writer)."""
    draw = os.path.join(CHECK, "test-47166")
    steps = advise_now(draw, "sas-ssd-nfs-64k", tmp_path / "sas.json")["candidates"][0]["steps"]
    pool = steps[1:]
    assert [s["binding"] for s in pool] == ["pool-bound"] * 2
    assert [s["upper_bound"] for s in pool] == ["data-sweeps"] * 2
    assert all(s["iops"] == s["limits"]["pool_iops"] for s in pool)
    assert (steps[0]["binding"], steps[0]["upper_bound"]) == ("log-latency-bound", None)
    log = advise_now(os.path.join(CHECK, "test-58855-first4"), "nvme-iscsi-4k", tmp_path / "nvme.json")
    log = log["candidates"][0]["steps"]
    assert (log[0]["binding"], log[0]["upper_bound"]) == ("log-latency-bound", None)
    assert {s["upper_bound"] for s in log[1:]} == {"host-ceiling"}
    d = os.path.join(draw, "lab", "sas-ssd-nfs-64k")
    c = next(c for c in configs(draw) if c["name"] == "sas-ssd-nfs-64k")
    p = subprocess.run(readvise.advise_argv(d, c, tmp_path / "again.json"), capture_output=True, text=True,
                       cwd=str(tmp_path))
    rows = [line.split() for line in p.stdout.splitlines() if line.split()[:1] in (["1"], ["4"], ["16"])]
    assert len(rows) == 3 and all("≤" in r and r[-1] == "pool-bound" for r in rows[1:]), p.stdout  # printed as a bound


def test_one_writer_alone_takes_what_the_log_pass_measured_whatever_its_cpu(tmp_path):
    """Model 7: with one writer the log pass's measured rate is a limit even where its CPU was saturated — a writer
    alone shares the CPU with no other writer; its own path (ZFS's work, this log's driver and device, in a row) is
    its pace, and the log pass ran that path. Draw 28045's NVMe iSCSI (recorded; model 7 was made after it was
    seen): the one writer's log pass ran at 97 % busy, the figure is its median (log-pass-bound, marked alone, the
    words say so) and holds where the sweep's latency (model 6: 1,558, +38 %) did not; at 4 and 16 writers, whose
    passes were just as busy, it is no figure (the writers shared the CPU with the RAM data's copies)."""
    draw = os.path.join(CHECK, "test-28045")
    out = tmp_path / "advice.json"
    advice = advise_now(draw, "nvme-iscsi-4k", out)
    by = {s["threads"]: s for s in advice["candidates"][0]["steps"]}
    one = by[1]
    assert one["binding"] == "log-pass-bound" and one["limits"]["log_pass_alone"] is True
    assert one["limits"]["log_pass_busy"] >= 0.9  # saturated: model 5 alone would not have taken it
    assert one["iops"] == pytest.approx(statistics.median(one["limits"]["log_pass_each_iops"]), abs=0.1)
    assert one["iops"] < one["limits"]["log_latency_iops"] and not one["upper_bound"]  # a prediction, below the sweep's
    for n in (4, 16):
        assert by[n]["limits"]["log_pass_busy"] >= 0.9 and by[n]["binding"] != "log-pass-bound"
        assert "log_pass_alone" not in by[n]["limits"]
    rows = {r["threads"]: r for c, r, why in table.rows(draw, advice_of=lambda c: str(out)) if c["name"] == "nvme-iscsi-4k"}
    assert table.held(rows[1]) and abs(rows[1]["predicted_iops"] / rows[1]["measured_iops"] - 1) < 0.2
    text = subprocess.run([sys.executable, "-m", "slogqual", "advise", "--advice", str(out)], capture_output=True,
                          text=True, cwd=tmp_path).stdout
    assert "one writer alone, whose own path (ZFS's work and this log's, in a row) set its pace, busy or not" in text
    # where the CPU had room at one writer (the HDD iSCSI of the same draw) it is model 5's rule, not marked alone
    hdd = advise_now(draw, "hdd-iscsi-4k", tmp_path / "hdd.json")["candidates"][0]["steps"][0]
    assert hdd["binding"] == "log-pass-bound" and hdd["limits"]["log_pass_busy"] < 0.9
    assert "log_pass_alone" not in hdd["limits"]


def test_every_recorded_pool_is_the_one_check_toml_writes():
    """The pool each recorded configuration ran (its check.toml, written in the guest) is byte for byte what
    contrib/advisor_check/check_toml.py writes from its plan: guest_job.py and cpu_parts.py share that one text."""
    seen = 0
    for name in sorted(os.listdir(CHECK)):
        plan_file = os.path.join(CHECK, name, "plan.json")
        if not os.path.exists(plan_file):
            continue
        with open(plan_file) as fh:
            plan = json.load(fh)
        for c in plan["configs"]:
            path = os.path.join(CHECK, name, "lab", c["name"], "check.toml")
            if os.path.exists(path):
                with open(path) as fh:
                    assert check_toml.text(c, plan["runtime"], plan["ramp"]) == fh.read(), (name, c["name"])
                seen += 1
    assert seen >= 100
