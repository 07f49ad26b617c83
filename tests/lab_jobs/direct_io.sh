#!/bin/sh
# Runs INSIDE the lab guest (tests/lab_jobs/zfs_guest.py's "direct-io" job; tests/test_scenario_lab.py reads its
# files): the Direct IO trap of OpenZFS 2.3+ as a user would meet it — the same 128 KiB writes on a sync=always
# dataset with a log vdev, buffered then O_DIRECT, the ZIL kstat before and after each. Plain zpool/zfs/fio on a
# pool carrying slogqual's prefix, destroyed on the way out.
#     sh direct_io.sh DATA_DEV LOG_DEV WRITES
set -e
data=$1 log=$2 writes=$3
zpool create -f -O sync=always -O recordsize=128k -O compression=off -O mountpoint=/slogqual-dio slogqual-dio \
    "$data" log "$log"
trap 'zpool destroy -f slogqual-dio' EXIT
cat /sys/module/zfs/parameters/zfs_dio_enabled > dio_enabled.txt
zfs version > zfs_version.txt
for direct in 0 1; do
    cat /proc/spl/kstat/zfs/zil > "zil-before-$direct.txt"
    fio --name=w --filename="/slogqual-dio/f$direct" --size="$((writes * 128))k" --bs=128k --rw=write \
        --direct="$direct" --ioengine=psync --output-format=json --output="fio-$direct.json"
    cat /proc/spl/kstat/zfs/zil > "zil-after-$direct.txt"
done
