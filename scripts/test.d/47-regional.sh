#!/usr/bin/env bash
# The regional profiles (OKICA, Ryuto, KMT, MRT Jakarta, FCF ID cards) end to end: each
# built-in card decodes to the values its public source implies (Docs/cards.md), and reads
# the same through libnfc and the PN532 emulator and through the RC-S380 emulator on a
# umockdev USB bus as from the virtual card. A system the public lists name but nothing
# decodes (NTasu) is named in `poll --json` with "decoded": false. A card that refuses
# Search Service Code (and takes 8 nodes a Request Service) still dumps every readable
# service through the PN532 emulator, by a bounded Request Service sweep.
source "$(dirname "$0")/lib.sh"
stage_workdir
tmp="$work"

# expect_lines CARD ARGS PATTERN...: `felica ARGS --device virtual:CARD` prints a line
# matching each PATTERN (grep -E).
expect_lines() {
  local card="$1" args="$2" p
  shift 2
  # shellcheck disable=SC2086
  "$felica" $args --device "virtual:$card" >"$tmp/x.out" 2>"$tmp/x.err" || { fail "$card $args: exit $?: $(cat "$tmp/x.err")"; return; }
  for p in "$@"; do
    if grep -qE -- "$p" "$tmp/x.out"; then pass "$card $args: $p"; else fail "$card $args: no line matches $p"; cat "$tmp/x.out" >&2; fi
  done
}

# The values each source implies (Docs/cards.md gives the layouts).
expect_lines okica balance '^OKICA +¥1,630$'
expect_lines okica history '2026-11-28 .*-¥270 .*¥1,630 .*Yui Rail ride' '2026-11-27 .*\+¥2,000 .*Yui Rail charge'
expect_lines ryuto history '^Ryuto +¥2,540$' '2026-11-27 18:42 .*-¥230 .*¥2,540 .*bus ride'
expect_lines kmt balance '^KMT +Rp43,500  no\. 0195123456789012$'
expect_lines kmt "history --json" '"currency":"IDR"' '"date":"2026-11-27T17:48:12\+07:00"' '"amount":50000'
expect_lines mrtj "balance --json" '"profile":"mrtj".*"balance":86000,"currency":"IDR"'
expect_lines fcf balance '^FCF ID +ID card  no\. 241057$'

# libnfc_matches_virtual CARD DEVICE ARGS...: as in 45-cards-libnfc.sh.
libnfc_matches_virtual() {
  local card="$1" dev="$2" args vs ls
  shift 2
  for args in "$@"; do
    # shellcheck disable=SC2086
    "$felica" $args --device "virtual:$card" >"$tmp/v.out" 2>"$tmp/v.err"; vs=$?
    # shellcheck disable=SC2086
    "$felica" $args --device "$dev" >"$tmp/l.out" 2>"$tmp/l.err"; ls=$?
    if [[ $vs -ne 0 || $ls -ne 0 ]]; then
      fail "$(basename "$card") $args: exit virtual $vs, libnfc $ls"; cat "$tmp/l.err" >&2
    elif ! cmp -s "$tmp/v.out" "$tmp/l.out"; then
      fail "$(basename "$card") $args: output differs"; diff "$tmp/v.out" "$tmp/l.out" | head -20 >&2
    else
      pass "$(basename "$card") $args: libnfc output equals virtual output"
    fi
  done
}

for card in okica ryuto kmt mrtj fcf ntasu; do
  start_pn532 "$tmp/$card.pty" --card "$card" || continue
  libnfc_matches_virtual "$card" "libnfc:pn532_uart:$tmp/$card.pty" "balance" "balance --json" "history" "history --json" "poll --json"
  stop_pn532
done
for card in okica ryuto kmt mrtj fcf; do
  usb_matches_virtual rcs380 usb "$card" "balance" "balance --json" "history --json" "poll --json"
done

# NTasu: named, not decoded, through the emulator.
start_pn532 "$tmp/ntasu2.pty" --card ntasu && {
  "$felica" poll --json --device "libnfc:pn532_uart:$tmp/ntasu2.pty" >"$tmp/ntasu.json" 2>"$tmp/ntasu.err"
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); i=d["systemInfo"][0]; sys.exit(0 if i["code"]=="93ec" and i["name"]=="NTasu" and i["decoded"] is False and i["kind"]=="transit" else 1)' "$tmp/ntasu.json"; then
    pass "poll --json names system 93EC NTasu with \"decoded\": false"
  else
    fail "poll --json on the NTasu card: $(cat "$tmp/ntasu.json" "$tmp/ntasu.err")"
  fi
  stop_pn532
}

# Service discovery: the OKICA card refusing Search Service Code and taking 8 nodes a
# Request Service. The dump through the PN532 emulator lists every service the virtual
# card's full dump lists, with the same blocks; the note gives the sweep's exchanges.
"$felica" dump --json --device virtual:okica \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); d["ignores"]=["search-service-code"]; d["maxNodesPerRequest"]=8; json.dump(d, sys.stdout)' >"$tmp/hiding.json"
# Services and their blocks, indentation dropped (the full dump nests them in the root area).
services_of() { sed -E 's/^ +//' "$1" | grep -E '^(Service |[0-9]+ )'; }
"$felica" dump --device virtual:okica >"$tmp/full.out"
services_of "$tmp/full.out" >"$tmp/full.services"
if start_pn532 "$tmp/hiding.pty" --card "$tmp/hiding.json"; then
  t0=$(now_ms)
  "$felica" dump --device "libnfc:pn532_uart:$tmp/hiding.pty" >"$tmp/hiding.out" 2>"$tmp/hiding.err"; hs=$?
  t1=$(now_ms)
  services_of "$tmp/hiding.out" >"$tmp/hiding.services"
  if [[ $hs -ne 0 ]]; then
    fail "dump of a card hiding its services: exit $hs: $(cat "$tmp/hiding.err")"
  elif ! cmp -s "$tmp/full.services" "$tmp/hiding.services"; then
    fail "dump of a card hiding its services lost services"; diff "$tmp/full.services" "$tmp/hiding.services" | head >&2
  elif ! grep -qE 'note: system 8FC1: the card did not answer Search Service Code, so its services were found by Request Service over all 16384 service codes \(20[0-9][0-9] exchanges, 8 codes each at the end\)' "$tmp/hiding.err"; then
    fail "dump of a card hiding its services: the note does not give the sweep: $(cat "$tmp/hiding.err")"
  else
    pass "a card hiding its services dumps all $(grep -c '^Service' "$tmp/hiding.services") services and their blocks through the PN532 emulator ($(grep -oE '[0-9]+ exchanges' "$tmp/hiding.err"), $((t1 - t0)) ms)"
  fi
  stop_pn532
fi

stage_end
