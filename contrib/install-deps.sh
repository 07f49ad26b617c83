#!/usr/bin/env bash
# Install slogqual's runtime and test dependencies on Debian 12, as root. Idempotent and quick on
# a machine that has them: apt runs only when a package is missing, pip only when slogqual is not
# installed from this tree. The lab's heavy set-up (QEMU, kernel, ZFS module) is contrib/lab/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  fio            # the measurement engine (dsync mode, NBD targets, pool loads, preconditioning)
  gcc            # cc: builds the pair engine (slogqual/native/pairbench.c) at pip install or first use
  libc6-dev      # the C headers it needs
  gnuplot-nox    # plots
  fonts-dejavu-core  # the font the plots ask gnuplot for
  chromium       # headless browser check of the HTML report (tests/test_report_chromium.py)
  nbdkit         # nbd targets with added latency (delay filter) for tests and the lab
  libnbd-bin     # nbdinfo: the size of an nbd export; nbdfuse: an nbdkit export as a file (pair-engine
                 # tests, the powercut emulation; needs /dev/fuse)
  ioping         # contrib/bench/pair_vs_fio.py: the latency tool a user would pick instead
  util-linux     # lsblk, blkid, wipefs, losetup, findmnt
  e2fsprogs      # mkfs.ext4 for the safety tests
  fdisk          # sfdisk: partition tables for the safety tests
  smartmontools  # smartctl --json: ATA/SCSI identity, rotation, SATA link, write cache
  nvme-cli       # nvme id-ctrl (vwc) and get-feature 6: NVMe volatile write cache
  pciutils       # lspci -vv LnkCap/LnkSta where sysfs lacks the link attributes
  mdadm          # md RAID members for the safety tests in the lab guest
  python3-pip
  postgresql     # the PostgreSQL store's tests start a real server (initdb, pg_ctl; tests/pgserver.py)
  libpq5         # the client library psycopg 3 (pure Python) loads for a postgresql:// store
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Editable install: the console script runs this tree (also inside the lab guest, which sees the
# host's root filesystem read-only).
# (checked from / so that python3 does not import the package from the current directory)
here=$PWD
if ! (cd / && python3 -c 'import slogqual, sys; sys.exit(0 if slogqual.__file__.startswith(sys.argv[1] + "/") else 1)' "$here") 2>/dev/null \
   || ! command -v slogqual >/dev/null; then
  pip_flags=(-q --disable-pip-version-check --root-user-action=ignore)
  # Debian's own python3 is "externally managed" (PEP 668); this is a test/lab machine, install anyway.
  if python3 -c 'import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
    pip_flags+=(--break-system-packages)
  fi
  python3 -m pip install "${pip_flags[@]}" -e ".[test,postgresql]"
fi
# what the tests need beyond slogqual itself, also where slogqual was installed before it was needed:
# psycopg 3 (the PostgreSQL store and its tests), pytest-xdist (README's test command runs in lanes),
# ziglang (the static pair engine of tests/test_wheel.py, the FreeBSD builds of tests/test_engine_hosts.py)
for need in "psycopg psycopg>=3.1" "xdist pytest-xdist>=3" "ziglang ziglang"; do
  module=${need%% *} requirement=${need#* }
  if ! (cd / && python3 -c "import $module") 2>/dev/null; then
    pip_flags=(-q --disable-pip-version-check --root-user-action=ignore)
    if python3 -c 'import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
      pip_flags+=(--break-system-packages)
    fi
    python3 -m pip install "${pip_flags[@]}" "$requirement"
  fi
done
# The tree's bytecode, as pip compiles a regular install's (an editable one it leaves as source). A lab guest reads
# this tree over 9p and, finding no .pyc (PYTHONDONTWRITEBYTECODE on the host, a fresh clone), compiled the package
# anew at every boot: 8.7 s for the first `slogqual scenario run --help` in a guest, 4.2 s for the second (measured
# 2026-11-30, docs/lab.md). A .pyc older than its source is only ignored, so an edited tree stays right.
python3 -m compileall -q -j 0 slogqual > /dev/null || echo "install-deps: compileall failed (the lab runs, slower)" >&2
echo "install-deps: ready in ${SECONDS} s" >&2
