#!/usr/bin/env bash
# Card profiles end to end through real libnfc: for every built-in card, `felica balance`
# and `felica history` (text and JSON) over libnfc's pn532_uart driver talking to
# `felica-sim pn532` must print exactly what `--device virtual:<card>` prints, and
# `felica watch --count 1` must print the card and exit 0. Dumps of other tools (a Flipper
# Zero .nfc file, a Metrodroid export, written by `felica dump --format`) served by the
# emulator's --card read the same as the sample card they came from. The Lite-S tags give
# the same `ndef`, `poll` and `dump` through libnfc as from the virtual card, and so do two
# real files other projects publish.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"

# (A Metrodroid export carries its scan date, which decides Octopus's offset for the file
# but cannot reach a reader over the air: the exported card here is one without Octopus.)
"$felica" dump --device virtual:octopus-shenzhen --format flipper -o "$tmp/octopus-shenzhen.nfc"
"$felica" dump --device virtual:wallet --format metrodroid -o "$tmp/wallet-metrodroid.json"

# libnfc_matches_virtual CARD DEVICE ARGS...: each `felica ARGS` (one string each) through
# DEVICE prints exactly what it prints with `--device virtual:CARD`, both exiting 0.
libnfc_matches_virtual() {
  local card="$1" dev="$2" name args vs ls
  name=$(basename "$card")
  shift 2
  for args in "$@"; do
    # shellcheck disable=SC2086
    "$felica" $args --device "virtual:$card" >"$tmp/v.out" 2>"$tmp/v.err"; vs=$?
    # shellcheck disable=SC2086
    "$felica" $args --device "$dev" >"$tmp/l.out" 2>"$tmp/l.err"; ls=$?
    if [[ $vs -ne 0 || $ls -ne 0 ]]; then
      fail "$name $args: exit virtual $vs, libnfc $ls"; cat "$tmp/l.err" >&2
    elif ! cmp -s "$tmp/v.out" "$tmp/l.out"; then
      fail "$name $args: output differs"; diff "$tmp/v.out" "$tmp/l.out" | head -20 >&2
    else
      pass "$name $args: libnfc output equals virtual output"
    fi
  done
}

for card in suica edy nanaco waon wallet octopus octopus-shenzhen univ-coop "$tmp/octopus-shenzhen.nfc" "$tmp/wallet-metrodroid.json"; do
  name=$(basename "$card")
  start_pn532 "$tmp/$name.pty" --card "$card" || continue
  dev="libnfc:pn532_uart:$tmp/$name.pty"
  libnfc_matches_virtual "$card" "$dev" "balance" "balance --json" "history" "history --json"
  "$felica" watch --count 1 --device "$dev" >"$tmp/w.out" 2>"$tmp/w.err"; ws=$?
  "$felica" balance --device "$dev" >"$tmp/b.out" 2>/dev/null
  if [[ $ws -eq 0 ]] && grep -q "^Card " "$tmp/w.out" && grep -qF "$(head -1 "$tmp/b.out")" "$tmp/w.out"; then
    pass "$name watch --count 1 prints the card and exits 0"
  else
    fail "$name watch --count 1: exit $ws"; cat "$tmp/w.out" "$tmp/w.err" >&2
  fi
done

# FeliCa Lite-S tags: the NDEF message, the IC and ID block, the memory map, as the virtual
# card prints them; an arcade card (a Lite-S without NDEF) is the clear "no NDEF" error.
start_pn532 "$tmp/lite-s.pty" --card lite-s \
  && libnfc_matches_virtual lite-s "libnfc:pn532_uart:$tmp/lite-s.pty" "ndef" "ndef --json" "poll" "poll --json" "dump" "dump --json"
if start_pn532 "$tmp/aime.pty" --card aime; then
  libnfc_matches_virtual aime "libnfc:pn532_uart:$tmp/aime.pty" "poll" "poll --json" "dump"
  "$felica" ndef --device "libnfc:pn532_uart:$tmp/aime.pty" >"$tmp/n.out" 2>"$tmp/n.err"; ns=$?
  if [[ $ns -eq 1 && ! -s "$tmp/n.out" ]] && grep -q "has no NDEF system 12FC" "$tmp/n.err"; then
    pass "aime ndef: a Lite-S without NDEF says it has no NDEF system (exit 1)"
  else
    fail "aime ndef: exit $ns"; cat "$tmp/n.out" "$tmp/n.err" >&2
  fi
fi

# Real files of other projects (Tests/RealWorld): FareBot's Flipper dump of a real Suica,
# a Metrodroid Lite-S export (system 88B4 only, NDEF enabled by its MC block) and Metroflip's
# saved Suica history (no IDm, no balance block), served by the emulator's --card, read
# through libnfc as the virtual card reads them.
real=Tests/RealWorld
if start_pn532 "$tmp/real-suica.pty" --card "$real/farebot/Suica.nfc"; then
  libnfc_matches_virtual "$real/farebot/Suica.nfc" "libnfc:pn532_uart:$tmp/real-suica.pty" "balance" "history --json"
fi
if start_pn532 "$tmp/real-lite.pty" --card "$real/metrodroid/felicalitendef.json"; then
  libnfc_matches_virtual "$real/metrodroid/felicalitendef.json" "libnfc:pn532_uart:$tmp/real-lite.pty" "ndef" "poll"
fi
if start_pn532 "$tmp/real-metroflip.pty" --card "$real/metroflip/suica_example.metro"; then
  libnfc_matches_virtual "$real/metroflip/suica_example.metro" "libnfc:pn532_uart:$tmp/real-metroflip.pty" "history --json"
  # The card's issue (process 07, sequence 1): credited with the 1000 yen it was sold with.
  if grep -q '"amount":1000,"balance":1000,"sequence":1,' "$tmp/l.out"; then
    pass "metroflip suica: the issue record is +1000 yen through libnfc"
  else
    fail "metroflip suica: no issue record of +1000 yen"; head -c 600 "$tmp/l.out" >&2
  fi
fi

stage_end
