#!/usr/bin/env bash
# Installs what the build and the tests need on Debian 12. Safe to run again.
set -euo pipefail

packages=(
  pkg-config
  libnfc-dev libnfc-bin
  libpcsclite-dev pcscd vsmartcard-vpcd
  libusb-1.0-0-dev umockdev gir1.2-umockdev-1.0 python3-gi
  libsqlite3-dev sqlite3 python3   # sqlite3: a test reads the history database as it was written
  python3-venv            # the benchmarks install nfcpy, the comparison peer, into a venv
  tshark
  iproute2 util-linux procps
  man-db groff-base zsh fish
)

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
