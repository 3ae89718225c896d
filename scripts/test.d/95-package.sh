#!/usr/bin/env bash
# The Debian packages: scripts/package.sh builds them (release, Swift runtime linked in),
# lintian finds no error and no warning, and then, in a private mount namespace where /usr,
# /etc and /var are overlays (nothing reaches the machine) and the Swift toolchain's
# directory is an empty one: they install; the installed programs run, print the package's
# version, need no Swift library, read a balance through the emulated RC-S380; man pages,
# completions, the kiosk unit and doctor's view of the rule and blacklist work; and a purge
# leaves none of their files behind.
source "$(dirname "$0")/lib.sh"

if [[ "${1:-}" == inside ]]; then
  # Second half, in the namespace: $2 the work directory, $3 and $4 the packages.
  work="$2" deb="$3" simdeb="$4" stage="$stage (installed)"
  version="$(dpkg-deb -f "$deb" Version)"
  toolchain="$(cat "$work/toolchain")"

  mount -t tmpfs tmpfs "$work/ovl" || { fail "cannot mount a tmpfs for the overlays"; stage_end; }
  for d in usr etc var; do
    mkdir -p "$work/ovl/upper/$d" "$work/ovl/work/$d"
    if ! mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/ovl/upper/$d,workdir=$work/ovl/work/$d" "/$d"; then
      fail "cannot put an overlay on /$d"; stage_end
    fi
  done
  mount -t tmpfs tmpfs "$toolchain"   # the toolchain, hidden
  mount -t tmpfs tmpfs .build/static   # and the release build, whose resource bundle the binaries know
  if command -v swift >/dev/null || "$bin/felica" --version >/dev/null 2>&1; then
    fail "the toolchain is still reachable: the dynamically linked build in $bin still runs"
  else
    pass "toolchain hidden: $toolchain is empty, and the dynamically linked build no longer starts"
  fi

  if dpkg -i "$deb" "$simdeb" >"$work/dpkg-i.log" 2>&1; then
    pass "dpkg -i installs $(basename "$deb") and $(basename "$simdeb")"
  else
    fail "dpkg -i failed:"; tail -n 20 "$work/dpkg-i.log" >&2; stage_end
  fi
  dpkg -L felica felica-sim | while read -r f; do [[ -d "$f" ]] || echo "$f"; done | sort >"$work/files"

  for p in felica felica-sim; do
    v="$("/usr/bin/$p" --version 2>&1)"
    [[ "$v" == "$version" ]] && pass "$p --version prints the package's version $version" || fail "$p --version: '$v', the package is $version"
    if ldd "/usr/bin/$p" >"$work/ldd.$p" 2>&1 && ! grep -qiE "swift|not found|libdispatch|Foundation" "$work/ldd.$p"; then
      pass "ldd /usr/bin/$p: no Swift runtime library ($(grep -c '=>' "$work/ldd.$p") libraries, all from Debian)"
    else
      fail "ldd /usr/bin/$p:"; cat "$work/ldd.$p" >&2
    fi
    if man -P cat "$p" 2>"$work/man.err" | grep -q "^SYNOPSIS"; then
      pass "man $p shows the installed page"
    else
      fail "man $p: $(head -c 300 "$work/man.err")"
    fi
  done

  if /usr/bin/felica balance --device virtual:suica >"$work/balance.out" 2>&1 && cmp -s "$work/balance.out" "$work/expected.balance"; then
    pass "felica balance --device virtual:suica prints what the build tree's felica prints"
  else
    fail "felica balance --device virtual:suica:"; diff "$work/expected.balance" "$work/balance.out" | head >&2
  fi
  # The bridge comes from /usr/share/felica-sim: no FELICA_USB_BRIDGE, the build tree hidden.
  if (cd / && env -u FELICA_USB_BRIDGE timeout 120 /usr/bin/felica-sim rcs380 --card suica -- /usr/bin/felica balance --device usb) >"$work/usb.out" 2>"$work/usb.err" \
    && cmp -s "$work/usb.out" "$work/expected.balance"; then
    pass "felica-sim rcs380 --card suica -- /usr/bin/felica balance --device usb reads the balance"
  else
    fail "balance through the emulated RC-S380:"; cat "$work/usb.out" "$work/usb.err" | head -n 20 >&2
  fi

  r="$(bash -c 'source /usr/share/bash-completion/completions/felica && complete -p felica' 2>&1)"
  [[ "$r" == *"felica"* ]] && pass "bash completion loads: $r" || fail "bash completion: $r"
  r="$(HOME="$work" fish -c 'complete -C"felica bal"' 2>&1)"
  [[ "$r" == balance* ]] && pass "fish finds the vendor completion: felica bal → ${r%%$'\t'*}" || fail "fish completion: $r"
  r="$(HOME="$work" ZDOTDIR="$work" zsh -c 'autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump" && print -r -- ${_comps[felica]} ${_comps[felica-sim]}' 2>&1)"
  [[ "$r" == "_felica _felica-sim" ]] && pass "zsh's compinit picks up _felica and _felica-sim" || fail "zsh completion: '$r'"

  grep -q 'ATTRS{idVendor}=="054c", ATTRS{idProduct}=="06c1".*GROUP="plugdev", TAG+="uaccess"' /usr/lib/udev/rules.d/60-felica.rules \
    && grep -qx 'blacklist port100' /usr/lib/modprobe.d/felica.conf \
    && pass "udev rule and port100 blacklist installed" || fail "udev rule or blacklist missing"
  if command -v systemd-analyze >/dev/null; then
    if systemd-analyze verify felica-watch@usb.service >"$work/verify.log" 2>&1; then
      pass "systemd-analyze verify felica-watch@usb.service: no complaint"
    else
      fail "systemd-analyze verify felica-watch@usb.service:"; cat "$work/verify.log" >&2
    fi
    exposure="$(systemd-analyze security --offline=true felica-watch@usb.service 2>/dev/null | grep -o 'Overall exposure level for .*')"
    note "systemd-analyze security: ${exposure:-(no figure)}"
  else
    fail "systemd-analyze is missing (scripts/bootstrap.sh installs systemd)"
  fi

  # doctor: the rule and the blacklist in place, then the rule gone.
  export PCSCLITE_CSOCK_NAME="$work/no-pcscd.comm"
  /usr/bin/felica doctor --json >"$work/doctor.json" 2>/dev/null
  if grep -q '"check":"setup","verdict":"ok","summary":"udev rule /usr/lib/udev/rules.d/60-felica.rules gives the user at the seat and group plugdev access to 9 reader models; port100 is blacklisted (/usr/lib/modprobe.d/felica.conf) (package felica '"$version"')"' "$work/doctor.json"; then
    pass "felica doctor: the packaged rule and blacklist are in place"
  else
    fail "felica doctor does not report the packaged files:"; grep -o '"check":"setup"[^}]*' "$work/doctor.json" >&2
  fi
  rm /usr/lib/udev/rules.d/60-felica.rules
  /usr/bin/felica doctor --json >"$work/doctor.json" 2>/dev/null
  if grep -q '"check":"setup","verdict":"problem","summary":"package felica '"$version"' is installed, but the udev rule /usr/lib/udev/rules.d/60-felica.rules is gone' "$work/doctor.json" \
    && grep -q '"fix":"sudo apt-get install --reinstall felica"' "$work/doctor.json"; then
    pass "felica doctor: a packaged rule gone is a problem, fixed by reinstalling"
  else
    fail "felica doctor with the rule removed:"; grep -o '"check":"setup"[^}]*' "$work/doctor.json" >&2
  fi

  if dpkg --purge felica-sim felica >"$work/purge.log" 2>&1; then
    pass "dpkg --purge removes both"
  else
    fail "dpkg --purge failed:"; tail -n 20 "$work/purge.log" >&2
  fi
  left=()
  while read -r f; do [[ -e "$f" || -L "$f" ]] && left+=("$f"); done <"$work/files"
  # What the overlays kept besides dpkg's own records and caches.
  while read -r f; do left+=("/$f"); done < <(cd "$work/ovl/upper" && find . -type f -printf '%P\n' \
    | grep -vE '^var/(lib/dpkg|log|cache/(man|debconf|ldconfig))/|^etc/ld\.so\.cache$')
  if ((${#left[@]} == 0)); then
    pass "after the purge none of the $(wc -l <"$work/files") installed files is left, nor anything else outside dpkg's records"
  else
    fail "left after the purge: ${left[*]}"
  fi
  stage_end
fi

stage_workdir
for tool in dpkg-deb lintian unshare; do
  command -v "$tool" >/dev/null || { fail "$tool is missing: run scripts/bootstrap.sh"; stage_end; }
done

start=$(now_ms)
if scripts/package.sh >"$work/package.log" 2>&1; then
  pass "scripts/package.sh built both packages in $((($(now_ms) - start) / 1000)) s"
else
  fail "scripts/package.sh failed:"; tail -n 30 "$work/package.log" >&2; stage_end
fi
deb="$(ls .build/package/bookworm-amd64/felica_*.deb)" simdeb="$(ls .build/package/bookworm-amd64/felica-sim_*.deb)"
for p in "$deb" "$simdeb"; do note "$(basename "$p"): $(du -k "$p" | cut -f1) KiB, installed $(dpkg-deb -f "$p" Installed-Size) KiB; Depends: $(dpkg-deb -f "$p" Depends)"; done
# libcrypto (the Lite-S card key's Triple-DES) is linked, so dpkg-shlibdeps must name its package.
if dpkg-deb -f "$deb" Depends | grep -qE '(^|, )libssl3'; then
  pass "felica depends on libcrypto's runtime package ($(dpkg-deb -f "$deb" Depends | grep -oE 'libssl3[^,]*'))"
else
  fail "felica's Depends lacks libssl3 (libcrypto): $(dpkg-deb -f "$deb" Depends)"
fi

if lintian --fail-on error,warning --tag-display-limit 0 "$deb" "$simdeb" >"$work/lintian.log" 2>&1; then
  pass "lintian: no error, no warning ($(grep -cE '^[IPXO]: ' "$work/lintian.log") informational tags: lintian -I shows them)"
else
  fail "lintian:"; cat "$work/lintian.log" >&2
fi

swift_bin="$(command -v swift)"
[[ -n "$swift_bin" ]] && dirname "$(dirname "$(dirname "$(readlink -f "$swift_bin")")")" >"$work/toolchain"
"$felica" balance --device virtual:suica >"$work/expected.balance" 2>&1
mkdir -p "$work/ovl"
# As root a mount namespace is enough; otherwise a user namespace maps this user to root in it.
flags=()
for f in "-m" "-r -m"; do
  # shellcheck disable=SC2086
  if unshare $f --propagation private true 2>/dev/null; then read -ra flags <<<"$f"; break; fi
done
if ((${#flags[@]} == 0)); then
  fail "'unshare -m' is not permitted here: the packages cannot be installed in a private namespace"
  stage_end
fi
FELICA_BIN="$bin" unshare "${flags[@]}" --propagation private bash "$0" inside "$work" "$(realpath "$deb")" "$(realpath "$simdeb")"
rc=$?
checks=$((checks + 1))
((rc == 0)) || failures=$((failures + 1))
stage_end
