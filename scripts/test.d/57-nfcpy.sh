#!/usr/bin/env bash
# An independent host against the stand-ins: nfcpy 1.0.4 (from PyPI into .build/nfcpy-venv,
# as the benchmarks install it) drives `felica-sim rcs380` with its own RC-S380 driver
# through the real libusb, over every built-in card with a purse, without timing, with `--timing rf`
# (the card answers in its typical time) and with `--timing rf-worst-case` (at its PMm
# bound, which nfcpy waits exactly). scripts/nfcpy/check-card.py compares every answer with
# the card image (`felica dump --json --device virtual:<card>`): Polling with request codes
# and time slots, Request System Code, the Search Service Code walk, Request Service,
# Request Response, reads of 1 to 15 blocks, and the status flags of refused and malformed
# reads. Any difference fails the stage. The Lite-S sample is read as a Type 3 Tag by
# nfcpy's own NDEF code (scripts/nfcpy/read-ndef.py) and must give felica ndef's records.
source "$(dirname "$0")/lib.sh"
stage_workdir

if ! python="$(scripts/nfcpy/venv.sh)"; then
  fail "nfcpy could not be installed (see above); this stage needs PyPI once, then uses .build/nfcpy-venv"
  stage_end
fi
check="$PWD/scripts/nfcpy/check-card.py"

# The emulated card waits, not the processor: each card's three runs go side by side (each
# felica-sim has a USB bus of its own).
cards=(suica edy nanaco waon wallet octopus octopus-shenzhen univ-coop)
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

# The Lite-S sample as an NFC Forum Type 3 Tag: nfcpy's own tt3 and NDEF code read the
# attribute block and the records, and must find what `felica ndef --json` prints.
if "$felica" ndef --json --device virtual:lite-s >"$work/lite-s.ndef.json" 2>"$work/lite-s.ndef.err"; then
  python3 - "$work/lite-s.ndef.json" >"$work/lite-s.expected" <<'EOS'
import json, sys
tag = json.load(open(sys.argv[1]))
a = tag["attributes"]
print("product FeliCa Lite-S (RC-S966)")
print("attributes %s %d %d %d" % (a["version"], a["nbr"], a["nmaxb"], a["length"]))
action = {"do": "exec", "save": "save", "open": "edit"}  # nfcpy's names of the action codes
for r in tag["records"]:
    if r["type"] == "U": print("record U " + r["uri"])
    elif r["type"] == "T": print("record T %s:%s:%s" % (r["language"], r["encoding"], r["text"]))
    elif r["type"] == "Sp": print("record Sp %s %s %s" % (r["uri"], ";".join("%s:%s" % (t["language"], t["text"]) for t in sorted(r["titles"], key=lambda t: t["language"])), action[r["action"]]))
EOS
  timeout 60 "$sim" rcs380 --card lite-s -- "$python" "$PWD/scripts/nfcpy/read-ndef.py" usb:054c:06c1 >"$work/lite-s.nfcpy" 2>"$work/lite-s.nfcpy.err"
  if cmp -s "$work/lite-s.expected" "$work/lite-s.nfcpy"; then
    pass "lite-s: nfcpy reads the same NDEF attribute block and records as felica ndef ($(grep -c '^record' "$work/lite-s.nfcpy") records)"
  else
    fail "lite-s: nfcpy's NDEF reading differs from felica ndef"; diff "$work/lite-s.expected" "$work/lite-s.nfcpy" >&2; tail -5 "$work/lite-s.nfcpy.err" >&2
  fi
else
  fail "lite-s: felica ndef --json of the virtual card failed: $(head -3 "$work/lite-s.ndef.err")"
fi

stage_end
