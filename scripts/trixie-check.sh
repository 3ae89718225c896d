#!/usr/bin/env bash
# Debian 13 (trixie) with its own Swift (swiftlang 6.0.3), in the trixie root that
# scripts/trixie-root.sh makes (debootstrap; kept under .build/trixie, so a second run is
# quick). Three parts, chosen with FELICA_TRIXIE_PARTS (default: all three):
#   swift   every product and test target builds with Swift 6.0.3, warnings as errors, and
#           the Swift tests pass with it, in that root (its pcscd, vpcd, umockdev, libnfc,
#           fish 4, zsh);
#   arm64   scripts/package.sh --target trixie-arm64 writes both packages, cross-built;
#           their Architecture, Depends (libswiftlang among them, from dpkg-shlibdeps) and
#           file list are the expected and trixie's lintian finds nothing; the arm64 felica
#           runs under qemu-user (with the root's arm64 loader and libraries) and reads the balance a
#           virtual card holds, and the same balance through a real serial link: the
#           amd64 PN532 emulator on a pty, read with felica's own PN532 driver and with
#           arm64 libnfc's pn532_uart; and the arm64 felica-sim, under qemu-user, serves
#           the amd64 felica as the PN532 emulator;
#   amd64   scripts/package.sh --target trixie-amd64, the same checks, and the packages
#           installed with apt into a throwaway copy of the root (an overlay) and run
#           there: a balance from a virtual card, man felica, and a balance through the
#           emulated RC-S380 (felica-sim rcs380 on umockdev).
# Stage 96 of scripts/test.sh runs it. Cold, the root and the three builds take ~17 minutes
# on two cores, so scripts/test.sh starts `scripts/trixie-check.sh prepare` (the root and the
# builds, nothing checked) in the background at the lowest priority when it starts, and
# the stage finds them done or nearly so; the stage then runs the same builds again
# (quick: nothing changed) and checks. Needs root (or sudo), after the main toolchain's
# debug build (its felica gives the expected balance, its felica-sim the PN532 emulator):
#   swift build && FELICA_BIN=$(swift build --show-bin-path) scripts/trixie-check.sh
#   FELICA_TRIXIE_PARTS=arm64 FELICA_BIN=… scripts/trixie-check.sh
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/test.d/lib.sh"
cd "$here"   # lib.sh goes to the checkout from a stage's place, scripts/test.d
stage_workdir

parts=" ${FELICA_TRIXIE_PARTS:-swift arm64 amd64} "
for part in $parts; do
  [[ "$part" == swift || "$part" == arm64 || "$part" == amd64 ]] \
    || { fail "FELICA_TRIXIE_PARTS: unknown part '$part' (swift, arm64, amd64)"; stage_end; }
done
# prepare: the root and the builds the parts need, one after the other, each one's time
# in .build/trixie/prepared (a line "<what> <seconds> <exit status>"); a failure is only
# recorded: the checks below build again and report it.
if [[ "${1:-}" == prepare ]]; then
  record=.build/trixie/prepared
  mkdir -p .build/trixie && : >"$record"
  step() {
    local what=$1 start=$(now_ms) rc=0
    shift
    "$@" >".build/trixie/prepare-$what.log" 2>&1 || rc=$?
    echo "$what $((($(now_ms) - start) / 1000)) $rc" >>"$record"
    return $rc
  }
  step root scripts/trixie-root.sh || exit 0
  [[ "$parts" == *" swift "* ]] && step swift-build scripts/swift-6.0.sh build
  [[ "$parts" == *" arm64 "* ]] && step package-arm64 scripts/package.sh --target trixie-arm64
  [[ "$parts" == *" amd64 "* ]] && step package-amd64 scripts/package.sh --target trixie-amd64
  exit 0
fi
if [[ -n "${FELICA_TRIXIE_PREPARED:-}" && -s .build/trixie/prepared ]]; then
  note "prepared in the background while the other stages ran: $(awk '{printf "%s%s %s s%s", (NR > 1 ? ", " : ""), $1, $2, ($3 == 0 ? "" : " (failed)")}' .build/trixie/prepared)"
  rm -f .build/trixie/prepared
fi

tools=(debootstrap unshare chroot dpkg-deb)
[[ "$parts" == *" arm64 "* ]] && tools+=(qemu-aarch64-static file)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { fail "$tool is missing (run scripts/bootstrap.sh): nothing of Debian 13 was checked"; stage_end; }
done
secs() { echo $((($(now_ms) - $1) / 1000)); }

root=.build/trixie/root
start=$(now_ms)
if scripts/trixie-root.sh >"$work/root.log" 2>&1; then
  pass "trixie root with Swift 6.0.3 ready in $(secs "$start") s ($(du -sh "$root" 2>/dev/null | cut -f1))"
else
  fail "scripts/trixie-root.sh failed:"; tail -n 30 "$work/root.log" >&2; stage_end
fi

"$felica" balance --device virtual:suica >"$work/expected.balance" 2>&1

if [[ "$parts" == *" swift "* ]]; then
  echo "-- Swift 6.0.3: build and swift test" >&2
  start=$(now_ms)
  if scripts/swift-6.0.sh build >"$work/build.log" 2>&1; then
    pass "Swift 6.0.3 builds every product and test target, warnings as errors, in $(secs "$start") s"
    start=$(now_ms)
    if scripts/swift-6.0.sh test >"$work/test.log" 2>&1; then
      pass "Swift 6.0.3: swift test passes in $(secs "$start") s: $(grep -E "^✔ Test run with|Executed [0-9]+ tests" "$work/test.log" | tail -n 2 | tr '\n' ' ')"
    else
      fail "swift test with Swift 6.0.3 (full log: .build/test-logs/swift-6.0-test.log):"
      grep -E "✘|error:|Fatal|crashed" "$work/test.log" | head -n 60 >&2
      tail -n 3 "$work/test.log" >&2
    fi
    mkdir -p .build/test-logs && cp "$work/test.log" .build/test-logs/swift-6.0-test.log
    # Debian 13's pcscd asks polkit who may connect; with no polkit daemon (as here: the
    # root has no system bus) it refuses everyone, as it refuses a user polkit does not let
    # in. felica says so and points to the rule, instead of "no reader".
    polkit=.build/trixie/polkit
    rm -rf "$polkit" && mkdir -p "$polkit"
    cat >"$polkit/run.sh" <<'EOF'
set -u
out="$1" felica=.build/trixie/amd64/debug/felica
export LIBNFC_AUTO_SCAN=false SWIFT_BACKTRACE=enable=no
mkdir -p /run/pcscd
pcscd --foreground >"$out/pcscd.log" 2>&1 &
for i in $(seq 100); do [[ -S /run/pcscd/pcscd.comm ]] && break; sleep 0.1; done
timeout 30 "$felica" balance --device pcsc >"$out/pcsc" 2>"$out/pcsc.err"; echo $? >"$out/pcsc.rc"
timeout 30 "$felica" balance >"$out/default" 2>"$out/default.err"; echo $? >"$out/default.rc"
timeout 30 "$felica" devices >"$out/devices" 2>"$out/devices.err"
kill %1 && wait   # gone before the next check's pcscd wants vpcd's port
EOF
    scripts/trixie-root.sh run bash "$polkit/run.sh" "$polkit" 2>"$work/polkit.err"
    if [[ "$(cat "$polkit/pcsc.rc" 2>/dev/null)" == 69 && ! -s "$polkit/pcsc" ]] \
       && grep -q "pcscd refused this program access.*SCARD_W_SECURITY_VIOLATION.*polkit.*Docs/install.md" "$polkit/pcsc.err"; then
      pass "Debian 13's pcscd refusing (polkit): felica balance --device pcsc says so, exit 69: $(head -c 100 "$polkit/pcsc.err")…"
    else
      fail "felica balance --device pcsc against a pcscd that refuses (exit $(cat "$polkit/pcsc.rc" 2>/dev/null)):"; cat "$polkit/pcsc.err" "$work/polkit.err" >&2
    fi
    [[ "$(cat "$polkit/default.rc" 2>/dev/null)" == 69 ]] && grep -q "SCARD_W_SECURITY_VIOLATION" "$polkit/default.err" \
      && pass "felica balance with no --device says pcscd refused, not \"no reader found\"" \
      || { fail "felica balance (no --device) against a pcscd that refuses (exit $(cat "$polkit/default.rc" 2>/dev/null)):"; cat "$polkit/default.err" >&2; }
    grep -q "^pcsc .*pcscd's readers .*cannot open: pcscd refused access (polkit)" "$polkit/devices" \
      && pass "felica devices lists pcscd's refusal: $(grep "^pcsc " "$polkit/devices" | tr -s ' ')" \
      || { fail "felica devices against a pcscd that refuses:"; cat "$polkit/devices" "$polkit/devices.err" >&2; }
    # With polkit running (a system bus and polkitd in a throwaway copy of the root), the
    # rule Docs/install.md gives lets a member of plugdev read a card through pcscd, and
    # only that rule: refused before it, and a user outside plugdev still refused after.
    sed -n "/<<'RULE'/,/^RULE/p" Docs/install.md | sed '1d;$d' >"$polkit/rule"
    cat >"$polkit/rule.sh" <<'EOF'
set -u
out="$1" bin=.build/trixie/amd64/debug
export LIBNFC_AUTO_SCAN=false SWIFT_BACKTRACE=enable=no
mkdir -p /run/dbus /run/pcscd
dbus-daemon --system --fork
/usr/lib/polkit-1/polkitd --no-debug >"$out/polkitd.log" 2>&1 &
pcscd --foreground >"$out/pcscd.log" 2>&1 &
useradd -m -G plugdev member && useradd -m outsider
for i in $(seq 100); do
  [[ -S /run/pcscd/pcscd.comm ]] && dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.PolicyKit1 2>/dev/null | grep -q "boolean true" && break
  sleep 0.1
done
"$bin/felica-sim" vpcd --card suica >"$out/vpcd.log" 2>&1 &
sleep 1   # pcscd looks at vpcd's reader every 400 ms
as() { local who=$1 name=$2; setpriv --reuid="$who" --regid="$who" --init-groups timeout 30 "$bin/felica" balance --device pcsc >"$out/$name" 2>"$out/$name.err"; echo $? >"$out/$name.rc"; }
as member before
cp "$out/rule" /etc/polkit-1/rules.d/60-felica-pcscd.rules
sleep 1   # polkitd reads its rules again when the directory changes
as member member
as outsider outsider
kill $(jobs -p) "$(cat /run/dbus/pid)"
wait
EOF
    scripts/trixie-root.sh scratch bash "$polkit/rule.sh" "$polkit" 2>"$work/polkit-rule.err"
    if [[ ! -s "$polkit/rule" ]]; then
      fail "Docs/install.md has no polkit rule between <<'RULE' and RULE"
    elif [[ "$(cat "$polkit/before.rc" 2>/dev/null)" == 69 && "$(cat "$polkit/member.rc" 2>/dev/null)" == 0 \
            && "$(cat "$polkit/outsider.rc" 2>/dev/null)" == 69 ]] && cmp -s "$polkit/member" "$work/expected.balance"; then
      pass "with polkitd running, Docs/install.md's rule lets a member of plugdev read the balance through pcscd (refused before it; a user outside plugdev still refused)"
    else
      fail "Docs/install.md's polkit rule with polkitd running (exit before $(cat "$polkit/before.rc" 2>/dev/null), member $(cat "$polkit/member.rc" 2>/dev/null), outsider $(cat "$polkit/outsider.rc" 2>/dev/null)):"
      cat "$polkit/before.err" "$polkit/member" "$polkit/member.err" "$polkit/outsider.err" "$work/polkit-rule.err" 2>/dev/null | head -n 20 >&2
    fi
  else
    fail "the build with Swift 6.0.3 failed:"; grep -E "error|warning:" "$work/build.log" | grep -v "prohibited flag" | head -n 40 >&2
  fi
fi

# package TARGET: builds the target's two packages and checks what they hold.
package() {
  local target=$1 arch=${1#trixie-} dir=.build/package/$1 start p deb a d w
  start=$(now_ms)
  if scripts/package.sh --target "$target" >"$work/package-$arch.log" 2>&1; then
    pass "scripts/package.sh --target $target built both packages in $(secs "$start") s"
  else
    fail "scripts/package.sh --target $target failed:"; grep -v "prohibited flag" "$work/package-$arch.log" | tail -n 30 >&2
    return 1
  fi
  for p in felica felica-sim; do
    deb="$(ls "$dir/${p}"_*_"$arch".deb 2>/dev/null)"
    [[ -f "$deb" ]] || { fail "$dir has no ${p}_*_$arch.deb"; continue; }
    a="$(dpkg-deb -f "$deb" Architecture)" d="$(dpkg-deb -f "$deb" Depends)"
    note "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB; Depends: $d"
    [[ "$a" == "$arch" ]] && pass "$p: Architecture $a" || fail "$p: Architecture '$a', expected $arch"
    # Debian's Swift runtime (versioned: from its symbols, and not past the 6.0 series),
    # and the C libraries the program links.
    local want=(libswiftlang libc6) missing=()
    [[ "$p" == felica ]] && want+=(libnfc6 libpcsclite1 libusb-1.0-0 libsqlite3-0 libcurl4t64 libmosquitto1 libssl3t64)
    [[ "$p" == felica-sim ]] && want+=(umockdev python3)
    for w in "${want[@]}"; do [[ ", $d," == *", $w "* || ", $d," == *", $w,"* ]] || missing+=("$w"); done
    if ((${#missing[@]} == 0)) && [[ "$d" =~ libswiftlang\ \(\>=\ 6\.0 && "$d" == *"libswiftlang (<< 6.1~)"* ]]; then
      pass "$p: Depends has ${want[*]}, libswiftlang >= 6.0 and << 6.1~"
    else
      fail "$p: Depends lacks ${missing[*]:-a libswiftlang between 6.0 and 6.1~}: $d"
    fi
    # The files: the program, its man page, completions, docs; no Swift runtime inside.
    dpkg-deb -c "$deb" | awk '{print $NF}' | grep -v '/$' | sed 's|^\./|/|' | sort >"$work/files.$p.$arch"
    local expected=(/usr/bin/$p /usr/share/man/man1/$p.1.gz /usr/share/bash-completion/completions/$p
      /usr/share/zsh/vendor-completions/_$p /usr/share/fish/vendor_completions.d/$p.fish
      /usr/share/doc/$p/copyright /usr/share/doc/$p/changelog.gz /usr/share/lintian/overrides/$p)
    local multiarch=x86_64-linux-gnu
    [[ "$arch" == arm64 ]] && multiarch=aarch64-linux-gnu
    [[ "$p" == felica ]] && expected+=(/usr/lib/udev/rules.d/60-felica.rules /usr/lib/modprobe.d/felica.conf
      "/usr/lib/systemd/system/felica-watch@.service" /usr/share/doc/felica/README.md
      /usr/share/doc/felica/Docs/install.md "/usr/lib/$multiarch/wireshark/plugins/felica.lua")
    printf '%s\n' "${expected[@]}" | sort >"$work/expected.$p"
    if comm -23 "$work/expected.$p" "$work/files.$p.$arch" | grep -q .; then
      fail "$p ($arch) lacks: $(comm -23 "$work/expected.$p" "$work/files.$p.$arch" | tr '\n' ' ')"
    elif grep -qiE 'libswift|\.so(\.|$)' "$work/files.$p.$arch"; then
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
}

if [[ "$parts" == *" arm64 "* ]]; then
  echo "-- trixie arm64: the packages, and felica under qemu-user" >&2
  if package trixie-arm64; then
    dir=.build/package/trixie-arm64
    mkdir -p "$work/arm64"
    for p in felica felica-sim; do dpkg-deb -x "$(ls "$dir/${p}"_*_arm64.deb)" "$work/arm64"; done
    # qemu-user runs an arm64 program with the root's arm64 loader, the root's arm64 C
    # libraries and Debian's arm64 Swift runtime (libswiftlang, not multi-arch, unpacked
    # beside the root). Not with -L (the root as the program's whole system): qemu would then
    # open the root's /dev/ptmx, which gives no pseudo-terminal, and felica-sim needs one.
    runtime="$(realpath .build/trixie/arm64-swift)/usr/libexec/swift/lib/swift/linux"
    libs="$(realpath "$root")/usr/lib/aarch64-linux-gnu"
    { echo '#!/bin/bash'
      printf 'exec qemu-aarch64-static -E %q -E LIBNFC_AUTO_SCAN=false %q "$@"\n' \
        "LD_LIBRARY_PATH=$runtime:$libs" "$libs/ld-linux-aarch64.so.1"; } >"$work/arm64-run"
    chmod +x "$work/arm64-run"
    arm64() { timeout 120 "$work/arm64-run" "$@"; }
    file -b "$work/arm64/usr/bin/felica" | grep -q "ARM aarch64" \
      && pass "the packaged felica is an arm64 program: $(file -b "$work/arm64/usr/bin/felica" | cut -d, -f1-2)" \
      || fail "the packaged felica is not arm64: $(file -b "$work/arm64/usr/bin/felica")"
    v="$(arm64 "$work/arm64/usr/bin/felica" --version 2>&1)"
    [[ "$v" == "$(dpkg-deb -f "$(ls "$dir"/felica_*_arm64.deb)" Version)" ]] \
      && pass "arm64 felica --version under qemu-user: $v" || fail "arm64 felica --version: $v"
    arm64 "$work/arm64/usr/bin/felica" balance --device virtual:suica >"$work/arm64.virtual" 2>&1
    cmp -s "$work/arm64.virtual" "$work/expected.balance" \
      && pass "arm64 felica balance --device virtual:suica under qemu-user prints what the amd64 felica prints" \
      || { fail "arm64 felica balance --device virtual:suica:"; diff "$work/expected.balance" "$work/arm64.virtual" | head >&2; }
    # The amd64 PN532 emulator on a pty, the arm64 felica at the other end of it.
    if start_pn532 "$work/pty" --card suica; then
      arm64 "$work/arm64/usr/bin/felica" balance --device "pn532:$work/pty" >"$work/arm64.pn532" 2>"$work/arm64.pn532.err"
      cmp -s "$work/arm64.pn532" "$work/expected.balance" \
        && pass "arm64 felica balance --device pn532:<pty> reads the balance from the amd64 PN532 emulator" \
        || { fail "arm64 felica through pn532:<pty>:"; head -n 10 "$work/arm64.pn532" "$work/arm64.pn532.err" >&2; }
      arm64 "$work/arm64/usr/bin/felica" balance --device "libnfc:pn532_uart:$work/pty" >"$work/arm64.libnfc" 2>"$work/arm64.libnfc.err"
      cmp -s "$work/arm64.libnfc" "$work/expected.balance" \
        && pass "arm64 felica balance --device libnfc:pn532_uart:<pty> (arm64 libnfc) reads the same balance" \
        || { fail "arm64 felica through libnfc:pn532_uart:<pty>:"; head -n 10 "$work/arm64.libnfc" "$work/arm64.libnfc.err" >&2; }
      stop_pn532
    fi
    # The other way round: the arm64 felica-sim, under qemu-user, is the PN532 emulator on
    # the pty, and the build tree's amd64 felica reads through it.
    printf '#!/bin/bash\nexec %q %q "$@"\n' "$work/arm64-run" "$work/arm64/usr/bin/felica-sim" >"$work/arm64-felica-sim"
    chmod +x "$work/arm64-felica-sim"
    amd64_sim=$sim sim="$work/arm64-felica-sim"
    if pn532_wait=800 start_pn532 "$work/pty-arm64" --card suica; then   # up to 20 s under qemu
      timeout 120 "$felica" balance --device "pn532:$work/pty-arm64" >"$work/from-arm64-sim" 2>"$work/from-arm64-sim.err"
      cmp -s "$work/from-arm64-sim" "$work/expected.balance" \
        && pass "the arm64 felica-sim pn532 under qemu-user serves the balance to the amd64 felica over a pty" \
        || { fail "amd64 felica through the arm64 PN532 emulator:"; head -n 10 "$work/from-arm64-sim" "$work/from-arm64-sim.err" "$work/pty-arm64.err" >&2; }
      stop_pn532
    fi
    sim=$amd64_sim
  fi
fi

if [[ "$parts" == *" amd64 "* ]]; then
  echo "-- trixie amd64: the packages, installed with apt in a trixie root" >&2
  if package trixie-amd64; then
    check=.build/trixie/check
    rm -rf "$check" && mkdir -p "$check/out"
    cat >"$check/installed.sh" <<'EOF'
set -u
out="$1"
export DEBIAN_FRONTEND=noninteractive LIBNFC_AUTO_SCAN=false SWIFT_BACKTRACE=enable=no
apt-get install -y --no-install-recommends ./.build/package/trixie-amd64/felica_*_amd64.deb \
  ./.build/package/trixie-amd64/felica-sim_*_amd64.deb >"$out/apt.log" 2>&1; echo $? >"$out/apt.rc"
ldd /usr/bin/felica >"$out/ldd" 2>&1
/usr/bin/felica balance --device virtual:suica >"$out/balance" 2>&1
man -P cat felica >"$out/man" 2>&1
(cd / && timeout 120 /usr/bin/felica-sim rcs380 --card suica -- /usr/bin/felica balance --device usb) >"$out/usb" 2>"$out/usb.err"; echo $? >"$out/usb.rc"
# Start-up: felica --version of this package (Debian's Swift runtime, shared) against the
# bookworm package's (the runtime linked in) when stage 95 left one, in this same root:
# 5 warm-up runs each, then 10 alternating rounds of 20 runs; the mean of each round, ms.
bookworm="$(ls ./.build/package/bookworm-amd64/felica_*_amd64.deb 2>/dev/null | head -n 1)"
if [[ -n "$bookworm" ]]; then
  mkdir -p /tmp/bookworm && dpkg-deb -x "$bookworm" /tmp/bookworm
  round() { local t0 t1 i; t0=$(date +%s%N); for ((i = 0; i < 20; i++)); do "$1" --version >/dev/null; done; t1=$(date +%s%N); echo $(((t1 - t0) / 20000)); }
  for b in /usr/bin/felica /tmp/bookworm/usr/bin/felica; do for i in 1 2 3 4 5; do "$b" --version >/dev/null; done; done
  for r in 1 2 3 4 5 6 7 8 9 10; do
    echo "trixie $(round /usr/bin/felica)" >>"$out/startup"
    echo "bookworm $(round /tmp/bookworm/usr/bin/felica)" >>"$out/startup"
  done
fi
EOF
    scripts/trixie-root.sh scratch bash "$check/installed.sh" "$check/out" 2>"$work/scratch.err"
    out=$check/out
    if [[ "$(cat "$out/apt.rc" 2>/dev/null)" == 0 ]]; then
      pass "apt-get install ./felica_…_amd64.deb ./felica-sim_…_amd64.deb in a trixie root ($(grep -oE '[0-9]+ newly installed' "$out/apt.log"))"
    else
      fail "apt-get install in the trixie root:"; tail -n 20 "$out/apt.log" "$work/scratch.err" >&2
    fi
    grep -q "libswiftCore.so => /usr/libexec/swift/lib/swift/linux/libswiftCore.so" "$out/ldd" && ! grep -q "not found" "$out/ldd" \
      && pass "the installed felica loads Debian's Swift runtime ($(grep -c '=>' "$out/ldd") libraries, all found)" \
      || { fail "ldd /usr/bin/felica in the trixie root:"; cat "$out/ldd" >&2; }
    cmp -s "$out/balance" "$work/expected.balance" \
      && pass "the installed felica balance --device virtual:suica prints what the build tree's felica prints" \
      || { fail "the installed felica balance:"; diff "$work/expected.balance" "$out/balance" | head >&2; }
    grep -q "^SYNOPSIS" "$out/man" && pass "man felica shows the installed page" || { fail "man felica:"; head -n 5 "$out/man" >&2; }
    if [[ -s "$out/startup" ]]; then
      # Median of the ten round means, in microseconds, printed in ms.
      median() { grep "^$1 " "$out/startup" | cut -d' ' -f2 | sort -n | sed -n 5p; }
      t="$(median trixie)" b="$(median bookworm)"
      note "felica --version start-up in the trixie root, median of 10 rounds of 20: trixie-amd64 package $((t / 1000)).$(printf '%03d' $((t % 1000)) | cut -c1) ms, bookworm-amd64 package $((b / 1000)).$(printf '%03d' $((b % 1000)) | cut -c1) ms"
    else
      note "no bookworm-amd64 package (stage 95 makes it): start-up not compared"
    fi
    cmp -s "$out/usb" "$work/expected.balance" \
      && pass "felica-sim rcs380 --card suica -- felica balance --device usb reads the balance in the trixie root" \
      || { fail "a balance through the emulated RC-S380 in the trixie root (exit $(cat "$out/usb.rc" 2>/dev/null)):"; head -n 20 "$out/usb" "$out/usb.err" >&2; }
  fi
fi
stage_end
