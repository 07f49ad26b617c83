"""Two lanes (or one per core): how README's test command spends its minutes (issue #26).

A lab guest runs under TCG on one host core (its one vCPU) and the lab tier is nearly all waiting on that
core: with CPU hogs on every core the tier took 31 min against 28 unslowed (docs/testing.md). So on a
host with two cores one lane can run the shared ZFS guest (~15 min) while the other runs everything else
(unit, integration and the other lab guests). pytest-xdist gives the lanes (README runs `-n auto --dist
loadgroup`); this plugin decides what goes together and in what order:

- tests that share a module-scoped fixture or a process-table marker stay in one group (one worker):
  the shared ZFS guest's tests (one boot), every test module (its module fixtures are paid once), the
  power-cut tests of the host and of the lab together (both look for ``slogqual-powercut-`` processes);
- the lab tests that boot a guest of their own are groups of one, so they spread over the lanes;
- the order: the shared ZFS guest first (the longest unit: it must start at once), then the host tests,
  then the other lab tests longest first — so the lanes end together — the OpenZFS 2.4 guests after the long
  ones (marked ``zfs24``: contrib/lab/build.sh's default builds that lab in the background while the rest runs).

Each worker writes the group of every test it collected to a file; the controller's scheduler (xdist's
load-by-scope, with these groups as the scopes) reads them. (xdist's own ``xdist_group`` marks work by
rewriting ``item._nodeid``, which pytest 9 no longer reads: its node ids come from ``item._id``.)

Without xdist (a developer's ``pytest tests/test_x.py``) nothing is reordered or written.
"""

import json
import os
import tempfile

import pytest

GROUPS_DIR_ENV = "SLOGQUAL_TEST_LANE_GROUPS"  # set by the controller, inherited by its workers

SHARED_GUEST_FIXTURE = "zfs_guest"  # tests/test_scenario_lab.py
SAME_GROUP = {  # module -> group: modules whose tests must never run at the same time as each other's
    "test_lab_powercut.py": "powercut",
    "test_powercut_integration.py": "powercut",
}
# measured (docs/testing.md, --durations of the lab tier): a guest test's seconds, for the order only
LAB_SECONDS = {
    "test_a_bandwidth_capped_log_flattens_at_its_cap_and_a_wide_pool_passes_it": 330,
    "test_iscsi_4k_quick_in_the_lab": 230,
    "test_a_shared_path_caps_its_units_together_and_a_slow_slot_is_slower_alone": 155,
    "test_a_power_cut_tells_apart_what_the_cache_bit_cannot": 130,
    "test_in_guest_device_tests_pass_in_the_lab": 95,
    "test_a_stripe_of_two_logs_behind_a_shared_cap_reaches_the_cap_not_twice_a_member": 115,
    "test_sweep_in_the_lab_orders_the_classes": 72,
    "test_sweep_in_the_2_4_lab_orders_the_classes": 72,
    "test_a_calibrated_cap_binds_on_a_slowed_host": 60,
    "test_a_guest_that_hangs_says_what_its_tasks_were_blocked_on": 60,
    "test_check_pool_with_log_and_zil_evidence": 40,
    "test_the_zil_goes_to_the_special_vdev_on_2_4_counted_as_normal": 124,
    "test_the_host_probe_measures_the_zfs_of_the_guest_and_the_advice_is_bounded_by_it": 90,
}
LAB_SECONDS_DEFAULT = 25
# where the 2.4 guests go among the other lab tests (ordered by these seconds): after every lab test longer than
# this. Last of all, the special-vdev test ran alone for 121 s while the other lane stood idle (cold run of
# 2026-11-29: 2.4's background build had ended 600 s into the tests, long before); first, a lane could wait for it
ZFS24_AFTER_S = 60


def distributed(config) -> bool:
    """Whether this session's tests are spread over xdist workers (here, or in the controller)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER")) or (
        getattr(config.option, "dist", "no") != "no" and bool(getattr(config.option, "numprocesses", None)))


def group_of(item) -> str:
    module = os.path.basename(str(item.fspath))
    if SHARED_GUEST_FIXTURE in getattr(item, "fixturenames", ()):
        return "shared-zfs-guest"
    if module in SAME_GROUP:
        return SAME_GROUP[module]
    if item.get_closest_marker("lab"):
        return item.nodeid  # a guest of its own
    return module


def _rank(item, group: str):
    if item.get_closest_marker("zfs24"):  # the 2.4 lab may still be building in the background: after the long
        return (2, -ZFS24_AFTER_S)  # lab tests have started, before the short ones that even the lanes' ends
    if group == "shared-zfs-guest":
        return (0, 0)
    if group == "powercut":
        return (2, -LAB_SECONDS["test_a_power_cut_tells_apart_what_the_cache_bit_cannot"])
    if item.get_closest_marker("lab"):
        return (2, -LAB_SECONDS.get(item.originalname or item.name, LAB_SECONDS_DEFAULT))
    return (1, 0)


def pytest_configure(config):
    if not distributed(config) or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep the order below (xdist would sort groups by size)
    os.environ[GROUPS_DIR_ENV] = tempfile.mkdtemp(prefix="slogqual-test-lanes-")


def pytest_unconfigure(config):
    directory = os.environ.get(GROUPS_DIR_ENV)
    if directory and not os.environ.get("PYTEST_XDIST_WORKER"):
        for name in os.listdir(directory) if os.path.isdir(directory) else []:
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory) if os.path.isdir(directory) else None


@pytest.hookimpl(trylast=True)  # after the fixtures' own reordering: this order is the one that is run
def pytest_collection_modifyitems(config, items):
    if not distributed(config):
        return
    groups = {item.nodeid: group_of(item) for item in items}
    # a stable sort keeps each module's own order; every worker computes the same order (xdist checks it)
    order = {id(item): n for n, item in enumerate(items)}
    items.sort(key=lambda item: (_rank(item, groups[item.nodeid]), order[id(item)]))
    directory = os.environ.get(GROUPS_DIR_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if directory and worker:
        tmp = os.path.join(directory, f".{worker}.tmp")
        with open(tmp, "w") as fh:
            json.dump(groups, fh)
        os.replace(tmp, os.path.join(directory, f"{worker}.json"))


def _groups() -> dict:
    """Node id -> group, as the workers collected them (all of them collect the same tests)."""
    directory = os.environ.get(GROUPS_DIR_ENV, "")
    out = {}
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if name.endswith(".json"):
            with open(os.path.join(directory, name)) as fh:
                out.update(json.load(fh))
    return out


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):
        """xdist's load-by-scope with this file's groups as the scopes (read once every worker has
        collected, which is when xdist first asks)."""

        groups = None

        def _split_scope(self, nodeid):
            if self.groups is None:
                self.groups = _groups()
            return self.groups.get(nodeid, nodeid)

    return LaneScheduling(config, log)
