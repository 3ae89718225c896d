#!/usr/bin/env bash
# The Sony RC-S380 driver end to end through the real libusb: `felica-sim rcs380` puts an
# emulated reader on a umockdev USB bus, and for every built-in card (Octopus and Lite-S too) `felica poll`, `dump`,
# `read`, `balance` and `history --device usb` must print exactly what `--device
# virtual:<card>` prints. `felica devices` and `felica doctor` must find the reader, and
# each fault (no card, card removed, corrupt frame, late reply, lost ACK, unplugged reader, a kernel
# driver that will not let go) must end in a clear error within a bounded time, after which
# the next command works. Bit rates: usb?rate= and the move to 424 kbps when the card
# runs at it.
source "$(dirname "$0")/lib.sh"
stage_workdir

# One command line per comparison; READ is replaced by the card's first readable service.
commands=("poll" "poll --json" "dump" "dump --json" "read READ" "balance" "balance --json" "history" "history --json")
declare -A service=([suica]="--service 008b" [edy]="--system fe00 --service 110b" [nanaco]="--system fe00 --service 558b"
                    [waon]="--system fe00 --service 680b" [wallet]="--service 008b" [univ-coop]="--system fe00 --service 50d7")

for card in suica edy nanaco waon wallet univ-coop; do
  usb_matches_virtual rcs380 usb "$card" "${commands[@]/READ/${service[$card]}}"
done
# Octopus and Shenzhen Tong (systems 8008 and 8005, no Request System Code answer needed):
# the balance, its offset rule and the dual card showing both.
for card in octopus octopus-shenzhen; do
  usb_matches_virtual rcs380 usb "$card" "poll" "dump --json" "balance" "balance --json"
done
# FeliCa Lite-S tags (no Request System Code, 4 blocks a read): the NDEF message, the ID
# block and the memory map.
usb_matches_virtual rcs380 usb lite-s "ndef" "ndef --json" "poll" "poll --json" "dump" "dump --json"
usb_matches_virtual rcs380 usb aime "poll" "dump"

# felica devices, FELICA_DEVICE and the default device find the emulated reader.
out="$(timeout 60 "$sim" rcs380 --card suica -- bash -c "\"$felica\" devices; FELICA_DEVICE=usb:054c:06c1 \"$felica\" poll; \"$felica\" balance" 2>&1)"
if grep -qE '^usb +Sony RC-S380/S +usb:001:004 +ready' <<<"$out" && grep -q '^IDm ' <<<"$out" && grep -q '¥1,234' <<<"$out"; then
  pass "devices lists usb:001:004; FELICA_DEVICE=usb:054c:06c1 and the default device reach it"
else
  fail "devices / FELICA_DEVICE / default device"; echo "$out" >&2
fi
out="$(timeout 60 "$sim" rcs380 --card suica -- "$felica" doctor 2>&1)"
if grep -q 'driven directly over USB (libusb); --device usb:001:004' <<<"$out" && grep -q '^ok *usb:001:004: a card answered.*it answered at 424 kbps too' <<<"$out"; then
  pass "doctor finds the reader, polls the card through it and checks it at 424 kbps"
else
  fail "doctor"; echo "$out" >&2
fi

# 424 kbps: usb?rate=fastest asks the card for its communication performance before every
# reading and moves up; the default (auto) does so only for a reading long enough to pay for
# the question on this link, which a balance never is; a card that runs at 212 kbps only is
# never spoken to at 424; ?rate=212|424 fixes the rate; a trace records the rate of each
# exchange and replays the same reading. (Whether auto moves up for a history depends on the
# link's measured latency, so it is tested in the Swift suites, not here.)
tmp="$work"
"$felica" dump --json --device virtual:suica | python3 -c 'import json,sys; d=json.load(sys.stdin); d["bitRates"]=[212]; json.dump(d, sys.stdout, ensure_ascii=False)' >"$tmp/slow-suica.json"
rate_script="$tmp/rate.sh"
cat >"$rate_script" <<EOS
cd "$tmp"
timeout 30 "$felica" -v history --device 'usb?rate=fastest' >rate.history.out 2>rate.history.v
timeout 30 "$felica" -v balance --device usb >/dev/null 2>rate.balance.v; echo \$? >rate.balance.rc
timeout 30 "$felica" -v balance --device 'usb?rate=fastest' >/dev/null 2>rate.fastbalance.v
timeout 30 "$felica" -v dump --device 'usb?rate=fastest' >rate.dump.out 2>rate.dump.v
timeout 30 "$felica" -v history --device 'usb?rate=212' >/dev/null 2>rate.fixed212.v; echo \$? >rate.fixed212.rc
timeout 30 "$felica" -v poll --device 'usb?rate=424' >rate.fixed424.out 2>rate.fixed424.v
timeout 30 "$felica" history --trace rate.trace.jsonl --device 'usb?rate=fastest' >rate.traced.out 2>rate.traced.err
timeout 30 "$felica" balance --trace rate.fastbalance.jsonl --device 'usb?rate=fastest' >rate.fastbalance.out 2>&1
timeout 30 "$felica" history --trace rate.auto.jsonl --device usb >rate.auto.out 2>&1
EOS
timeout 120 "$sim" rcs380 --card suica -- bash "$rate_script" 2>"$tmp/rate.sim.err"
switch_line='⇄  bit rate 212 → 424 kbps'
if grep -q "request=communication performance" "$tmp/rate.history.v" && grep -q "$switch_line" "$tmp/rate.history.v" \
   && [[ "$(sed -n "/$switch_line/,\$p" "$tmp/rate.history.v" | grep -c 'Read Without Encryption response')" -ge 2 ]]; then
  pass "history through usb?rate=fastest asks for the card's rates and reads at 424 kbps"
else
  fail "history did not move to 424 kbps"; cat "$tmp/rate.history.v" "$tmp/rate.sim.err" >&2
fi
"$felica" dump --device virtual:suica >"$tmp/rate.vdump.out" 2>/dev/null
if grep -q "$switch_line" "$tmp/rate.dump.v" && grep -q "$switch_line" "$tmp/rate.fastbalance.v" && cmp -s "$tmp/rate.vdump.out" "$tmp/rate.dump.out"; then
  pass "dump and balance through usb?rate=fastest move to 424 kbps; the dump equals the virtual card's"
else
  fail "dump or balance with usb?rate=fastest"; head -20 "$tmp/rate.dump.v" "$tmp/rate.fastbalance.v" >&2
fi
if [[ "$(cat "$tmp/rate.balance.rc" "$tmp/rate.fixed212.rc" 2>/dev/null)" == $'0\n0' ]] \
   && grep -q 'Read Without Encryption response' "$tmp/rate.balance.v" && grep -q 'Read Without Encryption response' "$tmp/rate.fixed212.v" \
   && ! grep -qE "communication performance|⇄" "$tmp/rate.balance.v" "$tmp/rate.fixed212.v"; then
  pass "balance (too short to pay) and usb?rate=212 stay at 212 kbps without asking"
else
  fail "balance or usb?rate=212 switched"; cat "$tmp/rate.balance.v" "$tmp/rate.fixed212.v" >&2
fi
if grep -q '^IDm ' "$tmp/rate.fixed424.out" && ! grep -q '⇄' "$tmp/rate.fixed424.v"; then
  pass "usb?rate=424 polls at 424 kbps from the start"
else
  fail "usb?rate=424"; cat "$tmp/rate.fixed424.v" >&2
fi
"$felica" history --device virtual:suica >"$tmp/rate.virtual.out" 2>/dev/null
if cmp -s "$tmp/rate.virtual.out" "$tmp/rate.traced.out" && grep -q '"rate":424' "$tmp/rate.trace.jsonl" \
   && "$felica" history --device "replay:$tmp/rate.trace.jsonl" 2>"$tmp/rate.replay.err" | cmp -s - "$tmp/rate.virtual.out" \
   && "$felica" trace show "$tmp/rate.trace.jsonl" | grep -q "$switch_line"; then
  pass "a trace of a 424 kbps reading records each exchange's rate, shows the switch and replays the same history"
else
  fail "trace of a 424 kbps reading"; cat "$tmp/rate.traced.err" "$tmp/rate.replay.err" >&2
fi
"$felica" balance --device virtual:suica >"$tmp/rate.vbalance.out" 2>/dev/null
if "$felica" balance --device "replay:$tmp/rate.fastbalance.jsonl" 2>"$tmp/rate.replay2.err" | cmp -s - "$tmp/rate.vbalance.out" \
   && grep -q '"rate":424' "$tmp/rate.fastbalance.jsonl" \
   && "$felica" history --device "replay:$tmp/rate.auto.jsonl" 2>"$tmp/rate.replay3.err" | cmp -s - "$tmp/rate.virtual.out" \
   && head -1 "$tmp/rate.auto.jsonl" | grep -q '"linkLatency":'; then
  pass "replays decide as the recorded reader did: a usb?rate=fastest balance and an auto history (with the reader's latency in the header)"
else
  fail "replay of a fastest balance or an auto history"; cat "$tmp/rate.replay2.err" "$tmp/rate.replay3.err" >&2; head -1 "$tmp/rate.auto.jsonl" >&2
fi
slow_script="$tmp/slow.sh"
cat >"$slow_script" <<EOS
timeout 30 "$felica" -v history --device 'usb?rate=fastest' >"$tmp/slow.history.out" 2>"$tmp/slow.history.v"
timeout 30 "$felica" poll --device 'usb?rate=424' >/dev/null 2>"$tmp/slow.fixed424.err"; echo \$? >"$tmp/slow.fixed424.rc"
timeout 30 "$felica" doctor >"$tmp/slow.doctor" 2>&1
EOS
timeout 120 "$sim" rcs380 --card "$tmp/slow-suica.json" -- bash "$slow_script" 2>"$tmp/slow.sim.err"
"$felica" history --device "virtual:$tmp/slow-suica.json" >"$tmp/slow.virtual.out" 2>/dev/null
if grep -q "performance=0001" "$tmp/slow.history.v" && ! grep -q '⇄' "$tmp/slow.history.v" && cmp -s "$tmp/slow.virtual.out" "$tmp/slow.history.out"; then
  pass "a card that runs at 212 kbps only says so and is read at 212 kbps"
else
  fail "212-only card"; cat "$tmp/slow.history.v" "$tmp/slow.sim.err" >&2
fi
if grep -q '^ok *usb:001:004: a card answered.*it runs at 212 kbps only' "$tmp/slow.doctor"; then
  pass "doctor says a card runs at 212 kbps only"
else
  fail "doctor with a 212-only card"; cat "$tmp/slow.doctor" >&2
fi
if [[ "$(cat "$tmp/slow.fixed424.rc")" == 69 ]] && grep -q "no card answered Polling" "$tmp/slow.fixed424.err"; then
  pass "usb?rate=424 does not see a card that runs at 212 kbps only"
else
  fail "usb?rate=424 with a 212-only card: exit $(cat "$tmp/slow.fixed424.rc")"; cat "$tmp/slow.fixed424.err" >&2
fi

# watch over USB: the card is tapped three times (--taps); with usb?rate=fastest each card
# is read at 424 kbps and the next one is looked for at 212 kbps again.
out="$(timeout 60 "$sim" rcs380 --card suica --taps 6:6 -- "$felica" -v watch --device 'usb?rate=fastest' --count 3 --json --interval 0 2>"$tmp/watch.v")"
if [[ "$(grep -c '"balance":1234' <<<"$out")" == 3 ]] && [[ "$(grep -c '⇄  bit rate 212 → 424 kbps' "$tmp/watch.v")" == 3 ]] \
   && [[ "$(grep -c '⇄  bit rate 424 → 212 kbps' "$tmp/watch.v")" == 2 ]]; then
  pass "watch reads three taps through usb, each at 424 kbps, looking for the next card at 212 kbps"
else
  fail "watch over usb with taps"; echo "$out" >&2; grep '⇄' "$tmp/watch.v" >&2
fi

# A reader unplugged under a running watch (mid-command, as the 14th packet reaches the
# card) and plugged back in 3 s later at the next address (001:005): watch says so once each
# way and reads on, finding the bare `usb` again by its model. --exit-on-reader-loss ends as before: exit 1, the clear error.
timeout 40 "$sim" rcs380 --card suica --taps 6:6 --fault away@14:3000 -- \
  timeout 30 "$felica" watch --device usb --count 3 --json --interval 0.1 >"$tmp/loss.out" 2>"$tmp/loss.err"
reader_loss_watched "RC-S380 unplugged and plugged back in" usb "$tmp/loss.out" "$tmp/loss.err"
# With no device named, watch opens the reader listed first by its bus place (usb:001:004);
# plugged in again at the next address, it is still found.
timeout 40 "$sim" rcs380 --card suica --taps 6:6 --fault away@14:3000 -- \
  timeout 30 "$felica" watch --count 3 --json --interval 0.1 >"$tmp/lossd.out" 2>"$tmp/lossd.err"
reader_loss_watched "RC-S380 found by default, unplugged and plugged back in" usb:001:004 "$tmp/lossd.out" "$tmp/lossd.err"
timeout 40 "$sim" rcs380 --card suica --taps 6:6 --fault away@14:3000 -- \
  timeout 30 "$felica" watch --device usb --count 3 --interval 0.1 --exit-on-reader-loss >"$tmp/lossx.out" 2>"$tmp/lossx.err"; rc=$?
if [[ "$rc" == 1 ]] && grep -q "was unplugged (LIBUSB_ERROR_NO_DEVICE)" "$tmp/lossx.err" && ! grep -q "is gone" "$tmp/lossx.err"; then
  pass "watch --exit-on-reader-loss ends with the reader's error (exit 1) when the RC-S380 is unplugged"
else
  fail "watch --exit-on-reader-loss: exit $rc"; cat "$tmp/lossx.err" >&2
fi

# A Swift program using library products only (Examples/LibraryExample, no FeliCaCLI)
# opens `usb`, reads a balance, and iterates over three taps of a card that comes and goes.
out="$(timeout 60 "$sim" rcs380 --card suica -- "$bin/LibraryExample" balance usb 2>"$tmp/example.err")"
taps="$(timeout 60 "$sim" rcs380 --card suica --taps 6:6 -- "$bin/LibraryExample" taps usb 3 2>>"$tmp/example.err")"
if [[ "$out" == "Transit IC ¥1234" ]] && [[ "$(grep -c ': 1234$' <<<"$taps")" == 3 ]]; then
  pass "the library example opens usb, reads a balance and iterates over three taps"
else
  fail "library example over usb"; echo "$out"; echo "$taps"; cat "$tmp/example.err" >&2
fi

# watch waits for cards itself: with no card it polls every --interval, not once per
# 3-second open wait (which also put up to 3 s into the first card's elapsedMs).
timeout 60 "$sim" rcs380 --no-card -- timeout -s INT 2 "$felica" -v watch --device usb --interval 0.25 >/dev/null 2>"$tmp/watch-empty.v"
polls=$(grep -c '→  Polling' "$tmp/watch-empty.v")
if ((polls >= 4)); then
  pass "watch with no card on the RC-S380 polls every interval ($polls Pollings in 2 s)"
else
  fail "watch with no card: $polls Pollings in 2 s"; head -5 "$tmp/watch-empty.v" >&2
fi

# --wait / ?wait=: the RC-S380 waits for a card to be placed, as every reader does.
start=$(date +%s%N)
out="$(timeout 60 "$sim" rcs380 --no-card -- "$felica" poll --device 'usb?wait=1.5' 2>&1)"
ms=$((($(date +%s%N) - start) / 1000000))
if ((ms >= 1500 && ms < 10000)) && grep -q "no card answered Polling on usb?wait=1.5" <<<"$out"; then
  pass "usb?wait=1.5 waits for a card ($ms ms) before saying none came"
else
  fail "usb?wait=1.5: $ms ms: $out"
fi

# Faults: name | sim options | first command | what its error must say (regex, empty: it must
# succeed) | what the second command (same reader, same card) must print.
check_fault() { usb_fault rcs380 usb "$@"; }
check_fault "no card" "--no-card" "poll" "no card answered Polling" "-"
check_fault "card removed mid-read" "--card suica --remove-after 2" "history" "the card left the reader" "-"
check_fault "corrupt frame" "--card suica --fault corrupt@2" "balance" "" "balance"
check_fault "late reply" "--card suica --fault late@2:3000" "balance" "" "balance"
check_fault "lost ACK" "--card suica --fault drop-ack@2" "balance" "" "balance"
check_fault "unplugged mid-command" "--card suica --fault unplug@2" "balance" "was unplugged \(LIBUSB_ERROR_NO_DEVICE\)" "-"
check_fault "port100 holds the reader" "--card suica --kernel-driver held" "poll" "held by the kernel's port100 NFC driver.*modprobe -r port100" "-"
check_fault "port100 detached automatically" "--card suica --kernel-driver detachable" "poll" "" "balance"
# doctor's advice for a reader port100 holds follows from what doctor found: with the
# package's blacklist in place (a fake system tree under --root), unloading is the fix, not
# another blacklist line; without it, the blacklist line is added.
port100_doctor() { # name, then whether the tree has the package's blacklist (yes/no)
  local tree="$work/port100-$2"
  rm -rf "$tree"; cp -a "Tests/FeliCaCLITests/Fixtures/doctor/sony" "$tree"
  if [[ $2 == yes ]]; then
    mkdir -p "$tree/lib/modprobe.d" "$tree/usr/lib/udev/rules.d"; printf '# from felica\nblacklist port100\n' >"$tree/lib/modprobe.d/felica.conf"
    cp packaging/60-felica.rules "$tree/usr/lib/udev/rules.d/"
    printf 'Package: felica\nStatus: install ok installed\nArchitecture: amd64\nVersion: 0.1.0\n\n' >>"$tree/var/lib/dpkg/status"
  fi
  timeout 60 "$sim" rcs380 --card suica --kernel-driver held -- "$felica" doctor --root "$tree" --device usb --json >"$work/p100.json" 2>"$work/p100.err"
  python3 - "$work/p100.json" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1])); blacklisted = sys.argv[2] == "yes"
poll = [c for c in report["checks"] if c["check"] == "poll"]
assert len(poll) == 1 and poll[0]["verdict"] == "problem", poll
assert "held by the kernel's port100 NFC driver" in poll[0]["summary"], poll
fix = poll[0]["fix"]
assert fix.startswith("unload it now: sudo modprobe -r port100"), fix
assert ("blacklist port100" in fix) != blacklisted, fix
assert ("already blacklisted in /lib/modprobe.d/felica.conf" in fix) == blacklisted, fix
assert fix.endswith("then try again: felica poll --device usb"), fix
kernel = [c for c in report["checks"] if c["check"] == "kernel-modules"]
assert all(("blacklist port100" in (c["fix"] or "")) != blacklisted for c in kernel), kernel
if blacklisted:
    setup = [c for c in report["checks"] if c["check"] == "setup"]
    assert setup and setup[0]["verdict"] == "ok" and "/lib/modprobe.d/felica.conf" in setup[0]["summary"], setup
PY
  if [[ $? -eq 0 ]]; then pass "$1"; else fail "$1"; cat "$work/p100.json" "$work/p100.err" >&2; fi
}
port100_doctor "doctor: a reader port100 holds, blacklist in place: unload it, no second blacklist" yes
port100_doctor "doctor: a reader port100 holds, no blacklist: unload it and blacklist it" no
# --wait is the command's option: the reader is named as the user gave it, no internal ?wait=.
out="$(timeout 60 "$sim" rcs380 --no-card -- "$felica" balance --wait 1 --device usb 2>&1)"; st=$?
if [[ $st -eq 69 && "$out" == *"no card answered Polling on usb:"* && "$out" != *"wait="* ]]; then
  pass "--wait 1 without a card names the reader 'usb'"
else
  fail "--wait 1 without a card: exit $st: $out"
fi
# After a fault in one process, the next process on the same reader works.
for f in "--fault corrupt@2" "--fault late@2:3000" "--remove-after 3"; do
  # shellcheck disable=SC2086
  out="$(timeout 60 "$sim" rcs380 --card suica $f -- bash -c "timeout 30 \"$felica\" history --device usb >/dev/null 2>&1; timeout 30 \"$felica\" poll --device usb" 2>&1)"
  if [[ "$f" == "--remove-after 3" ]]; then want="no card answered Polling"; else want="^IDm "; fi
  if grep -qE "$want" <<<"$out"; then pass "after $f, the next process gets: $want"; else fail "after $f: $out"; fi
done

stage_end
