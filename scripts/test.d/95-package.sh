#!/usr/bin/env bash
# The Debian packages: scripts/package.sh builds them (release, Swift runtime linked in),
# lintian finds no error and no warning, and then, in a private mount namespace where /usr,
# /etc and /var are overlays (nothing reaches the machine) and the Swift toolchain's
# directory is an empty one: they install; the installed programs run, print the package's
# version, need no Swift library, read a balance through the emulated RC-S380; man pages,
# completions, the kiosk unit and doctor's view of the rule and blacklist work; every path the
# installed man pages and --help name exists (the guides, the Wireshark dissector, which tshark
# loads by itself); felica-sim stops on signals, names a command it cannot find, keeps off a
# --link path that is not its own; and uninstalling as Docs/install.md says (apt-get purge, or
# apt-get remove then dpkg --purge) leaves nothing of them behind.
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
  mount -t tmpfs tmpfs .build/static   # and the release build
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
  # The bridge script is inside felica-sim: it runs with the build tree out of reach.
  if (cd / && timeout 120 /usr/bin/felica-sim rcs380 --card suica -- /usr/bin/felica balance --device usb) >"$work/usb.out" 2>"$work/usb.err" \
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
  if grep -q '"check":"setup","verdict":"ok","summary":"udev rule /usr/lib/udev/rules.d/60-felica.rules gives the user at the seat and group plugdev access to 9 reader models; port100 is blacklisted ('"$(dpkg -L felica | grep '/modprobe\.d/felica\.conf$')"') (package felica '"$version"')"' "$work/doctor.json"; then
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

  added_start=$(now_ms)
  # The guides and the dissector are installed, and every path the installed man pages and
  # every command's --help name exists (paths a user makes or a device gives are listed below).
  cat >"$work/paths.py" <<'PY'
import os, re, subprocess, sys
env = dict(os.environ, COLUMNS="1000", MANWIDTH="1000")
texts = {}
for prog in ("felica", "felica-sim"):
    texts[f"man {prog}"] = subprocess.run(["man", "-P", "cat", prog], capture_output=True, text=True, env=env).stdout
    todo = [[prog]]
    while todo:
        cmd = todo.pop()
        out = subprocess.run(["/usr/bin/" + cmd[0]] + cmd[1:] + ["--help"], capture_output=True, text=True, env=env).stdout
        texts[" ".join(cmd) + " --help"] = out
        if "\nSUBCOMMANDS:\n" in out:
            for line in out.split("\nSUBCOMMANDS:\n", 1)[1].split("\n\n", 1)[0].splitlines():
                if line.startswith("  ") and not line.startswith("   "):
                    todo.append(cmd + [line.split()[0]])
# Named, but made by the user, a device or another program, not installed: examples of them.
made = re.compile(r"^(/dev/|/tmp/|/run/|/proc/|/sys/|/var/lib/felica|/etc/udev/rules\.d/|/etc/modprobe\.d/|/etc/reader\.conf\.d/|/home/)")
bad = []
seen = set()
for where, text in texts.items():
    for m in re.finditer(r"(?<![\w$~.:/>\]-])(/(?:[\w.@+-]+/)*[\w.@+-]*\w|(?:Docs|scripts|Wireshark|Sources|Tests|packaging)/[\w./-]*\w)", text):
        path = m.group(1)
        if path == "/" or made.match(path) or (where, path) in seen:
            continue
        seen.add((where, path))
        if not path.startswith("/") or not os.path.exists(path):
            bad.append(f"{where}: {path}")
print(f"{len(texts)} texts, {len({p for _, p in seen})} paths", file=sys.stderr)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
  if python3 "$work/paths.py" >"$work/paths.out" 2>"$work/paths.err"; then
    pass "every path the installed man pages and --help texts name exists ($(cat "$work/paths.err"))"
  else
    fail "paths the installed help names that do not exist:"; cat "$work/paths.out" "$work/paths.err" >&2
  fi
  dissector="$(dpkg -L felica | grep '/wireshark/plugins/felica.lua$')"
  for f in /usr/share/doc/felica/README.md /usr/share/doc/felica/Docs/formats.md /usr/share/doc/felica/Docs/history.md \
    /usr/share/doc/felica/Docs/traces.md /usr/share/doc/felica/Docs/readers.md "$dissector"; do
    [[ -s "$f" ]] || fail "$f is not installed"
  done
  if command -v tshark >/dev/null; then
    # The dissector in Wireshark's global Lua plugin directory is loaded without -X.
    global="$(HOME="$work" tshark -G folders 2>/dev/null | sed -n 's/^Global Lua Plugins:[[:space:]]*//p')"
    /usr/bin/felica balance --device virtual:suica --trace "$work/t.jsonl" >/dev/null 2>&1
    /usr/bin/felica trace export "$work/t.jsonl" --pcap "$work/t.pcapng" 2>/dev/null
    if [[ "$dissector" == "$global/felica.lua" ]] && HOME="$work" tshark -G protocols 2>/dev/null | grep -qi "felica" \
      && HOME="$work" tshark -r "$work/t.pcapng" 2>/dev/null | grep -qi "felica"; then
      pass "tshark loads the installed dissector ($dissector) without -X and decodes felica trace export's capture"
    else
      fail "tshark and the installed dissector: package puts it at '$dissector', tshark's global Lua plugins are '$global'"
      HOME="$work" tshark -r "$work/t.pcapng" 2>&1 | head -n 5 >&2
    fi
  else
    note "tshark is not installed: the dissector's loading is not checked here"
  fi
  modprobe_dir="$(dpkg -L felica | grep '/modprobe\.d/felica\.conf$' | xargs dirname)"
  owners="$(dpkg-query -S "$modprobe_dir" 2>/dev/null | cut -d: -f1)"
  if [[ "$owners" == *felica* && "$owners" == *,* ]]; then
    pass "the blacklist is in $modprobe_dir, a directory the system's packages own too ($owners)"
  else
    fail "the blacklist is in $modprobe_dir, owned by '$owners' only"
  fi

  # felica-sim through the installed binaries: vpcd stops on SIGINT and SIGTERM with exit 0
  # and a "stopped" line, also started in the background of a script (SIGINT ignored there,
  # as a non-interactive shell does for `&`); nothing listens on the port, so it is still
  # waiting for vpcd when the signal comes.
  for sig in INT TERM; do
    bash -c '/usr/bin/felica-sim vpcd --card suica --port 1 --wait 60 2>"$1" & pid=$!; sleep 1.5; kill -'"$sig"' $pid; wait $pid' _ "$work/vpcd.$sig.err"
    rc=$?
    if [[ $rc -eq 0 ]] && grep -q "^felica-sim vpcd: stopped ($( [[ $sig == INT ]] && echo interrupt || echo terminate )) after 0 exchanges" "$work/vpcd.$sig.err"; then
      pass "felica-sim vpcd started in the background of a script stops on SIG$sig: exit 0, $(grep stopped "$work/vpcd.$sig.err")"
    else
      fail "felica-sim vpcd on SIG$sig: exit $rc:"; cat "$work/vpcd.$sig.err" >&2
    fi
  done
  (cd / && timeout 60 /usr/bin/felica-sim rcs380 --card suica -- no-such-command) >"$work/nocmd.out" 2>"$work/nocmd.err"
  rc=$?
  if [[ $rc -eq 127 ]] && grep -q "no-such-command: command not found" "$work/nocmd.err" && ! grep -q Traceback "$work/nocmd.err"; then
    pass "felica-sim rcs380 -- no-such-command: exit 127, $(head -n 1 "$work/nocmd.err")"
  else
    fail "felica-sim rcs380 -- no-such-command: exit $rc:"; cat "$work/nocmd.err" >&2
  fi
  ln -s "$work/someone-elses" "$work/link"; : >"$work/plain"
  for existing in "$work/link" "$work/plain"; do
    before="$(stat -c '%F %N' "$existing")"
    timeout 30 /usr/bin/felica-sim pn532 --card suica --link "$existing" >/dev/null 2>"$work/link.err"
    rc=$?
    if [[ $rc -ne 0 && $rc -ne 124 && "$(stat -c '%F %N' "$existing")" == "$before" ]] && grep -q "$existing" "$work/link.err"; then
      pass "felica-sim pn532 --link refuses an existing $(stat -c %F "$existing") that is not its own (exit $rc) and leaves it"
    else
      fail "felica-sim pn532 --link onto an existing $(stat -c %F "$existing"): exit $rc, now $(stat -c '%F %N' "$existing"):"; cat "$work/link.err" >&2
    fi
  done

  # Uninstalling as Docs/install.md says. First the one step: apt-get purge, with a kiosk
  # service enabled and its database there; then, reinstalled, apt-get remove (which keeps
  # the database and felica's record, state rc) finished by dpkg --purge. Each time nothing
  # of the packages may be left: no dpkg record, no file, no enabled link, no database.
  uninstalled() { # what was done
    local left=() f
    while read -r f; do [[ -e "$f" || -L "$f" ]] && left+=("$f"); done <"$work/files"
    # What the overlays kept besides dpkg's and apt's own records and caches.
    while read -r f; do left+=("/$f"); done < <(cd "$work/ovl/upper" && find . \( -type f -o -type l \) -printf '%P\n' \
      | grep -vE '^var/(lib/(dpkg|apt)|log|cache/(man|debconf|ldconfig|apt))/|^etc/ld\.so\.cache$')
    [[ -e /var/lib/felica || -e /var/lib/private/felica ]] && left+=("the kiosk database")
    local state
    state="$(dpkg-query -W -f '${db:Status-Abbrev}${Package}\n' felica felica-sim 2>/dev/null | grep -vE '^[up]n ' | tr '\n' ' ')"
    [[ -n "${state// /}" ]] && left+=("dpkg records: $state")
    if ((${#left[@]} == 0)); then
      pass "$1: none of the $(wc -l <"$work/files") installed files is left, no dpkg record, no enabled service, no database"
    else
      fail "$1: left: ${left[*]}"
    fi
  }
  kiosk() { # an enabled kiosk service with its database, as a user would have them
    systemctl enable felica-watch@usb.service >"$work/enable.log" 2>&1 \
      || { fail "systemctl enable felica-watch@usb.service:"; cat "$work/enable.log" >&2; }
    mkdir -p /var/lib/private/felica && : >/var/lib/private/felica/history.sqlite3
  }
  export DEBIAN_FRONTEND=noninteractive
  kiosk
  if apt-get purge -y felica felica-sim >"$work/purge.log" 2>&1 && ! grep -qiE "warning|not empty" "$work/purge.log"; then
    pass "apt-get purge felica felica-sim removes both, with no warning"
  else
    fail "apt-get purge felica felica-sim:"; tail -n 20 "$work/purge.log" >&2
  fi
  uninstalled "after apt-get purge"
  dpkg -i "$deb" "$simdeb" >"$work/dpkg-i.log" 2>&1 || { fail "dpkg -i again failed:"; tail -n 20 "$work/dpkg-i.log" >&2; }
  kiosk
  apt-get remove -y felica felica-sim >"$work/remove.log" 2>&1 || { fail "apt-get remove failed:"; tail -n 20 "$work/remove.log" >&2; }
  if [[ -e /var/lib/private/felica/history.sqlite3 ]] && [[ "$(dpkg-query -W -f '${db:Status-Abbrev}' felica 2>/dev/null)" == rc* ]]; then
    pass "apt-get remove keeps the kiosk database, felica in state rc"
  else
    fail "apt-get remove: database $(ls /var/lib/private/felica 2>&1), felica '$(dpkg-query -W -f '${db:Status-Abbrev}' felica 2>&1)'"
  fi
  if dpkg --purge felica felica-sim >"$work/purge.log" 2>&1 && ! grep -qiE "not empty" "$work/purge.log"; then
    pass "dpkg --purge felica felica-sim finishes the removal"
  else
    fail "dpkg --purge after apt-get remove:"; tail -n 20 "$work/purge.log" >&2
  fi
  uninstalled "after apt-get remove and dpkg --purge"
  note "installed paths, dissector, felica-sim and uninstall checks: $((($(now_ms) - added_start) / 1000)) s"
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
# libcurl, libmosquitto, libcrypto and SQLite are loaded at first use (watch --post, --mqtt,
# the Lite-S card key, the history), not linked: not in DT_NEEDED, so Depends names them explicitly (dpkg-shlibdeps
# cannot see them).
for p in "$deb" "$simdeb"; do
  for lib in libcurl4 libmosquitto1 libssl3 libsqlite3-0; do
    if dpkg-deb -f "$p" Depends | grep -qE "(^|, )$lib"; then
      pass "$(basename "$p") depends on $lib ($(dpkg-deb -f "$p" Depends | grep -oE "$lib[^,]*"))"
    else
      fail "$(basename "$p")'s Depends lacks $lib (loaded by watch --post/--mqtt, the card key, the history): $(dpkg-deb -f "$p" Depends)"
    fi
  done
done

# No ICU in either program: nothing links Foundation, whose ICU data alone is ~30 MB (and
# whose licence the copyright file would then have to carry). ICU's data is one archive
# whose entries are named icudt<version>l/…, which stripping keeps; "ICU data" and
# u_errorName are strings of ICU's code.
dpkg-deb -x "$deb" "$work/unpacked" && dpkg-deb -x "$simdeb" "$work/unpacked"
for p in felica felica-sim; do
  needed="$(readelf -d "$work/unpacked/usr/bin/$p" 2>/dev/null | grep -oE 'NEEDED.*\[[^]]*\]' | grep -oE '\[[^]]*\]' | tr -d '[]' | tr '\n' ' ')"
  if [[ -z "$needed" ]]; then
    fail "readelf could not read $p's dynamic section"
  elif [[ "$needed" == *libcurl* || "$needed" == *libmosquitto* || "$needed" == *libcrypto* || "$needed" == *libsqlite* ]]; then
    fail "$p links libcurl, libmosquitto, libcrypto or SQLite (DT_NEEDED), which every start then pays for: $needed"
  else
    pass "$p links none of libcurl, libmosquitto, libcrypto, SQLite: DT_NEEDED $needed"
  fi
done
for p in felica felica-sim; do
  b="$work/unpacked/usr/bin/$p"
  if [[ ! -f "$b" ]]; then
    fail "$p is not in its package"
  elif found="$(grep -a -o -m 3 -E 'icudt[0-9]+[lb]|ICU data|u_errorName' "$b" | sort -u | tr '\n' ' ')" && [[ -n "$found" ]]; then
    fail "$p carries ICU: $found"
  else
    pass "$p carries no ICU data"
  fi
done
# The size targets of the static build: felica stripped <= 12 MiB, its package <= 5 MiB.
size="$(stat -c %s "$work/unpacked/usr/bin/felica")"
((size <= 12 * 1024 * 1024)) && pass "felica stripped is $((size / 1024)) KiB (at most 12 MiB)" \
  || fail "felica stripped is $((size / 1024)) KiB, over 12 MiB"
size="$(stat -c %s "$deb")"
((size <= 5 * 1024 * 1024)) && pass "$(basename "$deb") is $((size / 1024)) KiB (at most 5 MiB)" \
  || fail "$(basename "$deb") is $((size / 1024)) KiB, over 5 MiB"
note "felica-sim stripped: $(($(stat -c %s "$work/unpacked/usr/bin/felica-sim") / 1024)) KiB"

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
