"""Runs INSIDE a lab guest under Debian's /usr/bin/python3 (which has pyzfs): build a throwaway pool
and create a zvol and a dataset through each ZFS API, read back what ZFS made, destroy, and write the
evidence to $SLOGQUAL_LAB_OUT/apis.json (see tests/test_scenario_lab.py)."""

import json
import os
import sys

from slogqual.pool.builder import ThrowawayPool, wait_for_device
from slogqual.tools import lzc, zfs, zpool

devs = os.environ["SLOGQUAL_LAB_DEVICES"].split()
report = {"python": sys.executable, "lzc_available": lzc.available(), "apis": {}}
for api in ("lzc", "cli"):
    pool = ThrowawayPool(name=f"slogqual-apitest-{api}", vdevs=devs[:2], fs_properties={"compression": "off"},
                         zfs_api=api)
    with pool:
        vol = pool.zvol("lun0", 64 << 20, 16384)
        dev = wait_for_device(f"/dev/zvol/{vol}")
        ds = pool.dataset("nfs", 131072)
        mnt = pool.mountpoint(ds)
        report["apis"][api] = {
            "api_name": pool.api_name,
            "zvol": zfs.get(vol, ["volsize", "volblocksize", "type"]),
            "zvol_device": os.path.exists(dev),
            "dataset": zfs.get(ds, ["recordsize", "mounted", "type"]),
            "mounted_dir": os.path.ismount(mnt),
            "lzc_exists": lzc.exists(vol) if lzc.available() else None,
        }
    report["apis"][api]["pool_gone"] = pool.name not in zpool.pools()
with open(os.path.join(os.environ.get("SLOGQUAL_LAB_OUT", "."), "apis.json"), "w") as fh:
    json.dump(report, fh, indent=2)
print(json.dumps(report))
