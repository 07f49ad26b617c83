"""The Direct IO trap, measured in the lab (issue #39): on OpenZFS 2.3 and later (zfs_dio_enabled 1 on Linux) an
O_DIRECT write to a dataset is written in place and logged indirectly — its data never reaches the SLOG — where the
same buffered write is copied into the log. A dataset load run with O_DIRECT therefore does not exercise the log the
way an NFS client's writes do, which is why the scenario runner runs dataset loads buffered and refuses O_DIRECT
(pool.engine.check_loads, tests/test_special_vdev.py). Relations only, read from the guest's own ZIL kstat:
buffered 128 KiB writes on a sync=always dataset with a log vdev land on the log as need-copy records; O_DIRECT
writes of the same size and alignment go indirect and put (almost) no bytes on the log.

The guest script is plain zpool/zfs/fio (what a user would type), on a pool named with slogqual's prefix that it
destroys on its way out; the kstat files are parsed with slogqual's own reader."""

import json
import os
import subprocess
import sys

import pytest

from conftest import need_lab
from slogqual.tools.kstat import parse_kstat

pytestmark = pytest.mark.lab

WRITES = 128  # 128 KiB each: 16 MiB per mode, every write one full record (recordsize 128k), page-aligned

GUEST = f"""set -e
set -- $SLOGQUAL_LAB_DEVICES
zpool create -f -O sync=always -O recordsize=128k -O compression=off -O mountpoint=/slogqual-dio slogqual-dio "$1" log "$2"
trap 'zpool destroy -f slogqual-dio' EXIT
cat /sys/module/zfs/parameters/zfs_dio_enabled > dio_enabled.txt
zfs version > zfs_version.txt
for direct in 0 1; do
  cat /proc/spl/kstat/zfs/zil > zil-before-$direct.txt
  zpool iostat -vp slogqual-dio > iostat-before-$direct.txt
  fio --name=w --filename=/slogqual-dio/f$direct --size={WRITES * 128}k --bs=128k --rw=write --direct=$direct \\
      --ioengine=psync --output-format=json --output=fio-$direct.json
  cat /proc/spl/kstat/zfs/zil > zil-after-$direct.txt
done
"""


def _delta(out, direct):
    before = parse_kstat((out / f"zil-before-{direct}.txt").read_text())
    after = parse_kstat((out / f"zil-after-{direct}.txt").read_text())
    return {k: after[k] - before[k] for k in after if isinstance(after[k], int) and k in before}


def test_an_o_direct_dataset_write_goes_indirect_and_skips_the_log_where_a_buffered_one_is_copied_in(tmp_path):
    need_lab()
    out = tmp_path / "lab"
    proc = subprocess.run([sys.executable, "-m", "slogqual", "lab", "run", "--quiet", "-d", "hdd", "-d", "nvme", "-o",
                           str(out), "--", "sh", "-c", GUEST], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out / "dio_enabled.txt").read_text().strip() == "1"  # Linux's default since 2.3
    for direct in (0, 1):
        job = json.loads((out / f"fio-{direct}.json").read_text())["jobs"][0]["write"]
        assert job["total_ios"] == WRITES and job["io_bytes"] == WRITES * 128 * 1024
    buffered, o_direct = _delta(out, 0), _delta(out, 1)
    # buffered: every 128 KiB write copied into the log blocks (need-copy records), on the log vdev
    assert buffered["zil_itx_needcopy_count"] >= WRITES and buffered["zil_itx_indirect_count"] == 0
    assert buffered["zil_itx_metaslab_slog_bytes"] >= WRITES * 128 * 1024
    # O_DIRECT: the same writes logged indirectly — a block pointer each, the data written in place
    assert o_direct["zil_itx_indirect_count"] >= WRITES
    assert o_direct["zil_itx_needcopy_count"] == 0 and o_direct["zil_itx_copied_count"] == 0
    assert o_direct["zil_itx_metaslab_slog_bytes"] < buffered["zil_itx_metaslab_slog_bytes"] / 20
