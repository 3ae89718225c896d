#!/usr/bin/env bash
# Not yet a stage of scripts/test.sh (see "Status" in Docs/install.md); run by hand:
#   bash scripts/trixie/packages-stage.sh
# The Debian 13 (trixie) packages, amd64 and arm64, built with Debian's own Swift in the
# trixie root (scripts/trixie-root.sh) and linked against its runtime (libswiftlang):
# - scripts/package.sh --target trixie-amd64 and --target trixie-arm64 write both packages
#   each; trixie's lintian finds no error and no warning; each package's Architecture,
#   Depends (libswiftlang among them, from dpkg-shlibdeps) and file list are the expected;
# - the amd64 packages install with apt into a throwaway copy of the root (an overlay) and
#   run there: felica balance from a virtual card, man felica, and a balance through the
#   emulated RC-S380 (felica-sim rcs380 on umockdev);
# - the arm64 felica runs under qemu-user (the root as its arm64 system) and reads the
#   same balance from a virtual card, and through a real serial link: the amd64 PN532
#   emulator on a pty, read with felica's own PN532 driver and with arm64 libnfc's
#   pn532_uart; the arm64 felica-sim serves the RC-S380 to the amd64 felica.
source "$(dirname "$0")/../test.d/lib.sh"
stage_workdir

for tool in debootstrap unshare chroot qemu-aarch64-static dpkg-deb; do
  command -v "$tool" >/dev/null || { fail "$tool is missing: run scripts/bootstrap.sh"; stage_end; }
done
root=.build/trixie/root
arm64_runtime="$(realpath .build/trixie/arm64-swift 2>/dev/null)/usr/libexec/swift/lib/swift/linux"
"$felica" balance --device virtual:suica >"$work/expected.balance" 2>&1

for target in trixie-amd64 trixie-arm64; do
  arch="${target#trixie-}"
  start=$(now_ms)
  if scripts/package.sh --target "$target" >"$work/package-$arch.log" 2>&1; then
    pass "scripts/package.sh --target $target built both packages in $((($(now_ms) - start) / 1000)) s"
  else
    fail "scripts/package.sh --target $target failed:"; tail -n 30 "$work/package-$arch.log" >&2; continue
  fi
  dir=.build/package/$target
  for p in felica felica-sim; do
    deb="$(ls "$dir/${p}"_*_"$arch".deb 2>/dev/null)"
    [[ -f "$deb" ]] || { fail "$dir has no ${p}_*_$arch.deb"; continue; }
    a="$(dpkg-deb -f "$deb" Architecture)" d="$(dpkg-deb -f "$deb" Depends)"
    note "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB; Depends: $d"
    [[ "$a" == "$arch" ]] && pass "$p: Architecture $a" || fail "$p: Architecture '$a', expected $arch"
    # Debian's Swift runtime, and the C libraries the program links.
    want=(libswiftlang libc6)
    [[ "$p" == felica ]] && want+=(libnfc6 libpcsclite1 libusb-1.0-0 libsqlite3-0)
    [[ "$p" == felica-sim ]] && want+=(umockdev python3)
    missing=()
    for w in "${want[@]}"; do [[ ", $d," == *", $w "* || ", $d," == *", $w,"* ]] || missing+=("$w"); done
    if ((${#missing[@]} == 0)) && [[ "$d" =~ libswiftlang\ \(\>=\ 6\.0 ]]; then
      pass "$p: Depends has ${want[*]} (libswiftlang versioned, from its symbols)"
    else
      fail "$p: Depends lacks ${missing[*]:-a versioned libswiftlang}: $d"
    fi
    # The files: the program, its man page, completions, docs; no Swift runtime inside.
    dpkg-deb -c "$deb" | awk '{print $NF}' | grep -v '/$' | sed 's|^\./|/|' | sort >"$work/files.$p.$arch"
    expected=(/usr/bin/$p /usr/share/man/man1/$p.1.gz /usr/share/bash-completion/completions/$p
      /usr/share/zsh/vendor-completions/_$p /usr/share/fish/vendor_completions.d/$p.fish
      /usr/share/doc/$p/copyright /usr/share/doc/$p/changelog.gz /usr/share/lintian/overrides/$p)
    [[ "$p" == felica ]] && expected+=(/usr/lib/udev/rules.d/60-felica.rules /usr/lib/modprobe.d/felica.conf
      "/usr/lib/systemd/system/felica-watch@.service" /usr/share/doc/felica/install.md)
    printf '%s\n' "${expected[@]}" | sort >"$work/expected.$p"
    # The bookworm package's file list is the reference for the ones this stage does not name.
    if comm -23 "$work/expected.$p" "$work/files.$p.$arch" | grep -q . ; then
      fail "$p ($arch) lacks: $(comm -23 "$work/expected.$p" "$work/files.$p.$arch" | tr '\n' ' ')"
    elif grep -qiE 'libswift|\.so' "$work/files.$p.$arch"; then
      fail "$p ($arch) carries a library: $(grep -iE 'libswift|\.so' "$work/files.$p.$arch" | head -n 3 | tr '\n' ' ')"
    else
      pass "$p ($arch): $(wc -l <"$work/files.$p.$arch") files, the program, man page, completions and docs among them, no library"
    fi
  done
  if scripts/trixie-root.sh run lintian --fail-on error,warning --tag-display-limit 0 "$dir"/felica_*.deb "$dir"/felica-sim_*.deb >"$work/lintian-$arch.log" 2>&1; then
    pass "trixie's lintian on the $arch packages: no error, no warning ($(grep -cE '^[IPXO]: ' "$work/lintian-$arch.log") informational tags)"
  else
    fail "lintian ($arch):"; cat "$work/lintian-$arch.log" >&2
  fi
done

echo "-- trixie amd64: the packages installed with apt" >&2
amd64_dir=.build/package/trixie-amd64
if ls "$amd64_dir"/felica_*_amd64.deb >/dev/null 2>&1; then
  cat >"$work/installed.sh" <<'EOF'
set -u
out="$1"
export DEBIAN_FRONTEND=noninteractive LIBNFC_AUTO_SCAN=false SWIFT_BACKTRACE=enable=no
apt-get install -y --no-install-recommends ./.build/package/trixie-amd64/felica_*_amd64.deb \
  ./.build/package/trixie-amd64/felica-sim_*_amd64.deb >"$out/apt.log" 2>&1; echo $? >"$out/apt.rc"
ldd /usr/bin/felica >"$out/ldd" 2>&1
/usr/bin/felica --version >"$out/version" 2>&1
/usr/bin/felica balance --device virtual:suica >"$out/balance" 2>&1; echo $? >"$out/balance.rc"
man -P cat felica >"$out/man" 2>&1
(cd / && timeout 120 /usr/bin/felica-sim rcs380 --card suica -- /usr/bin/felica balance --device usb) >"$out/usb" 2>"$out/usb.err"; echo $? >"$out/usb.rc"
EOF
  mkdir -p .build/trixie/check && rm -rf .build/trixie/check/amd64 && mkdir .build/trixie/check/amd64
  cp "$work/installed.sh" .build/trixie/check/installed.sh
  start=$(now_ms)
  scripts/trixie-root.sh scratch bash .build/trixie/check/installed.sh .build/trixie/check/amd64 2>"$work/scratch.err"
  out=.build/trixie/check/amd64
  if [[ "$(cat "$out/apt.rc" 2>/dev/null)" == 0 ]]; then
    pass "apt-get install ./felica_…_amd64.deb ./felica-sim_…_amd64.deb in a trixie root ($(grep -oE '[0-9]+ newly installed' "$out/apt.log"))"
  else
    fail "apt-get install in the trixie root:"; tail -n 20 "$out/apt.log" "$work/scratch.err" >&2
  fi
  grep -q "libswiftCore.so => /usr/libexec/swift/lib/swift/linux/libswiftCore.so" "$out/ldd" && ! grep -q "not found" "$out/ldd" \
    && pass "the installed felica loads Debian's Swift runtime ($(grep -c '=>' "$out/ldd") libraries, all found)" \
    || { fail "ldd /usr/bin/felica in the trixie root:"; cat "$out/ldd" >&2; }
  cmp -s "$out/balance" "$work/expected.balance" \
    && pass "installed felica balance --device virtual:suica prints what the build tree's felica prints" \
    || { fail "installed felica balance:"; diff "$work/expected.balance" "$out/balance" | head >&2; }
  grep -q "^SYNOPSIS" "$out/man" && pass "man felica shows the installed page" || { fail "man felica:"; head -n 5 "$out/man" >&2; }
  cmp -s "$out/usb" "$work/expected.balance" \
    && pass "felica-sim rcs380 --card suica -- felica balance --device usb reads the balance in the trixie root" \
    || { fail "balance through the emulated RC-S380 in the trixie root (exit $(cat "$out/usb.rc" 2>/dev/null)):"; head -n 20 "$out/usb" "$out/usb.err" >&2; }
fi

echo "-- trixie arm64: felica under qemu-user" >&2
arm64_dir=.build/package/trixie-arm64
if ls "$arm64_dir"/felica_*_arm64.deb >/dev/null 2>&1; then
  mkdir -p "$work/arm64"
  for p in felica felica-sim; do dpkg-deb -x "$(ls "$arm64_dir/${p}"_*_arm64.deb)" "$work/arm64"; done
  # qemu-user runs the arm64 program with the trixie root as its system (-L): the arm64 C
  # libraries are installed there, and Debian's arm64 Swift runtime is unpacked beside it.
  arm64() { qemu-aarch64-static -L "$root" -E "LD_LIBRARY_PATH=$arm64_runtime" "$@"; }
  file -b "$work/arm64/usr/bin/felica" | grep -q "ARM aarch64" \
    && pass "the packaged felica is an arm64 program: $(file -b "$work/arm64/usr/bin/felica" | cut -d, -f1-2)" \
    || fail "the packaged felica is not arm64: $(file -b "$work/arm64/usr/bin/felica")"
  v="$(arm64 "$work/arm64/usr/bin/felica" --version 2>&1)"
  [[ "$v" == "$(dpkg-deb -f "$(ls "$arm64_dir"/felica_*_arm64.deb)" Version)" ]] \
    && pass "arm64 felica --version under qemu: $v" || fail "arm64 felica --version: $v"
  arm64 "$work/arm64/usr/bin/felica" balance --device virtual:suica >"$work/arm64.virtual" 2>&1
  cmp -s "$work/arm64.virtual" "$work/expected.balance" \
    && pass "arm64 felica balance --device virtual:suica under qemu prints what the amd64 felica prints" \
    || { fail "arm64 felica balance --device virtual:suica:"; diff "$work/expected.balance" "$work/arm64.virtual" | head >&2; }

  # The amd64 PN532 emulator on a pty, the arm64 felica at the other end of it.
  if start_pn532 "$work/pty" --card suica; then
    timeout 120 qemu-aarch64-static -L "$root" -E "LD_LIBRARY_PATH=$arm64_runtime" \
      "$work/arm64/usr/bin/felica" balance --device "pn532:$work/pty" >"$work/arm64.pn532" 2>"$work/arm64.pn532.err"
    cmp -s "$work/arm64.pn532" "$work/expected.balance" \
      && pass "arm64 felica balance --device pn532:<pty> reads the balance from the amd64 PN532 emulator" \
      || { fail "arm64 felica through pn532:<pty>:"; head -n 10 "$work/arm64.pn532" "$work/arm64.pn532.err" >&2; }
    timeout 120 qemu-aarch64-static -L "$root" -E "LD_LIBRARY_PATH=$arm64_runtime" -E LIBNFC_AUTO_SCAN=false \
      "$work/arm64/usr/bin/felica" balance --device "libnfc:pn532_uart:$work/pty" >"$work/arm64.libnfc" 2>"$work/arm64.libnfc.err"
    cmp -s "$work/arm64.libnfc" "$work/expected.balance" \
      && pass "arm64 felica balance --device libnfc:pn532_uart:<pty> (arm64 libnfc) reads the same balance" \
      || { fail "arm64 felica through libnfc:pn532_uart:<pty>:"; head -n 10 "$work/arm64.libnfc" "$work/arm64.libnfc.err" >&2; }
    stop_pn532
  fi

  # The arm64 felica-sim serves the emulated RC-S380 on umockdev's bus; the reader is the
  # amd64 felica (umockdev's preload library reaches only programs of the machine's own
  # architecture, and this machine runs arm64 programs only through qemu-aarch64-static).
  (cd / && timeout 180 qemu-aarch64-static -L "$(realpath "$root")" -E "LD_LIBRARY_PATH=$arm64_runtime" \
    "$work/arm64/usr/bin/felica-sim" rcs380 --card suica -- "$felica" balance --device usb) \
    >"$work/arm64.usb" 2>"$work/arm64.usb.err"
  cmp -s "$work/arm64.usb" "$work/expected.balance" \
    && pass "arm64 felica-sim rcs380 under qemu serves the RC-S380: felica balance --device usb reads the balance" \
    || { fail "arm64 felica-sim rcs380:"; head -n 10 "$work/arm64.usb" "$work/arm64.usb.err" >&2; }
fi
stage_end
