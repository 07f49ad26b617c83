#!/bin/sh
# Stage 2 of the slogqual lab guest, PID 1 of the overlay root (the host's root filesystem, read-only
# over 9p, under a tmpfs). The initramfs (contrib/lab/init) runs it from the job share /lab, where
# slogqual put it with lab.env (the run's settings) and job.sh (the command). It mounts the API
# filesystems, binds the lab's module tree (and puts the build's own OpenZFS userland in place, if it has
# one), starts udev (Debian's libzfs waits for it), loads zfs,
# finds the emulated disks by serial, runs the job with its output on the serial console, writes the
# job's exit status to /lab/status (QEMU itself always exits 0) and powers the guest off.
. /lab/lab.env
export PATH="$LAB_PATH"
export HOME=/root LANG=C.UTF-8 TERM="${LAB_TERM:-linux}"
mount -t proc proc /proc
mark() { read -r up _ < /proc/uptime; echo "$1 $up" >> /lab/marks; }
mark stage2
say() { echo "slogqual-lab: $*" > /dev/ttyS0; }
finish() {
  echo "$1" > /lab/status.tmp && mv /lab/status.tmp /lab/status
  mark end
  zpool export -a > /dev/null 2>&1
  udevadm control --exit > /dev/null 2>&1
  sync
  /bin/busybox poweroff -f
  echo o > /proc/sysrq-trigger
  while :; do :; done  # PID 1 must not exit while the power goes off
}
mount -t sysfs sysfs /sys
# The module tree first: the lab cache may live under /tmp or /var/tmp, which get tmpfs next.
mkdir -p "/lib/modules/$LAB_KREL"
mount --bind "$LAB_MODULES" "/lib/modules/$LAB_KREL" || { say "cannot bind the module tree"; finish 125; }
# An OpenZFS userland the lab build carries (SLOGQUAL_LAB_ZFS=2.4: trixie-backports' zfsutils-linux and the
# libraries it links, <build>/userland, beside the module tree): the guest runs it and never the host's, whose
# programs, udev helpers and pyzfs leave this guest's root (the overlay's upper layer: the host keeps them).
# guest/ holds the package's files at their own paths (contrib/lab/build.sh), bound aside first like the
# module tree: the cache may live under /tmp.
LAB_IMAGE=$(cd "$LAB_MODULES/../../../.." && pwd)
if [ -d "$LAB_IMAGE/userland/guest" ]; then
  mkdir -p /.slogqual-zfs && mount --bind "$LAB_IMAGE/userland" /.slogqual-zfs \
    || { say "cannot bind the OpenZFS userland"; finish 125; }
  # one rm for all: with an rm per file this step took 11.6 s of a TCG boot, with one 2.1 s (a boot each);
  # the package's directories stay
  if [ -f /var/lib/dpkg/info/zfsutils-linux.list ]; then
    rm -f $(grep -E '/s?bin/|/lib/udev/|/lib/zfs-linux/' /var/lib/dpkg/info/zfsutils-linux.list) 2> /dev/null
  fi
  rm -rf /usr/lib/python3/dist-packages/libzfs_core
  cp -a --remove-destination /.slogqual-zfs/guest/. / || { say "cannot install the OpenZFS userland"; finish 125; }
  mark userland
fi
# Host directories under /run, /tmp or /var/tmp that the job needs (LAB_KEEP, colon-separated: the
# slogqual source tree of an editable install, e.g. a CI clone in /tmp) stay visible through the tmpfs
# mounted over those directories next: bind them aside now, and back in place afterwards.
keep_n=0
OLD_IFS=$IFS; IFS=:
for keep in ${LAB_KEEP:-}; do
  [ -d "$keep" ] || continue
  mkdir -p "/.slogqual-keep/$keep_n" && mount --bind "$keep" "/.slogqual-keep/$keep_n" \
    || { say "cannot keep $keep"; finish 125; }
  keep_n=$((keep_n + 1))
done
IFS=$OLD_IFS
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
keep_i=0
OLD_IFS=$IFS; IFS=:
for keep in ${LAB_KEEP:-}; do
  [ -d "/.slogqual-keep/$keep_i" ] || continue
  mkdir -p "$keep" && mount --bind "/.slogqual-keep/$keep_i" "$keep" || { say "cannot restore $keep"; finish 125; }
  keep_i=$((keep_i + 1))
done
IFS=$OLD_IFS
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
hostname slogqual-lab
# The guest's own loopback: iSCSI and NFS run over it (the guest has no IP link to the host). And what a
# booted Debian server has that the protocol tools expect: the lock directory open-iscsi's iscsiadm
# writes (systemd-tmpfiles makes it there) and a system D-Bus (targetcli asks it for tcmu-runner).
ip link set lo up 2>/dev/null || say "cannot bring the guest's loopback up"
mkdir -p /run/lock/iscsi /run/dbus
if [ -x /usr/bin/dbus-daemon ] && [ -f /usr/share/dbus-1/system.conf ]; then
  dbus-daemon --system --fork > /dev/null 2>&1 || say "the system D-Bus did not start"
fi
rm -f /etc/zfs/zpool.cache

export SYSTEMD_IGNORE_CHROOT=1
/lib/systemd/systemd-udevd --daemon --resolve-names=never > /dev/null 2>&1 || { say "systemd-udevd failed"; finish 125; }
mark udevd
udevadm trigger --type=subsystems --action=add
# Coldplug only what carries the disks and their drivers (pci/virtio/acpi/nd load ahci, nvme,
# virtio_scsi, nfit, nd_pmem; scsi/block/nvme make the /dev/disk links): every uevent costs
# forks over 9p under TCG, and the hundreds of tty/mem/cpu devices would double the boot.
udevadm trigger --type=devices --action=add $LAB_UDEV_MATCH
mark trigger
udevadm settle --timeout=60
mark udev
modprobe zfs || { say "modprobe zfs failed"; finish 125; }
mark zfs
# The userland must be the module's OpenZFS (never a 2.3 zpool driving a 2.4 module): `zfs version` names both.
set -- $(zfs version 2>/dev/null)
if [ -z "${2:-}" ] || [ "${1#zfs-}" != "${2#zfs-kmod-}" ]; then
  say "the OpenZFS userland (${1:-none}) is not the module's (${2:-none}): rebuild the lab (contrib/lab/build.sh)"
  finish 125
fi

# LAB_DEVICES: "index:class:transport:serial ..." in --device order.
paths=""
pmem_n=0
printf '[' > /lab/devices.json
sep=""
for spec in $LAB_DEVICES; do
  set -- $(echo "$spec" | tr ':' ' ')
  idx=$1 cls=$2 tr=$3 serial=$4 path="" byid=""
  n=0
  # up to 120 s: a guest starved of its CPU (the slowed lab tier beside other work) took longer than 20 s for
  # udev to make a disk's by-id link; a disk that is there costs one pass
  while [ -z "$path" ] && [ $n -lt 1200 ]; do
    if [ "$tr" = pmem ]; then
      [ -b "/dev/pmem$pmem_n" ] && path="/dev/pmem$pmem_n"
    else
      for l in /dev/disk/by-id/*_"$serial" /dev/disk/by-id/*_"$serial"_1; do
        [ -e "$l" ] && { path=$(readlink -f "$l"); byid=$l; break; }
      done
    fi
    [ -n "$path" ] || { n=$((n + 1)); sleep 0.1; }
  done
  if [ -z "$path" ]; then
    say "device $idx ($cls, serial $serial) did not appear within 120 s; block devices and by-id links:"
    ls /sys/block /dev/disk/by-id > /dev/ttyS0 2>&1
    dmesg | tail -n 15 > /dev/ttyS0 2>&1
    finish 125
  fi
  [ "$tr" = pmem ] && pmem_n=$((pmem_n + 1))
  printf '%s{"index": %s, "class": "%s", "transport": "%s", "serial": "%s", "path": "%s", "by_id": "%s"}' \
    "$sep" "$idx" "$cls" "$tr" "$serial" "$path" "$byid" >> /lab/devices.json
  sep=", "
  paths="$paths${paths:+ }$path"
done
printf ']\n' >> /lab/devices.json
udevadm settle --timeout=60  # udev's probes must let go of the disks before the job opens them
mark devices

export SLOGQUAL_LAB=1 SLOGQUAL_LAB_DEVICES="$paths" SLOGQUAL_LAB_DEVICES_JSON=/lab/devices.json SLOGQUAL_LAB_OUT=/lab/out
export SLOGQUAL_LAB_MARKS=/lab/marks
# Classes whose cap is a share of what the device carries in this guest (bandwidth_share): measure each
# uncapped, set its cap through nbdkit's rate file, check it holds (slogqual/lab/calibrate.py).
if [ -n "${LAB_CALIBRATE:-}" ]; then
  LAB_CALIBRATE="$LAB_CALIBRATE" "$LAB_PYTHON" -m slogqual.lab.calibrate > /dev/ttyS0 2>&1 || { say "calibration failed"; finish 125; }
  mark calibrate
fi
# The host's run reaching its timeout asks (hang.request in the job share) what the guest's tasks are blocked on,
# and this answers in hang.txt before the guest is killed (slogqual/lab/runner.py): a job that hangs says where.
hang_watch() {
  while [ ! -e /lab/hang.request ]; do sleep 3; done
  {
    read -r up _ < /proc/uptime
    echo "slogqual lab: the guest's tasks at ${up} s of uptime, asked by the host at its timeout"
    echo "== tasks in uninterruptible sleep (D), each with its kernel stack"
    for d in /proc/[0-9]*; do
      st=$(sed -n 's/^State:[[:space:]]*//p' "$d/status" 2>/dev/null)
      case "$st" in
        D*) echo "-- pid ${d#/proc/} ($st): $(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)"; cat "$d/stack" 2>/dev/null ;;
      esac
    done
    echo "== every process"
    ps -eo pid,ppid,stat,wchan:32,etime,args 2>&1
    echo "== the kernel's log, with sysrq-w's blocked tasks last"
    echo w > /proc/sysrq-trigger
    dmesg 2>&1 | tail -n 400
    echo "== OpenZFS's debug log, its last 200 lines"
    tail -n 200 /proc/spl/kstat/zfs/dbgmsg 2>&1
  } > /lab/hang.tmp 2>&1
  mv /lab/hang.tmp /lab/hang.txt
}
mkdir -p /lab/out
cd /lab/out
if [ "$LAB_MODE" = shell ]; then
  say "devices: $paths (SLOGQUAL_LAB_DEVICES); results in /lab/out; 'exit' powers off"
  setsid -c /bin/bash -l <> /dev/ttyS0 >&0 2>&1
  st=$?
else
  hang_watch < /dev/null > /dev/null 2>&1 &
  sh /lab/job.sh < /dev/null > /dev/ttyS0 2>&1
  st=$?
fi
mark job
finish $st
