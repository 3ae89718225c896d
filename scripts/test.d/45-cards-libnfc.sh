#!/usr/bin/env bash
# Card profiles end to end through real libnfc: for every built-in card, `felica balance`
# and `felica history` (text and JSON) over libnfc's pn532_uart driver talking to
# `felica-sim pn532` must print exactly what `--device virtual:<card>` prints, and
# `felica watch --count 1` must print the card and exit 0. Dumps of other tools (a Flipper
# Zero .nfc file, a Metrodroid export, written by `felica dump --format`) served by the
# emulator's --card read the same as the sample card they came from.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"

# (A Metrodroid export carries its scan date, which decides Octopus's offset for the file
# but cannot reach a reader over the air: the exported card here is one without Octopus.)
"$felica" dump --device virtual:octopus-shenzhen --format flipper -o "$tmp/octopus-shenzhen.nfc"
"$felica" dump --device virtual:wallet --format metrodroid -o "$tmp/wallet-metrodroid.json"

for card in suica edy nanaco waon wallet octopus octopus-shenzhen "$tmp/octopus-shenzhen.nfc" "$tmp/wallet-metrodroid.json"; do
  name=$(basename "$card")
  start_pn532 "$tmp/$name.pty" --card "$card" || continue
  dev="libnfc:pn532_uart:$tmp/$name.pty"
  for args in "balance" "balance --json" "history" "history --json"; do
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
  "$felica" watch --count 1 --device "$dev" >"$tmp/w.out" 2>"$tmp/w.err"; ws=$?
  "$felica" balance --device "$dev" >"$tmp/b.out" 2>/dev/null
  if [[ $ws -eq 0 ]] && grep -q "^Card " "$tmp/w.out" && grep -qF "$(head -1 "$tmp/b.out")" "$tmp/w.out"; then
    pass "$name watch --count 1 prints the card and exits 0"
  else
    fail "$name watch --count 1: exit $ws"; cat "$tmp/w.out" "$tmp/w.err" >&2
  fi
done

stage_end
