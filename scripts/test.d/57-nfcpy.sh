#!/usr/bin/env bash
# An independent host against the stand-ins: nfcpy 1.0.4 (from PyPI into .build/nfcpy-venv,
# as the benchmarks install it) drives `felica-sim rcs380` with its own RC-S380 driver
# through the real libusb, over every built-in card, without timing, with `--timing rf`
# (the card answers in its typical time) and with `--timing rf-worst-case` (at its PMm
# bound, which nfcpy waits exactly). scripts/nfcpy/check-card.py compares every answer with
# the card image (`felica dump --json --device virtual:<card>`): Polling with request codes
# and time slots, Request System Code, the Search Service Code walk, Request Service,
# Request Response, reads of 1 to 15 blocks, and the status flags of refused and malformed
# reads. Any difference fails the stage.
source "$(dirname "$0")/lib.sh"
stage_workdir

if ! python="$(scripts/nfcpy/venv.sh)"; then
  fail "nfcpy could not be installed (see above); this stage needs PyPI once, then uses .build/nfcpy-venv"
  stage_end
fi
check="$PWD/scripts/nfcpy/check-card.py"

# The emulated card waits, not the processor: each card's three runs go side by side (each
# felica-sim has a USB bus of its own).
cards=(suica edy nanaco waon wallet)
timings=(none rf rf-worst-case)
for card in "${cards[@]}"; do
  image="$work/$card.json"
  if ! "$felica" dump --json --device "virtual:$card" >"$image" 2>"$work/$card.dump.err"; then
    fail "$card: felica dump --json of the virtual card failed: $(head -3 "$work/$card.dump.err")"
    continue
  fi
  for timing in "${timings[@]}"; do
    options=()
    [[ $timing != none ]] && options=(--timing "$timing")
    (timeout 90 "$sim" rcs380 --card "$card" "${options[@]}" -- "$python" "$check" usb:054c:06c1 "$image" \
       >"$work/$card.$timing.out" 2>"$work/$card.$timing.err"; echo $? >"$work/$card.$timing.rc") &
  done
  wait
done

for card in "${cards[@]}"; do
  [[ -f "$work/$card.json" ]] || continue
  for timing in "${timings[@]}"; do
    out="$work/$card.$timing.out"
    status="$(cat "$work/$card.$timing.rc" 2>/dev/null || echo "not run")"
    if [[ $status == 0 ]] && grep -q '^all [0-9]* checks agree' "$out"; then
      pass "$card, timing $timing: nfcpy $(tail -1 "$out")"
    else
      fail "$card, timing $timing: the answers nfcpy got differ from the image (exit $status)"
      grep -E '^DIFF|differ' "$out" | head -10 >&2
      tail -5 "$work/$card.$timing.err" >&2
    fi
  done
done

stage_end
