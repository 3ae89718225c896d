#!/usr/bin/env bash
# The older Sony readers (RC-S360/RC-S330/RC-S370, RC-S956 chip, 054c:02e1) end to end
# through the real libnfc: `felica-sim rcs956` puts an emulated reader on a umockdev USB
# bus, where libnfc's pn53x_usb driver finds it through the real libusb-0.1. For every
# built-in card `felica poll`, `balance` and `history --device libnfc:pn53x_usb` must print
# exactly what `--device virtual:<card>` prints. `felica devices` must list the reader with
# its exact device string (which then opens it), `felica doctor` must recognise and poll it,
# and each fault (no card, card removed, corrupt frame, late reply, lost ACK, unplugged
# reader) must end in a clear error or a recovery, after which the next command works.
source "$(dirname "$0")/lib.sh"
stage_workdir
device=libnfc:pn53x_usb

# Usage errors (exit 64): no command to run, a fault the reader cannot have, unplug on a serial PN532.
for args in "rcs956 --card suica" "rcs956 --card suica --fault melt@2 -- true" "pn532 --card suica --fault unplug@2"; do
  # shellcheck disable=SC2086
  timeout 10 "$sim" $args >/dev/null 2>"$work/usage.err"; rc=$?
  if [[ "$rc" == 64 ]] && grep -q . "$work/usage.err"; then pass "felica-sim $args: usage error ($(head -n 1 "$work/usage.err"))"; else fail "felica-sim $args: exit $rc"; fi
done

commands=("poll" "poll --json" "balance" "balance --json" "history" "history --json")
for card in suica edy nanaco waon wallet; do
  usb_matches_virtual rcs956 "$device" "$card" "${commands[@]}"
done

# With the reader's and the card's real timing (USB, air and PMm time) the output is the same.
out="$(timeout 60 "$sim" rcs956 --card wallet --timing rf -- "$felica" history --device "$device" 2>&1)"
if [[ "$out" == "$("$felica" history --device virtual:wallet 2>&1)" ]]; then
  pass "wallet history under --timing rf equals the virtual output"
else
  fail "wallet history under --timing rf differs"; echo "$out" | head -5 >&2
fi

# felica devices lists the reader (libnfc finds USB readers by scanning, which the stages
# otherwise turn off), and the string it prints opens it.
out="$(timeout 60 "$sim" rcs956 --card suica -- env -u LIBNFC_AUTO_SCAN bash -c "\"$felica\" devices; \"$felica\" poll --device libnfc:pn53x_usb:001:004" 2>&1)"
if grep -qE '^libnfc +Sony / FeliCa S360 \[PaSoRi\] +libnfc:pn53x_usb:001:004 +ready' <<<"$out" && grep -q '^IDm ' <<<"$out"; then
  pass "devices lists libnfc:pn53x_usb:001:004, and that string reaches the card"
else
  fail "devices / exact device string"; echo "$out" >&2
fi
out="$(timeout 60 "$sim" rcs956 --card suica -- env -u LIBNFC_AUTO_SCAN "$felica" doctor 2>&1)"
if grep -qF 'Sony RC-S360 / RC-S330 / RC-S370 (054c:02e1) on USB bus 001 device 004: served by libnfc (driver pn53x_usb); --device libnfc:pn53x_usb:001:004' <<<"$out" \
   && grep -q '^ok *libnfc:pn53x_usb:001:004: a card answered' <<<"$out"; then
  pass "doctor recognises the RC-S360 and polls the card through it"
else
  fail "doctor"; echo "$out" >&2
fi

# With libnfc's scanning off (as this suite runs), no stack lists the reader, yet doctor
# recognises it on the bus and polls it by its exact string.
out="$(timeout 60 "$sim" rcs956 --card suica -- env LIBNFC_AUTO_SCAN=false "$felica" doctor 2>&1)"
if grep -q '^ok *libnfc:pn53x_usb:001:004: a card answered' <<<"$out" && ! grep -q 'no reader to poll' <<<"$out"; then
  pass "doctor polls the recognised RC-S360 even when libnfc's scanning is off"
else
  fail "doctor with LIBNFC_AUTO_SCAN=false"; echo "$out" >&2
fi

# Faults (usb_fault in lib.sh): name | sim options | first command | what its error must say
# (regex; empty: it must succeed) | the second command on the same reader ("-": none).
check_fault() { usb_fault rcs956 "$device" "$@"; }
check_fault "no card" "--no-card" "poll" "no card answered Polling on libnfc:pn53x_usb" "-"
check_fault "card removed mid-read" "--card suica --remove-after 2" "history" "the card left the reader" "-"
check_fault "corrupt frame" "--card suica --fault corrupt@2" "balance" "" "balance"
check_fault "late reply" "--card suica --fault late@2:3000" "balance" "" "balance"
check_fault "lost ACK" "--card suica --fault drop-ack@2" "balance" "" "balance"
check_fault "unplugged mid-command" "--card suica --fault unplug@2" "balance" "the reader stopped answering.*check that it is still plugged in" "-"
# The reader unplugged under a running watch and plugged back in 3 s later: libnfc opens
# it again by the same string; watch says so once each way and reads on. With
# --exit-on-reader-loss the loss ends it with libnfc's error, as before.
timeout 40 "$sim" rcs956 --card suica --taps 6:6 --fault away@14:3000 -- \
  timeout 30 "$felica" watch --device $device --count 3 --json --interval 0.1 >"$work/loss.out" 2>"$work/loss.err"
reader_loss_watched "RC-S956 unplugged and plugged back in" "$device" "$work/loss.out" "$work/loss.err"
# With no device named (libnfc scanning the bus), the reader found first is named by its
# bus place; plugged in again at the next address, it is still found.
timeout 40 "$sim" rcs956 --card suica --taps 6:6 --fault away@14:3000 -- env -u LIBNFC_AUTO_SCAN \
  timeout 30 "$felica" watch --count 3 --json --interval 0.1 >"$work/lossd.out" 2>"$work/lossd.err"
reader_loss_watched "RC-S956 found by default, unplugged and plugged back in" libnfc:pn53x_usb:001:004 "$work/lossd.out" "$work/lossd.err"
timeout 40 "$sim" rcs956 --card suica --taps 6:6 --fault away@14:3000 -- \
  timeout 30 "$felica" watch --device $device --count 3 --interval 0.1 --exit-on-reader-loss >/dev/null 2>"$work/lossx.err"; rc=$?
if [[ "$rc" == 1 ]] && grep -q "the reader stopped answering.*check that it is still plugged in" "$work/lossx.err" && ! grep -q "is gone" "$work/lossx.err"; then
  pass "watch --exit-on-reader-loss ends with libnfc's error (exit 1) when the RC-S956 is unplugged"
else
  fail "watch --exit-on-reader-loss on the RC-S956: exit $rc"; cat "$work/lossx.err" >&2
fi
# After a failed read in one process, the next process on the same reader works.
out="$(timeout 60 "$sim" rcs956 --card wallet --remove-after 3 -- bash -c "timeout 30 \"$felica\" history --device $device >/dev/null 2>&1; echo rc=\$?; timeout 30 \"$felica\" poll --device $device" 2>&1)"
if grep -q '^rc=1$' <<<"$out" && grep -q 'no card answered Polling' <<<"$out"; then
  pass "after the card left mid-read, the next process polls the reader cleanly (no card)"
else
  fail "after removal: $out"
fi
for f in "--fault corrupt@2" "--fault late@2:3000"; do
  # shellcheck disable=SC2086
  out="$(timeout 60 "$sim" rcs956 --card wallet $f -- bash -c "timeout 30 \"$felica\" history --device $device >/dev/null 2>&1; timeout 30 \"$felica\" poll --device $device" 2>&1)"
  if grep -q '^IDm ' <<<"$out"; then pass "after $f, the next process reads the card"; else fail "after $f: $out"; fi
done

stage_end
