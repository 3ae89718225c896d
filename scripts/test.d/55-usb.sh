#!/usr/bin/env bash
# The Sony RC-S380 driver end to end through the real libusb: `felica-sim rcs380` puts an
# emulated reader on a umockdev USB bus, and for every built-in card `felica poll`, `dump`,
# `read`, `balance` and `history --device usb` must print exactly what `--device
# virtual:<card>` prints. `felica devices` and `felica doctor` must find the reader, and
# each fault (no card, card removed, corrupt frame, late reply, unplugged reader, a kernel
# driver that will not let go) must end in a clear error within a bounded time, after which
# the next command works.
source "$(dirname "$0")/lib.sh"
stage_workdir

# One command line per comparison; READ is replaced by the card's first readable service.
commands=("poll" "poll --json" "dump" "dump --json" "read READ" "balance" "balance --json" "history" "history --json")
declare -A service=([suica]="--service 008b" [edy]="--system fe00 --service 110b" [nanaco]="--system fe00 --service 558b"
                    [waon]="--system fe00 --service 680b" [wallet]="--service 008b")

for card in suica edy nanaco waon wallet; do
  usb_matches_virtual rcs380 usb "$card" "${commands[@]/READ/${service[$card]}}"
done

# felica devices, FELICA_DEVICE and the default device find the emulated reader.
out="$(timeout 60 "$sim" rcs380 --card suica -- bash -c "\"$felica\" devices; FELICA_DEVICE=usb:054c:06c1 \"$felica\" poll; \"$felica\" balance" 2>&1)"
if grep -qE '^usb +Sony RC-S380/S +usb:001:004 +ready' <<<"$out" && grep -q '^IDm ' <<<"$out" && grep -q '¥1,234' <<<"$out"; then
  pass "devices lists usb:001:004; FELICA_DEVICE=usb:054c:06c1 and the default device reach it"
else
  fail "devices / FELICA_DEVICE / default device"; echo "$out" >&2
fi
out="$(timeout 60 "$sim" rcs380 --card suica -- "$felica" doctor 2>&1)"
if grep -q 'driven directly over USB (libusb); --device usb:001:004' <<<"$out" && grep -q '^ok *usb:001:004: a card answered' <<<"$out"; then
  pass "doctor finds the reader and polls the card through it"
else
  fail "doctor"; echo "$out" >&2
fi

# Faults: name | sim options | first command | what its error must say (regex, empty: it must
# succeed) | what the second command (same reader, same card) must print.
check_fault() { usb_fault rcs380 usb "$@"; }
check_fault "no card" "--no-card" "poll" "no card answered Polling" "-"
check_fault "card removed mid-read" "--card suica --remove-after 2" "history" "the card left the reader" "-"
check_fault "corrupt frame" "--card suica --fault corrupt@2" "balance" "" "balance"
check_fault "late reply" "--card suica --fault late@2:3000" "balance" "" "balance"
check_fault "unplugged mid-command" "--card suica --fault unplug@2" "balance" "was unplugged \(LIBUSB_ERROR_NO_DEVICE\)" "-"
check_fault "port100 holds the reader" "--card suica --kernel-driver held" "poll" "held by the kernel's port100 NFC driver.*modprobe -r port100" "-"
check_fault "port100 detached automatically" "--card suica --kernel-driver detachable" "poll" "" "balance"
# After a fault in one process, the next process on the same reader works.
for f in "--fault corrupt@2" "--fault late@2:3000" "--remove-after 3"; do
  # shellcheck disable=SC2086
  out="$(timeout 60 "$sim" rcs380 --card suica $f -- bash -c "timeout 30 \"$felica\" history --device usb >/dev/null 2>&1; timeout 30 \"$felica\" poll --device usb" 2>&1)"
  if [[ "$f" == "--remove-after 3" ]]; then want="no card answered Polling"; else want="^IDm "; fi
  if grep -qE "$want" <<<"$out"; then pass "after $f, the next process gets: $want"; else fail "after $f: $out"; fi
done

stage_end
