#!/bin/sh
# The guest's side of tests/test_lab_shelf.py: QD1 write+flush at one size on each device alone, then on
# all of them at once (one fio run, its jobs started together), and where each device sits in sysfs.
# $1: block size, $2: seconds per run. Devices: $SLOGQUAL_LAB_DEVICES. Results: $SLOGQUAL_LAB_OUT.
set -eu
bs=$1 secs=$2
out=$SLOGQUAL_LAB_OUT
job() {  # one fio job section per device: QD1, O_DIRECT, fdatasync after every write (the sweep's pair)
  printf -- '--name=%s --filename=%s --rw=write --bs=%s --direct=1 --fdatasync=1 --ioengine=psync ' \
    "$(basename "$1")" "$1" "$bs"
}
for d in $SLOGQUAL_LAB_DEVICES; do
  n=$(basename "$d")
  fio --output-format=json --output="$out/alone-$n.json" --time_based --runtime="$secs" $(job "$d")
  readlink -f "/sys/block/$n" > "$out/sysfs-$n.txt"
done
all=""
for d in $SLOGQUAL_LAB_DEVICES; do all="$all $(job "$d")"; done
fio --output-format=json --output="$out/together.json" --time_based --runtime="$secs" $all
