#!/usr/bin/env bash
# A Debian 13 (trixie) root with Debian's own Swift (swiftlang 6.0.3), for building and
# testing felica with that toolchain and for building the trixie packages:
#   scripts/trixie-root.sh                  create or update .build/trixie/root, print its path
#   scripts/trixie-root.sh run CMD [ARG…]   run CMD in the root, in this checkout (bound at /src)
#   scripts/trixie-root.sh scratch CMD [ARG…]   the same in a throwaway copy of the root (an
#                                             overlay): what CMD installs or changes is dropped
# The root is made once with debootstrap from Debian's mirror and kept (with the packages
# apt downloaded) under .build/trixie, so later runs only check that it is complete. It
# holds the amd64 toolchain, the C libraries' -dev packages for amd64 and arm64 (arm64 is
# cross-built), the arm64 runtime libraries the arm64 programs need under qemu-user, the
# stacks the Swift tests drive (pcscd, umockdev, libnfc), lintian, and the arm64
# swiftlang package unpacked in .build/trixie/arm64-swift for its resource directory.
# Needs root (or sudo), debootstrap, and ~3 GB; nothing outside .build/trixie is changed.
# Environment: FELICA_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."

here="$(pwd)"
base=.build/trixie
root="$base/root"
mirror="${FELICA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# What the root holds; a change here is installed on the next run.
amd64=(
  swiftlang lld pkg-config
  libnfc-dev libpcsclite-dev libusb-1.0-0-dev libsqlite3-dev
  libcurl4-openssl-dev libmosquitto-dev libssl-dev
  dpkg-dev binutils binutils-aarch64-linux-gnu file lintian fakeroot
  # What the Swift tests and the installed packages' checks drive.
  libnfc-bin pcscd vsmartcard-vpcd umockdev gir1.2-umockdev-1.0 python3 python3-gi
  sqlite3 man-db groff-base iproute2 procps util-linux bsdutils zsh fish
  mosquitto mosquitto-clients openssl
  # Debian 13's pcscd asks polkit: a system bus and polkitd, started where a check needs them.
  dbus-daemon dbus-bin dbus-system-bus-common polkitd
)
arm64=(
  libc6-dev:arm64 libstdc++-14-dev:arm64 libgcc-14-dev:arm64
  libnfc6:arm64 libpcsclite-dev:arm64 libusb-1.0-0-dev:arm64 libsqlite3-dev:arm64
  libmosquitto-dev:arm64 libssl-dev:arm64 libcurl4t64:arm64
)

sudo_cmd=()
# FELICA_SUDO_NONINTERACTIVE=1 (a run in the background): sudo fails rather than ask.
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo) && [[ -n "${FELICA_SUDO_NONINTERACTIVE:-}" ]] && sudo_cmd=(sudo -n)

# in_root CMD…: CMD in the root, in a private mount namespace (the mounts go with it),
# with /proc, /dev, /sys, a fresh /tmp and /run, this checkout at /src, and the machine's
# qemu-aarch64-static (when it has one) at the same path. With FELICA_ROOT_SCRATCH=1 the
# root is an overlay on a tmpfs: what CMD changes is dropped at the end.
in_root() {
  "${sudo_cmd[@]}" env FELICA_ROOT_SCRATCH="${FELICA_ROOT_SCRATCH:-}" \
    unshare -m --propagation private bash -euo pipefail -c '
    root="$1" src="$2"; shift 2
    if [[ -n "$FELICA_ROOT_SCRATCH" ]]; then
      scratch="$(mktemp -d)"
      mount -t tmpfs tmpfs "$scratch"
      mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
      mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/root"
      root="$scratch/root"
    else
      # The root a mount point of its own: unshare -m in it (a private pcscd) changes the
      # propagation of "/", which must be a mount.
      mount --bind "$root" "$root"
    fi
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mount -t tmpfs tmpfs "$root/tmp"
    mount -t tmpfs tmpfs "$root/run"
    mkdir -p "$root/src"
    mount --bind "$src" "$root/src"
    if [[ -x /usr/bin/qemu-aarch64-static ]]; then
      [[ -e "$root/usr/bin/qemu-aarch64-static" ]] || touch "$root/usr/bin/qemu-aarch64-static"
      mount --bind /usr/bin/qemu-aarch64-static "$root/usr/bin/qemu-aarch64-static"
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      TERM="${TERM:-dumb}" bash -c "cd /src && exec \"\$@\"" - "$@"
  ' - "$(realpath "$root")" "$here" "$@"
}

create() {
  for tool in debootstrap unshare chroot; do
    command -v "$tool" >/dev/null || { echo "trixie-root: $tool is missing; run scripts/bootstrap.sh" >&2; exit 1; }
  done
  local want
  want="$(printf '%s\n' "${amd64[@]}" "${arm64[@]}" | sort | sha256sum | cut -c1-16)"
  if [[ -f "$root/.felica-complete" && "$(cat "$root/.felica-complete")" == "$want" && -d "$base/arm64-swift/usr" ]]; then
    echo "trixie-root: $root is complete" >&2
    return
  fi
  mkdir -p "$base"
  if [[ ! -x "$root/usr/bin/apt-get" ]]; then
    echo "trixie-root: debootstrap trixie into $root (from $mirror)" >&2
    # Into a directory of its own, renamed when whole: a debootstrap cut short (a stopped
    # test run) leaves no root that looks made.
    "${sudo_cmd[@]}" rm -rf "$root" "$root.new"
    "${sudo_cmd[@]}" debootstrap --variant=minbase --arch=amd64 trixie "$root.new" "$mirror" >"$base/debootstrap.log" 2>&1 \
      || { tail -n 20 "$base/debootstrap.log" >&2; echo "trixie-root: debootstrap failed (log: $base/debootstrap.log)" >&2; exit 1; }
    "${sudo_cmd[@]}" mv "$root.new" "$root"
  fi
  echo "trixie-root: installing the toolchain and libraries (amd64 and arm64)" >&2
  # Keep the downloaded packages: they are the cache for the next run.
  in_root bash -c '
    set -euo pipefail
    export DEBIAN_FRONTEND=noninteractive
    echo "Binary::apt::APT::Keep-Downloaded-Packages \"true\";" >/etc/apt/apt.conf.d/90keep
    rm -f /etc/apt/apt.conf.d/docker-clean
    # No fsync per file: the root is a cache, made again when it breaks.
    echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/90unsafe-io
    dpkg --add-architecture arm64
    # man-db rebuilds its index on every install: not needed here.
    echo "man-db man-db/auto-update boolean false" | debconf-set-selections
    apt-get update -qq
    # An install cut short last time (a stopped test run) is finished first.
    dpkg --configure -a >/tmp/dpkg.log 2>&1 && apt-get -f install -y -qq >>/tmp/dpkg.log 2>&1 || { tail -n 30 /tmp/dpkg.log; exit 1; }
    apt-get install -y -qq --no-install-recommends "$@" >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; exit 1; }
    # libnfc-dev cannot be installed for both architectures (its libusb-dev is not
    # multi-arch); the headers are the same, and the arm64 link needs only the .so name.
    # The same for libcurl4-openssl-dev (its libpsl-dev is not multi-arch either). The
    # arm64 build reads the arm64 pkg-config files (package.sh sets PKG_CONFIG_PATH):
    # these two are the amd64 ones with the arm64 library directory.
    for lib in nfc.so.6 curl.so.4; do
      ln -sfn "lib$lib" "/usr/lib/aarch64-linux-gnu/lib${lib%.*}"
    done
    # libcurl4-openssl-dev puts its headers (the same for every architecture) in the
    # amd64 include directory.
    ln -sfn ../x86_64-linux-gnu/curl /usr/include/aarch64-linux-gnu/curl
    # libnfc.pc requires libusb (0.1), whose .pc only amd64 has: the arm64 one drops that
    # line (it adds nothing the arm64 link needs; libnfc.so brings its own dependencies).
    for pc in libnfc libcurl; do
      sed -e "s|x86_64-linux-gnu|aarch64-linux-gnu|g" -e "/^Requires: *libusb *$/d" \
        "/usr/lib/x86_64-linux-gnu/pkgconfig/$pc.pc" >"/usr/lib/aarch64-linux-gnu/pkgconfig/$pc.pc"
    done
  ' - "${amd64[@]}" "${arm64[@]}" >&2
  # The arm64 swiftlang and libswiftlang (not installed: they conflict with the amd64 ones),
  # their Swift and clang resource directories unpacked in $base/arm64-swift: what the
  # cross build compiles and links against, and the runtime the arm64 programs load under
  # qemu-user.
  in_root bash -c 'cd /var/cache/apt/archives && apt-get download -qq swiftlang:arm64 libswiftlang:arm64' >&2
  "${sudo_cmd[@]}" rm -rf "$base/arm64-swift"
  "${sudo_cmd[@]}" mkdir -p "$base/arm64-swift"
  local archives="$root/var/cache/apt/archives"
  dpkg-deb --fsys-tarfile "$(ls "$archives"/swiftlang_*_arm64.deb | tail -n 1)" \
    | "${sudo_cmd[@]}" tar -x -C "$base/arm64-swift" ./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/clang
  dpkg-deb --fsys-tarfile "$(ls "$archives"/libswiftlang_*_arm64.deb | tail -n 1)" \
    | "${sudo_cmd[@]}" tar -x -C "$base/arm64-swift" ./usr/libexec/swift/lib/swift
  echo "$want" | "${sudo_cmd[@]}" tee "$root/.felica-complete" >/dev/null
  echo "trixie-root: $root is ready ($(du -sh "$root" | cut -f1))" >&2
}

case "${1:-}" in
  "") create; realpath "$root" ;;
  run | scratch)
    [[ "$1" == scratch ]] && export FELICA_ROOT_SCRATCH=1
    shift
    (($#)) || { echo "trixie-root: no command to run" >&2; exit 64; }
    [[ -f "$root/.felica-complete" ]] || create
    in_root "$@"
    ;;
  *) echo "trixie-root: unknown command '$1' (nothing, run CMD… or scratch CMD…)" >&2; exit 64 ;;
esac
