#!/usr/bin/env bash
# Card profiles end to end through real libnfc: for every built-in card, `felica balance`
# and `felica history` (text and JSON) over libnfc's pn532_uart driver talking to
# `felica-sim pn532` must print exactly what `--device virtual:<card>` prints, and
# `felica watch --count 1` must print the card and exit 0.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"

for card in suica edy nanaco waon wallet; do
  start_pn532 "$tmp/$card" --card "$card" || continue
  dev="libnfc:pn532_uart:$tmp/$card"
  for args in "balance" "balance --json" "history" "history --json"; do
    # shellcheck disable=SC2086
    "$felica" $args --device "virtual:$card" >"$tmp/v.out" 2>"$tmp/v.err"; vs=$?
    # shellcheck disable=SC2086
    "$felica" $args --device "$dev" >"$tmp/l.out" 2>"$tmp/l.err"; ls=$?
    if [[ $vs -ne 0 || $ls -ne 0 ]]; then
      fail "$card $args: exit virtual $vs, libnfc $ls"; cat "$tmp/l.err" >&2
    elif ! cmp -s "$tmp/v.out" "$tmp/l.out"; then
      fail "$card $args: output differs"; diff "$tmp/v.out" "$tmp/l.out" | head -20 >&2
    else
      pass "$card $args: libnfc output equals virtual output"
    fi
  done
  "$felica" watch --count 1 --device "$dev" >"$tmp/w.out" 2>"$tmp/w.err"; ws=$?
  "$felica" balance --device "$dev" >"$tmp/b.out" 2>/dev/null
  if [[ $ws -eq 0 ]] && grep -q "^Card " "$tmp/w.out" && grep -qF "$(head -1 "$tmp/b.out")" "$tmp/w.out"; then
    pass "$card watch --count 1 prints the card and exits 0"
  else
    fail "$card watch --count 1: exit $ws"; cat "$tmp/w.out" "$tmp/w.err" >&2
  fi
done

stage_end
