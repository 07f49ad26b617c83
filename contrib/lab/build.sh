#!/usr/bin/env bash
# Build the slogqual lab: a QEMU guest kernel with a real OpenZFS module, and its busybox initramfs.
#
# Run as root on Debian 12 (bookworm). Two OpenZFS versions, each built and cached on its own:
#   SLOGQUAL_LAB_ZFS=2.3 (the default, what `slogqual lab` boots unless told otherwise): the module from
#       bookworm-backports' zfs-dkms, the guest using the host's own zfsutils-linux of the same version;
#   SLOGQUAL_LAB_ZFS=2.4: the module from trixie-backports' zfs-dkms, and trixie-backports' zfsutils-linux
#       of the same version with the trixie libraries it links (glibc included), unpacked into the build,
#       never installed on the host; the guest runs it in place of the host's userland (stage2.sh).
# Idempotent: each build is cached under
#   ${SLOGQUAL_LAB_CACHE:-/var/cache/slogqual/lab}/<kernel release>_zfs-<zfs-dkms version>/
# and a repeat run that finds a complete build (and the host packages in place) does nothing but say so.
#
# What it does, once:
#   1. adds Debian's `contrib` component (bookworm, bookworm-backports) and installs, with services kept
#      from starting (policy-rc.d): qemu-system-x86, busybox-static, udev, open-iscsi and
#      nfs-kernel-server (the real iSCSI/NFS transports, run in the guest; LIO's target is written through
#      configfs by slogqual itself, so neither targetcli nor the D-Bus it asks is needed), the kernel headers for the
#      guest ABI, and (2.3) OpenZFS's userland (zfsutils-linux, python3-pyzfs) from bookworm-backports. The
#      guest runs the HOST's root filesystem read-only over virtio-9p, so this userland is the 2.3 guest's.
#      2.4 asks trixie and trixie-backports through an apt configuration of its own under ${CACHE}/apt
#      (its own lists, no dpkg status): the host's apt sources, lists and packages stay as they were;
#   2. downloads (and keeps) linux-image-<abi>-amd64 and zfs-dkms .debs (2.4: and the userland's) without
#      installing them, builds spl.ko and zfs.ko against the headers (make -j<CPUs>, without debug information:
#      the modules are stripped of it anyway, and generating it only costs compile time), strips them,
#      puts them into a copy of the guest kernel's module tree and runs depmod -b on it; checks that the
#      module's version is the userland's;
#   3. builds the busybox initramfs (virtio/9p/overlay modules in `modprobe --show-depends` order);
#   4. writes lab.json (the manifest slogqual reads: module and userland versions) and points
#      ${CACHE}/current (2.3) or ${CACHE}/zfs-2.4 (2.4) at the build. A 2.4 build never moves `current`.
#
# Without SLOGQUAL_LAB_ZFS it builds both: 2.3 now, then 2.4 in the background at the lowest CPU and IO
# priority (nice 19, ionice idle) — its pid in ${CACHE}/zfs-2.4.building while it runs, its output in
# ${CACHE}/zfs-2.4.build.log and its exit status in ${CACHE}/zfs-2.4.build.rc — and returns: README's test
# command starts while 2.4 builds on the cores the lab's guests leave idle, and its 2.4 tests run after the long lab tests, waiting
# for it (tests/conftest.need_lab). SLOGQUAL_LAB_BACKGROUND=0 builds both in the foreground instead.
#
# Environment:
#   SLOGQUAL_LAB_ZFS         OpenZFS series to build: 2.3 or 2.4 (one, in the foreground); unset: both, as above
#   SLOGQUAL_LAB_BACKGROUND  0: without SLOGQUAL_LAB_ZFS, build 2.4 after 2.3 in the foreground
#   SLOGQUAL_LAB_CACHE       cache directory (default /var/cache/slogqual/lab)
#   SLOGQUAL_LAB_KERNEL      guest kernel release, e.g. 6.1.0-56-amd64 (default: the one the lab was built
#                            for before, else what linux-headers-amd64 depends on in the mirror now)
#   SLOGQUAL_LAB_ZFS_SUITE   suite for the 2.3 zfs-dkms/zfsutils-linux (default bookworm-backports)
#   SLOGQUAL_LAB_REFRESH=1   ask the mirror again for the newest kernel/ZFS (default: reuse the last build's)
#   SLOGQUAL_LAB_REBUILD=1   rebuild even when the cache holds this build
#   SLOGQUAL_LAB_JOBS        make -j (default: the number of online CPUs)
set -euo pipefail

CACHE=${SLOGQUAL_LAB_CACHE:-/var/cache/slogqual/lab}
if [ -z "${SLOGQUAL_LAB_ZFS:-}" ]; then  # both labs (see above): 2.3 now, 2.4 after it
  SLOGQUAL_LAB_ZFS=2.3 bash "$0"
  if [ "${SLOGQUAL_LAB_BACKGROUND:-1}" = 0 ]; then
    exec env SLOGQUAL_LAB_ZFS=2.4 bash "$0"
  fi
  BUILDING="$CACHE/zfs-2.4.building"
  if [ -s "$BUILDING" ] && kill -0 "$(cat "$BUILDING")" 2>/dev/null; then
    echo "lab-build: OpenZFS 2.4: a background build is under way (pid $(cat "$BUILDING")), log $CACHE/zfs-2.4.build.log" >&2
    exit 0
  fi
  mkdir -p "$CACHE"
  rm -f "$CACHE/zfs-2.4.build.rc" "$BUILDING"
  # its own session (a Ctrl-C of this script's terminal does not reach it), stdin closed; it removes its pid file
  # as it ends, after writing its exit status
  setsid nice -n 19 ionice -c 3 bash -c 'echo $$ > "$2.building"; SLOGQUAL_LAB_ZFS=2.4 bash "$1" > "$2.build.log" 2>&1;
    echo $? > "$2.build.rc"; rm -f "$2.building"' _ "$0" "$CACHE/zfs-2.4" < /dev/null > /dev/null 2>&1 &
  # the build writes its own pid (setsid may fork, so $! need not be it): wait for that, or for its end
  for _ in $(seq 50); do [ -s "$BUILDING" ] || [ -e "$CACHE/zfs-2.4.build.rc" ] && break; sleep 0.1; done
  if [ -e "$CACHE/zfs-2.4.build.rc" ]; then  # over already: a cache hit, or a failure it says in its log
    echo "lab-build: OpenZFS 2.4: $(tail -n 1 "$CACHE/zfs-2.4.build.log" | sed "s/^lab-build: //") (exit $(cat "$CACHE/zfs-2.4.build.rc"))" >&2
  else
    echo "lab-build: OpenZFS 2.4: building in the background (nice 19, idle IO; pid $(cat "$BUILDING" 2>/dev/null))," \
      "log $CACHE/zfs-2.4.build.log; the tests that need it wait for it" >&2
  fi
  exit 0
fi
SERIES=$SLOGQUAL_LAB_ZFS
ZFS_SUITE=${SLOGQUAL_LAB_ZFS_SUITE:-bookworm-backports}
JOBS=${SLOGQUAL_LAB_JOBS:-$(nproc 2>/dev/null || echo 2)}
HERE=$(cd "$(dirname "$0")" && pwd)
T0=$(date +%s)

log() { echo "lab-build: $*" >&2; }
die() { echo "lab-build: error: $*" >&2; exit 1; }

case "$SERIES" in
  2.3) LINK=current ;;  # the default lab: what `slogqual lab` boots when no version is named
  2.4) LINK=zfs-2.4 ;;
  *) die "SLOGQUAL_LAB_ZFS=$SERIES: the lab builds OpenZFS 2.3 or 2.4" ;;
esac
# Where the guest finds a userland the build carries (stage2.sh binds the build's userland/ there).
GUEST_USERLAND=/.slogqual-zfs

[ "$(id -u)" = 0 ] || die "run as root (apt-get, depmod into the cache)"
[ -r /etc/debian_version ] || die "Debian 12 (bookworm) is required"
command -v apt-get >/dev/null || die "apt-get not found"

HOST_PROGRAMS=(qemu-system-x86_64 busybox /lib/systemd/systemd-udevd udevadm fio nbdkit cpio depmod
               iscsiadm iscsid rpc.nfsd rpc.mountd exportfs rpcbind mount.nfs)
# 2.3's guest runs the host's OpenZFS userland; 2.4's brings its own.
[ "$SERIES" = 2.3 ] && HOST_PROGRAMS+=(zpool zfs)

host_ready() {
  local p
  for p in "${HOST_PROGRAMS[@]}"; do
    if [ "${p#/}" != "$p" ]; then [ -x "$p" ] || return 1; else command -v "$p" >/dev/null || return 1; fi
  done
  [ -e /usr/share/qemu/bios-256k.bin ] || [ -e /usr/share/seabios/bios-256k.bin ] || return 1
}

manifest_field() {  # manifest_field FILE KEY -> value of a top-level string key of lab.json
  sed -n "s/^ *\"$2\": \"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n1
}

zfs_userland_version() {
  dpkg-query -W -f='${Version}' zfsutils-linux 2>/dev/null || true
}

# ---- fast path: a complete build is cached and the host has everything -------------------------
if [ -z "${SLOGQUAL_LAB_REFRESH:-}" ] && [ -z "${SLOGQUAL_LAB_REBUILD:-}" ] && [ -z "${SLOGQUAL_LAB_KERNEL:-}" ] \
   && [ -f "$CACHE/$LINK/lab.json" ] && host_ready; then
  cur_zfs=$(manifest_field "$CACHE/$LINK/lab.json" zfs_version)
  # 2.3: the host's userland is the guest's, so it must still be the version the module was built from
  if [ "$SERIES" != 2.3 ] || [ "$cur_zfs" = "$(zfs_userland_version)" ]; then
    log "cache hit: $(readlink -f "$CACHE/$LINK") (kernel $(manifest_field "$CACHE/$LINK/lab.json" kernel_release), OpenZFS $cur_zfs); nothing to build"
    exit 0
  fi
  log "cached build has OpenZFS $cur_zfs but the host userland is $(zfs_userland_version); re-resolving"
fi

# ---- 1. apt sources and host packages -----------------------------------------------------------
SOURCES=/etc/apt/sources.list.d/slogqual-lab.sources
need_update=
if [ ! -f "$SOURCES" ]; then
  log "adding Debian contrib (bookworm, bookworm-backports) in $SOURCES"
  cat > "$SOURCES" <<'EOS'
# Added by slogqual contrib/lab/build.sh: OpenZFS lives in Debian's contrib component;
# bookworm-backports carries OpenZFS 2.3.
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
  need_update=1
fi
if [ -n "$need_update" ] || [ -n "${SLOGQUAL_LAB_REFRESH:-}" ] || ! apt-cache show zfs-dkms >/dev/null 2>&1 \
   || ! apt-cache show linux-headers-amd64 >/dev/null 2>&1; then
  log "apt-get update"
  apt-get update -qq
fi

# 2.4: trixie's packages through an apt of its own (sources, lists, an empty dpkg status, all under the
# cache): `apt-get download` fetches them, nothing is installed, the host's apt never sees the suites.
PAPT="$CACHE/apt/trixie"
PAPT_OPTS=(-o "Dir::Etc::SourceList=$PAPT/sources.list" -o "Dir::Etc::SourceParts=$PAPT/sources.list.d"
           -o "Dir::Etc::Preferences=$PAPT/preferences" -o "Dir::Etc::PreferencesParts=$PAPT/preferences.d"
           -o "Dir::State::Lists=$PAPT/lists" -o "Dir::State::status=$PAPT/status" -o "Dir::Cache=$PAPT/cache"
           -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Sandbox::User=root
           -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
           -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
           -o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false)
papt_get() { apt-get "${PAPT_OPTS[@]}" "$@"; }
papt_cache() { apt-cache "${PAPT_OPTS[@]}" "$@"; }
if [ "$SERIES" = 2.4 ]; then
  mkdir -p "$PAPT/lists/partial" "$PAPT/cache/archives/partial" "$PAPT/sources.list.d" "$PAPT/preferences.d"
  touch "$PAPT/status"
  cat > "$PAPT/sources.list" <<'EOS'
# slogqual contrib/lab/build.sh, SLOGQUAL_LAB_ZFS=2.4: trixie-backports carries OpenZFS 2.4, trixie the libraries
# its userland links. Used only through this directory's own apt configuration, never the host's.
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main contrib
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main contrib
EOS
  if [ -n "${SLOGQUAL_LAB_REFRESH:-}" ] || ! papt_cache show zfs-dkms >/dev/null 2>&1; then
    log "apt-get update (trixie, trixie-backports: $PAPT)"
    papt_get update -qq
  fi
fi

KREL=${SLOGQUAL_LAB_KERNEL:-}
if [ -z "$KREL" ] && [ -z "${SLOGQUAL_LAB_REFRESH:-}" ]; then
  for m in "$CACHE/$LINK/lab.json" "$CACHE/current/lab.json"; do  # the kernel this lab, else the default, has
    [ -f "$m" ] || continue
    KREL=$(manifest_field "$m" kernel_release)
    apt-cache show "linux-headers-$KREL" >/dev/null 2>&1 || [ -d "/usr/src/linux-headers-$KREL" ] || KREL=
    [ -z "$KREL" ] || break
  done
fi
if [ -z "$KREL" ]; then
  KREL=$(apt-cache depends linux-headers-amd64 | sed -n 's/^ *Depends: linux-headers-\([0-9][^ ]*-amd64\)$/\1/p' | head -n1)
  [ -n "$KREL" ] || die "cannot tell which kernel ABI the mirror offers (apt-cache depends linux-headers-amd64)"
fi
KCOMMON=${KREL%-amd64}-common
log "guest kernel: $KREL; OpenZFS $SERIES"

POLICY=/usr/sbin/policy-rc.d
policy_added=
cleanup() {
  if [ -n "$policy_added" ]; then rm -f "$POLICY"; fi
  if [ -n "${BUILD_TMP:-}" ]; then rm -rf "$BUILD_TMP"; fi
}
trap cleanup EXIT

apt_install() {  # apt_install [apt options...] -- packages...
  local opts=() pkgs=() missing=() p
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  pkgs=("$@")
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\n# slogqual lab build: no services start during package installation\nexit 101\n' > "$POLICY"
    chmod 755 "$POLICY"
    policy_added=1
  fi
  log "apt-get install ${opts[*]} ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${opts[@]}" "${missing[@]}" >/dev/null
}

apt_install -- qemu-system-x86 qemu-utils busybox-static udev kmod cpio gzip fio nbdkit libnbd-bin \
  binutils make gcc "linux-headers-$KREL"
# The real protocols' userland, run in the guest over its own loopback (scenario transport iscsi / nfs):
# open-iscsi, knfsd's nfs-utils (LIO's target: slogqual/kernel/lio.py writes configfs, no targetcli). Their
# services are kept from starting on the host (policy-rc.d): only the guest runs them.
apt_install -- open-iscsi nfs-kernel-server

# ---- 2. resolve the build key; keep the .debs --------------------------------------------------
DEBS="$CACHE/debs"
mkdir -p "$DEBS"
fetch_deb() {  # fetch_deb [--trixie] PACKAGE VERSION -> path of the .deb in $DEBS
  local get=(apt-get) pkg ver f
  if [ "$1" = --trixie ]; then get=(apt-get "${PAPT_OPTS[@]}"); shift; fi
  pkg=$1 ver=$2
  f=$(ls "$DEBS/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
  if [ -z "$f" ]; then
    log "downloading $pkg $ver"
    (cd "$DEBS" && "${get[@]}" download -q -o APT::Sandbox::User=root "$pkg=$ver" >/dev/null)
    f=$(ls "$DEBS/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
  fi
  [ -n "$f" ] || die "could not download $pkg=$ver"
  echo "$f"
}

if [ "$SERIES" = 2.3 ]; then
  # OpenZFS userland matching the module we build (the guest uses the host's).
  apt_install -t "$ZFS_SUITE" -- zfsutils-linux python3-pyzfs
  ZFS_VER=$(zfs_userland_version)
  [ -n "$ZFS_VER" ] || die "zfsutils-linux did not install"
  ZFS_DEB=$(fetch_deb zfs-dkms "$ZFS_VER")
else
  ZFS_VER=
  if [ -z "${SLOGQUAL_LAB_REFRESH:-}" ] && [ -f "$CACHE/$LINK/lab.json" ]; then
    ZFS_VER=$(manifest_field "$CACHE/$LINK/lab.json" zfs_module_version)
  fi
  if [ -z "$ZFS_VER" ]; then  # the newest 2.4 the trixie suites carry
    ZFS_VER=$(papt_cache madison zfs-dkms | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep '^2\.4\.' \
              | sort -V | tail -n1 || true)
  fi
  [ -n "$ZFS_VER" ] || die "no zfs-dkms 2.4.x in trixie/trixie-backports (apt-cache madison zfs-dkms, $PAPT)"
  ZFS_DEB=$(fetch_deb --trixie zfs-dkms "$ZFS_VER")
fi

KIMG_VER=$(apt-cache policy "linux-image-$KREL" | sed -n 's/^ *Candidate: //p')
if [ -z "$KIMG_VER" ] || [ "$KIMG_VER" = "(none)" ]; then
  f=$(ls "$DEBS/linux-image-${KREL}_"*.deb 2>/dev/null | head -n1 || true)
  [ -n "$f" ] || die "linux-image-$KREL is neither in the mirror nor in $DEBS"
  KIMG_DEB=$f
else
  KIMG_DEB=$(fetch_deb "linux-image-$KREL" "$KIMG_VER")
fi

KEY="${KREL}_zfs-${ZFS_VER}"
OUT="$CACHE/$KEY"
if [ -f "$OUT/lab.json" ] && [ -z "${SLOGQUAL_LAB_REBUILD:-}" ]; then
  ln -sfn "$KEY" "$CACHE/$LINK"
  log "cache hit: $OUT (kernel $KREL, OpenZFS $ZFS_VER); nothing to build"
  exit 0
fi

# ---- 3. build spl.ko and zfs.ko ------------------------------------------------------------------
log "building $KEY (cache miss)"
BUILD_TMP=$(mktemp -d "$CACHE/.build.XXXXXX")
STAGE="$BUILD_TMP/out"
mkdir -p "$STAGE"
dpkg-deb -x "$KIMG_DEB" "$BUILD_TMP/kimage"
KO="$CACHE/ko/$KEY"  # compiled, stripped modules, kept apart so a later failure does not recompile
build_s=0
if [ -f "$KO/zfs.ko" ] && [ -f "$KO/spl.ko" ] && [ -z "${SLOGQUAL_LAB_REBUILD:-}" ]; then
  log "reusing the modules compiled before in $KO"
  build_s=$(cat "$KO/build-seconds" 2>/dev/null || echo 0)
else
  dpkg-deb -x "$ZFS_DEB" "$BUILD_TMP/zfs"
  SRC=$(ls -d "$BUILD_TMP"/zfs/usr/src/zfs-* | head -n1)
  [ -x "$SRC/configure" ] || die "no configure script in the zfs-dkms source"
  [ -d "/usr/src/linux-headers-$KREL" ] || die "/usr/src/linux-headers-$KREL missing"
  t_mod=$(date +%s)
  log "configure + make -j$JOBS -C module (a few minutes)"
  (
    cd "$SRC"
    ./configure --with-config=kernel --with-linux="/usr/src/linux-headers-$KCOMMON" \
      --with-linux-obj="/usr/src/linux-headers-$KREL" > "$BUILD_TMP/configure.log" 2>&1 \
      || { tail -n 30 "$BUILD_TMP/configure.log" >&2; exit 1; }
    # KCFLAGS lands after the kernel's own -g: no DWARF is generated for what strip would throw away.
    make -j"$JOBS" -C module KCFLAGS=-g0 > "$BUILD_TMP/make.log" 2>&1 || { tail -n 40 "$BUILD_TMP/make.log" >&2; exit 1; }
  )
  build_s=$(( $(date +%s) - t_mod ))
  mkdir -p "$KO.tmp"
  for ko in spl zfs; do
    f=$(find "$SRC/module" -name "$ko.ko" | head -n1)
    [ -n "$f" ] || die "$ko.ko was not built"
    strip --strip-debug -o "$KO.tmp/$ko.ko" "$f"
  done
  echo "$build_s" > "$KO.tmp/build-seconds"
  rm -rf "$KO"
  mv "$KO.tmp" "$KO"
  log "modules compiled in ${build_s}s: $(du -h "$KO/zfs.ko" | cut -f1) zfs.ko (stripped)"
fi
MODDIR="$STAGE/modules/lib/modules/$KREL"
mkdir -p "$STAGE/modules/lib/modules"
cp -a "$BUILD_TMP/kimage/lib/modules/$KREL" "$MODDIR"
mkdir -p "$MODDIR/extra"
cp "$KO/spl.ko" "$KO/zfs.ko" "$MODDIR/extra/"
depmod -b "$STAGE/modules" "$KREL"
vermagic=$(modinfo -F vermagic "$MODDIR/extra/zfs.ko")
[ "${vermagic%% *}" = "$KREL" ] || die "zfs.ko was built for '${vermagic%% *}', not $KREL"
MOD_VER=$(modinfo -F version "$MODDIR/extra/zfs.ko")
cp "$BUILD_TMP/kimage/boot/vmlinuz-$KREL" "$STAGE/vmlinuz"

# ---- 3b. the userland (2.4): trixie-backports' zfsutils-linux and the trixie libraries it links --------
USERLAND=host
USER_PKGS=
if [ "$SERIES" = 2.3 ]; then
  USER_VER=$ZFS_VER
else
  # The closure of zfsutils-linux's Depends over library packages (lib*, zlib1g): python3, gawk and the like
  # are the host's. The ZFS packages at the module's version, the rest at trixie's candidate.
  queue="zfsutils-linux" seen=" "
  while [ -n "$queue" ]; do
    set -- $queue; p=$1; shift; queue="$*"
    case "$seen" in *" $p "*) continue ;; esac
    seen="$seen$p "
    case "$p" in zfsutils-linux|libzfs*|libzpool*|libnvpair*|libuutil*) ver=$ZFS_VER ;;
                 *) ver=$(papt_cache policy "$p" | sed -n 's/^ *Candidate: //p') ;; esac
    [ -n "$ver" ] && [ "$ver" != "(none)" ] || die "$p: not in trixie/trixie-backports"
    USER_PKGS="$USER_PKGS${USER_PKGS:+ }$p=$ver"
    deps=$(papt_cache show "$p=$ver" | awk '/^$/{exit} /^(Pre-)?Depends:/{sub(/^[^:]*: /, ""); print}' \
           | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/:any//; s/ //g')
    for d in $deps; do case "$d" in lib*|zlib1g) queue="$queue $d" ;; esac; done
  done
  U="$STAGE/userland"
  mkdir -p "$U/root" "$U/guest" "$BUILD_TMP/zfsutils"
  for pv in $USER_PKGS; do
    deb=$(fetch_deb --trixie "${pv%%=*}" "${pv#*=}")
    dpkg-deb -x "$deb" "$U/root"
    [ "${pv%%=*}" = zfsutils-linux ] && dpkg-deb -x "$deb" "$BUILD_TMP/zfsutils"
  done
  LD=usr/lib64/ld-linux-x86-64.so.2
  LIBDIR=usr/lib/x86_64-linux-gnu
  [ -x "$U/root/$LD" ] || die "no $LD in the trixie libc6"
  # Every library a program of the userland loads must come from the userland: ld.so --list says which.
  for f in "$U/root/usr/sbin/zpool" "$U/root/usr/sbin/zfs" "$U/root/usr/sbin/zdb"; do
    libs=$("$U/root/$LD" --library-path "$U/root/$LIBDIR" --list "$f") || die "ld.so --list $f failed"
    stray=$(echo "$libs" | awk '/=>/ && $3 !~ /^\// {print; next} /not found/ {print}' ; \
            echo "$libs" | awk -v u="$U/root/" '/=>/ && $3 ~ /^\// && index($3, u) != 1 {print}')
    [ -z "$stray" ] || die "$(basename "$f") loads libraries from outside the userland: $stray"
  done
  USER_VER=$("$U/root/$LD" --library-path "$U/root/$LIBDIR" "$U/root/usr/sbin/zfs" --version 2>/dev/null \
             | sed -n 's/^zfs-\([0-9].*\)$/\1/p' | head -n1 || true)
  # The guest's view (stage2.sh copies guest/ over its root): every program, udev helper, rule, zpool.d script
  # and compatibility file of zfsutils-linux at its own path. An ELF program becomes a wrapper that runs it
  # with the userland's own ld.so and libraries (the host's glibc is older than trixie's); a script or data
  # file a link to the userland's copy; a link stays the link it is.
  (cd "$BUILD_TMP/zfsutils" && find usr/sbin usr/bin usr/lib/udev usr/lib/zfs-linux usr/share/zfs \
     \( -type f -o -type l \) 2>/dev/null) | sort | while read -r rel; do
    src="$BUILD_TMP/zfsutils/$rel"
    dst="$U/guest/$rel"
    mkdir -p "$(dirname "$dst")"
    if [ -L "$src" ]; then
      cp -a "$src" "$dst"
    elif [ "$(head -c 4 "$src" | od -An -c | tr -d ' ')" = '177ELF' ]; then
      printf '#!/bin/sh\n# OpenZFS %s userland (slogqual lab, contrib/lab/build.sh)\nexec %s --library-path %s --argv0 "$0" %s "$@"\n' \
        "$ZFS_VER" "$GUEST_USERLAND/root/$LD" "$GUEST_USERLAND/root/$LIBDIR" "$GUEST_USERLAND/root/$rel" > "$dst"
      chmod 755 "$dst"
    else
      ln -s "$GUEST_USERLAND/root/$rel" "$dst"
    fi
  done
  [ -x "$U/guest/usr/sbin/zpool" ] && [ -x "$U/guest/usr/sbin/zfs" ] || die "no zpool/zfs wrapper in $U/guest"
  USERLAND=userland
fi
[ "$USER_VER" = "$MOD_VER" ] || die "the userland is OpenZFS '$USER_VER', the module '$MOD_VER': they must be one version"

# ---- 4. initramfs -----------------------------------------------------------------------------
IR="$BUILD_TMP/initramfs"
mkdir -p "$IR"/{bin,dev,proc,sys,lower,rw,newroot,lib/modules}
cp /bin/busybox "$IR/bin/busybox"
for a in sh mount umount mkdir insmod switch_root sleep cat echo poweroff ls; do ln -s busybox "$IR/bin/$a"; done
: > "$IR/lib/modules/order"
# Modules the initramfs needs before the root share is up; anything built in is skipped.
for m in virtio_pci 9pnet_virtio 9p overlay; do
  modprobe -d "$STAGE/modules" -S "$KREL" --show-depends "$m" || die "modprobe --show-depends $m failed"
done | while read -r kind path _; do
      [ "$kind" = insmod ] || continue
      name=$(basename "$path")
      grep -qx "$name" "$IR/lib/modules/order" && continue
      cp "$path" "$IR/lib/modules/$name"
      echo "$name" >> "$IR/lib/modules/order"
    done
install -m 755 "$HERE/init" "$IR/init"
(cd "$IR" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$STAGE/initrd.img"
log "initramfs: $(tr '\n' ' ' < "$IR/lib/modules/order")"

# ---- 5. manifest, publish -----------------------------------------------------------------------
cat > "$STAGE/lab.json" <<EOJ
{
  "schema": "slogqual.lab/1",
  "kernel_release": "$KREL",
  "kernel_package": "$(basename "$KIMG_DEB")",
  "zfs_series": "$SERIES",
  "zfs_version": "$MOD_VER",
  "zfs_module_version": "$MOD_VER",
  "zfs_userland_version": "$USER_VER",
  "zfs_userland": "$USERLAND",
  "zfs_userland_packages": "$USER_PKGS",
  "zfs_package": "$(basename "$ZFS_DEB")",
  "kernel": "vmlinuz",
  "initrd": "initrd.img",
  "modules": "modules",
  "built": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "module_build_seconds": "$build_s"
}
EOJ
rm -rf "$OUT"
mv "$STAGE" "$OUT"
ln -sfn "$KEY" "$CACHE/$LINK"
log "built $OUT in $(( $(date +%s) - T0 ))s"
