#!/usr/bin/env bash
# Installs the Debian 12 packages felica needs. Safe to run again.
#   scripts/bootstrap.sh build   what building the tool and its Debian packages needs
#   scripts/bootstrap.sh         that, and what the tests and benchmarks need on top (the default)
set -euo pipefail

purpose="${1:-test}"

# Building: the C libraries' headers, pkg-config, and dpkg-dev for scripts/package.sh.
build=(
  pkg-config
  libnfc-dev libpcsclite-dev libusb-1.0-0-dev libsqlite3-dev
  libcurl4-openssl-dev libmosquitto-dev   # watch --post (libcurl), watch --mqtt (libmosquitto)
  libssl-dev              # libcrypto: the FeliCa Lite-S card key's Triple-DES
  dpkg-dev binutils       # dpkg-shlibdeps, dpkg-deb and strip, for scripts/package.sh
  debootstrap             # the Debian 13 root with Debian's Swift (scripts/trixie-root.sh)
  qemu-user-static        # runs the arm64 build (package.sh --target trixie-arm64, its tests)
)

# The test stages and benchmarks, on top: the real stacks and the stand-ins' plumbing.
test=(
  libnfc-bin
  pcscd vsmartcard-vpcd
  umockdev gir1.2-umockdev-1.0 python3-gi python3
  sqlite3                 # a test reads the history database as it was written
  python3-venv            # the benchmarks install nfcpy, the comparison peer, into a venv
  tshark
  iproute2 util-linux procps
  man-db groff-base zsh fish
  lintian                 # 95-package checks the Debian packages
  file                    # scripts/trixie-check.sh tells the arm64 program by its ELF header
  systemd                 # 95-package verifies the kiosk unit with systemd-analyze
  mosquitto mosquitto-clients   # 73-delivery: a real MQTT broker and subscriber
  openssl                 # 73-delivery: a self-signed certificate for the HTTPS check
)

case "$purpose" in
  build) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${test[@]}") ;;
  *) echo "bootstrap: unknown purpose '$purpose' (build or test)" >&2; exit 64 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  echo "bootstrap: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer "no" up front.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | "${sudo_cmd[@]}" debconf-set-selections
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "bootstrap: all packages present" >&2
fi

command -v swift >/dev/null || {
  echo "bootstrap: swift is not on PATH; install the Swift 6 toolchain (https://www.swift.org/install/linux/)" >&2
  exit 1
}
